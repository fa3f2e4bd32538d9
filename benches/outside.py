#!/usr/bin/env python3
"""The server measured from outside by a minimal stdio client: raw JSON-RPC lines, no SDK,
nothing between the pipe and the clock. Each figure beside its floor, measured in the same
run. Usage: python3 benches/outside.py [path/to/release/interactive-terminal-mcp]

Prints a Markdown table: cold start, `echo hi` (quiet, with 100 live terminals, with 500
live terminals and 2000 idle processes on the machine, and with every core kept busy), a REPL
round trip (alone, with 100 and 500 live terminals, and with every core kept busy), `list` with 500 terminals (median and p99), and `seq 1 2000000`
with every line read by this client in 1 MiB pages (the JSON parsing of each page included,
as any client pays it). The `echo` and REPL rows take their samples interleaved with the
floor's, one of each in turn: on a shared machine whose speed drifts over a run, both sides
of a ratio then see the same drift.
"""
import json
import os
import pty
import subprocess
import sys
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
TERMINALS = 500
SOME_TERMINALS = 100
PROCESSES = 2000
SAMPLES = 300
# Fewer under a busy machine, where each sample takes milliseconds.
BUSY_SAMPLES = 100
# The pause before each interleaved sample, seconds.
SETTLE = 0.003
SEQ_LINES = 2_000_000
PAGE_BYTES = 1 << 20
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "outside", "version": "1"}}


class Server:
    """The server on stdio, initialized: `argv` to start it another way (from a shell), `env`
    over this process's environment. The other bench scripts drive it through this too."""

    def __init__(self, env=None, argv=None):
        e = dict(os.environ, PM_TERM_LOG="error", PM_TERM_MAX_TERMINALS="600")
        e.update(env or {})
        self.p = subprocess.Popen(argv or [BIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=e)
        self.n = 0
        self.rpc("initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "method": method, "params": params, "id": self.n})
        while True:
            r = json.loads(self.p.stdout.readline())
            if r.get("id") == self.n:
                return r

    def call(self, args):
        r = self.rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": args})
        return r["result"]["structuredContent"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def median(v):
    return sorted(v)[len(v) // 2]


def p99(v):
    v = sorted(v)
    return v[min(len(v) * 99 // 100, len(v) - 1)]


def timed(f, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return out


def interleaved(ours, floor, n):
    """`n` samples of each, taken in turn, each after a pause (`SETTLE`) in which whatever
    the one before left running is done: (ours, floor)."""
    a, b = [], []
    for _ in range(n):
        time.sleep(SETTLE)
        a += timed(ours, 1)
        time.sleep(SETTLE)
        b += timed(floor, 1)
    return a, b


def sh_once(script, own_session=False):
    """`sh -c script`, its output piped to this process; `own_session` starts it in a session
    of its own, as the server starts every command."""
    subprocess.run(["sh", "-c", script], stdout=subprocess.PIPE, check=True, start_new_session=own_session)


def sh_floor(script, n):
    return timed(lambda: sh_once(script), n)


def cold_start():
    line = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}) + "\n").encode()
    t = time.perf_counter()
    p = subprocess.Popen([BIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, PM_TERM_LOG="error"))
    p.stdin.write(line)
    p.stdin.flush()
    p.stdout.readline()
    d = time.perf_counter() - t
    p.stdin.close()
    p.wait()
    return d


def row(name, ours, floor_name, floor):
    print(f"| {name} | {ours * 1000:.2f} ms | {floor_name} | {floor * 1000:.2f} ms | {ours / floor:.2f}x |")


def seq_every_line(s):
    """`seq` run headless to its end, then every byte read by cursor, page by page."""
    args = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": f"seq 1 {SEQ_LINES}"}, "runtime": {"wait_ms": 600000},
            "output": {"max_bytes": PAGE_BYTES}}
    r = s.call(args)
    sid, total = r["identity"]["session_id"], r["result"]["streams"]["stdout"]["total"]
    got, last = len(r["result"]["stdout"]), r["result"]["stdout"]
    while got < total:
        r = s.call({"action": "read_output", "target": {"session_id": sid},
                    "output": {"max_bytes": PAGE_BYTES, "stdout_cursor": got}})
        last = r["result"]["stdout"]
        got += len(last)
    assert got == total and last.endswith(f"{SEQ_LINES}\n"), (got, total)
    return total


def bare_repl():
    """python in a pty driven directly, no server: its process, one round trip, and the close."""
    master, slave = pty.openpty()
    p = subprocess.Popen(["python3", "-q"], stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)

    def prompt():
        seen = b""
        while not seen.endswith(b">>> "):
            seen += os.read(master, 4096)

    prompt()

    def once():
        os.write(master, b"1+1\r")
        prompt()

    def close():
        p.kill()
        p.wait()
        os.close(master)

    return p, once, close


def repl(s):
    """python in a terminal of `s`, ready: one round trip (`1+1` typed, answered when its
    prompt is back)."""
    tid = s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})[
        "identity"]["terminal_id"]

    def send(data):
        return s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                       "target": {"terminal_id": tid}, "execution": {"input": data, "wait_for": ">>> $"},
                       "runtime": {"wait_ms": 10000}})

    send("python3 -q\r")
    for _ in range(5):
        send("1+1\r")
    return lambda: send("1+1\r")


def repl_row(name, s, n):
    """A REPL round trip in a terminal of `s` beside the same REPL on a bare pty."""
    _, bare, close = bare_repl()
    ours, floor = interleaved(repl(s), bare, n)
    close()
    row(name, median(ours), "the same REPL on a bare pty", median(floor))


def echo_row(name, s, echo, floor_name, own_session=False):
    ours, floor = interleaved(lambda: s.call(echo), lambda: sh_once("echo hi", own_session), SAMPLES)
    row(name, median(ours), floor_name, median(floor))


class BusyCores:
    """Every core kept busy by a spinning process, as a build beside the agent would."""

    def __enter__(self):
        self.spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                         for _ in range(os.cpu_count() or 1)]
        time.sleep(0.5)
        return self

    def __exit__(self, *_):
        for p in self.spinners:
            p.kill()
        for p in self.spinners:
            p.wait()


def open_terminals(s, n):
    for _ in range(n):
        s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})


def throughput_row(name, nbytes, ours, floor_name, floor):
    print(f"| {name} | {nbytes / ours / 1e6:.0f} MB/s | {floor_name} | {nbytes / floor / 1e6:.0f} MB/s "
          f"| {ours / floor:.2f}x |")


def main():
    print("| measure | ours | floor | floor value | ratio |")
    print("| --- | --- | --- | --- | --- |")
    cold = median([cold_start() for _ in range(30)])
    row("cold start → initialize answer", cold, "`sh -c true`", median(sh_floor("true", 200)))
    s = Server()
    echo = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "echo hi"}}
    for _ in range(5):
        s.call(echo)
    piped = "`sh -c 'echo hi'`, output piped"
    echo_row("`echo hi` end to end", s, echo, piped)
    open_terminals(s, SOME_TERMINALS)
    echo_row(f"`echo hi` with {SOME_TERMINALS} live terminals", s, echo, piped)
    open_terminals(s, TERMINALS - SOME_TERMINALS)
    crowd = [subprocess.Popen(["sleep", "3600"]) for _ in range(PROCESSES)]
    try:
        time.sleep(0.5)
        echo_row(f"`echo hi` with {TERMINALS} live terminals and {PROCESSES} idle processes", s, echo,
                 f"{piped}, same machine state")
    finally:
        for c in crowd:
            c.kill()
        for c in crowd:
            c.wait()
    quiet = Server(env={"PM_TERM_NO_USER_RC": "1"})
    with BusyCores():
        # The floor's `sh` in a session of its own, as each of ours is: where the kernel
        # groups a session's processes for the scheduler (autogroup), one left in this
        # session would share a slice with the spinners while ours had its own.
        echo_row("`echo hi` with every core busy", quiet, echo,
                 f"{piped} in a session of its own, every core busy", own_session=True)
    repl_row("REPL round trip: python `1+1` in a terminal, until its prompt is back", quiet, SAMPLES)
    with BusyCores():
        repl_row("REPL round trip with every core busy", quiet, BUSY_SAMPLES)
    some = Server(env={"PM_TERM_NO_USER_RC": "1"})
    open_terminals(some, SOME_TERMINALS)
    repl_row(f"REPL round trip with {SOME_TERMINALS} live terminals", some, SAMPLES)
    some.close()
    repl_row(f"REPL round trip with {TERMINALS} live terminals", s, SAMPLES)
    nbytes = seq_every_line(quiet)
    ours = median(timed(lambda: seq_every_line(quiet), 9))
    throughput_row(f"`seq 1 {SEQ_LINES}` headless, every line read by this client in 1 MiB pages", nbytes, ours,
                   "`seq … \\| cat`, read by this process", median(sh_floor(f"seq 1 {SEQ_LINES} | cat", 9)))
    quiet.close()
    one = Server()
    one.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
    few = timed(lambda: one.call({"action": "list"}), 300)
    many = timed(lambda: s.call({"action": "list"}), 300)
    row(f"`list` with {TERMINALS} terminals (first page), median", median(many),
        "`list` with 1 terminal, median", median(few))
    row(f"`list` with {TERMINALS} terminals (first page), p99", p99(many),
        "`list` with 1 terminal, p99", p99(few))
    one.close()
    s.close()


if __name__ == "__main__":
    main()
