#!/usr/bin/env python3
"""The outside client's `seq` row split into its parts: the `execute` call that runs
`seq 1 2000000` to its end and answers the first 1 MiB page, the wait for each further page,
and this client's own `json.loads` of every page, each timed apart; then the floor
(`seq … | cat` read by this process). Medians of ROUNDS runs, in milliseconds.
Usage: python3 benches/seq_split.py path/to/release/interactive-terminal-mcp [ROUNDS]
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outside  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 9
PAGE = outside.PAGE_BYTES
TOOL = "memory_terminal_interactive"


def ask(s, args):
    """Send one tool call; its answer line and the time until it was read."""
    s.n += 1
    t = time.perf_counter()
    s.send({"jsonrpc": "2.0", "method": "tools/call", "id": s.n,
            "params": {"name": TOOL, "arguments": args}})
    line = s.p.stdout.readline()
    return line, time.perf_counter() - t


def parsed(line):
    """The answer's structured content, and the time its parsing took."""
    t = time.perf_counter()
    r = json.loads(line)["result"]["structuredContent"]
    return r, time.perf_counter() - t


def one(s):
    args = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": f"seq 1 {outside.SEQ_LINES}"}, "runtime": {"wait_ms": 600000},
            "output": {"max_bytes": PAGE}}
    line, execute = ask(s, args)
    r, parse = parsed(line)
    sid, total = r["identity"]["session_id"], r["result"]["streams"]["stdout"]["total"]
    got, wait = len(r["result"]["stdout"]), 0.0
    while got < total:
        line, w = ask(s, {"action": "read_output", "target": {"session_id": sid},
                          "output": {"max_bytes": PAGE, "stdout_cursor": got}})
        r, p = parsed(line)
        got += len(r["result"]["stdout"])
        wait += w
        parse += p
    return {"execute": execute, "pages' wait": wait, "client's parsing": parse,
            "total": execute + wait + parse}


def floor():
    t = time.perf_counter()
    p = subprocess.Popen(["sh", "-c", f"seq 1 {outside.SEQ_LINES} | cat"], stdout=subprocess.PIPE)
    p.stdout.read()
    p.wait()
    return time.perf_counter() - t


def main():
    outside.BIN = BIN
    s = outside.Server(argv=[BIN])
    runs = [one(s) for _ in range(ROUNDS)]
    s.close()
    print("| part | ms |\n| --- | --- |")
    for k in runs[0]:
        print(f"| {k} | {outside.median([r[k] for r in runs]) * 1000:.1f} |")
    print(f"| floor: `seq … \\| cat` | {outside.median([floor() for _ in range(ROUNDS)]) * 1000:.1f} |")


if __name__ == "__main__":
    main()
