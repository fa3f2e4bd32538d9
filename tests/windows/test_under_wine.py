"""Both Windows binaries, built with mingw, run under Wine and driven from outside: the MCP
server by the Python `mcp` SDK over stdio, the host service over TCP with its token. Wine's
ConPTY gives no output, so terminals are not run here; headless commands, their Job
Objects, the host's endpoint and the refusal of a sandbox are.

`scripts/windows-tests` sets WINEPREFIX (with the ProcessPrng stand-in) and the paths of
the two .exe files."""

import json
import os
import re
import signal
import socket
import subprocess
import time

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

WINE = os.environ.get("ITMCP_WINE", "/usr/lib/wine/wine64")
SERVER = os.environ["ITMCP_WINDOWS_SERVER"]
HOST = os.environ["ITMCP_WINDOWS_HOST"]
TOOL = "memory_terminal_interactive"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def wine_env(**extra):
    env = {
        "WINEPREFIX": os.environ["WINEPREFIX"],
        "WINEDEBUG": "-all",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "PM_TERM_LOG": "warn",
    }
    env.update(extra)
    return env


def server(**env):
    return StdioServerParameters(command=WINE, args=[SERVER], env=wine_env(**env))


def headless(command, **extra):
    req = {
        "action": "execute",
        "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": command},
    }
    req.update(extra)
    return req


def windows_processes(tag):
    """Linux pids of Wine processes whose command line holds `tag` (a `ping` count: the
    ping and the cmd.exe that runs it)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ")
        except OSError:
            continue
        if tag.encode() in line and b"ping" in line:
            found.append(int(pid))
    return found


def gone_within(tag, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not windows_processes(tag):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.anyio
async def test_the_server_answers_mcp_and_runs_a_headless_command_in_cmd():
    async with stdio_client(server()) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "interactive-terminal-mcp"
            names = [t.name for t in (await session.list_tools()).tools]
            assert TOOL in names and "memory_terminal" in names
            res = await session.call_tool(
                TOOL, headless('echo "two  spaces" & echo oops 1>&2 & exit 3')
            )
            assert not res.is_error, res.content[0].text
            p = res.structured_content
            assert p["result"]["exit_code"] == 3
            # cmd.exe gets the line as written: the quotes are its own, not escaped.
            assert p["result"]["stdout"].strip() == '"two  spaces"'
            assert p["result"]["stderr"].strip() == "oops"
            assert "exit 3" in res.content[0].text
            # A program and its arguments (no shell line) are quoted as Windows programs
            # read them.
            res = await session.call_tool(
                TOOL,
                {
                    "action": "execute",
                    "invocation": {"mode": "headless", "intent": "execute_command"},
                    "execution": {"command": "cmd", "args": ["/c", "echo", "two  words"]},
                },
            )
            assert res.structured_content["result"]["stdout"].strip() == '"two  words"', res.content[0].text


@pytest.mark.anyio
async def test_the_strict_tool_runs_its_program_without_cmd_and_refuses_windows_options():
    async with stdio_client(server()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            # A program found on PATH (absolute entries, Windows' separator) runs as itself.
            res = await session.call_tool("memory_terminal", headless("hostname"))
            p = res.structured_content
            assert p["result"]["exit_code"] == 0, res.content[0].text
            assert p["result"]["stdout"].strip(), p
            # One `echo` word to the allowlist's POSIX reading; three commands to cmd.exe,
            # which never sees the line.
            res = await session.call_tool(
                "memory_terminal", headless("echo 'x & echo INJECTED & rem '")
            )
            assert "INJECTED" not in json.dumps(res.structured_content), res.content[0].text
            # `sort /o FILE` writes FILE: a Windows option the tables do not know.
            res = await session.call_tool(
                "memory_terminal", headless("sort /o out.txt in.txt")
            )
            p = res.structured_content
            assert p["error"]["code"] == "PM_TERM_BLOCKED_DESTRUCTIVE", p
            assert "/o" in p["error"]["message"], p


@pytest.mark.anyio
async def test_terminate_ends_every_process_of_the_command_in_its_job():
    tag = "-n 301 "
    async with stdio_client(server()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            res = await session.call_tool(
                TOOL,
                headless(
                    "cmd /d /c ping -n 301 127.0.0.1 >NUL", runtime={"wait_ms": 500}
                ),
            )
            p = res.structured_content
            assert p["result"]["running"] is True, p
            sid = p["identity"]["session_id"]
            deadline = time.time() + 20
            while not windows_processes(tag) and time.time() < deadline:
                time.sleep(0.2)
            assert windows_processes(tag), "the grandchild never started"
            res = await session.call_tool(
                TOOL, {"action": "terminate", "target": {"session_id": sid}}
            )
            assert not res.is_error, res.content[0].text
            assert gone_within(tag, 15), "a process below the command outlived terminate"


def test_a_server_killed_with_sigkill_leaves_no_process_behind():
    tag = "-n 302 "
    proc = subprocess.Popen(
        [WINE, SERVER],
        env=wine_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def answer(want):
        while True:
            line = proc.stdout.readline()
            assert line, "the server closed its output"
            msg = json.loads(line)
            if msg.get("id") == want:
                return msg

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "wine-test", "version": "1"}}})
        answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": TOOL,
            "arguments": headless("ping -n 302 127.0.0.1 >NUL", runtime={"wait_ms": 500})}})
        r = answer(2)
        assert r["result"]["structuredContent"]["result"]["running"] is True, r
        deadline = time.time() + 20
        while not windows_processes(tag) and time.time() < deadline:
            time.sleep(0.2)
        assert windows_processes(tag), "the command never started"
    finally:
        # The Windows process of the server is a Linux process of the same pid as Wine's
        # loader here: SIGKILL it, as a user's client or the OOM killer would.
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert gone_within(tag, 20), "the command outlived the server that started it"


def test_a_sandbox_stops_the_server_at_start_with_its_reason_never_run_unconfined():
    for setting in ({"PM_TERM_SANDBOX": "workspace-write"}, {"PM_TERM_NETWORK": "off"}):
        proc = subprocess.run(
            [WINE, SERVER],
            env=wine_env(**setting),
            input=b"",
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == 2, (setting, proc.stderr)
        assert b"Linux facilities" in proc.stderr, proc.stderr
        assert proc.stdout == b"", "it answered nothing"


def handshake(port, token):
    """A WebSocket upgrade of the host's AHP endpoint; the status line's code."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        s.sendall(
            (
                "GET /ahp HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Version: 13\r\n"
                f"{auth}\r\n"
            ).encode()
        )
        head = s.recv(4096).decode(errors="replace")
    m = re.match(r"HTTP/1\.1 (\d+)", head)
    assert m, head
    return int(m.group(1))


def test_the_host_service_serves_its_endpoint_to_its_token_only(tmp_path):
    token = "wine-test-token-0123456789abcdef"
    proc = subprocess.Popen(
        [WINE, HOST, "--port", "0"],
        env=wine_env(PM_INTERACTIVE_TERMINAL_TOKEN=token),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        ready = json.loads(proc.stdout.readline())
        assert ready["event"] == "ready", ready
        port = int(ready["address"].rsplit(":", 1)[1])
        assert handshake(port, None) == 401
        assert handshake(port, "not-the-token") == 401
        assert handshake(port, token) == 101
        # The token is nowhere on its command line.
        with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
            assert token.encode() not in f.read()
    finally:
        proc.kill()
        proc.wait()
