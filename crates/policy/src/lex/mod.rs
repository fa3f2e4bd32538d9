//! Finding every simple command in a shell command line.
//!
//! A small quote-aware scanner splits the line at its operators (`;` `&` `|` `&&` `||`
//! newlines), lifts out what the shell would run on its own (subshells, `$(…)`, backticks,
//! `<(…)`, `>(…)`) and parses it recursively, skips comments and heredoc bodies, and spaces
//! out redirections. Each simple command's words are then split by `shell-words`, so quoting
//! is undone exactly as a POSIX shell would. Nothing here decides anything.

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
    /// Text fed to its standard input by a heredoc or here-string (`bash <<EOF`,
    /// `sh <<< 'line'`): a script when the command is a shell.
    pub input: String,
    /// `NAME=value` words before the command (the whole command when it has no argv).
    pub assignments: Vec<(String, String)>,
    /// Files its input is redirected from (`< file`).
    pub reads: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub commands: Vec<Simple>,
    /// Parts that could not be parsed (unbalanced quotes, unterminated substitutions).
    pub errors: Vec<String>,
    /// Operators, redirections, substitutions or subshells appeared.
    pub compound: bool,
    /// Substitutions nested deeper than are followed (what is inside was not seen).
    pub too_deep: bool,
}

struct Lexer<'a> {
    s: &'a [char],
    i: usize,
    depth: usize,
    out: Parsed,
    cur: String,
    subs: Vec<Simple>,
    pipeline: usize,
    /// Pending heredocs: delimiter, `<<-` tab stripping, index of the command they feed.
    heredocs: Vec<(String, bool, Option<usize>)>,
}

pub fn parse(line: &str) -> Parsed {
    let chars: Vec<char> = line.chars().collect();
    parse_at(&chars, 0)
}

/// Lines up to this long are kept for [`parse_shared`]: a command line, not a script.
const SHARED_LINE_MAX: usize = 4096;

thread_local! {
    /// The lines parsed last on this thread.
    static RECENT: crate::recent::Recent<Box<str>, Parsed> = const { crate::recent::Recent::new() };
}

/// [`parse`], shared: one judgement reads the same line in several rules (the walk, the
/// download-and-run shapes, the kills of a listing, the environment sent, the secrets
/// found), and each used to parse it again — a fifth of judging `echo hi`.
pub fn parse_shared(line: &str) -> std::rc::Rc<Parsed> {
    if line.len() > SHARED_LINE_MAX {
        return std::rc::Rc::new(parse(line));
    }
    RECENT.with(|recent| recent.get_or_compute(|l| &**l == line, || line.into(), || parse(line)))
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
    if depth > crate::limits::MAX_DEPTH {
        lx.out.too_deep = true;
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
                '\\' => self.escaped(),
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '`' => {
                    self.backtick();
                }
                '$' if self.peek(1) == Some('\'') => self.ansi_c_quoted(),
                // `$"…"`: a string translated by the locale's catalogue, else itself.
                '$' if self.peek(1) == Some('"') => {
                    self.i += 1;
                    self.double_quoted();
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
                // A subshell, also as a function's body (`f() (rm -rf ~)`).
                '(' if self.command_is_empty() || self.cur.trim_end().ends_with("()") => {
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
                // fish's `(cmd)` and zsh's `=(cmd)`: a command whose output becomes words
                // (or a file). In bash a `(` here is a syntax error.
                '(' if self.substitutes_here() => {
                    self.i += 1;
                    self.substitution(')');
                }
                _ => {
                    self.cur.push(c);
                    self.i += 1;
                }
            }
        }
        self.end_command(true);
    }

    /// Whether the parentheses opened here hold one quoted string and nothing else
    /// (`print('rm -rf /')` typed at a REPL's prompt): to fish that is a command named by
    /// the whole string, spaces and all, which does not exist — a call's argument, not a
    /// command to judge.
    fn quoted_string_only(&self) -> bool {
        let rest = &self.s[self.i + 1..];
        let mut at = rest.iter().take_while(|c| c.is_whitespace()).count();
        let Some(&quote) = rest.get(at).filter(|c| matches!(c, '\'' | '"')) else {
            return false;
        };
        at += 1;
        while let Some(&c) = rest.get(at) {
            if c == quote {
                break;
            }
            at += if c == '\\' && quote == '"' { 2 } else { 1 };
        }
        at += 1;
        at += rest
            .get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_whitespace())
            .count();
        rest.get(at) == Some(&')')
    }

    /// Whether a `(` inside a command opens a command substitution (fish's `ls (pwd)`,
    /// zsh's `source =(curl …)`): not a function's `NAME ()`, nor a case pattern's `(a)`.
    fn substitutes_here(&self) -> bool {
        // `case x in (a) …`: a pattern's optional opening parenthesis.
        if self.peek(1) == Some(')')
            || self.cur.trim_start().starts_with("case ")
            || self.quoted_string_only()
        {
            return false;
        }
        // Only where a word begins (`ls (pwd)`), or after zsh's `=`: glued to a name
        // (`print(1+1)`, `os.system("…")`) it is a call typed at a REPL's prompt, which the
        // REPL reading judges (`inline::repl_calls`) — and an array's `NAME=(…)`, an extended
        // glob's `@(…)`, `*(…)` are words of their own.
        let word = self.cur.rsplit(char::is_whitespace).next().unwrap_or("");
        word.is_empty() || word == "="
    }

    /// `$'…'`: its text decoded (`ansi_c`), kept as a single-quoted string.
    fn ansi_c_quoted(&mut self) {
        let start = self.i;
        match ansi_c::read(self.s, self.i + 2) {
            Some((text, next)) => {
                self.cur.push('\'');
                self.cur.push_str(&text.replace('\'', "'\\''"));
                self.cur.push('\'');
                self.i = next;
            }
            None => {
                self.out
                    .errors
                    .push(format!("unterminated $' quote at {start}"));
                self.i = self.s.len();
            }
        }
    }

    /// A backslash and the character it escapes, kept for `shell-words` to undo.
    fn escaped(&mut self) {
        self.cur.push('\\');
        if let Some(n) = self.peek(1) {
            self.cur.push(n);
        }
        self.i += 2;
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
                '\\' => self.escaped(),
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

    /// `$(( … ))`: one computed word. The command substitutions inside it run when the
    /// shell evaluates it (`$(( $(cmd) ))`, `$((a[$(cmd)]))`), and are judged like any other.
    fn arithmetic(&mut self) {
        self.i += 1;
        let mut depth = 0i32;
        while self.i < self.s.len() {
            match self.s[self.i] {
                '$' if self.peek(1) == Some('(') && self.peek(2) == Some('(') => self.arithmetic(),
                '$' if self.peek(1) == Some('(') => {
                    self.i += 2;
                    self.substitution(')');
                }
                '`' => self.backtick(),
                '(' => {
                    depth += 1;
                    self.i += 1;
                }
                ')' => {
                    depth -= 1;
                    self.i += 1;
                    if depth == 0 {
                        self.cur.push_str(COMPUTED);
                        return;
                    }
                }
                _ => self.i += 1,
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
                self.take_substituted(p);
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
        self.take_substituted(p);
    }

    /// A substitution's commands join the command whose word holds it. Their pipelines are
    /// numbered after those of the substitutions before it in the same command, so that
    /// `$(a) $(b)` is not read as `a | b`, while `$(cat x | sh)` keeps its pipe.
    fn take_substituted(&mut self, p: Parsed) {
        self.out.errors.extend(p.errors);
        self.out.too_deep |= p.too_deep;
        let base = self.subs.last().map_or(0, |c| c.pipeline + 1);
        self.subs.extend(p.commands.into_iter().map(|mut c| {
            c.pipeline += base;
            c
        }));
        self.cur.push_str(COMPUTED);
    }

    fn subshell(&mut self) {
        self.out.compound = true;
        match self.balanced() {
            Some(inner) => {
                let p = parse_at(&inner, self.depth + 1);
                self.out.errors.extend(p.errors);
                self.out.too_deep |= p.too_deep;
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
        let bare = op.trim_start_matches(|c: char| c.is_ascii_digit());
        if bare == "<<" || bare == "<<-" {
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
            self.heredocs.push((word, strip_tabs, None));
        }
    }

    /// Heredoc bodies are not commands: take their lines up to each delimiter as the input
    /// of the command they feed.
    fn skip_heredocs(&mut self) {
        for (delim, strip, fed) in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
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
                body.push_str(&line);
                body.push('\n');
            }
            if let Some(c) = fed.and_then(|i| self.out.commands.get_mut(i)) {
                c.input.push_str(&body);
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
            // Pipelines are numbered in order, so only the last command can share this one.
            if self
                .out
                .commands
                .last()
                .is_some_and(|c| c.pipeline == self.pipeline)
                || !ends_pipeline
            {
                self.out.compound = true;
            }
            match split::split(&text) {
                Some(words) => {
                    let mut simple = words_to_simple(words);
                    simple.substitutions = subs;
                    simple.pipeline = self.pipeline;
                    if !simple.argv.is_empty()
                        || !simple.substitutions.is_empty()
                        || !simple.redirects.is_empty()
                        || !simple.assignments.is_empty()
                        || !simple.input.is_empty()
                        // `$(< FILE)`: bash reads the file, as `cat FILE` does.
                        || !simple.reads.is_empty()
                    {
                        self.out.commands.push(simple);
                        let fed = self.out.commands.len() - 1;
                        for h in self.heredocs.iter_mut().filter(|h| h.2.is_none()) {
                            h.2 = Some(fed);
                        }
                    }
                }
                None => self.out.errors.push(format!(
                    "cannot split {:?}: missing closing quote",
                    text.trim()
                )),
            }
        }
        if ends_pipeline {
            self.pipeline += 1;
        }
    }
}

pub(crate) mod ansi_c;
mod split;
mod words;
pub use words::array_items;
use words::words_to_simple;

#[cfg(test)]
mod tests;
