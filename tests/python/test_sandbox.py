"""The operator's sandbox seen from an outside client (the Python `mcp` SDK): a server started
with --sandbox workspace-write is given writes, deletes and network calls in several forms;
nothing outside the workspace changes, no connection leaves, the benign work succeeds, and
the answers say what the sandbox refused. The same requests against a server without a
sandbox do change things, so the checks can fail.
"""

import os
import shutil
import socket
import tempfile

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from outside import SERVER, TOOL


def run(command, cwd):
    return {
        "action": "execute",
        "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": command},
        "runtime": {"cwd": cwd, "wait_ms": 20000},
    }


def tree(root):
    seen = {}
    for d, _, files in os.walk(root):
        seen[d] = None
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                seen[p] = fh.read()
    return seen


@pytest.fixture
def place():
    # Under /var/tmp: every sandbox has a private /tmp, which would hide rather than protect.
    base = tempfile.mkdtemp(prefix="itmcp-py-sbx-", dir="/var/tmp")
    ws, out, home = (os.path.join(base, n) for n in ("ws", "outside", "home"))
    for d in (ws, out, home, os.path.join(ws, ".git")):
        os.makedirs(d)
    with open(os.path.join(out, "keep.txt"), "w") as f:
        f.write("keep\n")
    with open(os.path.join(home, ".bashrc"), "w") as f:
        f.write("export HISTSIZE=1000\nalias ll='ls -l'\n")
    with open(os.path.join(ws, ".git", "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
    yield ws, out, home
    shutil.rmtree(base, ignore_errors=True)


def server(home, *args):
    # What the policy warns about runs unasked: the sandbox is what must stop it here.
    env = {
        "PM_TERM_LOG": "warn",
        "HOME": home,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PM_TERM_APPROVAL_DEFAULT": "approve",
    }
    return StdioServerParameters(command=os.path.abspath(SERVER), args=list(args), env=env)


@pytest.mark.anyio
async def test_nothing_outside_the_workspace_changes_and_no_connection_leaves(place):
    ws, out, home = place
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    hostile = [
        f"echo x > {out}/a",
        f"python3 -c \"open('{out}/b', 'w').write('x')\"",
        f"rm -f {out}/keep.txt",
        f"sh -c 'echo x >> {out}/keep.txt'",
        "echo 'alias ls=rm' >> ~/.bashrc",
        "echo x > .git/HEAD",
        f"printf '#!/bin/sh\\necho x > {out}/c\\n' > s.sh && sh s.sh",
    ]
    network = [
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\"",
        f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'",
    ]
    before = (tree(out), tree(home), tree(os.path.join(ws, ".git")))
    async with stdio_client(server(home, "--sandbox", "workspace-write", "--workspace", ws)) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            through = []
            explained = 0
            for c in hostile + network:
                res = (await s.call_tool(TOOL, run(c, ws))).structured_content["result"]
                if res["exit_code"] == 0:
                    through.append(c)
                if "sandbox_denial" in res:
                    explained += 1
            assert through == []
            assert explained == len(hostile) + len(network)
            ok = (await s.call_tool(TOOL, run("echo fine > f.txt && cat f.txt", ws))).structured_content
            assert ok["result"]["stdout"] == "fine\n"
            listed = (await s.call_tool(TOOL, {"action": "list"})).structured_content
            assert listed["result"]["sandbox"]["mode"] == "workspace-write"
    assert (tree(out), tree(home), tree(os.path.join(ws, ".git"))) == before
    with pytest.raises(BlockingIOError):
        listener.accept()

    # Without a sandbox the same first request does write: the checks above can fail.
    async with stdio_client(server(home)) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            res = (await s.call_tool(TOOL, run(hostile[0], ws))).structured_content["result"]
            assert res["exit_code"] == 0
    assert os.path.exists(os.path.join(out, "a"))
    listener.close()
