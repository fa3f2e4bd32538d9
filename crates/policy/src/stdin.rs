//! What a command's standard input holds, and the names that stand for a stream rather
//! than a file (`-`, `/dev/stdin`, `<(…)`): a script read from one is the line's own text,
//! or code that cannot be read.

use crate::lex::COMPUTED;

/// What a command's standard input holds, as far as the line shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Stdin {
    /// Not fed by the line (the terminal, or a file).
    None,
    /// Text the line itself writes: a heredoc, a here-string, `echo …|`.
    Literal(String),
    /// The output of an earlier command in a pipe.
    Pipe,
}

/// Whether a script "file" is a stream rather than a file of the project: the input
/// (`-`, `/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`), another descriptor, or a process
/// substitution (`<(curl …)`), whose text is made as it runs.
pub fn stream_name(word: &str) -> bool {
    word == "-"
        || word.contains(COMPUTED)
        || word.starts_with("/dev/stdin")
        || word.starts_with("/dev/fd/")
        || (word.starts_with("/proc/") && word.contains("/fd/"))
}

/// Whether a stream name is the input itself.
pub fn input_name(word: &str) -> bool {
    matches!(
        word,
        "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    )
}
