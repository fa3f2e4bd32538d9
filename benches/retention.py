#!/usr/bin/env python3
"""A command's cost against the number of ended commands the server keeps readable: the
server started with `PM_TERM_MAX_RETAINED` at the default (256) and at a large value, that
many `true` commands run first to fill it, then N more timed. Prints the median round trip
and the server's CPU per command (its threads' `schedstat`) for each. Usage:
python3 benches/retention.py [path/to/release/interactive-terminal-mcp] [large retention] [N]
"""
import json
import os
import subprocess
import sys
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
LARGE = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
N = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
CALL = {"name": "memory_terminal_interactive", "arguments": {
    "action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
    "execution": {"command": "true"}}}


def measure(keep):
    p = subprocess.Popen([BIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, PM_TERM_LOG="off", PM_TERM_MAX_RETAINED=str(keep)))
    n = 0

    def rpc(method, params):
        nonlocal n
        n += 1
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": n}) + "\n").encode())
        p.stdin.flush()
        while True:
            r = json.loads(p.stdout.readline())
            if r.get("id") == n:
                return r

    def cpu_us():
        total = 0
        for t in os.listdir(f"/proc/{p.pid}/task"):
            try:
                with open(f"/proc/{p.pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
        return total / 1e3

    rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "retention", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}\n')
    p.stdin.flush()
    failed = sum(not rpc("tools/call", CALL)["result"]["structuredContent"]["success"] for _ in range(keep))
    c0, times = cpu_us(), []
    for _ in range(N):
        t = time.perf_counter()
        rpc("tools/call", CALL)
        times.append(time.perf_counter() - t)
    cpu = (cpu_us() - c0) / N
    times.sort()
    p.stdin.close()
    p.wait()
    print(f"| {keep} kept | {times[len(times) // 2] * 1e3:.3f} ms | {cpu:.0f} µs | {failed} failed while filling |")


print("| retention | median `true` | server CPU per command | |")
print("| --- | --- | --- | --- |")
measure(256)
measure(LARGE)
