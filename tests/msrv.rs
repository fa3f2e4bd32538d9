//! The minimum Rust version the project states (Cargo.toml's `rust-version`, the README) is
//! true for the locked dependencies: none of them needs a newer one.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

use std::process::Command;

fn version(v: &str) -> (u64, u64, u64) {
    let mut p = v.split('.').map(|x| x.parse::<u64>().unwrap_or(0));
    (
        p.next().unwrap_or(0),
        p.next().unwrap_or(0),
        p.next().unwrap_or(0),
    )
}

#[test]
fn stated_minimum_covers_every_locked_dependency() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours = env!("CARGO_PKG_RUST_VERSION");
    assert!(!ours.is_empty(), "Cargo.toml states a rust-version");
    let needs: Vec<(String, String)> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let rv = p["rust_version"].as_str()?;
            (version(rv) > version(ours))
                .then(|| (p["name"].as_str().unwrap().to_string(), rv.to_string()))
        })
        .collect();
    assert!(
        needs.is_empty(),
        "rust-version {ours} is too old for {needs:?}"
    );
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    assert!(
        readme.contains(&format!("`cargo` {ours} or newer")),
        "the README states the same minimum ({ours})"
    );
}
