"""What the outside-client tests share: the server binary under test, its tool, how a test
starts it over stdio, an interactive request, and finding processes by a tag."""

import os

from mcp import StdioServerParameters

SERVER = os.environ.get(
    "PM_TEST_SERVER_BIN",
    os.path.join(os.path.dirname(__file__), "..", "..", "target", "debug", "interactive-terminal-mcp"),
)
TOOL = "memory_terminal_interactive"


def params(cwd, **env):
    """The server over stdio in `cwd` (also its HOME), bash without the user's rc files."""
    base = {
        "PM_TERM_LOG": "warn",
        "PM_TERM_INTERACTIVE_SHELL": "bash",
        "PM_TERM_NO_USER_RC": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": cwd,
    }
    base.update(env)
    return StdioServerParameters(command=os.path.abspath(SERVER), env=base, cwd=cwd)


def execute(mode, command, **extra):
    """A command run `headless` or `interactive`; `extra` adds or replaces top-level fields."""
    req = {
        "action": "execute",
        "invocation": {"mode": mode, "intent": "execute_command"},
        "execution": {"command": command},
    }
    req.update(extra)
    return req


def interactive(command, **extra):
    """A command run in a terminal."""
    return execute("interactive", command, **extra)


def tagged(tag):
    """Pids of the processes whose command line contains `tag`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if tag.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found
