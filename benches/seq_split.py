#!/usr/bin/env python3
"""The outside client's `seq` row split into its parts: the `execute` call that runs
`seq 1 2000000` to its end and answers the first 1 MiB page, the wait for each further page,
and this client's own `json.loads` of every page, each timed apart; then the floor
(`seq … | cat` read by this process), and the wait for the same pages from a writer that
has each one ready before it is asked (this client reading them off its pipe: what a
server that took no time at all would still cost). Medians of ROUNDS runs, in milliseconds.
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


# A writer that answers each line it reads with the next of the answers it was given, whole
# and at once: the pipe and this client's reading of it, and nothing of a server's work.
READY_WRITER = """
import sys
answers = open(sys.argv[1], 'rb').read().split(b'\\n')
out = sys.stdout.buffer
for i, _ in enumerate(sys.stdin.buffer):
    out.write(answers[i % len(answers)] + b'\\n')
    out.flush()
"""


def one(s, kept=None):
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
        if kept is not None:
            kept.append(line.rstrip(b"\n"))
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


def ready_pages(answers):
    """The wait for each page from a writer that has it ready: `answers` in turn, ROUNDS
    times over; the median of the rounds' sums, in seconds."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
        f.write(b"\n".join(answers))
        f.flush()
        w = subprocess.Popen([sys.executable, "-c", READY_WRITER, f.name],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        rounds = []
        for _ in range(ROUNDS):
            wait = 0.0
            for _ in answers:
                t = time.perf_counter()
                w.stdin.write(b"next\n")
                w.stdin.flush()
                w.stdout.readline()
                wait += time.perf_counter() - t
            rounds.append(wait)
        w.stdin.close()
        w.wait()
    return outside.median(rounds)


def main():
    outside.BIN = BIN
    s = outside.Server(argv=[BIN])
    answers = []
    runs = [one(s, answers if i == 0 else None) for i in range(ROUNDS)]
    s.close()
    print("| part | ms |\n| --- | --- |")
    for k in runs[0]:
        print(f"| {k} | {outside.median([r[k] for r in runs]) * 1000:.1f} |")
    print(f"| floor: `seq … \\| cat` | {outside.median([floor() for _ in range(ROUNDS)]) * 1000:.1f} |")
    print(f"| the same pages' wait from a writer that has each ready | {ready_pages(answers) * 1000:.1f} |")


if __name__ == "__main__":
    main()
