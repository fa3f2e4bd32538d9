#!/usr/bin/env python3
"""A pty flood's cost to the server: `cat` of a 64 MiB text file in a new terminal, answered
when it exits, then the terminal terminated; per round the wall time and the server's user
and total CPU (from /proc/<pid>/stat, all its threads). With two binaries, an A/B: each has
its own server and the rounds take turns. Usage: python3 benches/pty_cpu.py BIN [BIN2] [ROUNDS]

Prints a Markdown table of the medians over the rounds.
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outside  # noqa: E402

FILE_BYTES = 64 << 20
LINE = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()_+-=[]{}|;:,.<>/?\n"
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def cpu_ms(pid):
    """User and user+system CPU of the process (every thread), in ms."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    user, system = int(fields[11]), int(fields[12])
    return user * TICK_MS, (user + system) * TICK_MS


def one_round(s, path):
    u0, t0 = cpu_ms(s.p.pid)
    start = time.perf_counter()
    r = s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "execution": {"command": f"cat {path}"}, "runtime": {"wait_ms": 600000},
                "output": {"max_bytes": 1}})
    wall = (time.perf_counter() - start) * 1000
    u1, t1 = cpu_ms(s.p.pid)
    s.call({"action": "terminate", "target": {"terminal_id": r["identity"]["terminal_id"]}})
    return wall, u1 - u0, t1 - t0


def main():
    args = sys.argv[1:]
    rounds = int(args.pop()) if args and args[-1].isdigit() else 8
    binaries = args or ["target/release/interactive-terminal-mcp"]
    with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        while f.tell() < FILE_BYTES:
            f.write(LINE * 1024)
        f.flush()
        servers = {}
        for b in binaries:
            outside.BIN = b
            servers[b] = outside.Server(env={"PM_TERM_NO_USER_RC": "1"})
        got = {b: [] for b in binaries}
        for _ in range(rounds):
            for b in binaries:
                got[b].append(one_round(servers[b], f.name))
        for s in servers.values():
            s.close()
    print("| build | wall per 64 MiB | server user CPU | server CPU (user + system) |")
    print("| --- | --- | --- | --- |")
    for b, v in got.items():
        med = [statistics.median(x[i] for x in v) for i in range(3)]
        print(f"| `{b}` | {med[0]:.0f} ms | {med[1]:.0f} ms | {med[2]:.0f} ms |")


if __name__ == "__main__":
    main()
