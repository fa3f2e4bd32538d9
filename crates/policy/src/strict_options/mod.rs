//! The options the strict allowlist admits for each reading tool, and how those tools'
//! parsers read a command line.
//!
//! Why options are listed, not refused by name: the programs accept more than the names a
//! deny-list holds. GNU tools (and git) resolve an abbreviated long option to the one it
//! begins — `sort --compress-prog=sh` ran `sh` for every temporary file, `sort --outp=FILE`
//! wrote anywhere, `date --se=…` set the clock — so a list of refused names matched literally
//! let all of them through. Here each program lists the options it is admitted with, and a
//! word is read as its own parser reads it (`getopt_long`: short options clustered, a
//! required value taken from the rest of the word or the next word, `--name=value`, options
//! anywhere before `--`); an option not listed, or abbreviated, is refused. An abbreviation
//! is never admitted, not even of an admitted option: it resolves against the program's own
//! list, which may hold longer names this one does not know.

mod find;
mod git;
mod tables;
mod text_tables;

pub use find::check_find;
pub use git::git_spec;

/// How an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    No,
    Required,
    Optional,
}

/// A program's admitted options, in `getopt_long`'s terms: `short` as getopt's option string
/// (`k:` takes a value, `k::` may take one attached), `long` as names, `name=` taking a value,
/// `name=?` taking one only as `--name=value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub short: &'static str,
    pub long: &'static [&'static str],
}

impl Spec {
    fn short_value(&self, c: char) -> Option<Value> {
        for (i, ch) in self.short.char_indices() {
            if ch == ':' {
                continue;
            }
            let rest = &self.short[i + ch.len_utf8()..];
            let value = if rest.starts_with("::") {
                Value::Optional
            } else if rest.starts_with(':') {
                Value::Required
            } else {
                Value::No
            };
            if ch == c {
                return Some(value);
            }
        }
        None
    }

    fn long_value(&self, name: &str) -> Option<Value> {
        self.long.iter().find_map(|l| {
            if let Some(n) = l.strip_suffix("=?") {
                (n == name).then_some(Value::Optional)
            } else if let Some(n) = l.strip_suffix('=') {
                (n == name).then_some(Value::Required)
            } else {
                (*l == name).then_some(Value::No)
            }
        })
    }

    /// Check `words` (the arguments after the program's name) as `getopt_long` reads them.
    pub fn check(&self, program: &str, words: &[String]) -> Result<(), String> {
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            i += 1;
            if w == "--" {
                // Everything after is an operand.
                return Ok(());
            }
            if let Some(long) = w.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                match self.long_value(name) {
                    None => return Err(refused_long(program, name, self)),
                    Some(Value::No) if attached => {
                        return Err(format!("{program}: --{name} takes no value"));
                    }
                    // The next word is the value, whatever it looks like.
                    Some(Value::Required) if !attached => i += 1,
                    Some(_) => {}
                }
                continue;
            }
            let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) else {
                // An operand (`-` alone is standard input): getopt_long reads on past it.
                continue;
            };
            for (at, c) in cluster.char_indices() {
                match self.short_value(c) {
                    None => {
                        return Err(format!(
                            "{program}: the option -{c} is not admitted here (admitted: {})",
                            self.describe()
                        ));
                    }
                    Some(Value::No) => {}
                    Some(Value::Optional) => break,
                    Some(Value::Required) => {
                        // The rest of the word is the value; else the next word is.
                        if at + c.len_utf8() == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// What is admitted, for messages.
    pub fn describe(&self) -> String {
        let shorts: String = self.short.chars().filter(|c| *c != ':').collect();
        let mut parts = Vec::new();
        if !shorts.is_empty() {
            parts.push(format!("-[{shorts}]"));
        }
        parts.extend(
            self.long
                .iter()
                .map(|l| format!("--{}", l.trim_end_matches("=?").trim_end_matches('='))),
        );
        parts.join(" ")
    }
}

fn refused_long(program: &str, name: &str, spec: &Spec) -> String {
    let abbreviates: Vec<&str> = spec
        .long
        .iter()
        .map(|l| l.trim_end_matches("=?").trim_end_matches('='))
        .filter(|l| l.starts_with(name) && !name.is_empty())
        .collect();
    if abbreviates.is_empty() {
        format!("{program}: the option --{name} is not admitted here")
    } else {
        format!(
            "{program}: --{name} abbreviates an option (the program resolves it against its \
             own list, which may hold more than --{}); write the option in full",
            abbreviates.join(", --")
        )
    }
}

/// The admitted options of `program`, when it is one of the reading tools listed here.
pub fn spec(program: &str) -> Option<&'static Spec> {
    tables::FILE_SPECS
        .iter()
        .chain(text_tables::TEXT_SPECS)
        .find(|(p, _)| *p == program)
        .map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(program: &str, line: &str) -> Result<(), String> {
        let words: Vec<String> = shell_words::split(line).unwrap_or_default();
        match program {
            "find" => check_find(&words),
            _ => spec(program).expect("listed").check(program, &words),
        }
    }

    #[test]
    fn options_are_read_as_getopt_long_reads_them() {
        assert!(check("sort", "-r -k 2 -t , names.txt").is_ok());
        assert!(check("sort", "-k2,2n -- -o").is_ok(), "after --, operands");
        assert!(
            check("sort", "names.txt --reverse --key=2").is_ok(),
            "options anywhere"
        );
        for bad in [
            "-o out x",
            "-uo out x",
            "--output=out x",
            "--outp=out x",
            "--o=out x",
            "--compress-program=sh x",
            "--compress-prog=sh x",
            "-T /etc x",
            "--temporary-directory=/etc x",
        ] {
            let why = check("sort", bad).unwrap_err();
            assert!(!why.is_empty(), "{bad}");
        }
        // An abbreviation of an admitted option is refused too, and said so.
        let why = check("sort", "--rev x").unwrap_err();
        assert!(why.contains("abbreviates"), "{why}");
        // A value is the next word whatever it looks like.
        assert!(check("grep", "-e --output x").is_ok());
        assert!(check("grep", "-e-x file").is_ok());
        assert!(check("head", "-20 file").is_ok());
        assert!(check("tail", "-n +5 -f log").is_ok());
        assert!(check("date", "+%s").is_ok());
        assert!(check("date", "-u -d yesterday").is_ok());
        for bad in ["-s 2020-01-01", "--set=2020-01-01", "--se=2020", "--s=2020"] {
            assert!(check("date", bad).is_err(), "{bad}");
        }
        assert!(check("file", "-b x").is_ok());
        assert!(check("file", "-C").is_err());
        assert!(check("file", "--comp").is_err());
        assert!(check("ls", "--color=auto -la").is_ok());
        assert!(check("ls", "--all=x").is_err(), "a flag takes no value");
        // tree's listing options pass; what writes a file, or runs tree again, does not.
        assert!(check("tree", "-a -L 2 -I target --dirsfirst src").is_ok());
        for bad in ["-o out", "-ao out", "--output=out", "-R -L 2", "--no-such"] {
            assert!(check("tree", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn git_reads_with_its_reading_options_only() {
        let git = |sub: &str, line: &str| {
            let words: Vec<String> = shell_words::split(line).unwrap_or_default();
            git_spec(sub)
                .expect("listed")
                .check(&format!("git {sub}"), &words)
        };
        assert!(git("log", "--oneline -n 5 --graph").is_ok());
        assert!(git("log", "-p -- src").is_ok());
        assert!(git("diff", "--stat HEAD~1").is_ok());
        assert!(git("status", "-sb --porcelain=v2").is_ok());
        for (sub, bad) in [
            ("diff", "--output=/tmp/x"),
            ("diff", "--outp=/tmp/x"),
            ("diff", "--ext-diff"),
            ("log", "--textconv -p"),
            ("log", "--show-signature"),
            ("show", "--output /tmp/x"),
            ("cat-file", "--filters HEAD:x"),
            ("cat-file", "--textconv HEAD:x"),
        ] {
            assert!(git(sub, bad).is_err(), "git {sub} {bad}");
        }
        assert!(git_spec("push").is_none());
    }

    #[test]
    fn find_admits_its_reading_words_only() {
        assert!(check("find", ". -name '*.rs' -type f -print").is_ok());
        assert!(check("find", ". ( -name a -o -name b ) -newermt 2020-01-01").is_ok());
        assert!(
            check("find", ". -name -exec").is_ok(),
            "a value, not an action"
        );
        for bad in [
            ". -exec rm {} ;",
            ". -execdir ls ;",
            ". -ok rm {} ;",
            ". -delete",
            ". -fprint /tmp/x",
            ". -fls /tmp/x",
            "-D exec .",
            ". -unknown",
        ] {
            assert!(check("find", bad).is_err(), "{bad}");
        }
    }
}
