"use strict";
// One terminal pane: draws the host's screen frames (pm/screen/frame: the rows that
// changed, as styled runs) and turns every key into the bytes a terminal would send.
// Nothing here parses escape sequences: the host's vt100 screen did that, the same screen
// the agent reads, so the person sees exactly what the agent sees.

// Indexed colours 0-15 in a palette readable on the dark background (VS Code's dark
// terminal colours); 16-255 are computed as xterm does.
const BASE16 = ["#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
  "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"];
function paletteColour(c) {
  if (typeof c === "string") return c;
  if (c < 16) return BASE16[c];
  if (c < 232) {
    const i = c - 16, v = (n) => (n ? n * 40 + 55 : 0);
    return `rgb(${v(Math.floor(i / 36))},${v(Math.floor(i / 6) % 6)},${v(i % 6)})`;
  }
  const g = (c - 232) * 10 + 8;
  return `rgb(${g},${g},${g})`;
}

// Keys that are not text, as xterm sends them. Arrows and Home/End follow the
// application-cursor mode the program set.
const CSI = "\x1b[";
const SPECIAL = {
  Enter: "\r", Backspace: "\x7f", Tab: "\t", Escape: "\x1b",
  Insert: CSI + "2~", Delete: CSI + "3~", PageUp: CSI + "5~", PageDown: CSI + "6~",
  F1: "\x1bOP", F2: "\x1bOQ", F3: "\x1bOR", F4: "\x1bOS", F5: CSI + "15~", F6: CSI + "17~",
  F7: CSI + "18~", F8: CSI + "19~", F9: CSI + "20~", F10: CSI + "21~", F11: CSI + "23~", F12: CSI + "24~",
};
const CURSOR_KEYS = { ArrowUp: "A", ArrowDown: "B", ArrowRight: "C", ArrowLeft: "D", Home: "H", End: "F" };

// The bytes for one key press, or null when the browser should handle it (copy, paste).
function keyBytes(e, appCursor) {
  if (e.metaKey) return null;
  if (e.ctrlKey && e.shiftKey && (e.key === "C" || e.key === "V")) return null;
  if (e.ctrlKey && !e.altKey && e.key === "c" && String(window.getSelection()).length > 0) return null;
  if (CURSOR_KEYS[e.key]) {
    const mods = (e.shiftKey ? 1 : 0) + (e.altKey ? 2 : 0) + (e.ctrlKey ? 4 : 0);
    if (mods) return `${CSI}1;${mods + 1}${CURSOR_KEYS[e.key]}`;
    return (appCursor ? "\x1bO" : CSI) + CURSOR_KEYS[e.key];
  }
  if (e.key === "Tab" && e.shiftKey) return CSI + "Z";
  if (SPECIAL[e.key]) return (e.altKey ? "\x1b" : "") + SPECIAL[e.key];
  if (e.ctrlKey && e.key.length === 1) {
    const k = e.key.toLowerCase();
    let b = null;
    if (k >= "a" && k <= "z") b = String.fromCharCode(k.charCodeAt(0) - 96);
    else if (k === " " || k === "@" || k === "2") b = "\x00";
    else if (k === "[" || k === "3") b = "\x1b";
    else if (k === "\\" || k === "4") b = "\x1c";
    else if (k === "]" || k === "5") b = "\x1d";
    else if (k === "^" || k === "6") b = "\x1e";
    else if (k === "_" || k === "-" || k === "7") b = "\x1f";
    if (b !== null) return (e.altKey ? "\x1b" : "") + b;
    return null;
  }
  if (e.key.length === 1 || [...e.key].length === 1) return (e.altKey ? "\x1b" : "") + e.key;
  return null;
}

// A pane showing one terminal. `send(data)` types into it; `resize(cols, rows)` asks the
// pty for a new size; `history()` resolves to the lines above the screen (styled runs).
class TermPane {
  constructor(root, { send, resize, history }) {
    this.root = root;
    this.send = send;
    this.resize = resize;
    this.fetchHistory = history;
    this.historyShown = -1;
    this.past = document.createElement("div");
    this.past.className = "history";
    this.screen = document.createElement("div");
    this.screen.className = "screen";
    this.cursor = document.createElement("div");
    this.cursor.className = "cursor";
    this.probe = document.createElement("span");
    this.probe.className = "probe";
    this.probe.textContent = "MMMMMMMMMM";
    root.append(this.past, this.screen, this.cursor, this.probe);
    root.tabIndex = 0;
    this.rows = [];
    this.frame = null;
    root.addEventListener("keydown", (e) => this.onKey(e));
    root.addEventListener("paste", (e) => this.onPaste(e));
    root.addEventListener("focus", () => this.fit());
    // Scrolling up past the top of the screen brings the lines that scrolled off it.
    root.addEventListener("wheel", (e) => { if (e.deltaY < 0 && root.scrollTop === 0) this.showHistory(); });
    root.addEventListener("keydown", (e) => { if (e.shiftKey && e.key === "PageUp") this.showHistory(); }, true);
    new ResizeObserver(() => { if (document.activeElement === root) this.fit(); }).observe(root);
  }

  async showHistory() {
    const f = this.frame;
    if (!f || f.alternate_screen || !f.scrollback || this.historyShown === f.scrollback) return;
    const lines = await this.fetchHistory();
    if (!this.frame || this.frame.alternate_screen) return;
    const before = this.root.scrollHeight - this.root.scrollTop;
    this.past.textContent = "";
    for (const runs of lines) {
      const row = document.createElement("div");
      row.className = "row";
      for (const run of runs) row.appendChild(this.span(run));
      if (!runs.length) row.appendChild(document.createTextNode(" "));
      this.past.appendChild(row);
    }
    this.historyShown = f.scrollback;
    // Keep what was in view where it was; the history grows above it.
    this.root.scrollTop = this.root.scrollHeight - before;
    this.placeCursor();
  }

  onKey(e) {
    if (e.isComposing) return;
    // Tab goes to the program; Shift-Escape hands the keyboard back to the page (the list).
    if (e.key === "Escape" && e.shiftKey) {
      e.preventDefault();
      const next = document.querySelector("#list .term") || document.getElementById("new");
      if (next) next.focus();
      return;
    }
    if (e.shiftKey && (e.key === "PageUp" || e.key === "PageDown")) {
      e.preventDefault();
      this.root.scrollTop += (e.key === "PageUp" ? -1 : 1) * this.root.clientHeight * 0.9;
      return;
    }
    const bytes = keyBytes(e, this.frame && this.frame.application_cursor);
    if (bytes === null) return;
    e.preventDefault();
    this.send(bytes);
  }

  onPaste(e) {
    const text = (e.clipboardData || window.clipboardData).getData("text");
    e.preventDefault();
    if (!text) return;
    const data = text.replace(/\r?\n/g, "\r");
    this.send(this.frame && this.frame.bracketed_paste ? `\x1b[200~${data}\x1b[201~` : data);
  }

  // One cell's width and height in pixels.
  cell() {
    const cw = this.probe.getBoundingClientRect().width / 10;
    const ch = this.rows.length ? this.rows[0].getBoundingClientRect().height : this.probe.getBoundingClientRect().height;
    return [cw, ch];
  }

  // The size that fills the pane, in cells; asked of the pty when it differs.
  fit() {
    if (!this.frame) return;
    const [cw, ch] = this.cell();
    if (!cw || !ch) return;
    const style = getComputedStyle(this.root);
    const w = this.root.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const h = this.root.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    const cols = Math.max(20, Math.min(500, Math.floor(w / cw)));
    const rows = Math.max(5, Math.min(200, Math.floor(h / ch)));
    if (cols !== this.frame.cols || rows !== this.frame.rows) this.resize(cols, rows);
  }

  clear() {
    this.past.textContent = "";
    this.historyShown = -1;
    this.screen.textContent = "";
    this.rows = [];
    this.frame = null;
    this.cursor.hidden = true;
  }

  draw(frame) {
    const first = !this.frame;
    if (frame.full) {
      this.screen.textContent = "";
      this.rows = [];
      for (let r = 0; r < frame.rows; r++) {
        const row = document.createElement("div");
        row.className = "row";
        this.screen.appendChild(row);
        this.rows.push(row);
      }
    }
    for (const line of frame.lines) {
      const row = this.rows[line.row];
      if (!row) continue;
      row.textContent = "";
      for (const run of line.runs) row.appendChild(this.span(run));
      if (!line.runs.length) row.appendChild(document.createTextNode(" "));
    }
    this.frame = frame;
    // A full-screen program has no history; otherwise history in view follows the screen
    // (refetched at most once a second while the person looks at it).
    if (frame.alternate_screen) { this.past.textContent = ""; this.historyShown = -1; }
    else if (this.historyShown >= 0 && frame.scrollback !== this.historyShown && this.root.scrollTop < this.past.offsetHeight && !this.refetch) {
      this.refetch = setTimeout(() => { this.refetch = null; this.showHistory(); }, 1000);
    }
    this.root.classList.toggle("alternate", frame.alternate_screen);
    this.placeCursor();
    // Focused before its first frame (a terminal the person just opened): fit it now.
    if (first && document.activeElement === this.root) this.fit();
  }

  span(run) {
    const s = document.createElement("span");
    s.textContent = run.text;
    const st = run.style;
    let fg = st.fg !== undefined ? paletteColour(st.fg) : null;
    let bg = st.bg !== undefined ? paletteColour(st.bg) : null;
    if (st.inverse) { [fg, bg] = [bg || "var(--bg)", fg || "var(--fg)"]; }
    // CSSOM, not a style attribute: allowed by the page's strict policy.
    if (fg) s.style.color = fg;
    if (bg) s.style.backgroundColor = bg;
    if (st.bold) s.classList.add("b");
    if (st.dim) s.classList.add("d");
    if (st.italic) s.classList.add("i");
    if (st.underline) s.classList.add("u");
    if (run.wide) s.classList.add("w");
    return s;
  }

  placeCursor() {
    const f = this.frame;
    this.cursor.hidden = !f.cursor_visible;
    const [cw, ch] = this.cell();
    const row = this.rows[f.cursor_row];
    const top = row ? row.offsetTop : f.cursor_row * ch;
    this.cursor.style.transform = `translate(${f.cursor_col * cw}px, ${top}px)`;
    this.cursor.style.width = `${cw}px`;
    this.cursor.style.height = `${ch}px`;
  }

}

window.TermPane = TermPane;
window.keyBytes = keyBytes;
