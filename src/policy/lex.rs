//! Finding every simple command in a shell command line.
//!
//! A small quote-aware scanner splits the line at its operators (`;` `&` `|` `&&` `||`
//! newlines), lifts out what the shell would run on its own (subshells, `$(…)`, backticks,
//! `<(…)`, `>(…)`) and parses it recursively, skips comments and heredoc bodies, and spaces
//! out redirections. Each simple command's words are then split by `shell-words`, so quoting
//! is undone exactly as a POSIX shell would. Nothing here decides anything.

/// Deepest nesting of substitutions followed.
const MAX_DEPTH: usize = 16;
/// Placeholder for a value the shell computes at run time.
pub const COMPUTED: &str = "\u{1}computed\u{1}";

/// One simple command.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Simple {
    pub argv: Vec<String>,
    /// Files output is redirected onto.
    pub redirects: Vec<String>,
    /// Commands run inside this one's words (`$(…)`, backticks, `<(…)`).
    pub substitutions: Vec<Simple>,
    /// Index of the pipeline this command belongs to.
    pub pipeline: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub commands: Vec<Simple>,
    /// Parts that could not be parsed (unbalanced quotes, unterminated substitutions).
    pub errors: Vec<String>,
    /// Operators, redirections, substitutions or subshells appeared.
    pub compound: bool,
}

struct Lexer<'a> {
    s: &'a [char],
    i: usize,
    depth: usize,
    out: Parsed,
    cur: String,
    subs: Vec<Simple>,
    pipeline: usize,
    heredocs: Vec<(String, bool)>,
}

pub fn parse(line: &str) -> Parsed {
    let chars: Vec<char> = line.chars().collect();
    parse_at(&chars, 0)
}

fn parse_at(chars: &[char], depth: usize) -> Parsed {
    let mut lx = Lexer {
        s: chars,
        i: 0,
        depth,
        out: Parsed::default(),
        cur: String::new(),
        subs: Vec::new(),
        pipeline: 0,
        heredocs: Vec::new(),
    };
    if depth > MAX_DEPTH {
        lx.out.errors.push("substitutions nested too deeply".into());
        return lx.out;
    }
    lx.run();
    lx.out
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    fn at_word_start(&self) -> bool {
        self.cur.chars().last().is_none_or(|c| c.is_whitespace())
    }

    fn command_is_empty(&self) -> bool {
        self.cur.trim().is_empty()
    }

    fn run(&mut self) {
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                '\\' => {
                    self.cur.push(c);
                    if let Some(n) = self.peek(1) {
                        self.cur.push(n);
                    }
                    self.i += 2;
                }
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '`' => {
                    self.backtick();
                }
                '$' if self.peek(1) == Some('(') && self.peek(2) == Some('(') => self.arithmetic(),
                '$' if self.peek(1) == Some('(') => {
                    self.i += 2;
                    self.substitution(')');
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    self.i += 2;
                    self.out.compound = true;
                    self.substitution(')');
                }
                '(' if self.command_is_empty() => {
                    self.i += 1;
                    self.subshell();
                }
                '#' if self.at_word_start() => {
                    while self.i < self.s.len() && self.s[self.i] != '\n' {
                        self.i += 1;
                    }
                }
                ';' | '\n' => {
                    let newline = c == '\n';
                    self.i += 1;
                    if self.peek(0) == Some(';') {
                        self.i += 1;
                    }
                    self.end_command(true);
                    if newline {
                        self.skip_heredocs();
                    }
                }
                '&' if self.peek(1) == Some('>') => self.redirect(),
                '&' => {
                    self.i += if self.peek(1) == Some('&') { 2 } else { 1 };
                    self.end_command(true);
                }
                '|' => {
                    let or = self.peek(1) == Some('|');
                    self.i += if or || self.peek(1) == Some('&') {
                        2
                    } else {
                        1
                    };
                    self.end_command(or);
                }
                '<' | '>' => self.redirect(),
                _ => {
                    self.cur.push(c);
                    self.i += 1;
                }
            }
        }
        self.end_command(true);
    }

    fn single_quoted(&mut self) {
        let start = self.i;
        self.cur.push('\'');
        self.i += 1;
        while self.i < self.s.len() && self.s[self.i] != '\'' {
            self.cur.push(self.s[self.i]);
            self.i += 1;
        }
        if self.i >= self.s.len() {
            self.out
                .errors
                .push(format!("unterminated single quote at {start}"));
            return;
        }
        self.cur.push('\'');
        self.i += 1;
    }

    fn double_quoted(&mut self) {
        let start = self.i;
        self.cur.push('"');
        self.i += 1;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                '"' => {
                    self.cur.push('"');
                    self.i += 1;
                    return;
                }
                '\\' => {
                    self.cur.push(c);
                    if let Some(n) = self.peek(1) {
                        self.cur.push(n);
                    }
                    self.i += 2;
                }
                '`' => self.backtick(),
                '$' if self.peek(1) == Some('(') && self.peek(2) != Some('(') => {
                    self.i += 2;
                    self.substitution(')');
                }
                _ => {
                    self.cur.push(c);
                    self.i += 1;
                }
            }
        }
        self.out
            .errors
            .push(format!("unterminated double quote at {start}"));
    }

    fn arithmetic(&mut self) {
        // $(( … )): no commands inside; keep it as one computed word.
        let mut depth = 0i32;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            self.i += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        self.cur.push_str(COMPUTED);
                        return;
                    }
                }
                _ => {}
            }
        }
        self.out
            .errors
            .push("unterminated arithmetic expansion".into());
    }

    /// The text up to the `)` closing an opening already consumed, honouring quotes.
    fn balanced(&mut self) -> Option<Vec<char>> {
        let mut depth = 1;
        let mut inner = Vec::new();
        let mut quote: Option<char> = None;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            self.i += 1;
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (Some('"'), '\\') | (None, '\\') => {
                    inner.push(c);
                    if self.i < self.s.len() {
                        inner.push(self.s[self.i]);
                        self.i += 1;
                    }
                    continue;
                }
                (Some(_), _) => {}
                (None, '\'') | (None, '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(inner);
                    }
                }
                _ => {}
            }
            inner.push(c);
        }
        None
    }

    fn substitution(&mut self, _close: char) {
        self.out.compound = true;
        match self.balanced() {
            Some(inner) => {
                let p = parse_at(&inner, self.depth + 1);
                self.out.errors.extend(p.errors);
                self.subs.extend(p.commands);
                self.cur.push_str(COMPUTED);
            }
            None => self
                .out
                .errors
                .push("unterminated command substitution".into()),
        }
    }

    fn backtick(&mut self) {
        self.out.compound = true;
        self.i += 1;
        let mut inner = Vec::new();
        while self.i < self.s.len() && self.s[self.i] != '`' {
            if self.s[self.i] == '\\' && self.i + 1 < self.s.len() {
                self.i += 1;
            }
            inner.push(self.s[self.i]);
            self.i += 1;
        }
        if self.i >= self.s.len() {
            self.out
                .errors
                .push("unterminated backtick substitution".into());
            return;
        }
        self.i += 1;
        let p = parse_at(&inner, self.depth + 1);
        self.out.errors.extend(p.errors);
        self.subs.extend(p.commands);
        self.cur.push_str(COMPUTED);
    }

    fn subshell(&mut self) {
        self.out.compound = true;
        match self.balanced() {
            Some(inner) => {
                let p = parse_at(&inner, self.depth + 1);
                self.out.errors.extend(p.errors);
                for mut c in p.commands {
                    c.pipeline = self.pipeline;
                    self.out.commands.push(c);
                }
            }
            None => self.out.errors.push("unterminated subshell".into()),
        }
    }

    /// A redirection operator becomes its own word, with any fd number in front of it.
    fn redirect(&mut self) {
        self.out.compound = true;
        let mut op = String::new();
        // An fd number or & directly before it belongs to the operator.
        let trailing: String = self
            .cur
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let before = self.cur.len() - trailing.len();
        if !trailing.is_empty()
            && self.cur[..before]
                .chars()
                .last()
                .is_none_or(char::is_whitespace)
        {
            self.cur.truncate(before);
            op.push_str(&trailing);
        }
        while let Some(c) = self.peek(0) {
            let operator_char = matches!(c, '<' | '>' | '&' | '|') && op.len() < 4;
            if operator_char || (c == '-' && op.ends_with("<<")) {
                op.push(c);
                self.i += 1;
            } else {
                break;
            }
        }
        if op.ends_with("<<") || op.ends_with("<<-") {
            self.heredoc_delimiter(op.ends_with('-'));
        }
        self.cur.push(' ');
        self.cur.push_str(&op);
        self.cur.push(' ');
    }

    fn heredoc_delimiter(&mut self, strip_tabs: bool) {
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.i += 1;
        }
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') {
                break;
            }
            if c != '\'' && c != '"' && c != '\\' {
                word.push(c);
            }
            self.i += 1;
        }
        if !word.is_empty() {
            self.heredocs.push((word, strip_tabs));
        }
    }

    /// Heredoc bodies are data: skip their lines up to each delimiter.
    fn skip_heredocs(&mut self) {
        for (delim, strip) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.i >= self.s.len() {
                    return;
                }
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != '\n' {
                    self.i += 1;
                }
                let line: String = self.s[start..self.i].iter().collect();
                self.i += 1;
                let line = if strip {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line == delim {
                    break;
                }
            }
        }
    }

    fn end_command(&mut self, ends_pipeline: bool) {
        let text = std::mem::take(&mut self.cur);
        let subs = std::mem::take(&mut self.subs);
        if !ends_pipeline {
            self.out.compound = true;
        }
        if !text.trim().is_empty() || !subs.is_empty() {
            if self
                .out
                .commands
                .iter()
                .any(|c| c.pipeline == self.pipeline)
                || !ends_pipeline
            {
                self.out.compound = true;
            }
            match shell_words::split(&text) {
                Ok(words) => {
                    let mut simple = words_to_simple(words);
                    simple.substitutions = subs;
                    simple.pipeline = self.pipeline;
                    if !simple.argv.is_empty()
                        || !simple.substitutions.is_empty()
                        || !simple.redirects.is_empty()
                    {
                        self.out.commands.push(simple);
                    }
                }
                Err(e) => self
                    .out
                    .errors
                    .push(format!("cannot split {:?}: {e}", text.trim())),
            }
        }
        if ends_pipeline {
            self.pipeline += 1;
        }
    }
}

fn is_redirect_op(w: &str) -> bool {
    let op = w.trim_start_matches(|c: char| c.is_ascii_digit());
    matches!(
        op,
        ">" | ">>" | "<" | "<<" | "<<-" | "<<<" | "&>" | "&>>" | ">&" | "<&" | ">|" | "<>"
    )
}

/// Words of one simple command: leading assignments dropped, `{`/`}` group words dropped,
/// redirections taken out with their targets.
fn words_to_simple(words: Vec<String>) -> Simple {
    let mut s = Simple::default();
    let mut it = words.into_iter().peekable();
    let mut in_assignments = true;
    while let Some(w) = it.next() {
        if is_redirect_op(&w) {
            let target = it.next().unwrap_or_default();
            let dup = w.ends_with('&') || w.starts_with("<") && !w.starts_with("<>");
            if !dup && !target.is_empty() {
                s.redirects.push(target);
            }
            continue;
        }
        if in_assignments {
            let is_assignment = w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !k.starts_with(|c: char| c.is_ascii_digit())
            });
            if is_assignment || w == "{" || w == "!" {
                continue;
            }
            in_assignments = false;
        }
        if w == "}" && it.peek().is_none() {
            continue;
        }
        s.argv.push(w);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(line: &str) -> Vec<Vec<String>> {
        fn walk(c: &Simple, out: &mut Vec<Vec<String>>) {
            out.push(c.argv.clone());
            for s in &c.substitutions {
                walk(s, out);
            }
        }
        let mut out = Vec::new();
        for c in parse(line).commands {
            walk(&c, &mut out);
        }
        out
    }

    fn v(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn operators_split_commands() {
        assert_eq!(
            argvs("a x; b && c || d | e & f"),
            vec![
                v(&["a", "x"]),
                v(&["b"]),
                v(&["c"]),
                v(&["d"]),
                v(&["e"]),
                v(&["f"])
            ]
        );
        assert_eq!(
            argvs("echo 'a; b' \"c && d\""),
            vec![v(&["echo", "a; b", "c && d"])]
        );
        assert_eq!(argvs("echo a\\;b"), vec![v(&["echo", "a;b"])]);
    }

    #[test]
    fn substitutions_and_subshells_are_found() {
        assert_eq!(
            argvs("echo \"$(rm -rf /)\""),
            vec![v(&["echo", COMPUTED]), v(&["rm", "-rf", "/"])]
        );
        assert_eq!(argvs("echo `id`"), vec![v(&["echo", COMPUTED]), v(&["id"])]);
        assert_eq!(
            argvs("(cd / && rm -rf x)"),
            vec![v(&["cd", "/"]), v(&["rm", "-rf", "x"])]
        );
        assert_eq!(
            argvs("diff <(ls a) <(ls b)"),
            vec![
                v(&["diff", COMPUTED, COMPUTED]),
                v(&["ls", "a"]),
                v(&["ls", "b"])
            ]
        );
        assert_eq!(
            argvs("echo '$(rm -rf /)'"),
            vec![v(&["echo", "$(rm -rf /)"])]
        );
        assert_eq!(argvs("echo $((1+2))"), vec![v(&["echo", COMPUTED])]);
    }

    #[test]
    fn redirections_and_assignments() {
        let p = parse("FOO=1 BAR=2 dd if=x 2>/dev/null > /dev/sda");
        assert_eq!(p.commands[0].argv, v(&["dd", "if=x"]));
        assert_eq!(p.commands[0].redirects, v(&["/dev/null", "/dev/sda"]));
        let p = parse("echo x>out.txt 2>&1");
        assert_eq!(p.commands[0].argv, v(&["echo", "x"]));
        assert_eq!(p.commands[0].redirects, v(&["out.txt"]));
    }

    #[test]
    fn comments_and_heredocs_are_not_commands() {
        assert_eq!(argvs("ls # rm -rf /"), vec![v(&["ls"])]);
        assert_eq!(
            argvs("cat <<EOF\nrm -rf /\nEOF\necho done"),
            vec![v(&["cat"]), v(&["echo", "done"])]
        );
        assert_eq!(
            argvs("cat <<-'X'\n\trm -rf /\n\tX\nls"),
            vec![v(&["cat"]), v(&["ls"])]
        );
    }

    #[test]
    fn broken_lines_are_errors() {
        assert!(!parse("echo 'unterminated").errors.is_empty());
        assert!(!parse("echo $(ls").errors.is_empty());
        assert!(parse("ls -la").errors.is_empty());
        assert!(!parse("ls -la").compound);
        assert!(parse("ls | wc").compound);
        assert!(parse("ls > x").compound);
    }

    #[test]
    fn pipelines_are_numbered() {
        let p = parse("curl x | sh; echo y");
        assert_eq!(p.commands[0].pipeline, p.commands[1].pipeline);
        assert_ne!(p.commands[1].pipeline, p.commands[2].pipeline);
    }
}
