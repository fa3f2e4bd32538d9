#!/usr/bin/env python3
"""Server memory under terminals of the largest size a request may ask for: N terminals
opened at COLSxROWS (or at 80 columns and widened to it by the command's request), each
running `seq 1 20000`, then the server's RSS against its RSS after `initialize`. A size past
the terminal limits is refused, and the script says so. Usage:
python3 benches/hostile_size.py [BIN] [N] [COLS] [ROWS] [open|widen]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outside  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 20
COLS = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
ROWS = int(sys.argv[4]) if len(sys.argv) > 4 else 100
HOW = sys.argv[5] if len(sys.argv) > 5 else "open"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


def main():
    outside.BIN = BIN
    s = outside.Server()
    before = rss_kib(s.p.pid)
    size = {"cols": COLS, "rows": ROWS}
    ids = []
    for _ in range(N):
        r = s.rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": {
            "action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
            "execution": size if HOW == "open" else {}}})["result"]["structuredContent"]
        if r.get("error"):
            print(f"refused: {r['error']['message']}")
            s.close()
            return
        ids.append(r["identity"]["terminal_id"])
    for t in ids:
        execution = {"command": "seq 1 20000", **(size if HOW == "widen" else {})}
        r = s.rpc("tools/call", {"name": "memory_terminal_interactive", "arguments": {
            "action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": t}, "execution": execution, "runtime": {"wait_ms": 30000}}})
        if r["result"]["structuredContent"].get("error"):
            print(f"refused: {r['result']['structuredContent']['error']['message']}")
            s.close()
            return
    after = rss_kib(s.p.pid)
    print(f"{N} terminals at {COLS}x{ROWS} ({HOW}), `seq 1 20000` in each: server RSS "
          f"{before / 1024:.1f} MB after initialize, {after / 1024:.1f} MB after")
    s.close()


if __name__ == "__main__":
    main()
