//! What the server, its spawner and a session's supervisor say to each other.
//!
//! Server → spawner, on the spawner's socket: one message per request (see `requests`), its
//! JSON a [`SpawnRequest`], with the descriptors the new session needs (`SCM_RIGHTS`): the
//! supervisor's control socket, then stdout and stderr (headless) or the terminal
//! (interactive).
//!
//! Server ↔ supervisor, on the control socket, one line each way per message:
//! `supervisor <pid>` (first, before the program starts) | `started <pid> <supervisor pid>` | `error <errno>` | `exit code <n>` | `exit signal <n>` | `killed <pid>…`
//! from the supervisor, `kill` from the server. The server closing its end means "kill".

use serde::{Deserialize, Serialize};

/// Longest request the spawner accepts (a command line is at most the request size limit).
pub const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;

/// Where the session's program reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// stdin `/dev/null`, stdout and stderr the two passed pipes, no controlling terminal.
    Headless,
    /// stdin, stdout and stderr the passed terminal, which becomes the session's controlling
    /// terminal; the session ends with the program.
    Terminal,
}

impl Mode {
    /// Descriptors passed with a request of this mode, after the control socket.
    pub fn stdio_fds(self) -> usize {
        match self {
            Mode::Headless => 2,
            Mode::Terminal => 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpawnRequest {
    pub mode: Mode,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    /// Set on top of the spawner's environment (the server's own, inherited at its start).
    pub env: Vec<(String, String)>,
    /// The Landlock sandbox the supervisor puts itself in before starting the program.
    #[serde(default)]
    pub landlock: Option<crate::sandbox::landlock::Plan>,
}

/// How the session's program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildExit {
    Code(i32),
    Signal(i32),
    /// The supervisor went away without saying (it was killed).
    Unknown,
}

/// A message from a supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// The supervisor took the request: its pid as the server sees it (so that the server
    /// can kill it should it stop answering, even before the program starts).
    Supervisor(i32),
    /// The program's pid and the supervisor's, as the server sees them.
    Started {
        program: i32,
        supervisor: i32,
    },
    Error(i32),
    Exited(ChildExit),
    Killed(Vec<i32>),
}

impl Report {
    pub fn line(&self) -> String {
        match self {
            Report::Supervisor(p) => format!("supervisor {p}\n"),
            Report::Started {
                program,
                supervisor,
            } => format!("started {program} {supervisor}\n"),
            Report::Error(e) => format!("error {e}\n"),
            Report::Exited(ChildExit::Code(c)) => format!("exit code {c}\n"),
            Report::Exited(ChildExit::Signal(s)) => format!("exit signal {s}\n"),
            Report::Exited(ChildExit::Unknown) => "exit unknown\n".to_string(),
            Report::Killed(pids) => {
                let list: Vec<String> = pids.iter().map(i32::to_string).collect();
                format!("killed {}\n", list.join(" "))
            }
        }
    }

    pub fn parse(line: &str) -> Option<Report> {
        let mut w = line.split_ascii_whitespace();
        let head = w.next()?;
        let num = |s: Option<&str>| s.and_then(|v| v.parse::<i32>().ok());
        match head {
            "supervisor" => num(w.next()).map(Report::Supervisor),
            "started" => Some(Report::Started {
                program: num(w.next())?,
                supervisor: num(w.next())?,
            }),
            "error" => num(w.next()).map(Report::Error),
            "exit" => match w.next()? {
                "code" => num(w.next()).map(|c| Report::Exited(ChildExit::Code(c))),
                "signal" => num(w.next()).map(|s| Report::Exited(ChildExit::Signal(s))),
                "unknown" => Some(Report::Exited(ChildExit::Unknown)),
                _ => None,
            },
            "killed" => Some(Report::Killed(w.filter_map(|p| p.parse().ok()).collect())),
            _ => None,
        }
    }
}

/// The server's one command.
pub const KILL: &[u8] = b"kill\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        for r in [
            Report::Started {
                program: 42,
                supervisor: 41,
            },
            Report::Error(2),
            Report::Supervisor(7),
            Report::Exited(ChildExit::Code(3)),
            Report::Exited(ChildExit::Signal(9)),
            Report::Exited(ChildExit::Unknown),
            Report::Killed(vec![]),
            Report::Killed(vec![5, 6]),
        ] {
            assert_eq!(Report::parse(&r.line()), Some(r));
        }
        assert_eq!(Report::parse("bogus"), None);
        assert_eq!(Report::parse("exit code x"), None);
    }
}
