"use strict";
// The page speaks AHP over the same WebSocket as every other client: initialize, follow the
// root terminal list, subscribe to the selected terminal, dispatch input.
// The browser's session cookie (from the one-time login link) authenticates the socket.
const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ahp`);
const clientId = "page-" + Math.random().toString(36).slice(2);
let nextId = 1, clientSeq = 1, selected = null, terminals = [], state = null;
const pending = new Map();
const $ = (id) => document.getElementById(id);
function call(method, params) {
  const id = nextId++;
  ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  return new Promise((ok, fail) => pending.set(id, { ok, fail }));
}
function dispatch(action) {
  ws.send(JSON.stringify({ jsonrpc: "2.0", method: "dispatchAction", params: { channel: selected, clientSeq: clientSeq++, action } }));
}
const strip = (s) => s.replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, "").replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/\x1b[()][0-9A-Za-z]/g, "").replace(/\r(?!\n)/g, "");
function renderList() {
  $("list").innerHTML = "";
  for (const t of terminals) {
    const d = document.createElement("div");
    d.className = "term" + (t.resource === selected ? " sel" : "");
    const who = t.claim.kind === "client" ? "client " + t.claim.clientId : "agent " + (t.claim.toolCallId ? "(in a tool call)" : "(background)");
    const life = t.lifecycle.status === "exited" ? "exited " + (t.lifecycle.exitCode ?? "") : "running";
    d.innerHTML = `<b></b><small></small>`;
    d.querySelector("b").textContent = t.title;
    d.querySelector("small").textContent = `${life} · ${who}`;
    d.onclick = () => select(t.resource);
    $("list").appendChild(d);
  }
}
function renderScreen() {
  if (!state) { $("screen").textContent = ""; return; }
  const el = $("screen");
  el.innerHTML = "";
  for (const p of state.content) {
    if (p.type === "command") {
      const h = document.createElement("div");
      h.className = "cmd" + (p.isComplete && p.exitCode ? " fail" : "");
      h.textContent = `$ ${p.commandLine}` + (p.isComplete ? `   [exit ${p.exitCode ?? "?"}, ${p.durationMs ?? "?"} ms]` : "   [running]");
      el.appendChild(h);
      el.appendChild(document.createTextNode(strip(p.output)));
    } else if (p.type === "unclassified") {
      el.appendChild(document.createTextNode(strip(p.value)));
    }
  }
  el.scrollTop = el.scrollHeight;
}
// The same reducer rules as ahp::reducers::apply_action_to_terminal, for display.
function reduce(a) {
  const c = state.content, tail = c[c.length - 1];
  switch (a.type) {
    case "terminal/data":
      if (tail && tail.type === "command" && !tail.isComplete) tail.output += a.data;
      else if (tail && tail.type === "unclassified") tail.value += a.data;
      else c.push({ type: "unclassified", value: a.data });
      break;
    case "terminal/commandExecuted":
      c.push({ type: "command", commandId: a.commandId, commandLine: a.commandLine, output: "", timestamp: a.timestamp, isComplete: false });
      break;
    case "terminal/commandFinished":
      for (const p of c) if (p.commandId === a.commandId) Object.assign(p, { isComplete: true, exitCode: a.exitCode, durationMs: a.durationMs });
      break;
    case "terminal/cleared": state.content = []; break;
    case "terminal/titleChanged": state.title = a.title; break;
    case "terminal/claimed": state.claim = a.claim; break;
    case "terminal/exited": state.lifecycle = { status: "exited", exitCode: a.exitCode }; break;
  }
}
async function select(uri) {
  if (selected) ws.send(JSON.stringify({ jsonrpc: "2.0", method: "unsubscribe", params: { channel: selected } }));
  selected = uri;
  const r = await call("subscribe", { channel: uri });
  state = r.snapshot.state;
  for (const b of ["line", "ctrlc"]) $(b).disabled = false;
  renderList(); renderScreen();
}
ws.onmessage = (ev) => {
  const m = JSON.parse(ev.data);
  if (m.id !== undefined && pending.has(m.id)) {
    const p = pending.get(m.id); pending.delete(m.id);
    return m.error ? p.fail(m.error) : p.ok(m.result);
  }
  if (m.method === "pm/approval/pending") return showApproval(m.params);
  if (m.method === "pm/approval/resolved") { const el = document.getElementById("appr-" + m.params.approval_id); if (el) el.remove(); return; }
  if (m.method !== "action") return;
  const env = m.params;
  if (env.rejectionReason) { $("status").textContent = "refused: " + env.rejectionReason; return; }
  if (env.action.type === "root/terminalsChanged") { terminals = env.action.terminals; renderList(); return; }
  if (env.channel === selected && state) { reduce(env.action); renderScreen(); }
};
// An agent's command waiting for a person: approve it, or decline it with a reason.
function showApproval(a) {
  const d = document.createElement("div");
  d.className = "appr";
  d.id = "appr-" + a.approval_id;
  d.innerHTML = `<b>Approve this command?</b><code></code><small></small><input placeholder="reason (optional)"><br><button>Approve</button> <button>Decline</button>`;
  d.querySelector("code").textContent = a.command;
  d.querySelector("small").textContent = a.warning || "";
  const [ok, no] = d.querySelectorAll("button");
  const decide = (decision) => call("pm/approval/decide", { approval_id: a.approval_id, decision, reason: d.querySelector("input").value || undefined }).catch(() => d.remove());
  ok.onclick = () => decide("approve");
  no.onclick = () => decide("decline");
  $("approvals").appendChild(d);
}
ws.onopen = async () => {
  const r = await call("initialize", { channel: "ahp-root://", protocolVersions: ["1.0.0"], clientId, initialSubscriptions: ["ahp-root://"], _meta: { interactiveTerminal: { approver: true } } });
  terminals = r.snapshots[0].state.terminals || [];
  $("status").textContent = `connected as ${clientId}`;
  renderList();
};
ws.onclose = () => { $("status").textContent = "disconnected (reload to reconnect)"; };
$("line").onkeydown = (e) => {
  if (e.key === "Enter" && selected) { dispatch({ type: "terminal/input", data: $("line").value + "\r" }); $("line").value = ""; }
};
$("ctrlc").onclick = () => selected && dispatch({ type: "terminal/input", data: "\x03" });
