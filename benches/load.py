"""The server under load and abuse, from outside: one client over stdio, calls in flight
together (JSON-RPC ids), the release binary. Prints a Markdown table for
docs/benchmarks.md.

    cargo build --release --bins
    python3 benches/load.py [target/release/interactive-terminal-mcp]

Rows: `echo` latency on a quiet server (the floor), beside N terminals printing `yes`, a
screen read after N MB of output with `echo` timed meanwhile, a burst of concurrent calls,
and the server's memory over a long session.
"""

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "target", "release", "interactive-terminal-mcp")


class Server:
    def __init__(self, proc):
        self.p = proc
        self.n = 0
        self.waiting = {}
        self.task = asyncio.create_task(self.pump())

    @classmethod
    async def start(cls, env=None):
        e = dict(os.environ)
        e.update(env or {})
        p = await asyncio.create_subprocess_exec(
            BIN, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=e, limit=1 << 30)
        s = cls(p)
        await s.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "load", "version": "1"}})
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return s

    async def pump(self):
        while True:
            line = await self.p.stdout.readline()
            if not line:
                for f in self.waiting.values():
                    f.set_exception(EOFError())
                return
            m = json.loads(line)
            f = self.waiting.pop(m.get("id"), None)
            if f:
                f.set_result(m)

    def send(self, m):
        self.p.stdin.write((json.dumps(m) + "\n").encode())

    async def rpc(self, method, params):
        self.n += 1
        f = asyncio.get_running_loop().create_future()
        self.waiting[self.n] = f
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        return await f

    async def call(self, args):
        m = await self.rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": args})
        return m["result"].get("structuredContent") or {}

    def rss_kib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    async def close(self):
        self.p.stdin.close()
        try:
            await asyncio.wait_for(self.p.wait(), 10)
        except asyncio.TimeoutError:
            self.p.kill()


def headless(cmd):
    return {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": cmd}}


def interactive(cmd=None, target=None, wait_ms=None, **kw):
    a = {"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
         "execution": {"command": cmd} if cmd is not None else {}}
    a["execution"].update(kw)
    if target:
        a["target"] = {"terminal_id": target}
    if wait_ms is not None:
        a["runtime"] = {"wait_ms": wait_ms}
    return a


def read_screen(tid):
    return {"action": "read_output", "target": {"terminal_id": tid}, "output": {"view": "screen"}}


async def timed(s, args):
    t = time.perf_counter()
    r = await s.call(args)
    return (time.perf_counter() - t) * 1000, r


async def echo_p50(s, n=30, gap=0.02):
    xs = []
    for _ in range(n):
        dt, r = await timed(s, headless("echo hi"))
        assert r.get("success"), r
        xs.append(dt)
        await asyncio.sleep(gap)
    xs.sort()
    return statistics.median(xs), xs[-1]


async def open_flood(s, cmd):
    r = await s.call(interactive(cmd, wait_ms=200))
    return r["identity"]["terminal_id"]


rows = []


async def http_sessions(n=300):
    """Server memory before and after n MCP sessions over HTTP, each opened, used and ended."""
    import socket
    import urllib.request
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = "load-bench-token-0123456789abcdef"
    env = {**os.environ, "PM_TERM_HTTP_TOKEN": token, "PM_TERM_LOG": "warn", "PM_TERM_NO_USER_RC": "1"}
    p = await asyncio.create_subprocess_exec(BIN, "--http", str(port), env=env,
                                             stderr=asyncio.subprocess.PIPE)
    await p.stderr.readline()
    url = f"http://127.0.0.1:{port}/mcp"
    base = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json"}

    def post(body, sid=None, method="POST"):
        h = dict(base)
        if sid:
            h["mcp-session-id"] = sid
            h["mcp-protocol-version"] = "2025-06-18"
        req = urllib.request.Request(url, data=json.dumps(body).encode() if body else None, headers=h, method=method)
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
            return r.headers.get("mcp-session-id")

    def rss():
        with open(f"/proc/{p.pid}/status") as f:
            return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])

    def one_session():
        sid = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}})
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_terminal_interactive",
              "arguments": headless("echo hi")}}, sid)
        post(None, sid, "DELETE")

    await asyncio.to_thread(one_session)
    before = rss()
    for _ in range(n):
        await asyncio.to_thread(one_session)
    after = rss()
    add((f"HTTP server RSS before / after {n} sessions (each opened, one command, ended)",
         f"{before} → {after} KiB", f"{(after - before) / n:.1f} KiB per session kept"))
    p.kill()
    await p.wait()


def add(row):
    rows.append(row)
    print(row, file=sys.stderr, flush=True)


def spool_disk(s):
    """Bytes on disk held by the server's spool files (unlinked, so seen through its fds)."""
    total = 0
    fds = f"/proc/{s.p.pid}/fd"
    for fd in os.listdir(fds):
        try:
            if "spool-" in os.readlink(f"{fds}/{fd}"):
                total += os.stat(f"{fds}/{fd}").st_blocks * 512
        except OSError:
            pass
    return total


async def printed_by(s, tid):
    return await printed(s, tid)


async def printed(s, tid):
    m = await s.rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": {"action": "list"}})
    for t in m["result"]["structuredContent"]["result"]["items"]:
        if t["id"] == tid:
            return t.get("output_bytes", 0)
    return 0


async def main():
    s = await Server.start()
    floor, _ = await echo_p50(s)
    add(("`echo` p50 / max, quiet server (floor)", f"{floor:.2f} ms", ""))
    flood_start = time.perf_counter()
    ids = [await open_flood(s, "yes") for _ in range(4)]
    await asyncio.sleep(2)
    p50, mx = await echo_p50(s)
    add(("`echo` p50 / max beside 4 terminals running `yes`", f"{p50:.2f} / {mx:.2f} ms", f"{p50 / floor:.1f}x floor"))
    await asyncio.sleep(max(0.0, 12 - (time.perf_counter() - flood_start)))
    total = sum([await printed_by(s, t) for t in ids])
    add((f"spool on disk after 12 s of 4 terminals running `yes` ({total / 1e9:.1f} GB printed)",
         f"{spool_disk(s) / 2**20:.0f} MiB", "limit: 1024 MiB in all, 256 MiB per stream"))
    for t in ids:
        await s.call({"action": "terminate", "target": {"terminal_id": t}})
    await s.close()

    # Headless `yes` writes through pipes, far faster than through a pty.
    s = await Server.start()
    start = time.perf_counter()
    sids = []
    for _ in range(4):
        r = await s.call({**headless("yes"), "runtime": {"wait_ms": 100}})
        sids.append(r["identity"]["session_id"])
    await asyncio.sleep(2)
    p50, mx = await echo_p50(s)
    add(("`echo` p50 / max beside 4 headless `yes`", f"{p50:.2f} / {mx:.2f} ms", f"{p50 / floor:.1f}x floor"))
    await asyncio.sleep(max(0.0, 12 - (time.perf_counter() - start)))
    total = 0
    for sid in sids:
        r = await s.call({"action": "read_output", "target": {"session_id": sid}, "output": {"stdout_cursor": 0, "max_bytes": 1}})
        total += r["result"]["streams"]["stdout"]["total"]
    add((f"spool on disk after 12 s of 4 headless `yes` ({total / 1e9:.1f} GB printed)",
         f"{spool_disk(s) / 2**20:.0f} MiB", "limit: 1024 MiB in all, 256 MiB per stream"))
    for sid in sids:
        await s.call({"action": "terminate", "target": {"session_id": sid}})
    add(("spool on disk once they are terminated", f"{spool_disk(s) / 2**20:.0f} MiB", ""))
    await s.close()

    for mb in (10, 100):
        s = await Server.start()
        tid = await open_flood(s, f"head -c {mb * 1000000} /dev/zero | tr '\\0' 'x'; echo; sleep 1000")
        while await printed(s, tid) < mb * 1000000:
            await asyncio.sleep(0.2)
        await asyncio.sleep(1)
        screen = asyncio.create_task(timed(s, read_screen(tid)))
        others = []
        while not screen.done():
            dt, _ = await timed(s, headless("echo hi"))
            others.append(dt)
            await asyncio.sleep(0.01)
        dt, r = await screen
        add((f"screen read after {mb} MB of output", f"{dt:.1f} ms", f"`echo` meanwhile: max {max(others or [0]):.1f} ms over {len(others)} calls"))
        await s.close()

    s = await Server.start()
    res = await asyncio.gather(*[timed(s, headless("echo hi")) for _ in range(100)])
    refused = [r for _, r in res if not r.get("success")]
    add(("burst of 100 concurrent `echo`", f"{len(res) - len(refused)} answered, {len(refused)} refused",
                 f"slowest {max(d for d, _ in res):.0f} ms"))
    before = s.rss_kib()
    tid = (await s.call(interactive("true")))["identity"]["terminal_id"]
    for i in range(200):
        await s.call(interactive(f"seq 1 20000; echo round {i}", target=tid))
    after = s.rss_kib()
    add(("server RSS, one terminal, 200 commands of 20,000 lines each", f"{before} → {after} KiB", ""))
    await s.close()

    await http_sessions()

    print("| measure | value | against |")
    print("| --- | --- | --- |")
    for r in rows:
        print("| " + " | ".join(r) + " |")


asyncio.run(main())
