//! Policy benchmarks: how long judging a command line takes, beside the floor of merely
//! splitting it into words (`shell_words::split`, which every decision needs at least), over
//! the whole test corpus; and the worst cases a hostile request can build within the 1 MiB
//! request limit (nesting that multiplies, long chains), which must stay bounded.
//! Run with `cargo bench --bench policy`; results go in docs/benchmarks.md.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, Instant};

use itmcp::policy::Policy;
use serde_json::Value;

/// Passes over the corpus for the per-command figure.
const CORPUS_PASSES: usize = 200;
/// Largest request the server accepts (the hostile inputs are cut to it).
const MAX_LINE: usize = 1_000_000;

fn corpus() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/policy_corpus.json"
    ))
    .unwrap();
    let v: Vec<Value> = serde_json::from_str(&text).unwrap();
    v.iter()
        .map(|e| e["command"].as_str().unwrap().to_string())
        .collect()
}

fn per_line(lines: &[String], f: impl Fn(&str)) -> Duration {
    let t = Instant::now();
    for _ in 0..CORPUS_PASSES {
        for l in lines {
            f(l);
        }
    }
    t.elapsed() / (CORPUS_PASSES * lines.len()) as u32
}

fn hostile() -> Vec<(&'static str, String)> {
    let mut v = vec![
        (
            "find -exec nested 12 deep, 8 starting points each",
            format!("{} true ;", ["find a b c d e f g h -exec"; 12].join(" ")),
        ),
        (
            "eval chained 200000 times",
            "eval ".repeat(200_000) + "true",
        ),
        (
            "find with 100000 starting points -exec rm",
            format!(
                "find {} -exec rm -rf {{}} +",
                (0..100_000)
                    .map(|i| format!("d{i}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ),
        ("300000 commands joined by ;", "ls;".repeat(300_000)),
        (
            "100000 commands echoed into sh",
            format!("echo \"{}\" | sh", ["ls"; 100_000].join(" ; ")),
        ),
        (
            "256 variables, 150000 expansions",
            (0..256).map(|i| format!("V{i}=x; ")).collect::<String>()
                + "echo "
                + &["$V1x"; 150_000].join(" "),
        ),
        // Shapes each rule used to read pair by pair, or, for `cd`, place by place.
        ("a pipeline of 170000 `env`", ["env"; 170_000].join(" | ")),
        (
            "a pipeline of 130000 `ps aux`",
            ["ps aux"; 130_000].join(" | "),
        ),
        (
            "a pipeline of 40000 downloads",
            ["curl -s http://x/$i"; 40_000].join(" | "),
        ),
        (
            "100000 `cd`s joined by ;",
            (0..100_000).map(|i| format!("cd d{i}; ")).collect(),
        ),
    ];
    for (_, l) in &mut v {
        l.truncate(MAX_LINE);
    }
    v
}

/// Typed input (`execution.input`) a hostile agent can send, judged in a directory of
/// [`CROWDED`] entries: every `ESC [ A` is a `[…]` pattern looked up there.
fn hostile_typed() -> Vec<(&'static str, String)> {
    vec![
        ("2 KiB of typed Up + Enter", "\x1b[A\r".repeat(512)),
        ("2 KiB of typed Left", "\x1b[D".repeat(680) + "\r"),
        ("128 KiB of typed Up + Enter", "\x1b[A\r".repeat(32_000)),
        // Read as a REPL's code: each string's call, each `qx` quote, each string joined
        // to the one before.
        (
            "64 KiB of string arguments to one call",
            format!("f({})\r", "\"a\", ".repeat(10_900)),
        ),
        ("64 KiB of unclosed `qx{`", "qx{".repeat(21_800) + "\r"),
        ("64 KiB of adjacent strings", "\"a\" ".repeat(16_300) + "\r"),
        // Every line leaves a statement open: read joined, 64 lines at most.
        ("64 KiB of lines each opening a call", "f(\r".repeat(21_800)),
    ]
}

/// Entries of the directory the typed input is judged in.
const CROWDED: usize = 12_000;

fn crowded_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("itmcp-policy-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a scratch directory");
    for i in 0..CROWDED {
        std::fs::write(d.join(format!("f{i}")), "").expect("a scratch file");
    }
    d
}

fn main() {
    let policy = Policy::default();
    let lines = corpus();
    let floor = per_line(&lines, |l| {
        let _ = std::hint::black_box(shell_words::split(l));
    });
    let judged = per_line(&lines, |l| {
        std::hint::black_box(policy.evaluate(l, Some("/tmp")));
    });
    println!("| measure | ours | floor | floor value | ratio | decision |");
    println!("| --- | --- | --- | --- | --- | --- |");
    println!(
        "| judge one corpus line (mean of {} lines) | {:.2} us | `shell_words::split` of it | {:.2} us | {:.1}x | |",
        lines.len(),
        judged.as_secs_f64() * 1e6,
        floor.as_secs_f64() * 1e6,
        judged.as_secs_f64() / floor.as_secs_f64()
    );
    for (name, line) in hostile() {
        row(name, &line, || policy.evaluate(&line, None));
    }
    let dir = crowded_dir();
    for (name, text) in hostile_typed() {
        let name = format!("{name} in a directory of {CROWDED} files");
        row(&name, &text, || policy.evaluate_input(&text, dir.to_str()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One table row: `judge` of `text` timed once, beside `shell_words::split` of it.
fn row(name: &str, text: &str, judge: impl FnOnce() -> itmcp_policy::Decision) {
    let t = Instant::now();
    let _ = std::hint::black_box(shell_words::split(text));
    let split = t.elapsed();
    let t = Instant::now();
    let d = judge();
    let took = t.elapsed();
    println!(
        "| {name} ({} bytes) | {:.1} ms | `shell_words::split` of it | {:.1} ms | {:.0}x | {} |",
        text.len(),
        took.as_secs_f64() * 1e3,
        split.as_secs_f64() * 1e3,
        took.as_secs_f64() / split.as_secs_f64().max(1e-6),
        d.authorization.as_str()
    );
}
