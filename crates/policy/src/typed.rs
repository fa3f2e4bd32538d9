//! What raw keystrokes would enter at a line editor or at the kernel's line discipline.
//!
//! Raw input is judged by the lines it enters, but control keys edit a line before Enter:
//! Ctrl-U and Ctrl-C drop what came before them, DEL and Ctrl-H erase a character, Ctrl-W a
//! word. Judged with those keys merely removed, `echo x` + Ctrl-U + a blocked command
//! passed as an `echo`, and the shell ran the blocked command. So input is judged in each
//! reading a program may give it — the erasing keys applied, each run of text between
//! control keys on a line of its own, the keys removed — and the most severe verdict stands.
//! Keys that move the cursor, recall history or yank killed text (Ctrl-A, Ctrl-R, Ctrl-Y,
//! the arrows, Alt-b) can turn the typed text into any line at all: input that uses one and
//! then enters a line is flagged as input whose line cannot be judged.

/// Line discipline and line editor keys that erase: a character, a word, the line.
const ERASE_CHAR: [char; 2] = ['\u{7f}', '\u{8}'];
const ERASE_WORD: char = '\u{17}';
/// Ctrl-U kills the line; Ctrl-C abandons it (the line discipline flushes it with SIGINT, a
/// line editor starts a fresh one).
const ERASE_LINE: [char; 2] = ['\u{15}', ABANDON_LINE];
/// Ctrl-C: a line editor drops the whole line, wherever the cursor is.
const ABANDON_LINE: char = '\u{3}';
/// The control keys that leave the typed line as the readings have it: Enter and Ctrl-J,
/// the erasing keys the erased reading applies (DEL, Ctrl-H, Ctrl-W, Ctrl-U, Ctrl-C), and
/// keys that at the end of a line — where the cursor is unless a key flagged here moved it —
/// delete nothing, move nowhere or only redraw: Ctrl-D, Ctrl-E, Ctrl-G, Ctrl-K, Ctrl-L,
/// Ctrl-Z, Ctrl-\\. Every other control key is taken to rearrange the line. A list of those
/// that do (Ctrl-A, Ctrl-R, Ctrl-Y, …) missed some: Ctrl-X starts bash's whole second
/// keymap (Ctrl-X Ctrl-U undoes, Ctrl-X Ctrl-X moves the cursor, Ctrl-X * expands globs),
/// Ctrl-V and Ctrl-Q insert the next key as text, and an `inputrc` binds any of them.
const MODELED_CONTROLS: [char; 14] = [
    '\r', '\n', '\u{7f}', '\u{8}', '\u{17}', '\u{15}', '\u{3}', '\u{4}', '\u{5}', '\u{7}', '\u{b}',
    '\u{c}', '\u{1a}', '\u{1c}',
];
/// After ESC, the keys that rearrange nothing: `:` (vim's command line after its Escape;
/// unbound at readline's and zsh's editors) and `#` (insert-comment: read as an Enter).
/// Every other Alt key is taken to rearrange the line: readline binds dozens (Alt-Ctrl-Y
/// yanks an argument of the last line, Alt-DEL kills the word before the cursor, Alt-\\
/// joins two words, a digit makes the next key's erase take that many characters, Alt-B is
/// Alt-b), and a list of them missed those.
const STILL_ALT: &str = ":#";

/// What a program reads from the keys: text, a control key, or an escape sequence taken
/// whole (an arrow, a function key, bracketed paste's start and end): one key, however many
/// characters spell it. Read as separate characters, `ESC [ 2 0 0 ~` left `[200~` in front
/// of a pasted command and hid it from the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Text(char),
    Control(char),
    /// ESC and what follows it: `[` or `O` with the sequence's final character, or the one
    /// character after it (Alt-x).
    Escape(Option<char>, Option<char>),
    /// Bracketed paste's start or end (`ESC [ 200 ~`, `ESC [ 201 ~`): what is between them
    /// is inserted as text.
    Paste,
}

const ESC: char = '\u{1b}';

fn keys(text: &str) -> Vec<Key> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ESC {
            out.push(if c.is_control() && c != '\t' {
                Key::Control(c)
            } else {
                Key::Text(c)
            });
            continue;
        }
        match chars.next() {
            Some(lead @ '[') => {
                // Parameters and intermediates (0x20..=0x3F), then the final (0x40..=0x7E);
                // anything else ends a broken sequence and is read on its own.
                let mut last = None;
                let mut params = String::new();
                while let Some(&f) = chars.peek() {
                    if ('\u{20}'..='\u{3f}').contains(&f) {
                        chars.next();
                        if params.len() < 8 {
                            params.push(f);
                        }
                        continue;
                    }
                    if ('\u{40}'..='\u{7e}').contains(&f) {
                        chars.next();
                        last = Some(f);
                    }
                    break;
                }
                let paste = last == Some('~') && matches!(params.as_str(), "200" | "201");
                out.push(if paste {
                    Key::Paste
                } else {
                    Key::Escape(Some(lead), last)
                });
            }
            Some(lead @ 'O') => {
                let last = chars.next_if(|f| ('\u{40}'..='\u{7e}').contains(f));
                out.push(Key::Escape(Some(lead), last));
            }
            alt => out.push(Key::Escape(alt, None)),
        }
    }
    vi_counted_comments(out)
}

/// vi mode: after an Escape, a count then `#` (`ESC 1 #`) is insert-comment with a numeric
/// argument, as `ESC 1 ESC #` is in emacs mode.
fn vi_counted_comments(keys: Vec<Key>) -> Vec<Key> {
    let mut counting = false;
    keys.into_iter()
        .map(|k| {
            let k = if counting && k == Key::Text('#') {
                INSERT_COMMENT
            } else {
                k
            };
            counting = match k {
                Key::Escape(Some(a), None) => a.is_ascii_digit() || a == '-' || a == ESC,
                Key::Text(c) => counting && c.is_ascii_digit(),
                _ => false,
            };
            k
        })
        .collect()
}

impl crate::Policy {
    /// A line for a terminal, whose foreground program may be a shell or a REPL: judged as
    /// a shell line, and the commands it would hand to the system at a REPL's prompt
    /// (`import os; os.system("rm -rf ~")` typed into `python3`) judged as lines too.
    pub fn evaluate_in_terminal(&self, line: &str, cwd: Option<&str>) -> crate::Decision {
        let _budget = crate::rules::globs::Budget::start();
        let mut findings = self.evaluate(line, cwd).findings;
        // Each line, and each statement that runs over several (`os.system(` Enter
        // `"rm -rf ~")`), read as a REPL reads it.
        let (statements, in_parts) = crate::statements::joined(line);
        if in_parts {
            findings.push(crate::Finding {
                severity: crate::Severity::Warn,
                rule: "computed_command",
                message: "a statement runs over more lines than are read together: what it runs \
                          may be in no one part"
                    .into(),
                command: line.chars().take(200).collect(),
            });
        }
        let lines = || line.lines().chain(statements.iter().map(String::as_str));
        for call in lines().flat_map(crate::repl::repl_calls) {
            findings.extend(self.evaluate(&call, cwd).findings);
        }
        // What a REPL would run that the line computes, or a runner taken to call later.
        findings.extend(lines().filter_map(|l| {
            crate::repl::unread(l).map(|why| crate::Finding {
                severity: crate::Severity::Warn,
                rule: "computed_command",
                message: format!("read as a REPL's code: {why}"),
                command: l.trim().chars().take(200).collect(),
            })
        }));
        // fish's reading: a `(…)` glued into a word is a command, and glued into the
        // command's name it computes that name.
        // What a REPL's expression looks like to a shell (`count(*)`, `f([1,2])`: a glob as
        // a program) says nothing there; what such a command would do does.
        for inner in crate::fish_names::glued_substitutions(line) {
            findings.extend(
                self.evaluate(&inner, cwd)
                    .findings
                    .into_iter()
                    .filter(|f| !matches!(f.rule, "computed_command" | "unparseable")),
            );
        }
        findings.extend(crate::fish_names::computed_name(line));
        // A console's escape to the shell, typed at its prompt (`.shell rm -rf ~`).
        // What a console loads or writes (`.load LIB`, `ATTACH DATABASE 'PATH'`).
        for l in line.lines() {
            if let Some(command) = crate::consoles::shell_escape(l) {
                findings.extend(self.evaluate(command, cwd).findings);
            }
            for write in crate::consoles::console_writes(l) {
                findings.extend(self.evaluate(&write, cwd).findings);
            }
            if let Some(why) = crate::consoles::loads_native(l) {
                findings.push(crate::Finding {
                    severity: crate::Severity::Warn,
                    rule: "opaque_script",
                    message: format!("read as a console's line: {why}"),
                    command: l.trim().chars().take(200).collect(),
                });
            }
        }
        crate::Decision::of(findings)
    }
}

/// The readings of `text` to judge, each a text of lines (without duplicates).
pub fn readings(text: &str) -> Vec<String> {
    let keys = keys(text);
    let mut out: Vec<String> = Vec::with_capacity(3);
    for r in [erased(&keys), split(&keys), removed(text)] {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Whether a key that rearranges the line comes before a line end, or the keys open the
/// line in an editor that runs what it saves ([`opens_in_editor`]).
pub fn rearranges(text: &str) -> bool {
    let keys = keys(text);
    if opens_in_editor(&keys) {
        return true;
    }
    let Some(last_enter) = keys.iter().rposition(|k| is_enter(*k)) else {
        return false;
    };
    // A tab after text on its line asks the editor to complete that text, inserting what
    // it finds (`shre` Tab is `shred`); at a line's start it indents a REPL's code.
    let mut text_on_line = false;
    keys[..last_enter].iter().any(|&k| {
        let completes = k == Key::Text('\t') && text_on_line;
        match k {
            Key::Text(c) if !c.is_whitespace() => text_on_line = true,
            Key::Control(c) if ERASE_LINE.contains(&c) => text_on_line = false,
            _ if is_enter(k) => text_on_line = false,
            _ => {}
        }
        completes || rearranging(k)
    })
}

/// Ctrl-X Ctrl-E (bash's edit-and-execute-command: the line opens in `$EDITOR`, and what the
/// editor saves runs as it exits) and vi mode's `v` after Escape (the same command): a line
/// runs with no Enter, and it is whatever the keys typed into the editor next make it.
fn opens_in_editor(keys: &[Key]) -> bool {
    keys.windows(2)
        .any(|w| w == [Key::Control('\u{18}'), Key::Control('\u{5}')])
        || keys.contains(&Key::Escape(Some('v'), None))
}

/// Whether a key may make the line entered other than the one the readings spell: allowed
/// are only the keys they model (fail closed: a key not known is taken to rearrange).
fn rearranging(k: Key) -> bool {
    match k {
        Key::Text(_) | Key::Paste => false,
        Key::Control(c) => !MODELED_CONTROLS.contains(&c),
        // The arrows, Home, End, Delete, Insert (quoted-insert in Debian's inputrc),
        // Ctrl-arrows (word moves), function keys an inputrc may bind: every sequence.
        Key::Escape(Some('[' | 'O'), _) => true,
        Key::Escape(Some(a), _) => !STILL_ALT.contains(a),
        // An Escape as the input's last key: nothing follows it to make a command.
        Key::Escape(None, _) => false,
    }
}

/// Whether a line editor could enter a line other than the one the keys spell: a line end
/// after a key that rearranges the line, or after a tab (a completion request, which
/// inserts what the editor finds), with no Ctrl-C between them (a line editor abandons the
/// line at Ctrl-C; Ctrl-U may not clear it, since bash's kills only what is left of the
/// cursor).
///
/// Some keys run a line with no Enter at all: Ctrl-X Ctrl-E (bash's
/// edit-and-execute-command: the line opens in `$EDITOR`, and what the editor saves runs as
/// it exits) and vi mode's `v` after Escape (the same command).
pub fn unseen_line(text: &str) -> bool {
    let mut edited = false;
    let keys = keys(text);
    if opens_in_editor(&keys) {
        return true;
    }
    for k in keys {
        if is_enter(k) {
            if edited {
                return true;
            }
        } else if k == Key::Control(ABANDON_LINE) {
            edited = false;
        } else if rearranging(k) || meta(k) || k == Key::Text('\t') {
            edited = true;
        }
    }
    false
}

/// An Escape and the key after it, other than an escape sequence: at a shell's line editor
/// every such pair is a command — Meta-x in emacs mode (which keys do what is the user's
/// `inputrc`), a command-mode key in vi mode (`ESC k` recalls history) — so the line it
/// enters cannot be told from the keys. (At a full-screen program it is its own key: vim's
/// Escape, and this is not asked there.)
fn meta(k: Key) -> bool {
    matches!(k, Key::Escape(Some(a), _) if a != '[' && a != 'O')
}

/// A key that enters the line: Enter, Ctrl-J, and readline's insert-comment (`ESC #`,
/// Meta-#, and `#` in vi mode's command mode), which accepts the line as Enter does — with
/// a numeric argument (`ESC 1 ESC #`) after taking the comment sign off its start, so
/// `#rm -rf ~` typed that way runs `rm -rf ~`.
fn is_enter(k: Key) -> bool {
    matches!(k, Key::Control('\r' | '\n' | OPERATE_AND_GET_NEXT)) || k == INSERT_COMMENT
}

/// Ctrl-O, bash's operate-and-get-next (zsh's accept-line-and-down-history): enters the line
/// as Enter does, so Up then Ctrl-O runs the history's last line.
const OPERATE_AND_GET_NEXT: char = '\u{f}';

const INSERT_COMMENT: Key = Key::Escape(Some('#'), None);

/// The line discipline's (and a line editor's) reading: the erasing keys applied, the
/// other keys dropped.
fn erased(keys: &[Key]) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for k in keys {
        match *k {
            Key::Control('\r' | '\n' | OPERATE_AND_GET_NEXT) => {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            // The line as insert-comment may enter it: its comment sign taken off.
            INSERT_COMMENT => {
                let text = line.trim_start();
                out.push_str(text.strip_prefix('#').unwrap_or(text));
                out.push('\n');
                line.clear();
            }
            Key::Control(c) if ERASE_CHAR.contains(&c) => {
                line.pop();
            }
            Key::Control(c) if ERASE_LINE.contains(&c) => line.clear(),
            Key::Control(ERASE_WORD) => {
                let kept = line
                    .trim_end()
                    .trim_end_matches(|c: char| !c.is_whitespace());
                line.truncate(kept.len());
            }
            Key::Text(c) => line.push(c),
            Key::Control(_) | Key::Escape(..) | Key::Paste => {}
        }
    }
    out.push_str(&line);
    out
}

/// Each run of text between keys on a line of its own.
fn split(keys: &[Key]) -> String {
    keys.iter()
        .map(|k| match *k {
            Key::Text(c) => c,
            _ => '\n',
        })
        .collect()
}

/// The control characters removed, as the text reads without them: character by
/// character, so that what follows an Escape (`ESC r`, read above as Alt-r) is text here.
fn removed(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\r' { '\n' } else { c })
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_comment_enters_the_line_without_its_comment_sign() {
        for keys in [
            "#rm -rf ~\u{1b}1\u{1b}#",
            "# rm -rf ~\u{1b}-\u{1b}#",
            "#rm -rf ~\u{1b}\u{1b}1#",
        ] {
            assert!(
                readings(keys).iter().any(|r| r.contains("rm -rf ~\n")),
                "{keys:?}"
            );
        }
        // A comment entered with Enter stays one.
        assert!(
            readings("# a note\r")
                .iter()
                .all(|r| r.trim_start().starts_with('#'))
        );
    }

    #[test]
    fn keys_that_run_what_an_editor_saves_enter_an_unseen_line() {
        assert!(unseen_line("echo hi\u{18}\u{5}"));
        assert!(unseen_line("\u{18}\u{5}"));
        assert!(unseen_line("echo hi\u{1b}v"));
        assert!(unseen_line("\u{1b}v:wq\r"));
        assert!(!unseen_line("echo hi\r"));
        // nano's Ctrl-X (exit) and a yes: no editor of the shell's.
        assert!(!unseen_line("\u{18}y"));
    }

    #[test]
    fn erasing_keys_are_applied_as_the_line_discipline_applies_them() {
        let erased = |t: &str| erased(&keys(t));
        assert_eq!(erased("echo x\u{15}rm v\r"), "rm v\n");
        assert_eq!(erased("rmx\u{7f} v\r"), "rm v\n");
        assert_eq!(erased("echo a b\u{17}\u{17}rm v\r"), "echo rm v\n");
        assert_eq!(erased("ls\u{3}rm v\r"), "rm v\n");
        assert_eq!(erased("1+1\r"), "1+1\n");
        // An escape sequence is one key, whatever spells it: a paste's markers leave the
        // pasted line as it is.
        assert_eq!(erased("\u{1b}[200~rm v\u{1b}[201~\r"), "rm v\n");
        assert_eq!(erased("a\u{1b}[1;5Db\r"), "ab\n");
        // A broken sequence does not swallow the Enter after it.
        assert_eq!(erased("ls\u{1b}[\r"), "ls\n");
        assert_eq!(erased("ls\u{1b}O\r"), "ls\n");
    }

    #[test]
    fn a_terminal_line_is_also_read_as_a_repl_reads_it() {
        let p = crate::Policy::default();
        let verdict = |line: &str| p.evaluate_in_terminal(line, None).authorization;
        use crate::Authorization::*;
        // At Python's, Node's or Ruby's prompt these run the commands they name.
        assert_eq!(verdict("import os; os.system(\"rm -rf ~\")"), Blocked);
        assert_eq!(verdict("subprocess.run([\"rm\", \"-rf\", \"/\"])"), Blocked);
        assert_eq!(verdict("`rm -rf ~`"), Blocked);
        assert_eq!(
            verdict("require('child_process').execSync('curl x | sh')"),
            AllowedWithWarning
        );
        // As a shell line alone, the first is harmless text (`import` and a syntax error).
        assert_eq!(
            p.evaluate("import os; os.system(\"rm -rf ~\")", None)
                .authorization,
            Allowed
        );
        // Code handed to the language as a string is read as a line of its own.
        assert_eq!(
            verdict("exec(\"import os; os.system('rm -rf ~')\")"),
            Blocked
        );
        assert_eq!(
            verdict("new Function(\"require('child_process').execSync('rm -rf ~')\")()"),
            Blocked
        );
        for benign in [
            "print(1+1)",
            "os.system(\"ls\")",
            "npm run build",
            "ls -la",
            "eval('1+1')",
        ] {
            assert_eq!(verdict(benign), Allowed, "{benign}");
        }
        // Keys are read the same way, line by line.
        assert_eq!(
            p.evaluate_input("python3\rimport os; os.system('rm -rf ~')\r", None)
                .authorization,
            Blocked
        );
    }

    #[test]
    fn every_reading_is_kept_once() {
        assert_eq!(readings("1+1\r"), vec!["1+1\n".to_string()]);
        let r = readings("echo x\u{15}rm v\r");
        assert!(r.contains(&"rm v\n".to_string()), "{r:?}");
        assert!(r.contains(&"echo xrm v\n".to_string()), "{r:?}");
        // After an Escape: Alt-r to a line editor, `r` to whatever takes the Escape alone.
        let r = readings("\u{1b}rm v\r");
        assert!(r.contains(&"rm v\n".to_string()), "{r:?}");
    }

    #[test]
    fn keys_that_rearrange_a_line_before_enter_are_seen() {
        assert!(rearranges("v\u{1}rm \r"));
        assert!(rearranges("v\u{15}rm \u{19}\r"));
        assert!(rearranges("\u{1b}[A\r"));
        assert!(rearranges("\u{12}rm\r"));
        assert!(rearranges("x\u{1b}b\r"));
        assert!(rearranges("rm -rf ~\u{8}\u{1f}\r"));
        // Keys a list of rearranging keys missed: Alt-Ctrl-Y (an argument of the last line
        // yanked), Alt-DEL (the word before the cursor killed), a count before an erase,
        // Alt-B (Alt-b), Ctrl-X's keymap, Ctrl-V, Home as `ESC [ 1 ~`, and Ctrl-X Ctrl-E,
        // which runs what the editor saves with no Enter at all.
        for keys in [
            "\u{1b}\u{19} -rf ~\r",
            "rm -rf ~/safe\u{1b}\u{7f}\r",
            "rm -rf ~/tmp1\u{1b}4\u{7f}\r",
            "x -rf ~\u{1b}B\u{1b}Brm \r",
            "rm -rf ~/x\u{18}\u{18}\r",
            "rm -rf \u{16}\u{15}~\r",
            "m -rf ~\u{1b}[1~r\r",
            "ls\u{18}\u{5}",
            "shre\t -u keep.txt\r",
        ] {
            assert!(rearranges(keys), "{keys:?}");
        }
        // Bracketed paste's markers, and keys that leave the line's end as it is.
        assert!(!rearranges("\u{1b}[200~echo hi\u{1b}[201~\r"));
        assert!(!rearranges("echo hi\u{c}\u{5}\u{b}\u{7}\r"));
        assert!(
            !rearranges("for i in x:\r\tprint(i)\r\r"),
            "a REPL's indent"
        );
        // Not before a line end, or not rearranging: vim's Escape, a lone arrow, Ctrl-C.
        assert!(!rearranges("\u{1b}:wq\r"));
        assert!(!rearranges("\u{1b}[A"));
        assert!(!rearranges("\u{3}"));
        assert!(!rearranges("1+1\r"));
    }

    #[test]
    fn a_line_the_editor_may_change_is_one_whose_edits_reach_its_enter() {
        // History, a cursor move, a completion: the line entered is not the one typed.
        assert!(unseen_line("\u{1b}[A\r"));
        assert!(unseen_line("m /tmp/x\u{1b}[Hr\r"));
        assert!(unseen_line("shutd\tnow\r"));
        assert!(unseen_line("ls\r\u{12}rm\r"));
        // Ctrl-U does not reset it: bash kills only what is left of a moved cursor.
        assert!(unseen_line("m /x\u{1}\u{15}r\r"));
        // Abandoned by Ctrl-C, or no line end after the edit: nothing unseen is entered.
        assert!(!unseen_line("m /x\u{1}\u{3}ls\r"));
        assert!(!unseen_line("ls\r\u{1b}[A"));
        assert!(!unseen_line("echo a\r"));
        // An Escape and a key: a Meta command, or a vi-mode command (`ESC k` recalls
        // history); at a shell's prompt, where this is asked, no line can be told from it.
        assert!(unseen_line("\u{1b}k\r"));
        assert!(unseen_line("\u{1b}:wq\r"));
        assert!(unseen_line("x\u{1b}.\r"));
    }
}
