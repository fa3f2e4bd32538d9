//! Text as it passes between the layers, each in the same words everywhere: what may be
//! typed at a prompt as a command line (`typed`), how output is asked for and what a
//! terminal shows (`views`), text shown to a person who decides on it with what a display
//! hides written out (`visible`), and the `wait_for` patterns a read waits on
//! (`wait_pattern`).

pub mod typed;
pub mod views;
pub mod visible;
pub mod wait_pattern;
