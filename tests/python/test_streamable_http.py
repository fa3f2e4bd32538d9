"""The Python SDK's streamable HTTP client drives the real server started with `--http`:
the token, Origin checks, one session's commands and terminals apart from another's,
progress over SSE, and every process each session started gone when the server stops."""

import os
import signal
import socket
import subprocess
import tempfile
import threading
import time

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from outside import SERVER, TOOL

TOKEN = "http-test-token-0123456789abcdef"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server():
    yield from start_http({})


@pytest.fixture
def small_http_server():
    """Caps of 2 running commands and 1 live terminal, for the whole server."""
    yield from start_http({"PM_TERM_MAX_SESSIONS": "2", "PM_TERM_MAX_TERMINALS": "1"})


def start_http(extra):
    port = free_port()
    home = tempfile.mkdtemp(prefix="itmcp-http-")
    env = {**os.environ, "HOME": home, "PM_TERM_LOG": "warn", "PM_TERM_HTTP_TOKEN": TOKEN, "PM_TERM_NO_USER_RC": "1",
           **extra}
    proc = subprocess.Popen(
        [os.path.abspath(SERVER), "--http", str(port)], env=env, cwd=home, stderr=subprocess.PIPE, text=True
    )
    line = proc.stderr.readline()
    assert "serving MCP on http://127.0.0.1:" in line, line
    drain(proc)
    yield f"http://127.0.0.1:{port}/mcp", proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def drain(proc):
    """Read the rest of the server's stderr so that an unread pipe never stalls it."""
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()


def headless(command, **extra):
    req = {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
           "execution": {"command": command}}
    req.update(extra)
    return req


def client(token=TOKEN):
    return create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})


@pytest.mark.anyio
async def test_the_contract_over_http_with_sessions_of_their_own(http_server, caplog):
    url, proc = http_server
    tag = f"itmcp-http-{os.getpid()}-{time.time_ns()}"
    updates = []

    async def on_progress(progress, total, message):
        updates.append(message)

    async with client() as a_http, client() as b_http:
        async with streamable_http_client(url, http_client=a_http) as (ra, wa), \
                streamable_http_client(url, http_client=b_http) as (rb, wb):
            async with ClientSession(ra, wa) as a, ClientSession(rb, wb) as b:
                init = await a.initialize()
                # Sessions need a protocol that has them (2026-07-28 is stateless).
                assert init.protocol_version <= "2025-11-25", init.protocol_version
                await b.initialize()
                tools = await a.list_tools()
                assert {t.name for t in tools.tools} == {TOOL, "memory_terminal"}
                ok = await a.call_tool(TOOL, headless("echo over-http"))
                assert ok.structured_content["result"]["stdout"] == "over-http\n"
                # Progress comes over the SSE stream.
                slow = await a.call_tool(TOOL, headless("sleep 1.5; echo slow", runtime={"wait_ms": 8000}),
                                         progress_callback=on_progress)
                assert slow.structured_content["result"]["stdout"] == "slow\n"
                # A long-running command and a terminal in A's session...
                bg = await a.call_tool(TOOL, headless(f"sleep 300 # {tag}", runtime={"wait_ms": 100}))
                assert bg.structured_content["result"]["running"] is True
                term = await a.call_tool(TOOL, {"action": "execute",
                                                "invocation": {"mode": "interactive", "intent": "open_only"}})
                assert not term.is_error, term
                # ... are not B's.
                listed = await b.call_tool(TOOL, {"action": "list"})
                assert listed.structured_content["result"]["items"] == [], listed.structured_content
                mine = await a.call_tool(TOOL, {"action": "list"})
                assert len(mine.structured_content["result"]["items"]) >= 3
    assert updates, "progress over SSE"
    # The clients ended their sessions (DELETE): what A's session started is gone with it,
    # while the server keeps running.
    leftover = []
    for _ in range(50):
        leftover = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split()
        if not leftover:
            break
        time.sleep(0.1)
    assert leftover == [], f"still running after the session ended: {leftover}"
    assert proc.poll() is None
    assert "Session termination failed" not in caplog.text
    # The server stops: what every session started is gone.
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    leftover = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split()
    assert leftover == [], leftover


@pytest.mark.anyio
async def test_no_token_and_foreign_origins_are_refused(http_server):
    url, _ = http_server
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient() as h:
        r = await h.post(url, json=init, headers=headers)
        assert r.status_code == 401
        r = await h.post(url, json=init, headers={**headers, "Authorization": "Bearer wrong"})
        assert r.status_code == 401
        r = await h.post(url, json=init, headers={**headers, "Authorization": f"Bearer {TOKEN}",
                                                   "Origin": "http://evil.example"})
        assert r.status_code == 403, r.text
        r = await h.post(url, json=init, headers={**headers, "Authorization": f"Bearer {TOKEN}",
                                                   "Host": "evil.example"})
        assert r.status_code == 403, r.text
        # Malformed bytes from a client holding the token: a clear 4xx, and the server serves on.
        authorized = {**headers, "Authorization": f"Bearer {TOKEN}"}
        for garbage in [b'{"jsonrpc":"2.0","id":1,', b"\xff\xfe\x00", b"[]", b"null"]:
            r = await h.post(url, content=garbage, headers=authorized)
            assert 400 <= r.status_code < 500, (garbage, r.status_code, r.text)
        r = await h.post(url, json=init, headers=authorized)
        assert r.status_code == 200 and r.headers.get("mcp-session-id"), r.text


def test_a_generated_token_is_kept_private(tmp_path):
    port = free_port()
    env = {**os.environ, "HOME": str(tmp_path), "PM_TERM_LOG": "warn"}
    env.pop("PM_TERM_HTTP_TOKEN", None)
    proc = subprocess.Popen([os.path.abspath(SERVER), "--http", f"127.0.0.1:{port}"], env=env,
                            stderr=subprocess.PIPE, text=True)
    try:
        said = proc.stderr.readline() + proc.stderr.readline()
        drain(proc)
        token_file = tmp_path / ".config" / "interactive-terminal-mcp" / "http-token"
        assert str(token_file) in said, said
        assert oct(token_file.stat().st_mode & 0o777) == "0o600"
        assert token_file.read_text().strip() not in said
    finally:
        proc.kill()
        proc.wait()


async def sse_events(response):
    """(id, data) for each SSE event of a streaming response."""
    event_id, data = None, []
    async for line in response.aiter_lines():
        if line == "":
            if data or event_id is not None:
                yield event_id, "\n".join(data)
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


@pytest.mark.anyio
async def test_a_dropped_stream_resumes_with_last_event_id(http_server):
    """A client whose connection drops while a call runs comes back with Last-Event-ID and
    gets what it missed, the call's answer included."""
    import json

    url, _ = http_server
    base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "Authorization": f"Bearer {TOKEN}"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    async with httpx2.AsyncClient(timeout=30) as h:
        r = await h.post(url, json=init, headers=base)
        session = r.headers["mcp-session-id"]
        headers = {**base, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        await h.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": TOOL, "_meta": {"progressToken": "p"},
                           "arguments": headless("sleep 2.5; echo resumed", runtime={"wait_ms": 10000})}}
        last = None
        async with h.stream("POST", url, json=call, headers=headers) as stream:
            async for event_id, data in sse_events(stream):
                if event_id:
                    last = event_id
                if data and json.loads(data).get("method") == "notifications/progress":
                    break  # the connection drops mid-call
        assert last, "the stream carried event ids"
        answer = None
        async with h.stream("GET", url, headers={**headers, "Last-Event-ID": last}) as stream:
            assert stream.status_code == 200
            async for _, data in sse_events(stream):
                if data:
                    msg = json.loads(data)
                    if msg.get("id") == 7:
                        answer = msg
                        break
        assert answer is not None
        assert answer["result"]["structuredContent"]["result"]["stdout"] == "resumed\n", answer


def open_session(http, url):
    """A raw initialize: the new session's id, or the refusal."""
    r = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cap", "version": "1"}}},
        headers={"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"})
    return r


def test_sessions_are_capped_for_the_whole_server_and_places_come_back(http_server):
    url, proc = http_server
    with httpx2.Client(timeout=30) as http:
        ids = []
        for i in range(64):
            r = open_session(http, url)
            assert r.status_code == 200, (i, r.status_code, r.text)
            ids.append(r.headers["mcp-session-id"])
        refused = open_session(http, url)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "5"
        err = refused.json()["error"]
        assert err["data"]["limit"] == "http_sessions" and err["data"]["max"] == 64, err
        assert "limit of 64 MCP sessions" in err["message"], err
        # Sessions ended give their places back, over and over: nothing they held stays.
        for sid in ids:
            d = http.delete(url, headers={"mcp-session-id": sid, "Authorization": f"Bearer {TOKEN}"})
            assert d.status_code in (200, 202), d.text
        for i in range(100):
            r = open_session(http, url)
            assert r.status_code == 200, (i, r.status_code, r.text)
            d = http.delete(url, headers={"mcp-session-id": r.headers["mcp-session-id"],
                                          "Authorization": f"Bearer {TOKEN}"})
            assert d.status_code in (200, 202), d.text


@pytest.mark.anyio
async def test_running_commands_and_terminals_are_capped_across_sessions(small_http_server):
    url, _ = small_http_server
    tag = f"itmcp-caps-{os.getpid()}-{time.time_ns()}"
    async with client() as a_http, client() as b_http:
        async with streamable_http_client(url, http_client=a_http) as (ra, wa), \
                streamable_http_client(url, http_client=b_http) as (rb, wb):
            async with ClientSession(ra, wa) as a, ClientSession(rb, wb) as b:
                await a.initialize()
                await b.initialize()
                for _ in range(2):
                    r = await a.call_tool(TOOL, headless(f"sleep 30 # {tag}", runtime={"wait_ms": 50}))
                    assert r.structured_content["result"]["running"] is True, r.structured_content
                # B's session has caps of its own no more: the server's are reached.
                r = await b.call_tool(TOOL, headless("echo b", runtime={"wait_ms": 100}))
                err = r.structured_content["error"]
                assert err["code"] == "PM_TERM_TIMEOUT" and err["retriable"] is True, err
                assert err["details"]["limit"] == "running_commands", err
                opened = await a.call_tool(TOOL, {"action": "execute",
                                                  "invocation": {"mode": "interactive", "intent": "open_only"}})
                assert not opened.is_error, opened.structured_content
                r = await b.call_tool(TOOL, {"action": "execute",
                                             "invocation": {"mode": "interactive", "intent": "open_only"}})
                err = r.structured_content["error"]
                assert err["details"]["limit"] == "live_terminals" and err["retriable"] is True, err
                # A terminal closed gives its place back to everyone.
                tid = opened.structured_content["identity"]["terminal_id"]
                await a.call_tool(TOOL, {"action": "terminate", "target": {"terminal_id": tid}})
                r = await b.call_tool(TOOL, {"action": "execute",
                                             "invocation": {"mode": "interactive", "intent": "open_only"}})
                assert not r.is_error, r.structured_content
