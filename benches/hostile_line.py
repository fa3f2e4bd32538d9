#!/usr/bin/env python3
"""A hostile command line near the request limit (thousands of commands joined by `;`) is
judged by the policy while another call of the same client waits: how long that other call
(`list`) takes, against `list` alone, and how long the line's own answer takes. Judging such
a line takes a tenth of a second or more; it must not hold up other callers. Usage:
python3 benches/hostile_line.py [BIN]
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outside  # noqa: E402

outside.BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
s = outside.Server(env={"PM_TERM_APPROVAL_DEFAULT": "decline"})
line = ";".join(["echo a"] * 18000)[:131000]
HOSTILE = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
           "execution": {"command": line}}
LIST = {"action": "list"}


def send(i, args):
    s.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "memory_terminal_interactive", "arguments": args}})


for _ in range(3): s.call(LIST)
late, alone, hostile = [], [], []
for k in range(10):
    t = time.monotonic(); s.call(LIST); alone.append(time.monotonic() - t)
    t = time.monotonic()
    send(1000 + k, HOSTILE)
    time.sleep(0.002)
    t2 = time.monotonic()
    send(2000 + k, LIST)
    got = {}
    while len(got) < 2:
        r = json.loads(s.p.stdout.readline())
        got[r.get("id")] = time.monotonic()
    late.append(got[2000 + k] - t2)
    hostile.append(got[1000 + k] - t)
m = outside.median
print(f"list alone {m(alone)*1e3:.2f} ms; list behind a {len(line)}-byte line {m(late)*1e3:.2f} ms; the line judged and answered in {m(hostile)*1e3:.1f} ms")
s.close()
