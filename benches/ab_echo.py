#!/usr/bin/env python3
"""Interleaved A/B of `echo hi` between two builds: one call to each server in turn (the
order alternating), a pause before each, medians per round. Usage:
python3 benches/ab_echo.py OLD NEW [ROUNDS] [CALLS] [PAUSE_SECONDS]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside import Server, median  # noqa: E402

ECHO = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "echo hi"}}
WARM_UP = 20


def main():
    a_bin, b_bin = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    calls = int(sys.argv[4]) if len(sys.argv) > 4 else 400
    pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.003
    a, b = Server(argv=[a_bin]), Server(argv=[b_bin])
    for _ in range(WARM_UP):
        a.call(ECHO)
        b.call(ECHO)
    for r in range(rounds):
        ta, tb = [], []
        for i in range(calls):
            order = ((a, ta), (b, tb)) if i % 2 == 0 else ((b, tb), (a, ta))
            for server, took in order:
                time.sleep(pause)
                t = time.perf_counter()
                server.call(ECHO)
                took.append(time.perf_counter() - t)
        print(f"round {r}: A {median(ta) * 1e3:.3f} ms, B {median(tb) * 1e3:.3f} ms, "
              f"B/A {median(tb) / median(ta):.3f}", flush=True)
    a.close()
    b.close()


if __name__ == "__main__":
    main()
