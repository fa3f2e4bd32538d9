//! The screen as a person's page draws it: the same `vt100` screen the agent's `screen`
//! view reads, as rows of styled runs, and per viewer only the rows that changed since the
//! last frame it got — so the page shows exactly what the agent sees, at a small cost.

use serde::Serialize;

/// A colour as the page paints it: a palette index (0–255) or `#rrggbb`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Colour {
    Index(u8),
    Rgb(String),
}

fn colour(c: vt100::Color) -> Option<Colour> {
    match c {
        vt100::Color::Default => None,
        vt100::Color::Idx(i) => Some(Colour::Index(i)),
        vt100::Color::Rgb(r, g, b) => Some(Colour::Rgb(format!("#{r:02x}{g:02x}{b:02x}"))),
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How a run of cells is drawn; the default style serialises as `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Style {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fg: Option<Colour>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bg: Option<Colour>,
    #[serde(skip_serializing_if = "is_false")]
    pub bold: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub dim: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub italic: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub underline: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub inverse: bool,
}

impl Style {
    fn of(cell: &vt100::Cell) -> Style {
        Style {
            fg: colour(cell.fgcolor()),
            bg: colour(cell.bgcolor()),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }
}

/// Cells side by side in one style. `wide` counts the double-width characters in it, so the
/// page can keep columns aligned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Run {
    pub text: String,
    pub style: Style,
    #[serde(skip_serializing_if = "is_zero")]
    pub wide: u16,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

/// One screen row that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Line {
    pub row: u16,
    pub runs: Vec<Run>,
}

/// What a viewer needs to bring its copy of the screen up to date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    pub cols: u16,
    pub rows: u16,
    /// Every row is in `lines` (the first frame, or after a resize): start afresh.
    pub full: bool,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub cursor_visible: bool,
    pub alternate_screen: bool,
    /// Arrow keys are sent as `ESC O x` (the program asked for application cursor keys).
    pub application_cursor: bool,
    /// Pasted text is wrapped in `ESC [200~` … `ESC [201~`.
    pub bracketed_paste: bool,
    /// Lines above the screen (`history` reads them).
    pub scrollback: usize,
    pub lines: Vec<Line>,
}

/// The lines that scrolled off the top of the screen, oldest first, as styled runs. Reads
/// them by moving the screen's view up and back under the caller's lock, so every other
/// reader sees the live screen.
pub fn history(screen: &mut vt100::Screen) -> Vec<Vec<Run>> {
    let total = screen.scrollback_len();
    let rows = usize::from(screen.size().0.get());
    let mut out = Vec::with_capacity(total);
    // At offset `o`, visible row `r` shows line `total - o + r` of scrollback + screen.
    let mut offset = total;
    while offset > 0 {
        screen.set_scrollback(offset);
        let take = offset.min(rows);
        for row in 0..take {
            out.push(row_runs(screen, row as u16));
        }
        offset -= take;
    }
    screen.set_scrollback(0);
    out
}

/// One row as runs of equally styled cells; trailing blank default cells are left out.
pub fn row_runs(screen: &vt100::Screen, row: u16) -> Vec<Run> {
    let (_, cols) = screen.size();
    let mut runs: Vec<Run> = Vec::new();
    for col in 0..cols.get() {
        let Some(cell) = screen.cell(row, col) else {
            break;
        };
        if cell.is_wide_continuation() {
            continue;
        }
        let style = Style::of(cell);
        let text = if cell.has_contents() {
            cell.contents()
        } else {
            " "
        };
        let wide = u16::from(cell.is_wide());
        match runs.last_mut() {
            Some(last) if last.style == style => {
                last.text.push_str(text);
                last.wide += wide;
            }
            _ => runs.push(Run {
                text: text.to_string(),
                style,
                wide,
            }),
        }
    }
    // Blank cells at the end of a row in the default style draw nothing.
    if let Some(last) = runs.last_mut()
        && last.style == Style::default()
    {
        let kept = last.text.trim_end_matches(' ').len();
        last.text.truncate(kept);
        if last.text.is_empty() {
            runs.pop();
        }
    }
    runs
}

/// One viewer's copy of the screen: what it was last sent.
#[derive(Default)]
pub struct Framer {
    rows: Vec<Vec<Run>>,
    last: Option<Frame>,
}

impl Framer {
    /// The frame that brings the viewer up to date, or `None` when nothing it shows changed.
    pub fn next(&mut self, screen: &vt100::Screen) -> Option<Frame> {
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get(), cols.get());
        let full = self
            .last
            .as_ref()
            .is_none_or(|l| l.rows != rows || l.cols != cols);
        if full {
            self.rows = vec![Vec::new(); usize::from(rows)];
        }
        let mut lines = Vec::new();
        for row in 0..rows {
            let runs = row_runs(screen, row);
            let slot = &mut self.rows[usize::from(row)];
            if full || *slot != runs {
                lines.push(Line {
                    row,
                    runs: runs.clone(),
                });
                *slot = runs;
            }
        }
        let (cursor_row, cursor_col) = screen.cursor_position();
        let frame = Frame {
            cols,
            rows,
            full,
            cursor_row,
            cursor_col,
            cursor_visible: !screen.hide_cursor(),
            alternate_screen: screen.alternate_screen(),
            application_cursor: screen.application_cursor(),
            bracketed_paste: screen.bracketed_paste(),
            scrollback: screen.scrollback_len(),
            lines,
        };
        let same = self.last.as_ref().is_some_and(|l| {
            frame.lines.is_empty()
                && Frame {
                    lines: Vec::new(),
                    full: false,
                    ..l.clone()
                } == frame
        });
        if same {
            return None;
        }
        self.last = Some(Frame {
            lines: Vec::new(),
            full: false,
            ..frame.clone()
        });
        Some(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::term::dim;

    fn parser(bytes: &[u8]) -> vt100::Parser {
        let mut p = vt100::Parser::new(dim(4), dim(20), 0);
        p.process(bytes);
        p
    }

    #[test]
    fn styles_split_runs_and_blank_ends_are_dropped() {
        let p = parser(b"ab\x1b[1;31mred\x1b[0m   \r\n\x1b[38;2;1;2;3mrgb");
        let runs = row_runs(p.screen(), 0);
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert_eq!(runs[0].text, "ab");
        assert_eq!(runs[1].text, "red");
        assert!(runs[1].style.bold);
        assert_eq!(runs[1].style.fg, Some(Colour::Index(1)));
        let rgb = row_runs(p.screen(), 1);
        assert_eq!(rgb[0].style.fg, Some(Colour::Rgb("#010203".into())));
        assert!(row_runs(p.screen(), 3).is_empty());
    }

    #[test]
    fn wide_characters_take_one_text_char_and_are_counted() {
        let p = parser("日本x".as_bytes());
        let runs = row_runs(p.screen(), 0);
        assert_eq!(runs[0].text, "日本x");
        assert_eq!(runs[0].wide, 2);
    }

    #[test]
    fn frames_carry_only_changed_rows_and_a_carriage_return_redraws_in_place() {
        let mut p = parser(b"one\r\ntwo\r\nprogress 1/4");
        let mut f = Framer::default();
        let first = f.next(p.screen()).unwrap();
        assert!(first.full);
        assert_eq!(first.lines.len(), 4);
        assert!(
            f.next(p.screen()).is_none(),
            "nothing changed, nothing sent"
        );
        p.process(b"\rprogress 2/4");
        let second = f.next(p.screen()).unwrap();
        assert!(!second.full);
        assert_eq!(second.lines.len(), 1);
        assert_eq!(second.lines[0].row, 2);
        assert_eq!(second.lines[0].runs[0].text, "progress 2/4");
        // The cursor moving alone is a frame with no lines.
        p.process(b"\x1b[1;1H");
        let moved = f.next(p.screen()).unwrap();
        assert!(moved.lines.is_empty());
        assert_eq!((moved.cursor_row, moved.cursor_col), (0, 0));
    }

    #[test]
    fn alternate_screen_and_modes_are_reported() {
        let mut p = parser(b"shell$ ");
        let mut f = Framer::default();
        f.next(p.screen());
        p.process(b"\x1b[?1049h\x1b[?1h\x1b[?2004h\x1b[Hvim");
        let alt = f.next(p.screen()).unwrap();
        assert!(alt.alternate_screen && alt.application_cursor && alt.bracketed_paste);
        assert_eq!(alt.lines[0].runs[0].text, "vim");
        p.process(b"\x1b[?1049l\x1b[?1l");
        let back = f.next(p.screen()).unwrap();
        assert!(!back.alternate_screen && !back.application_cursor);
        assert_eq!(back.lines[0].runs[0].text, "shell$");
    }

    #[test]
    fn history_reads_what_scrolled_off_and_leaves_the_view_live() {
        let mut p = vt100::Parser::new(dim(3), dim(10), 100);
        for i in 1..=8 {
            p.process(format!("{i}\r\n").as_bytes());
        }
        let live = p.screen().contents();
        let lines = history(p.screen_mut());
        let text: Vec<String> = lines
            .iter()
            .map(|runs| runs.iter().map(|r| r.text.as_str()).collect())
            .collect();
        assert_eq!(text, ["1", "2", "3", "4", "5", "6"]);
        assert_eq!(
            p.screen().contents(),
            live,
            "the live screen is back in view"
        );
        assert_eq!(p.screen().scrollback(), 0);
        let mut f = Framer::default();
        assert_eq!(f.next(p.screen()).unwrap().scrollback, 6);
    }

    #[test]
    fn a_resize_sends_every_row() {
        let mut p = parser(b"x");
        let mut f = Framer::default();
        f.next(p.screen());
        p.screen_mut().set_size(dim(6), dim(30));
        let r = f.next(p.screen()).unwrap();
        assert!(r.full);
        assert_eq!((r.rows, r.cols, r.lines.len()), (6, 30, 6));
    }
}
