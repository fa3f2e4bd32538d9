//! A command line fish would not run, found before it is typed.
//!
//! Fish has no continuation prompt and no hook for a line it refuses. After Enter, a line
//! with an unclosed quote or bracket, a block without its `end`, or a syntax error (a
//! here-document, `a=1`, `${HOME}`) stays in its line editor with nothing on the screen to
//! mark it, and every command line typed after it is added to it: the terminal is lost to
//! the agent. So a line for fish is first parsed by the terminal's own fish with
//! `--no-execute` (it runs nothing and reads no config), and one it refuses is never typed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use super::protocol::{OpError, OpErrorKind};
use super::shell::{ShellKind, kind_of, program_of};
use super::term::Terminal;
use crate::process::reaper;

/// How long fish may take to parse a line; past it the line is typed unchecked, as it was
/// before this check existed (fish parses a line in about a millisecond).
const PARSE_TIMEOUT: Duration = Duration::from_secs(2);
/// The status `fish --no-execute` exits with when it cannot parse its input. Any other
/// failure (an old fish without the option, a fish that cannot start) lets the line through.
const PARSE_ERROR_STATUS: i32 = 127;
/// How much of fish's complaint is passed on to the agent.
const MESSAGE_MAX: usize = 2000;

/// Refuse a command line that the fish in `t` would keep in its line editor; any other shell
/// is left to its own continuation prompt (`submission`). The fish is the one the terminal
/// runs now: a bash terminal whose ~/.bashrc ends in `exec fish` runs fish. (A process that
/// is no shell — the sandbox's launcher above a sandboxed shell — says nothing of it.)
pub(super) async fn check(t: &Terminal, line: &str) -> Result<(), OpError> {
    let Some(fish) = fish_of(t) else {
        return Ok(());
    };
    match refusal(&fish, line).await {
        None => Ok(()),
        Some(said) => Err(OpError::new(
            OpErrorKind::Invalid,
            format!(
                "terminal {} runs fish, which cannot run this command line (fish would keep it \
                 in its line editor and add every later line to it), so nothing was typed; \
                 send the whole command line in fish's syntax. fish says:\n{said}",
                t.id
            ),
        )),
    }
}

/// The fish the terminal runs now, if it runs fish.
pub(super) fn fish_of(t: &Terminal) -> Option<PathBuf> {
    let now = program_of(t.pid)
        .filter(|p| kind_of(p) != ShellKind::Plain)
        .unwrap_or_else(|| PathBuf::from(&t.shell));
    (kind_of(&now) == ShellKind::Fish).then_some(now)
}

/// What fish says of `line` when it would not run it; `None` when it would, or when fish
/// could not be asked.
pub async fn refusal(fish: &Path, line: &str) -> Option<String> {
    match tokio::time::timeout(PARSE_TIMEOUT, parse(fish, line)).await {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(e)) => {
            tracing::debug!(fish = %fish.display(), error = %e, "cannot check a line with fish");
            None
        }
        Err(_) => {
            tracing::debug!(fish = %fish.display(), "fish took too long to check a line");
            None
        }
    }
}

async fn parse(fish: &Path, line: &str) -> std::io::Result<Option<String>> {
    let mut cmd = Command::new(fish);
    cmd.arg("--no-execute")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Registered as the server's own child (the reaper kills and reaps any other one) for
    // as long as this waits for it, a timeout's drop included (the child, declared last,
    // is dropped and killed first).
    let (_registered, mut child) = {
        let mut guard = reaper::spawn_guard();
        let child = cmd.spawn()?;
        let pid = child.id().map(|p| p as i32);
        if let Some(pid) = pid {
            guard.register(pid);
        }
        (Registered(pid), child)
    };
    said(&mut child, line).await
}

/// Unregisters the checking fish from the reaper when the check ends, however it ends.
struct Registered(Option<i32>);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            reaper::unregister(pid);
        }
    }
}

/// What the started fish says of the line on its stdin.
async fn said(child: &mut Child, line: &str) -> std::io::Result<Option<String>> {
    if let Some(mut stdin) = child.stdin.take() {
        // A fish that stops reading early has said all it will; its status still tells.
        let _ = stdin.write_all(line.as_bytes()).await;
    }
    let mut err = Vec::new();
    if let Some(mut stderr) = child.stderr.take() {
        stderr.read_to_end(&mut err).await?;
    }
    let status = child.wait().await?;
    if status.code() != Some(PARSE_ERROR_STATUS) {
        return Ok(None);
    }
    let said = String::from_utf8_lossy(&err);
    let said = said.trim_end();
    let cut = said
        .char_indices()
        .nth(MESSAGE_MAX)
        .map_or(said, |(i, _)| &said[..i]);
    Ok(Some(cut.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fish_refuses_what_it_would_keep_in_its_editor_and_passes_the_rest() {
        let Some(fish) = crate::program::which("fish") else {
            eprintln!("no fish on this machine: the integration tests with fish cover this");
            return;
        };
        for bad in [
            "echo (",
            "cat <<EOF\nhi\nEOF",
            "echo \"it's",
            "for i in 1 2",
            "a=1",
        ] {
            let said = refusal(&fish, bad).await;
            assert!(
                said.as_deref().is_some_and(|s| s.contains("fish")),
                "{bad:?}: {said:?}"
            );
        }
        for good in [
            "",
            "echo hi",
            "for i in 1 2\n  echo $i\nend",
            "echo $(pwd) && true",
            "# c",
        ] {
            assert_eq!(refusal(&fish, good).await, None, "{good:?}");
        }
        // Not a fish: nothing is refused.
        assert_eq!(refusal(Path::new("/bin/false"), "echo (").await, None);
    }
}
