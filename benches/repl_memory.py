#!/usr/bin/env python3
"""What a long REPL session costs the server in memory: `1+1` typed into python in one of
its terminals, round trip after round trip, back to back, and the server's resident memory
printed every tenth of the way. The action log fills after about 10,000 round trips (five
actions each, 50,000 kept); after that the figure should stay flat.
Usage: python3 benches/repl_memory.py [BUILD] [ROUND_TRIPS]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside import Server, repl  # noqa: E402

STEPS = 10


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30_000
    s = Server(env={"PM_TERM_NO_USER_RC": "1"}, argv=[build])
    call = repl(s)
    start = time.perf_counter()
    print("| round trips | RSS | seconds |")
    print("| --- | --- | --- |")
    for i in range(n + 1):
        if i % max(n // STEPS, 1) == 0:
            print(f"| {i} | {rss_mb(s.p.pid):.1f} MB | {time.perf_counter() - start:.1f} |", flush=True)
        call()
    s.close()


if __name__ == "__main__":
    main()
