"use strict";
// The page speaks AHP over the same WebSocket as every other client (initialize, the root
// terminal list, dispatched input and resizes, createTerminal / disposeTerminal), plus the
// host's page extensions: pm/terminals (the list with cwd and running command),
// pm/screen/watch (screen frames) and pm/approval/* (a person's decisions). The page session
// the one-time login link left in this origin's localStorage authenticates the socket (as a
// subprotocol: no cookie, which every port of this address would receive). After a drop or a
// host restart it reconnects by itself, with backoff; each pane then gets a full frame. When
// the host says the session is no longer good, it asks for a new link instead.

const RETRY_FIRST_MS = 500, RETRY_CAP_MS = 8000, LIST_REFRESH_MS = 2000, PANES_MAX = 2;
const $ = (id) => document.getElementById(id);
const clientId = "page-" + Math.random().toString(36).slice(2, 10);
let ws = null, nextId = 1, clientSeq = 1, retryMs = RETRY_FIRST_MS, connected = false, readOnly = false;
let terminals = [];              // pm/terminals entries, by the host's order
const gone = new Map();          // terminals the host no longer has, kept to mark them
const pending = new Map();
const panes = [];                // { pane: TermPane, el, channel }
let focused = 0;

function call(method, params) {
  const id = nextId++;
  ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  return new Promise((ok, fail) => pending.set(id, { ok, fail }));
}
function dispatch(channel, action) {
  if (!connected || !channel) return;
  ws.send(JSON.stringify({ jsonrpc: "2.0", method: "dispatchAction", params: { channel, clientSeq: clientSeq++, action } }));
}
const status = (text) => { $("status").textContent = text; };
const uriOf = (id) => "ahp-terminal:/" + id;

// ---- panes ---------------------------------------------------------------------------

function addPane() {
  if (panes.length >= PANES_MAX) return null;
  const el = document.createElement("div");
  el.className = "pane";
  const head = document.createElement("div");
  head.className = "pane-head";
  const body = document.createElement("div");
  body.className = "term-view";
  el.append(head, body);
  $("panes").appendChild(el);
  const p = { el, head, channel: null };
  p.pane = new TermPane(body, {
    send: (data) => dispatch(p.channel, { type: "terminal/input", data }),
    resize: (cols, rows) => dispatch(p.channel, { type: "terminal/resized", cols, rows }),
    history: () => (connected && p.channel ? call("pm/screen/history", { channel: p.channel }).then((r) => r.lines, () => []) : Promise.resolve([])),
  });
  body.addEventListener("focus", () => { focused = panes.indexOf(p); renderList(); });
  panes.push(p);
  $("split").textContent = panes.length > 1 ? "One pane" : "Side by side";
  return p;
}

function removePane(p) {
  if (p.channel && connected) call("pm/screen/unwatch", { channel: p.channel }).catch(() => {});
  p.el.remove();
  panes.splice(panes.indexOf(p), 1);
  focused = 0;
  $("split").textContent = "Side by side";
}

async function show(p, channel) {
  if (p.channel && p.channel !== channel && connected) call("pm/screen/unwatch", { channel: p.channel }).catch(() => {});
  p.channel = channel;
  p.pane.clear();
  renderHead(p);
  renderList();
  if (channel && connected) {
    try { await call("pm/screen/watch", { channel }); } catch (e) { p.head.textContent = "cannot show: " + (e.message || e); }
  }
}

function titleOf(t) {
  return `${t.title} · ${t.terminal_id}`;
}
function renderHead(p) {
  const t = terminals.find((x) => x.resource === p.channel) || gone.get(p.channel);
  p.head.textContent = t ? `${titleOf(t)} — ${t.cwd || ""}` : p.channel ? p.channel : "no terminal";
}

// ---- the terminal list --------------------------------------------------------------------

function stateOf(t) {
  if (gone.has(t.resource)) return "gone (the host no longer has it)";
  if (t.running) return t.executing ? `running: ${t.executing}` : "running, at the prompt";
  return t.signal ? `exited (${t.signal})` : `exited with code ${t.exit_code ?? "?"}`;
}
function ownerOf(t) {
  const c = t.claim || {};
  if (c.kind === "client") return "held by " + c.clientId;
  if (c.kind === "session") return "agent " + (c.toolCallId ? "(in a tool call)" : "(background)") + (t.holder ? " via " + t.holder : "");
  return t.holder ? "opened by " + t.holder : "";
}

function renderList() {
  const list = $("list");
  // The list is rebuilt as terminals change: keep the keyboard where the person left it.
  const had = document.activeElement && list.contains(document.activeElement) ? document.activeElement.closest(".term") : null;
  const hadUri = had ? had.dataset.uri : null, hadDismiss = had && document.activeElement.classList.contains("dismiss");
  list.textContent = "";
  const all = [...terminals, ...gone.values()];
  if (!all.length) {
    const hint = document.createElement("p");
    hint.className = "hint";
    hint.textContent = "No terminals yet. Agents' terminals appear here as they open; New terminal opens one for you.";
    list.appendChild(hint);
  }
  for (const t of all) {
    const shownIn = panes.findIndex((p) => p.channel === t.resource);
    const d = document.createElement("div");
    d.className = "term" + (shownIn >= 0 ? " sel" : "") + (gone.has(t.resource) ? " gone" : "");
    d.tabIndex = 0;
    d.dataset.uri = t.resource;
    const b = document.createElement("b");
    b.textContent = titleOf(t);
    const small = document.createElement("small");
    small.textContent = `${t.cwd || ""}\n${stateOf(t)}\n${ownerOf(t)}`;
    d.append(b, small);
    if ((!t.running && !readOnly) || gone.has(t.resource)) {
      const x = document.createElement("button");
      x.textContent = "Dismiss";
      x.className = "dismiss";
      x.onclick = (e) => { e.stopPropagation(); dismiss(t); };
      d.appendChild(x);
    }
    const open = () => { const p = panes[focused] || panes[0]; if (p) show(p, t.resource); };
    d.onclick = open;
    d.onkeydown = (e) => { if (e.key === "Enter") open(); };
    list.appendChild(d);
    if (t.resource === hadUri) (hadDismiss && d.querySelector(".dismiss") || d).focus();
  }
  for (const p of panes) renderHead(p);
}

async function dismiss(t) {
  gone.delete(t.resource);
  if (connected && terminals.includes(t)) await call("disposeTerminal", { channel: t.resource }).catch(() => {});
  for (const p of panes) if (p.channel === t.resource) show(p, null);
  refreshList();
}

async function refreshList() {
  if (!connected) return;
  let r;
  try { r = await call("pm/terminals", {}); } catch { return; }
  const before = new Map(terminals.map((t) => [t.resource, t]));
  terminals = r.terminals;
  const now = new Set(terminals.map((t) => t.resource));
  for (const [uri, t] of before) if (!now.has(uri)) gone.set(uri, t);
  for (const uri of now) gone.delete(uri);
  // Nothing selected yet (first load): show the first terminal.
  for (const p of panes) {
    if (!p.channel && terminals.length) { show(p, terminals[0].resource); break; }
  }
  renderList();
}

async function newTerminal() {
  const id = "page-" + Date.now().toString(36);
  const channel = uriOf(id);
  try {
    await call("createTerminal", { channel, claim: { kind: "client", clientId } });
    await refreshList();
    show(panes[focused] || panes[0], channel);
    (panes[focused] || panes[0]).pane.root.focus();
  } catch (e) { status("cannot open a terminal: " + (e.message || e)); }
}

// ---- approvals ----------------------------------------------------------------------------

const countdowns = new Map();
function showApproval(a) {
  if (document.getElementById("appr-" + a.approval_id)) return;
  const d = document.createElement("div");
  d.className = "appr";
  d.id = "appr-" + a.approval_id;
  const rows = [["Command", a.command], ["Why", [a.rule && `rule ${a.rule}`, a.warning].filter(Boolean).join(": ")],
    ["In", a.cwd || "(the terminal's current directory)"], ["Terminal", a.terminal_id || "a new one"], ["Asked by", a.agent || "an agent"]];
  const h = document.createElement("b");
  h.textContent = "Approve this command?";
  d.appendChild(h);
  for (const [k, v] of rows) {
    const line = document.createElement(k === "Command" ? "code" : "small");
    line.textContent = k === "Command" ? v : `${k}: ${v}`;
    d.appendChild(line);
  }
  const left = document.createElement("small");
  left.className = "expiry";
  d.appendChild(left);
  const reason = document.createElement("input");
  reason.placeholder = "reason (optional, sent with a decline)";
  reason.setAttribute("aria-label", "reason");
  const ok = document.createElement("button"), no = document.createElement("button");
  ok.textContent = "Approve";
  no.textContent = "Decline";
  d.append(reason, ok, no);
  const decide = (decision) => call("pm/approval/decide", { approval_id: a.approval_id, decision, reason: reason.value || undefined })
    .catch((e) => { d.remove(); status(e.message || String(e)); });
  ok.onclick = () => decide("approve");
  no.onclick = () => decide("decline");
  $("approvals").appendChild(d);
  // Count down from what the host said the wait is, on this browser's clock.
  const ends = Date.now() + Math.max(0, (a.expires_at_ms || 0) - (a.requested_at_ms || 0));
  const tick = () => { left.textContent = `expires in ${Math.max(0, Math.round((ends - Date.now()) / 1000))} s`; };
  tick();
  countdowns.set(a.approval_id, setInterval(tick, 1000));
  ok.focus();
}
function resolved(a) {
  const el = document.getElementById("appr-" + a.approval_id);
  if (el) el.remove();
  clearInterval(countdowns.get(a.approval_id));
  countdowns.delete(a.approval_id);
  addHistory(a);
}
function addHistory(a) {
  const li = document.createElement("li");
  const by = a.decided_by === "nobody" ? "" : a.decided_by ? ` by ${a.decided_by}` : "";
  const when = a.resolved_at_ms ? new Date(a.resolved_at_ms).toLocaleTimeString() : "";
  const what = { timeout: "expired", unavailable: "handed on (nobody on the page; the agent's client or the operator's default decided)", withdrawn: "withdrawn (the agent's client cancelled the call; nothing ran)" }[a.decision] || a.decision;
  li.textContent = `${when} ${what}${by}: ${a.command}${a.reason ? ` (${a.reason})` : ""}`;
  li.className = "hist-" + a.decision;
  $("history").prepend(li);
}

// ---- the connection ---------------------------------------------------------------------

function onMessage(ev) {
  const m = JSON.parse(ev.data);
  if (m.id !== undefined && pending.has(m.id)) {
    const p = pending.get(m.id); pending.delete(m.id);
    return m.error ? p.fail(m.error) : p.ok(m.result);
  }
  switch (m.method) {
    case "pm/screen/frame":
      for (const p of panes) if (p.channel === m.params.channel) p.pane.draw(m.params.frame);
      return;
    case "pm/approval/pending": return showApproval(m.params);
    case "pm/approval/resolved": return resolved(m.params);
    case "pm/approval/history":
      $("history").textContent = "";
      for (const a of m.params.resolved) addHistory(a);
      return;
    case "action": {
      const env = m.params;
      if (env.rejectionReason) status("refused: " + env.rejectionReason);
      else if (env.action.type === "root/terminalsChanged") refreshList();
    }
  }
}

const SESSION_KEY = "itmcp_page";
const SIGN_IN = "This page needs a sign-in: open the one-time link http://…/login?code=… that the service printed in its log (for an MCP server started with --gui, its log in your MCP client).";

// Whether the host still takes the session: true, false (sign in again), or null (no answer:
// the host is down or restarting, so keep trying).
async function sessionGood(session) {
  try {
    const r = await fetch("/session", { headers: { "X-Itmcp-Session": session }, credentials: "omit", cache: "no-store" });
    return r.status === 204 ? true : r.status === 401 ? false : null;
  } catch (e) { return null; }
}

let waitingForSignIn = false;
function needSignIn() {
  localStorage.removeItem(SESSION_KEY);
  waitingForSignIn = true;
  status(SIGN_IN);
}
// A sign-in in another tab of this origin puts a session here: connect with it.
window.addEventListener("storage", (e) => {
  if (e.key === SESSION_KEY && e.newValue && waitingForSignIn) { waitingForSignIn = false; connect(); }
});

function connect() {
  const session = localStorage.getItem(SESSION_KEY);
  if (!session) { needSignIn(); return; }
  status("connecting…");
  ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ahp`, ["itmcp-page", "itmcp-session." + session]);
  ws.onmessage = onMessage;
  ws.onopen = async () => {
    connected = true;
    retryMs = RETRY_FIRST_MS;
    for (const p of $("approvals").querySelectorAll(".appr")) p.remove();
    try {
      const r = await call("initialize", { channel: "ahp-root://", protocolVersions: ["1.0.0"], clientId, initialSubscriptions: ["ahp-root://"], _meta: { interactiveTerminal: { approver: true } } });
      readOnly = Boolean(r._meta && r._meta.interactiveTerminal && r._meta.interactiveTerminal.pageReadOnly);
    } catch (e) { status("refused: " + (e.message || e)); return; }
    $("new").disabled = readOnly;
    status(`connected as ${clientId}` + (readOnly ? " (read-only: watch and decide)" : ""));
    await refreshList();
    for (const p of panes) if (p.channel) show(p, p.channel);
  };
  ws.onclose = async () => {
    const was = connected;
    connected = false;
    for (const [id, p] of pending) { p.fail(new Error("disconnected")); pending.delete(id); }
    if (await sessionGood(session) === false) { needSignIn(); return; }
    status(`disconnected; reconnecting in ${Math.round(retryMs / 1000)} s…`);
    setTimeout(connect, retryMs);
    retryMs = Math.min(RETRY_CAP_MS, retryMs * (was ? 1 : 2));
  };
}

$("new").onclick = newTerminal;
$("split").onclick = () => {
  if (panes.length > 1) removePane(panes[panes.length - 1]);
  else {
    const p = addPane();
    const other = terminals.find((t) => !panes.some((q) => q.channel === t.resource));
    if (p && other) show(p, other.resource);
  }
};
addPane();
setInterval(refreshList, LIST_REFRESH_MS);
connect();
