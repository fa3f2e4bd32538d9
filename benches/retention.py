#!/usr/bin/env python3
"""A command's cost against the number of ended commands the server keeps readable: the
server started with `PM_TERM_MAX_RETAINED` at the default (256) and at a large value, that
many `true` commands run first to fill it, then N more timed. Prints the median round trip
and the server's CPU per command (its threads' `schedstat`) for each. Usage:
python3 benches/retention.py [path/to/release/interactive-terminal-mcp] [large retention] [N]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside import Server  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
LARGE = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
N = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
TRUE = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "true"}}


def measure(keep):
    s = Server(env={"PM_TERM_MAX_RETAINED": str(keep)}, argv=[BIN])

    def cpu_us():
        total = 0
        for t in os.listdir(f"/proc/{s.p.pid}/task"):
            try:
                with open(f"/proc/{s.p.pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
        return total / 1e3

    failed = sum(not s.call(TRUE)["success"] for _ in range(keep))
    c0, times = cpu_us(), []
    for _ in range(N):
        t = time.perf_counter()
        s.call(TRUE)
        times.append(time.perf_counter() - t)
    cpu = (cpu_us() - c0) / N
    times.sort()
    s.close()
    print(f"| {keep} kept | {times[len(times) // 2] * 1e3:.3f} ms | {cpu:.0f} µs | {failed} failed while filling |")


print("| retention | median `true` | server CPU per command | |")
print("| --- | --- | --- | --- |")
measure(256)
measure(LARGE)
