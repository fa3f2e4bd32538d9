//! The files a REPL's line writes or reads, as shell lines the file rules judge:
//! `open(os.path.expanduser("~/.bashrc"), "a")` is `tee ~/.bashrc` (a start-up file
//! written), `fs.readFileSync(os.homedir() + "/.ssh/id_rsa")` is `cat ~/.ssh/id_rsa` (a
//! key read). A path is read off literals and the home directory as each language names it;
//! one the line computes otherwise is not a file this can name, and nothing is said of it.

use crate::repl_tokens::{Piece, Token};

/// Calls whose first argument is a file they write.
const WRITES: &[&str] = &[
    "writefilesync",
    "appendfilesync",
    "writefile",
    "appendfile",
    "createwritestream",
    "file_put_contents",
    // Emptied to a length: `os.truncate(PATH, 0)`, `fs.truncateSync(PATH)`.
    "truncate",
    "truncatesync",
    // Deno's.
    "writetextfile",
    "writetextfilesync",
];

/// Calls that take a source and a destination, as the shell command each amounts to:
/// `shutil.copy("x", "/usr/local/bin/ls")` is `cp x /usr/local/bin/ls`.
const TWO_PATHS: &[(&str, &str)] = &[
    ("copy", "cp"),
    ("copy2", "cp"),
    ("copyfile", "cp"),
    ("copyfilesync", "cp"),
    ("copytree", "cp -r"),
    ("cpsync", "cp -r"),
    ("move", "mv"),
    ("rename", "mv"),
    ("renamesync", "mv"),
    ("replace", "mv"),
    ("symlink", "ln -s"),
    ("symlinksync", "ln -s"),
    ("symlink_to", "ln -s"),
    ("link", "ln"),
    ("linksync", "ln"),
];

/// Calls whose first argument is a file they read.
const READS: &[&str] = &[
    "readfilesync",
    "readfile",
    "createreadstream",
    "file_get_contents",
    "readlines",
    "loadtxt",
    "read_csv",
];

/// Methods of a path object (`Path.home() / ".bashrc"`) that write or read it.
const PATH_WRITES: &[&str] = &["write_text", "write_bytes"];
const PATH_READS: &[&str] = &["read_text", "read_bytes"];

/// Calls that delete the file or directory their first argument names, as `rm PATH`:
/// `os.remove(os.path.expanduser("~/.ssh/id_rsa"))` is `rm ~/.ssh/id_rsa` (a key taken).
const DELETES: &[&str] = &[
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "fs.unlink",
    "fs.unlinksync",
    "fs.rmdir",
    "fs.rmdirsync",
    "fs.promises.unlink",
    "fs.promises.rmdir",
    "file.delete",
    "file.unlink",
    "fileutils.rm",
    "fileutils.rm_f",
    "fileutils.remove",
    "fileutils.remove_file",
    "dir.delete",
    "dir.rmdir",
    "dir.unlink",
];

/// Methods of a path object that delete it (`Path.home().joinpath(".ssh/id_rsa").unlink()`).
const PATH_DELETES: &[&str] = &["unlink", "rmdir"];

/// Calls that give their first argument's path back, as a path (`expanduser("~/x")`).
const PATH_OF: &[&str] = &[
    "expanduser",
    "expand_path",
    "path",
    "str",
    "string",
    "resolve",
    "normalize",
    "realpath",
    "abspath",
    "fspath",
];

/// The shell lines (`tee PATH`, `cat PATH`) for the files `ps` writes and reads.
pub(crate) fn file_lines(ps: &[Piece]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, p) in ps.iter().enumerate() {
        let Token::Name { path, after_call } = &p.token else {
            continue;
        };
        if ps.get(k + 1).map(|p| &p.token) != Some(&Token::Punct('(')) {
            continue;
        }
        let segments: Vec<String> = path.split('.').map(str::to_ascii_lowercase).collect();
        let last = segments.last().map(String::as_str).unwrap_or_default();
        let args = crate::repl::arguments(ps, k + 1);
        if let Some(line) = two_paths(last, &args)
            .or_else(|| mode_or_signal(path, last, &args))
            .or_else(|| deleted(ps, k, path, *after_call, &args))
        {
            out.push(line);
            continue;
        }
        let first = args.first().and_then(|a| path_of(a));
        let path_method =
            PATH_WRITES.contains(&last) || PATH_READS.contains(&last) || last == "open";
        let writes = if *after_call && segments.len() == 1 && path_method {
            // A path object's own method: its receiver is the path.
            let receiver = &ps[receiver_start(ps, k)..k];
            let Some(target) = path_of(receiver) else {
                continue;
            };
            match last {
                l if PATH_WRITES.contains(&l) => Some((true, target)),
                l if PATH_READS.contains(&l) => Some((false, target)),
                "open" => Some((mode_writes(args.first().copied()), target)),
                _ => None,
            }
        } else if WRITES.contains(&last)
            || matches!(path.as_str(), "File.write" | "IO.write" | "Bun.write")
        {
            first.map(|f| (true, f))
        } else if READS.contains(&last)
            || matches!(path.as_str(), "File.read" | "IO.read" | "File.readlines")
        {
            first.map(|f| (false, f))
        } else if matches!(last, "open" | "fopen")
            && (segments.len() == 1
                || matches!(segments[0].as_str(), "io" | "codecs" | "file" | "builtins"))
        {
            first.map(|f| (mode_writes(args.get(1).copied()), f))
        } else {
            None
        };
        if let Some((write, target)) = writes {
            let program = if write { "tee" } else { "cat" };
            out.push(format!("{program} {}", quoted(&target)));
        }
    }
    out.extend(listing_deleted(ps));
    out
}

/// Calls that list a directory's files (a whole tree's: `rglob`, `walk`).
const LISTINGS: &[&str] = &[
    "rglob",
    "glob",
    "iglob",
    "walk",
    "listdir",
    "scandir",
    "iterdir",
    "readdirsync",
    "readdir",
    "entries",
    "children",
    "each_child",
];

/// A line that lists a directory and deletes (`[f.unlink() for f in
/// Path.home().rglob("*")]`, `for f in os.listdir(d): os.remove(f)`): as the shell's `find
/// DIR -type f | xargs rm -f`, DIR the place listed when the line names it, else as paths
/// the line does not show handed to `rm`.
fn listing_deleted(ps: &[Piece]) -> Option<String> {
    let mut deletes = false;
    let mut listed: Option<Option<String>> = None;
    for (k, p) in ps.iter().enumerate() {
        let Token::Name { path, after_call } = &p.token else {
            continue;
        };
        if ps.get(k + 1).map(|p| &p.token) != Some(&Token::Punct('(')) {
            continue;
        }
        let lower = path.to_ascii_lowercase();
        let last = lower.rsplit('.').next().unwrap_or_default();
        if DELETES.contains(&lower.as_str())
            || ((*after_call || lower.contains('.')) && PATH_DELETES.contains(&last))
            || crate::inline::TREE_DELETES.contains(&last)
        {
            deletes = true;
        }
        if LISTINGS.contains(&last) {
            let place = if *after_call {
                path_of(&ps[unspaced_receiver_start(ps, k)..k])
            } else {
                crate::repl::arguments(ps, k + 1)
                    .first()
                    .and_then(|a| path_of(a))
            };
            // The first place known is kept; any unknown one makes the whole unknown.
            listed = Some(match (listed, place) {
                (Some(None), _) | (_, None) => None,
                (Some(Some(known)), _) => Some(known),
                (None, Some(p)) => Some(p),
            });
        }
    }
    if !deletes {
        return None;
    }
    Some(match listed? {
        Some(place) => format!("find {} -type f | xargs rm -f", quoted(&place)),
        None => "cat '(a listing the line computes)' | xargs rm -f".to_string(),
    })
}

/// A deletion of a path the line names ([`DELETES`], [`PATH_DELETES`]), as `rm PATH`.
fn deleted(
    ps: &[Piece],
    k: usize,
    path: &str,
    after_call: bool,
    args: &[&[Piece]],
) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    let target = if DELETES.contains(&lower.as_str()) {
        path_of(args.first()?)?
    } else if after_call && PATH_DELETES.contains(&lower.as_str()) {
        path_of(&ps[receiver_start(ps, k)..k])?
    } else {
        return None;
    };
    Some(format!("rm {}", quoted(&target)))
}

/// A copy, move or link of two paths the line names, or a download to one
/// (`urlretrieve(URL, PATH)`), as its shell command.
fn two_paths(call: &str, args: &[&[Piece]]) -> Option<String> {
    let (from, to) = (args.first()?, args.get(1)?);
    if call == "urlretrieve" {
        return Some(format!("curl -o {} URL", quoted(&path_of(to)?)));
    }
    let (_, program) = TWO_PATHS.iter().find(|(c, _)| *c == call)?;
    let to = path_of(to)?;
    let from = path_of(from).unwrap_or_else(|| "FILE".into());
    Some(format!("{program} {} {}", quoted(&from), quoted(&to)))
}

/// `os.chmod(PATH, 0o4755)` as `chmod 4755 PATH`; a kill of a process the line numbers as
/// `kill -- PID`: numbers written out, `-1` (every process) included. Python's `os.kill(PID,
/// SIG)` and Node's `process.kill(PID[, SIG])` name the process first, Ruby's
/// `Process.kill(SIG, PID…)` after the signal.
fn mode_or_signal(path: &str, call: &str, args: &[&[Piece]]) -> Option<String> {
    let number = |a: &&[Piece]| {
        let tokens: Vec<&Token> = a.iter().map(|p| &p.token).collect();
        let (sign, rest) = match tokens[..] {
            [Token::Punct('-'), ref rest @ ..] => ("-", rest.to_vec()),
            _ => ("", tokens),
        };
        match rest[..] {
            [Token::Name { path, .. }] if path.chars().all(|c| c.is_ascii_alphanumeric()) => {
                let digits = path
                    .strip_prefix("0o")
                    .or_else(|| path.strip_prefix("0O"))
                    .unwrap_or(path);
                digits
                    .chars()
                    .all(|c| c.is_ascii_digit())
                    .then(|| format!("{sign}{digits}"))
            }
            _ => None,
        }
    };
    let first = args.first()?;
    match call {
        "chmod" | "chmodsync" | "lchmod" => Some(format!(
            "chmod {} {}",
            number(args.get(1)?)?,
            quoted(&path_of(first)?)
        )),
        "kill" => {
            let pids: Vec<String> = if path == "Process.kill" {
                args[1..].iter().filter_map(number).collect()
            } else {
                number(first).into_iter().collect()
            };
            (!pids.is_empty()).then(|| format!("kill -- {}", pids.join(" ")))
        }
        _ => None,
    }
}

/// A file's mode argument (`"w"`, `'a+'`, `"r"`): whether it writes. No mode reads.
fn mode_writes(arg: Option<&[Piece]>) -> bool {
    match arg.map(|a| a.iter().map(|p| &p.token).collect::<Vec<_>>()) {
        Some(t) => match t.as_slice() {
            [Token::Literal { text, .. }] => text.contains(['w', 'a', 'x', '+']),
            // `mode="w"`, `flag: 'a'`.
            [
                Token::Name { .. },
                Token::Punct('=' | ':'),
                Token::Literal { text, .. },
            ] => text.contains(['w', 'a', 'x', '+']),
            [] => false,
            // A mode the line computes: taken as a write.
            _ => true,
        },
        None => false,
    }
}

/// A path for a shell line: `~/` kept bare so the shell's rules read the home in it.
fn quoted(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("~/{}", shell_words::quote(rest)),
        None if path == "~" => "~".to_string(),
        None => shell_words::quote(path).into_owned(),
    }
}

/// Where the receiver that ends just before `k` begins, written without blanks at its own
/// level: `Path('.')` of `for p in Path('.').glob(…)`, where [`receiver_start`] reads back
/// over the loop's words too.
fn unspaced_receiver_start(ps: &[Piece], k: usize) -> usize {
    let start = receiver_start(ps, k);
    let (mut depth, mut j) = (0usize, k);
    while j > start {
        match ps[j - 1].token {
            Token::Punct(')' | ']') => depth += 1,
            Token::Punct('(' | '[') => depth = depth.saturating_sub(1),
            _ => {}
        }
        j -= 1;
        if depth == 0 && ps[j].blank_before {
            break;
        }
    }
    j
}

/// Where the expression that ends just before `k` begins: back over names, literals,
/// bracketed groups and `/` or `+` between them.
fn receiver_start(ps: &[Piece], k: usize) -> usize {
    let mut j = k;
    let mut depth = 0usize;
    while j > 0 {
        match &ps[j - 1].token {
            Token::Punct(')' | ']') => depth += 1,
            Token::Punct('(' | '[') if depth > 0 => depth -= 1,
            Token::Punct('(' | '[') => break,
            Token::Punct('/' | '+' | '.') => {}
            Token::Punct(_) if depth == 0 => break,
            _ => {}
        }
        j -= 1;
    }
    j
}

/// The path an expression names, as far as literals and the home directory show it.
pub(crate) fn path_of(arg: &[Piece]) -> Option<String> {
    let t: Vec<&Token> = arg.iter().map(|p| &p.token).collect();
    eval(&t, 0)
}

fn eval(t: &[&Token], depth: usize) -> Option<String> {
    if depth > 8 || t.is_empty() {
        return None;
    }
    // Terms joined by `/` (a path object's join) or `+` (strings put together).
    let mut parts: Vec<(char, &[&Token])> = Vec::new();
    let (mut level, mut start, mut op) = (0usize, 0usize, ' ');
    for (i, tok) in t.iter().enumerate() {
        match tok {
            Token::Punct('(' | '[' | '{') => level += 1,
            Token::Punct(')' | ']' | '}') => level = level.saturating_sub(1),
            // Lua's `..` and PHP's `.` put strings together as `+` does.
            Token::Punct('.') if level == 0 && i == start && op == '+' && !parts.is_empty() => {
                start = i + 1;
            }
            Token::Punct(c @ ('/' | '+' | '.')) if level == 0 => {
                parts.push((op, &t[start..i]));
                (start, op) = (i + 1, if *c == '.' { '+' } else { *c });
            }
            _ => {}
        }
    }
    if !parts.is_empty() {
        parts.push((op, &t[start..]));
        let mut out = String::new();
        for (op, part) in parts {
            let text = eval(part, depth + 1)?;
            if op == '/' && !out.ends_with('/') && !text.starts_with('/') {
                out.push('/');
            }
            out.push_str(&text);
        }
        return Some(out);
    }
    term(t, depth)
}

fn term(t: &[&Token], depth: usize) -> Option<String> {
    if crate::repl_trees::is_home_tokens(t) {
        return Some("~".to_string());
    }
    // `Path("~/.bashrc").expanduser()`: the path its receiver names, `~` expanded.
    if let [
        receiver @ ..,
        Token::Name {
            path,
            after_call: true,
        },
        Token::Punct('('),
        Token::Punct(')'),
    ] = t
        && matches!(path.as_str(), "expanduser" | "resolve" | "absolute")
    {
        return eval(receiver, depth + 1);
    }
    if let Some(joined) = joined_onto(t, depth) {
        return Some(joined);
    }
    match t {
        [
            Token::Literal {
                text,
                computed: false,
            },
        ] => Some(text.clone()),
        [
            Token::Literal {
                text,
                computed: true,
            },
        ] => template(text),
        [Token::Punct('('), inner @ .., Token::Punct(')')] => eval(inner, depth + 1),
        [
            Token::Name { path, .. },
            Token::Punct('('),
            inner @ ..,
            Token::Punct(')'),
        ] => {
            let last = path
                .rsplit('.')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            let args = split_args(inner);
            if last == "join" || last == "joinpath" {
                let parts: Option<Vec<String>> = args.iter().map(|a| eval(a, depth + 1)).collect();
                return Some(parts?.join("/"));
            }
            PATH_OF
                .contains(&last.as_str())
                .then(|| args.first().and_then(|a| eval(a, depth + 1)))
                .flatten()
        }
        _ => None,
    }
}

/// `RECEIVER.joinpath(…)` after a call (`Path.home().joinpath(".bashrc")`): the call must
/// end the term.
fn joined_onto(t: &[&Token], depth: usize) -> Option<String> {
    let at = t.iter().rposition(|tok| {
        matches!(tok, Token::Name { path, after_call: true } if path.eq_ignore_ascii_case("joinpath"))
    })?;
    let (Some(Token::Punct('(')), Some(Token::Punct(')'))) = (t.get(at + 1), t.last()) else {
        return None;
    };
    let mut out = eval(&t[..at], depth + 1)?;
    for a in split_args(&t[at + 2..t.len() - 1]) {
        out.push('/');
        out.push_str(&eval(a, depth + 1)?);
    }
    Some(out)
}

/// A template string's text with the home directory put in for its `${…}`: `None` when
/// something else is put in.
fn template(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}')? + at;
        let inner = &rest[at + 2..end];
        if !(inner.contains("homedir()") || inner.ends_with("HOME") || inner.contains("HOME'")) {
            return None;
        }
        out.push('~');
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

fn split_args<'a>(t: &'a [&'a Token]) -> Vec<&'a [&'a Token]> {
    let mut out = Vec::new();
    let (mut level, mut start) = (0usize, 0usize);
    for (i, tok) in t.iter().enumerate() {
        match tok {
            Token::Punct('(' | '[' | '{') => level += 1,
            Token::Punct(')' | ']' | '}') => level = level.saturating_sub(1),
            Token::Punct(',') if level == 0 => {
                out.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&t[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repl_tokens::pieces;

    fn lines(code: &str) -> Vec<String> {
        file_lines(&pieces(code, 10_000))
    }

    #[test]
    fn files_written_and_read_are_named() {
        for (code, line) in [
            (
                "open(\"/root/.bashrc\", \"a\").write(\"x\")",
                "tee /root/.bashrc",
            ),
            (
                "open(os.path.expanduser(\"~/.bashrc\"), \"a\")",
                "tee ~/.bashrc",
            ),
            (
                "fs.appendFileSync(os.homedir() + \"/.bashrc\", \"x\")",
                "tee ~/.bashrc",
            ),
            (
                "fs.writeFileSync(`${os.homedir()}/.profile`, s)",
                "tee ~/.profile",
            ),
            (
                "(Path.home() / \".bashrc\").write_text(\"x\")",
                "tee ~/.bashrc",
            ),
            (
                "Path.home().joinpath(\".bashrc\").write_text(\"x\")",
                "tee ~/.bashrc",
            ),
            (
                "File.write(File.expand_path(\"~/.bashrc\"), \"x\")",
                "tee ~/.bashrc",
            ),
            (
                "open(os.path.join(os.path.expanduser('~'), '.ssh', 'id_rsa')).read()",
                "cat ~/.ssh/id_rsa",
            ),
            (
                "fs.readFileSync(os.homedir() + '/.ssh/id_rsa', 'utf8')",
                "cat ~/.ssh/id_rsa",
            ),
            ("open('notes.txt', 'w').write('hi')", "tee notes.txt"),
            ("open('/etc/hosts').read()", "cat /etc/hosts"),
        ] {
            assert_eq!(lines(code), vec![line.to_string()], "{code}");
        }
        assert!(lines("open(name, 'w')").is_empty());
        assert!(lines("print(x)").is_empty());
    }
}
