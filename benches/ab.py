#!/usr/bin/env python3
"""Interleaved A/B of two builds: one call to each server in turn (the order alternating), a
pause before each, medians per round. `echo` is `echo hi` run headless; `repl` is a round
trip to python in a terminal (`1+1` typed, answered when its prompt is back). Usage:
python3 benches/ab.py echo|repl OLD NEW [ROUNDS] [CALLS] [PAUSE_SECONDS]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside import Server, median, repl  # noqa: E402

ECHO = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "echo hi"}}
WARM_UP = 20


def one_call(kind, server):
    """What one sample of `kind` runs on `server`."""
    if kind == "echo":
        return lambda: server.call(ECHO)
    if kind == "repl":
        return repl(server)
    raise SystemExit(f"unknown kind {kind!r}: echo or repl")


def main():
    kind, a_bin, b_bin = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    calls = int(sys.argv[5]) if len(sys.argv) > 5 else 400
    pause = float(sys.argv[6]) if len(sys.argv) > 6 else 0.003
    env = {"PM_TERM_NO_USER_RC": "1"}
    a, b = Server(env=env, argv=[a_bin]), Server(env=env, argv=[b_bin])
    call_a, call_b = one_call(kind, a), one_call(kind, b)
    for _ in range(WARM_UP):
        call_a()
        call_b()
    for r in range(rounds):
        ta, tb = [], []
        for i in range(calls):
            order = ((call_a, ta), (call_b, tb)) if i % 2 == 0 else ((call_b, tb), (call_a, ta))
            for call, took in order:
                time.sleep(pause)
                t = time.perf_counter()
                call()
                took.append(time.perf_counter() - t)
        print(f"round {r}: A {median(ta) * 1e3:.3f} ms, B {median(tb) * 1e3:.3f} ms, "
              f"B/A {median(tb) / median(ta):.3f}", flush=True)
    a.close()
    b.close()


if __name__ == "__main__":
    main()
