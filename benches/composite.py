#!/usr/bin/env python3
"""The server against the composite floor: the work's own floor (what the command costs with
no server: `sh -c`, a bare pty, `seq | cat`) plus the protocol's floor (what any MCP server
costs its client: a no-op server, benches/protocol_floor.rs, answering at once with the very
answer lines ours sent, captured in the same run and replayed with their ids put in: the same
bytes, escapes and nesting for the client to parse). A server that took no time at all would cost the client
the sum; the ratio says what ours adds. All three are measured in the same run, samples taken
in turn, by the same minimal client (raw JSON-RPC lines, each answer parsed).

Usage:
  cargo build --release --bins --example protocol_floor
  python3 benches/composite.py [target/release/interactive-terminal-mcp] [target/release/examples/protocol_floor]
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outside  # noqa: E402  (the shared client, floors and REPL helpers)

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
FLOOR = sys.argv[2] if len(sys.argv) > 2 else "target/release/examples/protocol_floor"
SAMPLES = 300
SEQ_ROUNDS = 5
ECHO = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "echo hi"}}  # fmt: skip


class Client(outside.Server):
    """The shared client, also saying how long each answer line was."""

    def rpc(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "method": method, "params": params, "id": self.n})
        while True:
            line = self.p.stdout.readline()
            r = json.loads(line)
            if r.get("id") == self.n:
                self.last_bytes = len(line)
                self.last_line = line
                return r

    def call(self, args):
        r = self.rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": args})
        return r.get("result", {}).get("structuredContent")


def floor_server(answer_bytes):
    """The no-op server, answering every call with `answer_bytes` bytes (a text padded with
    `x`: less for the client to parse than ours, which is why the rows use `replay_floor`)."""
    return Client(argv=[FLOOR, "--answer-bytes", str(answer_bytes)])


def replay_floor(lines, http_port=None):
    """The no-op server, answering the k-th call with the k-th of `lines` (answer lines ours
    sent, round and round), its id put in."""
    fd, path = tempfile.mkstemp(prefix="itmcp-composite-replay-")
    with os.fdopen(fd, "wb") as f:
        f.writelines(line if line.endswith(b"\n") else line + b"\n" for line in lines)
    if http_port is None:
        c = Client(argv=[FLOOR, "--replay", path])  # answered `initialize`: the file is read
        os.unlink(path)
        return c
    p = subprocess.Popen([FLOOR, "--replay", path, "--http", str(http_port)], stdout=subprocess.DEVNULL)
    listening(http_port, p)
    os.unlink(path)
    return p


def three_way(ours, work, protocol, n):
    a, b, c = [], [], []
    for _ in range(n):
        for f, out in ((ours, a), (work, b), (protocol, c)):
            time.sleep(outside.SETTLE)
            out += outside.timed(f, 1)
    return outside.median(a), outside.median(b), outside.median(c)


def row(name, ours, work_name, work, protocol, unit="ms"):
    composite = work + protocol
    print(f"| {name} | {ours * 1000:.3f} {unit} | {work_name} {work * 1000:.3f} {unit} "
          f"| {protocol * 1000:.3f} {unit} | {ours / composite:.2f}x |")  # fmt: skip


def echo_row(s):
    s.call(ECHO)
    f = replay_floor([s.last_line])
    ours, work, protocol = three_way(lambda: s.call(ECHO), lambda: outside.sh_once("echo hi", True),
                                     lambda: f.call(ECHO), SAMPLES)  # fmt: skip
    f.close()
    row("`echo hi`, headless", ours, "`sh -c` (own session)", work, protocol)


def repl_row(s):
    once = outside.repl(s)
    once()
    f = replay_floor([s.last_line])
    _, bare, close = outside.bare_repl()
    ours, work, protocol = three_way(once, bare, lambda: f.call(ECHO), SAMPLES)
    close()
    f.close()
    row("REPL round trip (`python3`, `1+1`)", ours, "bare pty", work, protocol)


PROMPT_PROGRAM = """import sys, time
time.sleep(0.05)
open(sys.argv[1], "w").write(repr(time.monotonic()))
sys.stdout.write("name? ")
sys.stdout.flush()
sys.stdin.readline()
"""


def prompt_row(s):
    """From a prompt being drawn to the answer that says the program waits for input: the
    program notes the monotonic clock (shared by every process here) just before it writes
    its prompt; the client notes it when the answer is in. Against the protocol floor's round
    trip: a server that knew at once would answer one round trip after the prompt."""
    d = tempfile.mkdtemp(prefix="itmcp-composite-prompt-")
    prog, stamp = os.path.join(d, "prompt.py"), os.path.join(d, "stamp")
    with open(prog, "w") as f:
        f.write(PROMPT_PROGRAM)
    tid = s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})[
        "identity"]["terminal_id"]  # fmt: skip
    run = {"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
           "target": {"terminal_id": tid}, "execution": {"command": f"python3 {prog} {stamp}"},
           "runtime": {"wait_ms": 10000}}  # fmt: skip
    answer = {"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
              "target": {"terminal_id": tid}, "execution": {"input": "x\r"}, "runtime": {"wait_ms": 10000}}  # fmt: skip
    late = []
    for _ in range(30):
        r = s.call(run)
        at = time.monotonic()
        assert r["result"].get("waiting_for_input"), r
        late.append(at - float(open(stamp).read()))
        answered = s.last_line
        s.call(answer)
    f = replay_floor([answered])
    protocol = outside.median(outside.timed(lambda: f.call(ECHO), SAMPLES))
    f.close()
    ours = outside.median(late)
    print(f"| prompt drawn → answer saying it waits for input | {ours * 1000:.3f} ms | — "
          f"| {protocol * 1000:.3f} ms | {(ours - protocol) * 1000:+.3f} ms from the floor |")  # fmt: skip


def bwrap_once(ws):
    """`sh -c 'echo hi'` inside bubblewrap with the arguments the server's sandbox gives a
    command (workspace-write, network off; as benches/sandbox.rs), output piped."""
    subprocess.run(["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-net",
                    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                    "--bind", ws, ws, "--chdir", ws, "--", "/bin/sh", "-c", "echo hi"],
                   stdout=subprocess.PIPE, check=True, start_new_session=True)  # fmt: skip


def sandbox_row():
    """`echo hi` on a server whose sandbox is on, against the sandbox's own floor."""
    ws = tempfile.mkdtemp(prefix="itmcp-composite-ws-")
    s = Client(env={"PM_TERM_SANDBOX": "workspace-write", "PM_TERM_WORKSPACE": ws})
    echo = dict(ECHO, runtime={"cwd": ws})
    r = s.call(echo)
    assert r["result"]["stdout"] == "hi\n", r
    f = replay_floor([s.last_line])
    ours, work, protocol = three_way(lambda: s.call(echo), lambda: bwrap_once(ws), lambda: f.call(echo), SAMPLES)
    f.close()
    s.close()
    row("`echo hi`, sandboxed (bubblewrap, workspace-write)", ours, "`bwrap … sh -c`", work, protocol)


def seq_row(s):
    """Every byte of `seq` to the client in 1 MiB pages; the protocol floor answers as many
    calls with pages of the same size."""
    lines = []
    original = s.rpc

    def capturing(method, params):
        r = original(method, params)
        lines.append(s.last_line)
        return r

    s.rpc = capturing
    outside.seq_every_line(s)
    s.rpc = original
    pages, page_bytes = len(lines), sum(map(len, lines)) // len(lines)
    f, padded = replay_floor(lines), floor_server(page_bytes)
    ours, work, protocol, pad = [], [], [], []
    for _ in range(SEQ_ROUNDS):
        ours += outside.timed(lambda: outside.seq_every_line(s), 1)
        work += outside.timed(lambda: outside.sh_once(f"seq 1 {outside.SEQ_LINES} | cat"), 1)
        protocol += outside.timed(lambda: [f.call(ECHO) for _ in range(pages)], 1)
        pad += outside.timed(lambda: [padded.call(ECHO) for _ in range(pages)], 1)
    f.close()
    padded.close()
    row(f"every byte of `seq 1 {outside.SEQ_LINES}` in {pages} pages of {page_bytes / 1e6:.2f} MB", outside.median(ours),
        "`seq | cat`", outside.median(work), outside.median(protocol))  # fmt: skip
    row("the same, against a floor of pages padded with `x` (less to parse)", outside.median(ours),
        "`seq | cat`", outside.median(work), outside.median(pad))  # fmt: skip


class HttpClient:
    """A minimal streamable-HTTP client: one kept-alive connection, a session, and each
    answer's event stream read to its end and its answer event parsed."""

    def __init__(self, port, token=None):
        self.c = http.client.HTTPConnection("127.0.0.1", port)
        self.h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if token:
            self.h["Authorization"] = f"Bearer {token}"
        self.n = 0
        self.rpc("initialize", outside.INIT)
        self.h["mcp-session-id"] = self.session
        self.h["mcp-protocol-version"] = outside.INIT["protocolVersion"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, msg):
        self.c.request("POST", "/mcp", body=json.dumps(msg), headers=self.h)
        resp = self.c.getresponse()
        body = resp.read()
        self.session = resp.getheader("mcp-session-id") or getattr(self, "session", None)
        return body

    def rpc(self, method, params):
        self.n += 1
        body = self.post({"jsonrpc": "2.0", "method": method, "params": params, "id": self.n})
        for line in body.split(b"\n"):
            if line.startswith(b"data: {"):
                r = json.loads(line[6:])
                if r.get("id") == self.n:
                    self.last_bytes = len(line) - 6 + 1
                    self.last_line = line[6:]
                    return r
        raise RuntimeError(f"no answer in {body[:300]!r}")

    def call(self, args):
        r = self.rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": args})
        return r.get("result", {}).get("structuredContent")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port, proc):
    for _ in range(500):
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} ended: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.01)
    raise RuntimeError(f"nothing listens on {port}")


def http_row():
    """`echo hi` over streamable HTTP, against the no-op server over HTTP answering as ours
    frames it (an event stream per POST, a priming event, then the answer)."""
    token = "composite-" + os.urandom(16).hex()
    port = free_port()
    ours_p = subprocess.Popen([BIN, "--http", str(port)], env=dict(os.environ, PM_TERM_HTTP_TOKEN=token, PM_TERM_LOG="warn"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    listening(port, ours_p)
    s = HttpClient(port, token)
    s.call(ECHO)
    fport = free_port()
    floor_p = replay_floor([s.last_line], fport)
    f = HttpClient(fport)
    ours, work, protocol = three_way(lambda: s.call(ECHO), lambda: outside.sh_once("echo hi", True),
                                     lambda: f.call(ECHO), SAMPLES)  # fmt: skip
    for p in (ours_p, floor_p):
        p.terminate()
        p.wait()
    row("`echo hi`, streamable HTTP", ours, "`sh -c` (own session)", work, protocol)


def main():
    outside.BIN = BIN
    print("| row | ours | work floor | protocol floor | ours / (work + protocol) |")
    print("| --- | --- | --- | --- | --- |")
    s = Client()
    echo_row(s)
    repl_row(s)
    seq_row(s)
    prompt_row(s)
    s.close()
    http_row()
    sandbox_row()


if __name__ == "__main__":
    main()
