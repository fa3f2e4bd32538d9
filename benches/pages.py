#!/usr/bin/env python3
"""Time per 1 MiB page of output, from the request's bytes to the answer's last byte, for a
terminal's raw view and a headless stream; the client's own JSON parsing left out (each
answer is read as one line and not decoded). With two binaries, an A/B: rounds alternate
between them. Usage: python3 benches/pages.py BIN [BIN2]

Prints a Markdown table: the median over the rounds of each build's mean page time.
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outside  # noqa: E402

ROUNDS = 4
PAGES = 50
PAGE_BYTES = 1 << 20
LINE = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()_+-=[]{}|;:,.<>/?\n"


def page_time(s, target, output):
    """Mean time of PAGES reads, each a fresh 1 MiB page (the cursor moves on, wrapping)."""
    key, cursor_key, span = output
    t = time.perf_counter()
    for i in range(PAGES):
        s.n += 1
        out = dict(key, max_bytes=PAGE_BYTES, **{cursor_key: (i % span) * PAGE_BYTES})
        s.send({"jsonrpc": "2.0", "method": "tools/call", "id": s.n,
                "params": {"name": "memory_terminal_interactive",
                           "arguments": {"action": "read_output", "target": target, "output": out}}})
        s.p.stdout.readline()
    return (time.perf_counter() - t) / PAGES


def one_round(binary, path):
    outside.BIN = binary
    s = outside.Server(env={"PM_TERM_NO_USER_RC": "1"})
    r = s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "execution": {"command": f"cat {path}"}, "runtime": {"wait_ms": 600000},
                "output": {"max_bytes": 1}})
    raw = page_time(s, {"terminal_id": r["identity"]["terminal_id"]}, ({"view": "raw"}, "cursor", 60))
    r = s.call({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": "seq 1 2000000"}, "runtime": {"wait_ms": 600000},
                "output": {"max_bytes": 1}})
    seq = page_time(s, {"session_id": r["identity"]["session_id"]}, ({}, "stdout_cursor", 13))
    s.close()
    return raw, seq


def main():
    binaries = sys.argv[1:] or ["target/release/interactive-terminal-mcp"]
    with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        while f.tell() < 64 * PAGE_BYTES:
            f.write(LINE * 1024)
        f.flush()
        got = {b: [] for b in binaries}
        for _ in range(ROUNDS):
            for b in binaries:
                got[b].append(one_round(b, f.name))
    print("| build | raw view, 1 MiB page (`cat` of text in a terminal) | headless, 1 MiB page (`seq`) |")
    print("| --- | --- | --- |")
    for b, v in got.items():
        raw = statistics.median(x[0] for x in v)
        seq = statistics.median(x[1] for x in v)
        print(f"| `{b}` | {raw * 1000:.2f} ms | {seq * 1000:.2f} ms |")


if __name__ == "__main__":
    main()
