#!/usr/bin/env python3
"""Descriptors under the soft open-file limit most systems give (1024), with the terminal
limit an operator may set (500): the server started from a shell with `ulimit -Sn 1024`,
500 terminals opened, then 300 headless commands (more than the 256 ended sessions kept).
Prints how many of each failed, the server's open descriptors after each step, and the
limit a program sees. Usage:
python3 benches/open_files.py [path/to/release/interactive-terminal-mcp] [soft limit]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside import Server  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/interactive-terminal-mcp"
SOFT = sys.argv[2] if len(sys.argv) > 2 else "1024"
TERMINALS = 500
COMMANDS = 300


def main():
    s = Server(env={"PM_TERM_NO_USER_RC": "1", "PM_TERM_MAX_TERMINALS": str(TERMINALS)},
               argv=["sh", "-c", f'ulimit -Sn {SOFT} && exec "$0"', BIN])

    def fds():
        return len(os.listdir(f"/proc/{s.p.pid}/fd"))

    print(f"soft limit {SOFT}; the server's descriptors after initialize: {fds()}")
    failed = sum(not s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
                 .get("success") for _ in range(TERMINALS))
    print(f"{TERMINALS} terminals: {failed} failed; descriptors: {fds()}")
    headless = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": "true"}}
    failed = sum(not s.call(headless).get("success") for _ in range(COMMANDS))
    print(f"{COMMANDS} commands after them: {failed} failed; descriptors: {fds()}")
    seen = s.call(dict(headless, execution={"command": "ulimit -Sn"}))
    print(f"a program sees: {seen.get('result', {}).get('stdout', '').strip() or seen.get('error')}")
    s.close()


if __name__ == "__main__":
    main()
