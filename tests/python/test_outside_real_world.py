"""The Python `mcp` SDK as an outside client, in the conditions users meet: a home set up like
a new Debian account with pyenv-virtualenv and direnv hooks in its ~/.bashrc, and a server
killed with SIGKILL while its sessions have processes that tried to escape.
"""

import os
import shutil
import signal
import tempfile
import time

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from outside import SERVER, TOOL, tagged

RC = os.path.join(os.path.dirname(__file__), "..", "rc", "bash")


@pytest.fixture
def home():
    with tempfile.TemporaryDirectory(prefix="itmcp-home-") as d:
        if os.path.isdir("/etc/skel"):
            shutil.copytree("/etc/skel", d, dirs_exist_ok=True)
        with open(os.path.join(d, ".bashrc"), "a") as rc:
            for name in ("pyenv-virtualenv.bashrc", "cd-wrapped.bashrc"):
                rc.write(f"\n. '{os.path.abspath(os.path.join(RC, name))}'\n")
        yield d


def params(home, **env):
    base = {
        "PM_TERM_LOG": "warn",
        "PM_TERM_INTERACTIVE_SHELL": "bash",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
    }
    base.update(env)
    return StdioServerParameters(command=os.path.abspath(SERVER), env=base, cwd=home)


def run(terminal, command, wait_ms=15000):
    return {
        "action": "execute",
        "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": terminal},
        "execution": {"command": command},
        "runtime": {"wait_ms": wait_ms},
    }


@pytest.mark.anyio
async def test_a_real_bashrc_gets_exit_codes_and_running_state(home):
    async with stdio_client(params(home)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            opened = await session.call_tool(
                TOOL, {"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}
            )
            r = opened.structured_content["result"]
            assert r["shell_integration"] == "full", r
            tid = opened.structured_content["identity"]["terminal_id"]
            for command, code in (("true", 0), ("false", 1), ("echo 'a;b'", 0)):
                started = time.monotonic()
                res = (await session.call_tool(TOOL, run(tid, command))).structured_content["result"]
                assert res["running"] is False, res
                assert res["exit_code"] == code, res
                assert res["command"]["command_line"] == command, res
                assert time.monotonic() - started < 10, "completion came with the prompt"
            res = (await session.call_tool(TOOL, run(tid, "vim -u NONE -N -n", wait_ms=1500))).structured_content
            assert res["result"]["running"] is True, res
            everything = await session.call_tool(
                TOOL, {"action": "read_output", "target": {"terminal_id": tid}, "output": {"cursor": 0}}
            )
            text = everything.structured_content["result"]["output"]
            for noise in ("syntax error", "PROMPT_COMMAND", "__pmt", "command not found"):
                assert noise not in text, text


def server_pids():
    """Pids of running server processes started by this test process."""
    me = os.getpid()
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if ppid == me and os.path.samefile(exe, SERVER):
            out.append(int(pid))
    return out


@pytest.mark.anyio
async def test_sigkill_of_the_server_leaves_no_process(home):
    tag = f"{900 + os.getpid() % 97}.{time.time_ns() % 10**9:09d}"
    escapes = [
        f"sleep {tag} &",
        f"setsid -f sleep {tag} >/dev/null 2>&1",
        f"env -i setsid -f sleep {tag} >/dev/null 2>&1",
        f"(sh -c 'sleep {tag} &' &)",
    ]
    killed_pid = None
    try:
        async with stdio_client(params(home, PM_TERM_NO_USER_RC="1")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for line in escapes:
                    await session.call_tool(
                        TOOL,
                        {
                            "action": "execute",
                            "invocation": {"mode": "headless", "intent": "execute_command"},
                            "execution": {"command": f"{line}\nsleep {tag}"},
                            "runtime": {"wait_ms": 200},
                        },
                    )
                    await session.call_tool(
                        TOOL,
                        {
                            "action": "execute",
                            "invocation": {"mode": "interactive", "intent": "execute_command"},
                            "execution": {"command": line},
                        },
                    )
                deadline = time.monotonic() + 10
                while len(tagged(tag)) < 3 * len(escapes) and time.monotonic() < deadline:
                    await anyio.sleep(0.05)
                assert len(tagged(tag)) >= 3 * len(escapes), tagged(tag)
                pids = server_pids()
                assert len(pids) == 1, pids
                killed_pid = pids[0]
                os.kill(killed_pid, signal.SIGKILL)
                await anyio.sleep(0.2)
    except Exception:
        # The client notices its server died; that is what this test does to it.
        if killed_pid is None:
            raise
    deadline = time.monotonic() + 10
    while tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = tagged(tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} processes outlived the server: {left}"
