//! Another terminal's device: what a person types there read (`cat /dev/pts/1` takes the
//! keys of whoever uses it, passwords too), text shown there written (`echo … > /dev/pts/1`,
//! a fake prompt put in front of a person), keys pushed into it (`ttyecho`), a terminal
//! taken over (`reptyr`), a console's screen read (`/dev/vcs1`). The command's own terminal
//! (`/dev/tty`) and serial lines (`/dev/ttyUSB0`, `/dev/ttyACM0`) are not such devices.

use super::argv::Cmd;
use super::*;

/// Programs that reach into other terminals by what they are.
const PROGRAMS: &[&str] = &["ttyecho", "conspy", "reptyr", "write", "wall"];

/// Whether a normalized path is a terminal a person may be using, other than the command's
/// own: a pseudo-terminal by number, a virtual console, the system console, a console's
/// screen memory.
pub(super) fn other_terminal(path: &str) -> bool {
    let Some(dev) = path.strip_prefix("/dev/") else {
        return false;
    };
    let number = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit());
    dev.strip_prefix("pts/").is_some_and(number)
        || dev.strip_prefix("tty").is_some_and(number)
        || dev == "console"
        || dev.starts_with("vcs")
}

/// The finding for reading or writing `path`, when it is another terminal.
pub(super) fn terminal_opened(path: &str, argv: &[String], cwd: Option<&str>) -> Option<Finding> {
    other_terminal(&normalize(path, cwd)).then(|| {
        finding(
            Severity::Warn,
            "other_terminal",
            format!(
                "opens {path}, another terminal: what a person types there can be read, and \
                 what they are shown written"
            ),
            argv,
        )
    })
}

/// A command that names another terminal's device (an operand, `if=`/`of=`, a redirection),
/// or a program that reaches into other terminals.
pub(super) fn other_terminals(c: &Cmd<'_>, redirects: &[String], out: &mut Vec<Finding>) {
    let named = c
        .args
        .iter()
        .map(|a| a.split_once('=').map_or(a.as_str(), |(_, v)| v))
        .chain(redirects.iter().map(String::as_str))
        .find_map(|a| terminal_opened(a, c.argv, c.cwd));
    if let Some(f) = named {
        out.push(f);
    } else if PROGRAMS.contains(&c.name.as_str()) {
        out.push(finding(
            Severity::Warn,
            "other_terminal",
            format!(
                "{} reaches into other terminals (shows them text, types into them, or takes \
                 them over)",
                c.name
            ),
            c.argv,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_terminal_is_told_from_the_commands_own_and_serial_lines() {
        for p in [
            "/dev/pts/1",
            "/dev/tty1",
            "/dev/console",
            "/dev/vcs",
            "/dev/vcsa2",
        ] {
            assert!(other_terminal(p), "{p}");
        }
        for p in [
            "/dev/tty",
            "/dev/ttyUSB0",
            "/dev/ttyACM0",
            "/dev/ttyS0",
            "/dev/pts/ptmx",
        ] {
            assert!(!other_terminal(p), "{p}");
        }
        let p = crate::Policy::default();
        for line in [
            "cat /dev/pts/1",
            "echo hi > /dev/pts/3",
            "dd if=/dev/pts/2 of=keys",
            "cat < /dev/tty2",
            "ttyecho -n /dev/pts/1 id",
            "reptyr 123",
            "wall hi",
        ] {
            assert_eq!(
                p.evaluate(line, None).authorization,
                crate::Authorization::AllowedWithWarning,
                "{line}"
            );
        }
        for line in ["echo hi > /dev/tty", "cat /dev/ttyUSB0", "tty"] {
            assert_eq!(
                p.evaluate(line, None).authorization,
                crate::Authorization::Allowed,
                "{line}"
            );
        }
    }
}
