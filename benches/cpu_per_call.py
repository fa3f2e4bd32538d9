#!/usr/bin/env python3
"""CPU each process of the command path spends per `echo hi`, from /proc/<pid>/stat before
and after N calls: the server, its spawner, and the supervisors with their programs (the
time of supervisors alive at either end, with their reaped programs, plus that of the ones
that ended, charged to the spawner). Then the server's CPU per page of output: the same
1 MiB page of `seq 1 2000000` read N/5 times by cursor (the answer is read whole but not
parsed, so the figure is the server's alone). Last, a REPL round trip (python `1+1` in a
terminal, answered when its prompt is back) beside the same REPL on a bare pty: the CPU of
the server, of the REPL and of this client per round trip, from the scheduler's own account
(`/proc/<pid>/task/*/schedstat`, nanoseconds). Usage:
python3 benches/cpu_per_call.py [path/to/release/interactive-terminal-mcp] [N]
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside import Server, bare_repl  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
ECHO = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "echo hi"}}


def main():
    s = Server(argv=[BIN])
    p, rpc = s.p, s.rpc
    call = {"name": "memory_terminal_interactive", "arguments": ECHO}
    for _ in range(30):
        rpc("tools/call", call)

    def times(pid):
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return [int(x) for x in fields[11:15]]  # utime stime cutime cstime

    tasks = os.listdir(f"/proc/{p.pid}/task")
    spawner = int([c for t in tasks for c in open(f"/proc/{p.pid}/task/{t}/children").read().split()][0])
    def below(sp):
        """The spawner's reaped children's time, plus its live children's own and reaped."""
        total = sum(times(sp)[2:])
        for c in open(f"/proc/{sp}/task/{sp}/children").read().split():
            try:
                total += sum(times(c))
            except (FileNotFoundError, ProcessLookupError):
                pass  # ended between the listing and the read: counted by the spawner next time
        return [total]

    s0, k0, v0 = times(p.pid), times(spawner), below(spawner)
    took = []
    for _ in range(N):
        t = time.perf_counter()
        rpc("tools/call", call)
        took.append(time.perf_counter() - t)
    s1, k1, v1 = times(p.pid), times(spawner), below(spawner)
    hz = os.sysconf("SC_CLK_TCK")

    def us(a, b):
        return (sum(b) - sum(a)) / hz / N * 1e6

    seq = {"name": "memory_terminal_interactive", "arguments": {
        "action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "seq 1 2000000"}, "runtime": {"wait_ms": 600000}, "output": {"max_bytes": 1}}}
    sid = rpc("tools/call", seq)["result"]["structuredContent"]["identity"]["session_id"]
    page = (json.dumps({"jsonrpc": "2.0", "id": "page", "method": "tools/call", "params": {
        "name": "memory_terminal_interactive", "arguments": {
            "action": "read_output", "target": {"session_id": sid},
            "output": {"max_bytes": 1 << 20, "stdout_cursor": 5_000_000}}}}) + "\n").encode()

    def read_page():
        p.stdin.write(page)
        p.stdin.flush()
        return len(p.stdout.readline())

    for _ in range(5):
        size = read_page()
    pages = max(N // 5, 1)
    a = times(p.pid)
    t = time.perf_counter()
    for _ in range(pages):
        read_page()
    took_page = (time.perf_counter() - t) / pages
    b = times(p.pid)

    print(f"`echo hi` median {sorted(took)[N // 2] * 1e3:.2f} ms over {N} calls; CPU per call: "
          f"server {us(s0[:2], s1[:2]):.0f} µs, spawner {us(k0[:2], k1[:2]):.0f} µs, "
          f"supervisors and their programs {us(v0, v1):.0f} µs")
    print(f"a 1 MiB page of `seq` ({size} bytes of JSON): {took_page * 1e3:.2f} ms per read, "
          f"server CPU {(sum(b[:2]) - sum(a[:2])) / hz / pages * 1e3:.2f} ms per page")
    repl_split(rpc, p.pid)
    p.stdin.close()
    p.wait()


def cpu_ns(pid):
    """What the scheduler ran of `pid`, every thread, in nanoseconds."""
    return sum(int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
               for t in os.listdir(f"/proc/{pid}/task"))


def descendant(pid, comm):
    """The first process below `pid` (any depth) whose name is `comm`."""
    for t in os.listdir(f"/proc/{pid}/task"):
        for c in open(f"/proc/{pid}/task/{t}/children").read().split():
            if open(f"/proc/{c}/comm").read().strip() == comm:
                return int(c)
            found = descendant(int(c), comm)
            if found:
                return found
    return None


def repl_split(rpc, server):
    """CPU per REPL round trip by process, through the server and on a bare pty."""
    args = {"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}
    tid = rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": args})[
        "result"]["structuredContent"]["identity"]["terminal_id"]

    def send(data):
        rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": {
            "action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": tid}, "execution": {"input": data, "wait_for": ">>> $"},
            "runtime": {"wait_ms": 10000}}})

    send("python3 -q\r")
    repl = descendant(server, "python3")
    ours = measure(lambda: send("1+1\r"), [server, repl])

    bare, once, close = bare_repl()
    floor = measure(once, [bare.pid])
    close()
    (wall, client, (srv, prog)), (fwall, fclient, (fprog,)) = ours, floor
    print(f"REPL round trip median {wall:.0f} µs (bare pty {fwall:.0f} µs); CPU per round trip: "
          f"server {srv:.0f} µs, the REPL {prog:.0f} µs (bare pty {fprog:.0f} µs), "
          f"this client {client:.0f} µs (bare pty {fclient:.0f} µs)")


def measure(once, pids):
    """Median wall time, this client's CPU and each of `pids`' CPU per call, in µs."""
    for _ in range(30):
        once()
    n = max(N, 100)
    before = [cpu_ns(p) for p in pids]
    mine = cpu_ns(os.getpid())
    took = []
    for _ in range(n):
        t = time.perf_counter()
        once()
        took.append(time.perf_counter() - t)
    client = (cpu_ns(os.getpid()) - mine) / n / 1e3
    each = [(cpu_ns(p) - b) / n / 1e3 for p, b in zip(pids, before)]
    return sorted(took)[n // 2] * 1e6, client, each


if __name__ == "__main__":
    main()
