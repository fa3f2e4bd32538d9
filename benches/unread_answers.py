#!/usr/bin/env python3
"""A client that asks for page after page of output and reads none of the answers: how many
requests the server takes before the client's writes block, and the server's RSS then. One
1 MiB page of `seq 1 2000000` is asked for again and again (at most 3000 times, 20 s). Usage:
python3 benches/unread_answers.py [path/to/release/interactive-terminal-mcp]
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside import Server  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
TRIES = 3000
SECONDS = 20


def main():
    s = Server(argv=[BIN])
    sid = s.call({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                  "execution": {"command": "seq 1 2000000"}, "runtime": {"wait_ms": 60000},
                  "output": {"max_bytes": 1}})["identity"]["session_id"]

    def rss():
        return int(open(f"/proc/{s.p.pid}/status").read().split("VmRSS:")[1].split()[0])

    def request(i):
        return (json.dumps({"jsonrpc": "2.0", "id": 10000 + i, "method": "tools/call", "params": {
            "name": "memory_terminal_interactive", "arguments": {
                "action": "read_output", "target": {"session_id": sid},
                "output": {"max_bytes": 1 << 20, "stdout_cursor": 0}}}}) + "\n").encode()

    print(f"RSS after initialize: {rss()} KiB")
    os.set_blocking(s.p.stdin.fileno(), False)
    sent, pending, start = 0, b"", time.time()
    while time.time() - start < SECONDS and (sent < TRIES or pending):
        if not pending:
            pending = request(sent)
            sent += 1
        try:
            pending = pending[os.write(s.p.stdin.fileno(), pending):]
        except BlockingIOError:
            time.sleep(0.01)
    taken = sent - (1 if pending else 0)
    time.sleep(2)
    print(f"requests written whole before the writes blocked (of {TRIES}): {taken}")
    print(f"server RSS: {rss()} KiB")
    s.p.kill()


if __name__ == "__main__":
    main()
