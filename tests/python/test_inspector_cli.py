"""A third MCP client, the MCP Inspector CLI (npm, installed by scripts/test), drives the real
server binary over stdio: the tool list and one call, as a person trying the server would."""

import json
import os
import subprocess
from outside import SERVER

INSPECTOR = os.environ.get(
    "PM_TEST_INSPECTOR",
    os.path.join(os.path.dirname(__file__), "..", "..", ".inspector", "node_modules", ".bin", "mcp-inspector"),
)


def inspect(*args):
    out = subprocess.run(
        [INSPECTOR, "--cli", os.path.abspath(SERVER), "-e", "PM_TERM_LOG=warn", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_inspector_lists_the_tools_within_their_budget():
    listed = inspect("--method", "tools/list")
    names = sorted(t["name"] for t in listed["tools"])
    assert names == ["memory_terminal", "memory_terminal_interactive"], names
    assert len(json.dumps(listed, separators=(",", ":"))) <= 16_000


def test_the_inspector_runs_a_command():
    answer = inspect(
        "--method", "tools/call", "--tool-name", "memory_terminal", "--tool-arg", "command=echo from-inspector"
    )
    assert answer["isError"] is False, answer
    assert answer["structuredContent"]["result"]["stdout"] == "from-inspector\n"
    assert "from-inspector" in answer["content"][0]["text"]
