//! Every command a line will run: each simple command of the parse, looked through its
//! wrappers, with what the line feeds it (a heredoc, a here-string, `echo … |`, a pipe), the
//! variables the line itself assigns expanded (`X='rm -rf /'; $X`), and the lines it hands
//! to nested shells parsed in turn.

use std::cell::Cell;
use std::collections::HashMap;

use super::expansion::{expand, expand_in_word, expand_unsplit};
use super::lex::{self, COMPUTED, Simple};
use super::limits::{MAX_DEPTH, NESTED_BUDGET, spend_on_text};
use super::printed::literal_output;
use super::variables::{assigned_by_builtin, judge_assignment};
use super::wrappers::look_through_budgeted;
use super::written::{Ran, Written, windows_script};
use crate::stdin::Stdin;
/// Most variables a line may assign and still have them expanded.
const MAX_VARIABLES: usize = 256;

/// One argv a line will run, with the files its command redirects output onto.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    pub argv: Vec<String>,
    /// Given with the command's first argv only: they are judged once per command.
    pub redirects: Vec<String>,
}

/// Everything found in a line.
#[derive(Debug, Default)]
pub struct Found {
    pub runs: Vec<Run>,
    /// Parts that could not be parsed.
    pub errors: Vec<String>,
    /// PowerShell / cmd.exe scripts met on the way.
    pub powershell: Vec<String>,
    /// Shells and interpreters running code the line does not show (`… | sh`).
    pub opaque: Vec<(String, String)>,
    /// Commands whose program is computed at run time (`$CMD args`, `$(…) args`).
    pub computed: Vec<String>,
    /// Why some of what the line runs was not followed (nesting too deep, too much nested
    /// text): such a line cannot be judged, so it is refused.
    pub too_complex: Vec<String>,
    /// Variables the line sets that carry code or change how later words are read
    /// (`PROMPT_COMMAND=…`, `LD_PRELOAD=…`, `IFS=…`), with the command they were set for.
    pub code_env: Vec<(String, String)>,
    /// Programs named by a glob (`/bin/r?`), with their command: what runs is whatever the
    /// glob matches when the shell expands it (judged against the file system).
    pub globbed: Vec<(String, String)>,
    /// Files read through an input redirection (`< file`), with their command's argv.
    pub reads: Vec<(String, Vec<String>)>,
    /// The lines run inside the line (`sh -c '…'`, `ssh host '…'`, `eval`, a value that
    /// runs): the rules on a line's shape (a listing piped into `xargs rm`) read them too.
    pub nested_lines: Vec<String>,
}

/// Whether a program word is computed by the shell before it runs: a variable or a
/// substitution — what runs is not what the line shows. (A brace expansion is made here
/// before the program is judged; a glob is judged against the file system: `globbed`.)
pub fn computed_word(word: &str) -> bool {
    word.contains(COMPUTED) || word.contains('$') || word.contains('`')
}

/// Whether a program word is a glob the shell expands (`/bin/r?`, `r*`).
pub fn glob_word(word: &str) -> bool {
    word != "[" && word != "[[" && word.contains(['*', '?', '['])
}

/// Every word brace-expanded as the shell does it (`{rm,-rf,~}` is `rm -rf ~`): the
/// program word included, so what the expansion names is what is judged.
fn brace_expanded(argv: &[String]) -> Vec<String> {
    argv.iter()
        .flat_map(|w| super::rules::reading::brace_expand(w))
        .collect()
}

pub fn all_commands(line: &str) -> Found {
    let mut found = Found::default();
    let budget = Cell::new(NESTED_BUDGET);
    walk_line(line, 0, &budget, &mut found);
    if budget.get() == 0 {
        found.too_complex.push(format!(
            "more nested commands or nested script text than are judged ({NESTED_BUDGET} commands, or KiB)"
        ));
    }
    found
}

fn walk_line(line: &str, depth: usize, budget: &Cell<usize>, found: &mut Found) {
    if depth > MAX_DEPTH {
        found
            .too_complex
            .push(format!("shells nested more than {MAX_DEPTH} deep"));
        return;
    }
    // A nested script costs one unit per KiB as well: re-parsing a long line at every level
    // (`eval eval … cmd`) is what would make judging slow.
    if depth > 0 && !spend_on_text(budget, line) {
        return;
    }
    if depth > 0 {
        found.nested_lines.push(line.to_string());
    }
    let parsed = lex::parse_shared(line);
    found.errors.extend(parsed.errors.iter().cloned());
    if parsed.too_deep {
        found
            .too_complex
            .push("command substitutions nested too deeply".into());
    }
    let mut vars: HashMap<String, String> = HashMap::new();
    // Files the line writes (`echo 'rm -rf ~' > x.sh`, `nc -l 9 > f`): a script the same
    // line then runs is judged by the text it wrote, or warned when the line does not show it.
    let mut written = Written::new(&parsed.commands);
    let mut previous: Option<&Simple> = None;
    for c in &parsed.commands {
        let stdin = stdin_of(c, previous);
        let exported = c.argv.first().is_some_and(|w| {
            matches!(
                w.as_str(),
                "export" | "declare" | "typeset" | "local" | "readonly"
            )
        });
        // fish's `set -x NAME VALUE…` (also `-gx`, `-Ux`, `--export`) exports as `export
        // NAME=VALUE` does; bash's `set -x` takes no name, so nothing is read into it there.
        let fish_set = (c.argv.first().is_some_and(|w| w == "set")
            && c.argv.get(1).is_some_and(|o| o.starts_with('-')))
        .then(|| {
            let mut words = c.argv[1..].iter().skip_while(|w| w.starts_with('-'));
            let name = words.next()?;
            let value: Vec<&str> = words.map(String::as_str).collect();
            Some((name.clone(), value.join(":")))
        })
        .flatten();
        // make's `NAME=VALUE` arguments set its variables over the makefile's: `make
        // CC='sh -c …'` or `make SHELL=…` runs the value for every recipe.
        let make_vars = c
            .argv
            .first()
            .is_some_and(|w| matches!(&*crate::wrappers::basename(w), "make" | "gmake"));
        let set_here: Vec<(String, String)> = c
            .assignments
            .iter()
            .cloned()
            .chain(fish_set)
            .chain(
                c.argv
                    .iter()
                    .skip(1)
                    .filter(|_| make_vars)
                    .filter_map(|w| w.split_once('='))
                    .filter(|(k, _)| {
                        !k.is_empty() && k.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                    })
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            )
            .chain(c.argv.iter().skip(1).filter(|_| exported).filter_map(|w| {
                w.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            }))
            .collect();
        let mut value_lines = Vec::new();
        for (name, value) in &set_here {
            judge_assignment(
                name,
                &expand_in_word(value, &vars),
                &c.argv,
                &mut found.code_env,
                &mut value_lines,
            );
        }
        // `read PROMPT_COMMAND <<< …`, `printf -v PS1 …`: a value the line computes, into
        // a variable whose value runs.
        for name in assigned_by_builtin(&c.argv) {
            judge_assignment(
                &name,
                crate::lex::COMPUTED,
                &c.argv,
                &mut found.code_env,
                &mut value_lines,
            );
        }
        for l in value_lines {
            walk_line(&l, depth + 1, budget, found);
        }
        if c.argv.is_empty() || exported {
            let assigned = c.assignments.iter().cloned().chain(
                c.argv
                    .iter()
                    .skip(1)
                    .filter_map(|w| w.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            );
            // `declare -n r=c` makes `$r` the value of `c`, not the word `c`: such a name
            // is left unknown, so what it expands to is computed.
            let nameref = exported
                && c.argv
                    .iter()
                    .skip(1)
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('n'));
            for (k, v) in assigned {
                if nameref {
                    vars.remove(&k);
                } else if vars.len() < MAX_VARIABLES || vars.contains_key(&k) {
                    vars.insert(k, v);
                }
            }
        }
        let mut simple = c.clone();
        simple.argv = expand(&c.argv, &vars);
        match written.runs(&simple.argv, &c.reads) {
            Some(Ran::Lines(text)) => {
                // A batch or PowerShell file is read by those rules too.
                if simple.argv.first().is_some_and(|w| windows_script(w)) {
                    found.powershell.push(text.clone());
                }
                walk_line(&text, depth + 1, budget, found);
            }
            Some(Ran::Code { interpreter, text }) => {
                let fed = Simple {
                    argv: vec![interpreter],
                    ..Simple::default()
                };
                visit(&fed, &Stdin::Literal(text), depth, budget, found);
            }
            Some(Ran::Unshown(file)) => found.opaque.push((
                format!("runs {file}, which this line writes with text it does not show"),
                simple.argv.join(" "),
            )),
            None => {}
        }
        written.record(c);
        visit(&simple, &stdin, depth, budget, found);
        // `bash -c "$X"`: quoted, the value stays one word — which the words here no longer
        // show — so that reading is judged too.
        if let Some(whole) = expand_unsplit(&c.argv, &vars) {
            simple.argv = whole;
            visit(&simple, &stdin, depth, budget, found);
        }
        previous = Some(c);
    }
}

fn visit(c: &Simple, stdin: &Stdin, depth: usize, budget: &Cell<usize>, found: &mut Found) {
    let expanded;
    let c = if c.argv.iter().any(|w| w.contains('{')) {
        expanded = Simple {
            argv: brace_expanded(&c.argv),
            ..c.clone()
        };
        &expanded
    } else {
        c
    };
    for r in &c.reads {
        found.reads.push((r.clone(), c.argv.clone()));
    }
    // A line written into a start-up file runs in every shell started after: judged now.
    if c.redirects
        .iter()
        .any(|r| super::rules::is_startup_target(r))
        && let Some(text) = literal_output(c)
    {
        walk_line(&text, depth + 1, budget, found);
    }
    if c.argv.is_empty() && !c.redirects.is_empty() {
        // `> /dev/sda`: a redirection with no command still writes its target.
        found.runs.push(Run {
            argv: Vec::new(),
            redirects: c.redirects.clone(),
        });
    }
    let eff = look_through_budgeted(c, stdin, budget);
    // Every program the line runs, wrappers looked through (`env $(…)`, `sudo /bin/r?`).
    for argv in &eff.argvs {
        if let Some(w) = argv.first() {
            if computed_word(w) {
                found.computed.push(shell_words::join(argv));
            } else if glob_word(w) {
                found.globbed.push((w.clone(), shell_words::join(argv)));
            }
        }
    }
    for (i, argv) in eff.argvs.into_iter().enumerate() {
        let redirects = if i == 0 {
            c.redirects.clone()
        } else {
            Vec::new()
        };
        found.runs.push(Run { argv, redirects });
    }
    found.powershell.extend(eff.powershell);
    if let Some(what) = eff.opaque_script {
        found.opaque.push((what, shell_words::join(&c.argv)));
    }
    for l in eff.shell_lines {
        walk_line(&l, depth + 1, budget, found);
    }
    // `$(cat x | sh)`: the pipe inside a substitution feeds its shell as one outside does.
    let mut previous = None;
    for s in &c.substitutions {
        visit(s, &stdin_of(s, previous), depth + 1, budget, found);
        previous = Some(s);
    }
}

/// What a command reads: its heredoc or here-string, else the output of the command before
/// it in its pipeline (known when that one prints literal words), else nothing piped.
fn stdin_of(c: &Simple, previous: Option<&Simple>) -> Stdin {
    if !c.input.is_empty() {
        return Stdin::Literal(c.input.clone());
    }
    match previous.filter(|p| p.pipeline == c.pipeline) {
        Some(p) => literal_output(p).map_or(Stdin::Pipe, Stdin::Literal),
        None => Stdin::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(line: &str) -> Vec<Vec<String>> {
        all_commands(line)
            .runs
            .into_iter()
            .map(|r| r.argv)
            .collect()
    }

    fn has(line: &str, argv: &[&str]) -> bool {
        runs(line)
            .iter()
            .any(|a| a == &argv.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn wrappers_are_seen_through() {
        assert!(has(
            "sudo -u root env FOO=1 nice -n 5 nohup rm -rf /",
            &["rm", "-rf", "/"]
        ));
        assert!(has(
            "timeout -s KILL 10 dd if=/dev/zero of=/dev/sda",
            &["dd", "if=/dev/zero", "of=/dev/sda"]
        ));
        assert!(has("bash -lc 'cd / && rm -rf *'", &["rm", "-rf", "*"]));
        assert!(has(
            "find . -name x -exec rm -rf {} \\;",
            &["rm", "-rf", "."]
        ));
        assert!(has("find / -exec rm -rf {} +", &["rm", "-rf", "/"]));
        assert!(has("xargs -0 -n 1 rm -rf", &["rm", "-rf"]));
        assert!(has("command rm -rf /", &["rm", "-rf", "/"]));
        assert!(has("exec shutdown now", &["shutdown", "now"]));
        assert!(has("env -S 'rm -rf /'", &["rm", "-rf", "/"]));
        assert!(has(
            "sh -c \"sh -c 'mkfs.ext4 /dev/sdb'\"",
            &["mkfs.ext4", "/dev/sdb"]
        ));
        assert!(!has("command -v rm", &["rm"]));
        assert!(has("busybox rm -rf /", &["rm", "-rf", "/"]));
        assert!(has("chroot /mnt rm -rf /", &["rm", "-rf", "/"]));
        assert!(has("eval rm -rf /", &["rm", "-rf", "/"]));
        assert!(has("ssh -p 22 host 'sudo reboot'", &["reboot"]));
        assert!(has("time -p rm -rf /", &["rm", "-rf", "/"]));
    }

    #[test]
    fn what_the_line_feeds_a_command() {
        assert!(has("echo 'rm -rf /' | sh", &["rm", "-rf", "/"]));
        assert!(has("printf 'halt\\n' | sudo bash -s", &["halt"]));
        assert!(has("bash <<< 'mkfs /dev/sda'", &["mkfs", "/dev/sda"]));
        assert!(has("sh <<EOF\nrm -rf ~\nEOF", &["rm", "-rf", "~"]));
        assert!(has("echo / | xargs rm -rf", &["rm", "-rf", "/"]));
        assert!(has(
            "echo /etc | xargs -I{} rm -rf {}",
            &["rm", "-rf", "/etc"]
        ));
        assert!(!has("cat <<EOF\nrm -rf /\nEOF", &["rm", "-rf", "/"]));
        assert!(!has("echo 'rm -rf /' | cat", &["rm", "-rf", "/"]));
        let f = all_commands("base64 -d payload | sh");
        assert_eq!(f.opaque.len(), 1);
        assert!(all_commands("sh script.sh < input").opaque.is_empty());
        // Inside a substitution the pipe feeds the shell as it does outside one; two
        // substitutions side by side are not a pipeline.
        assert_eq!(all_commands("echo $(cat x | sh)").opaque.len(), 1);
        assert_eq!(all_commands("x=`base64 -d p | bash`").opaque.len(), 1);
        assert!(all_commands("echo $(cat x) $(sh -c ls)").opaque.is_empty());
        assert!(has("echo $(echo 'rm -rf /' | sh)", &["rm", "-rf", "/"]));
    }

    #[test]
    fn nesting_that_multiplies_is_capped() {
        // 8 starting points per level, 12 levels: 8^12 commands if nothing stopped it.
        let line = format!("{} true ;", ["find a b c d e f g h -exec"; 12].join(" "));
        let f = all_commands(&line);
        assert!(f.runs.len() <= 2 * NESTED_BUDGET, "{}", f.runs.len());
        assert!(!f.too_complex.is_empty());
        // A blocked command beside it is still found.
        let f = all_commands(&format!("{line}; rm -rf /"));
        assert!(f.runs.iter().any(|r| r.argv == ["rm", "-rf", "/"]));
    }

    #[test]
    fn long_nested_scripts_are_capped() {
        let line = "eval ".repeat(100_000) + "true";
        let f = all_commands(&line);
        assert!(!f.too_complex.is_empty());
        assert!(f.runs.len() < 10, "{}", f.runs.len());
        // Short nested scripts are all followed.
        assert!(
            all_commands("eval eval eval 'rm -rf /'")
                .runs
                .iter()
                .any(|r| r.argv == ["rm", "-rf", "/"])
        );
    }

    #[test]
    fn variables_the_line_assigns() {
        assert!(has("X='rm -rf /'; $X", &["rm", "-rf", "/"]));
        assert!(has("export T=/etc; rm -rf \"$T\"", &["rm", "-rf", "/etc"]));
        assert!(has("c='mkfs /dev/sda'; eval \"$c\"", &["mkfs", "/dev/sda"]));
        assert_eq!(all_commands("$EDITOR notes.txt").computed.len(), 1);
        assert_eq!(all_commands("$(which python3) -V").computed.len(), 1);
        assert!(all_commands("python3 -V").computed.is_empty());
        for line in ["env $(echo rm -rf ~)", "r$X -rf ~", "`echo rm` -rf ~"] {
            assert!(!all_commands(line).computed.is_empty(), "{line}");
        }
        for line in ["/bin/r? -rf ~", "sudo /bin/r[m] -rf ~"] {
            assert!(!all_commands(line).globbed.is_empty(), "{line}");
        }
        assert!(has("{rm,-rf,~}", &["rm", "-rf", "~"]));
        assert!(has("sudo {rm,-rf,/}", &["rm", "-rf", "/"]));
        assert!(!all_commands("IFS=,; c=rm,-rf,~; $c").code_env.is_empty());
        assert!(has("PAGER='rm -rf ~' git log", &["rm", "-rf", "~"]));
        assert!(has(
            "export PROMPT_COMMAND='mkfs /dev/sda'",
            &["mkfs", "/dev/sda"]
        ));
        assert!(has("PS1='$(rm -rf ~) $ '", &["rm", "-rf", "~"]));
        assert!(
            all_commands("NODE_OPTIONS=--max-old-space-size=4096 npm run build")
                .code_env
                .is_empty()
        );
        assert!(
            !all_commands("NODE_OPTIONS='--import data:text/javascript,1' node x")
                .code_env
                .is_empty()
        );
        assert!(
            all_commands("export PATH=$PATH:/usr/local/bin")
                .code_env
                .is_empty()
        );
        for line in [
            "[ -f x ]",
            "ls *.rs",
            "echo {a,b}",
            "git log --format={x}",
            "{1,2}",
        ] {
            let f = all_commands(line);
            assert!(f.computed.is_empty() && f.globbed.is_empty(), "{line}");
        }
        assert_eq!(
            all_commands("export NODE_OPTIONS=--require=x")
                .code_env
                .len(),
            1
        );
        assert_eq!(
            all_commands("env 'BASH_FUNC_ls%%=() { id; }' bash")
                .opaque
                .len(),
            1
        );
        assert!(all_commands("RUST_LOG=debug cargo run").code_env.is_empty());
    }
}
