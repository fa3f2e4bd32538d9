#!/usr/bin/env python3
"""Descriptors under the soft open-file limit most systems give (1024), with the terminal
limit an operator may set (500): the server started from a shell with `ulimit -Sn 1024`,
500 terminals opened, then 300 headless commands (more than the 256 ended sessions kept).
Prints how many of each failed, the server's open descriptors after each step, and the
limit a program sees. Usage:
python3 benches/open_files.py [path/to/release/interactive-terminal-mcp] [soft limit]
"""
import json
import os
import subprocess
import sys

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
SOFT = sys.argv[2] if len(sys.argv) > 2 else "1024"
TERMINALS = 500
COMMANDS = 300
TOOL = "memory_terminal_interactive"


def main():
    env = dict(os.environ, PM_TERM_LOG="off", PM_TERM_NO_USER_RC="1",
               PM_TERM_MAX_TERMINALS=str(TERMINALS))
    p = subprocess.Popen(["sh", "-c", f'ulimit -Sn {SOFT} && exec "$0"', BIN],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
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

    def call(args):
        return rpc("tools/call", {"name": TOOL, "arguments": args})["result"]["structuredContent"]

    def fds():
        return len(os.listdir(f"/proc/{p.pid}/fd"))

    rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "open-files", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}\n')
    p.stdin.flush()
    print(f"soft limit {SOFT}; the server's descriptors after initialize: {fds()}")
    failed = sum(not call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
                 .get("success") for _ in range(TERMINALS))
    print(f"{TERMINALS} terminals: {failed} failed; descriptors: {fds()}")
    headless = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": "true"}}
    failed = sum(not call(headless).get("success") for _ in range(COMMANDS))
    print(f"{COMMANDS} commands after them: {failed} failed; descriptors: {fds()}")
    seen = call(dict(headless, execution={"command": "ulimit -Sn"}))
    print(f"a program sees: {seen.get('result', {}).get('stdout', '').strip() or seen.get('error')}")
    p.stdin.close()
    p.wait()


if __name__ == "__main__":
    main()
