//! How output is asked for and what a terminal shows, in the same words everywhere: the
//! contract's answers, the terminal operations (in-process and across the host's WebSocket)
//! and headless reads.

use serde::{Deserialize, Serialize};

/// Default most bytes of output (per stream) in one answer.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024;

/// What to read: the stream as written (`raw`), without escape sequences (`text`), the screen
/// as it stands, or the commands the shell reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum View {
    Raw,
    #[default]
    Text,
    Screen,
    Commands,
}

impl View {
    pub fn as_str(self) -> &'static str {
        match self {
            View::Raw => "raw",
            View::Text => "text",
            View::Screen => "screen",
            View::Commands => "commands",
        }
    }
}

/// How output bytes are carried in an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    #[default]
    Utf8,
    Base64,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf8",
            Encoding::Base64 => "base64",
        }
    }
}

/// A command a shell reported, and where its output lies in the stream
/// (`$defs/command_record` of the response schema).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CommandRecord {
    pub command_id: String,
    pub command_line: String,
    pub complete: bool,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<i64>,
    pub started_at_ms: i64,
    pub output_start: u64,
    pub output_end: Option<u64>,
}

/// The visible screen as it stands (`$defs/screen`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScreenView {
    pub rows: u16,
    pub cols: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub alternate_screen: bool,
    /// The program hid the cursor (`CSI ? 25 l`): said only then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cursor_hidden: bool,
    pub text: String,
}
