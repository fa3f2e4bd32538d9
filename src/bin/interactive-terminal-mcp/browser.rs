//! Opening the page in the operator's browser (`--open`): `$BROWSER` (a `%s` in it stands
//! for the address), else `xdg-open`. The opener runs in a session of its own that the
//! server lets go: a browser it starts is the person's, and is never killed as a leftover
//! when the server ends.

use std::process::Stdio;

use itmcp::process::reaper;

/// The command that opens `url`: program and arguments.
fn opener(url: &str) -> Result<(String, Vec<String>), String> {
    if let Ok(b) = std::env::var("BROWSER")
        && !b.trim().is_empty()
    {
        let mut words = shell_words::split(&b).map_err(|e| format!("$BROWSER: {e}"))?;
        if words.is_empty() {
            return Err("$BROWSER is empty".into());
        }
        let program = words.remove(0);
        if words.iter().any(|w| w.contains("%s")) {
            for w in &mut words {
                *w = w.replace("%s", url);
            }
        } else {
            words.push(url.to_string());
        }
        return Ok((program, words));
    }
    itmcp::terminal::shell::which("xdg-open")
        .map(|p| (p.display().to_string(), vec![url.to_string()]))
        .ok_or_else(|| "no browser to open: set $BROWSER or install xdg-utils".to_string())
}

/// Open `url` in the browser; returns once the opener started.
pub fn open(url: &str) -> Result<(), String> {
    let (program, args) = opener(url)?;
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(false);
    // The opener (and the browser it may start) a session of its own, which the server
    // lets go.
    itmcp::os::detach_session(&mut cmd);
    // The browser gets the open-file limit the server was given, as programs do.
    itmcp::process::open_files::give_back(&mut cmd);
    let mut child = {
        let mut guard = reaper::spawn_guard();
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        if let Some(pid) = child.id() {
            guard.register(pid as i32);
            reaper::release_session(pid as i32);
        }
        child
    };
    tokio::spawn(async move {
        let pid = child.id();
        let _ = child.wait().await;
        if let Some(pid) = pid {
            reaper::unregister(pid as i32);
        }
    });
    Ok(())
}
