"""An outside MCP client (the Python `mcp` SDK) drives the real server binary over stdio.

The SDK validates every successful tool result against the tool's declared outputSchema,
so these calls also prove that the structured payloads match schemas/.
"""

import os
import time

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from outside import SERVER, TOOL, execute


def params(**env):
    return StdioServerParameters(command=os.path.abspath(SERVER), env={"PM_TERM_LOG": "warn", **env})


def headless(command, **extra):
    return execute("headless", command, **extra)


@pytest.mark.anyio
async def test_headless_round_trip_and_errors():
    async with stdio_client(params()) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "interactive-terminal-mcp"
            tools = await session.list_tools()
            tool = next(t for t in tools.tools if t.name == TOOL)
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema is not None

            res = await session.call_tool(TOOL, headless("echo hello; echo oops >&2; exit 4"))
            assert not res.is_error
            p = res.structured_content
            assert p["success"] is True
            assert p["result"]["stdout"] == "hello\n"
            assert p["result"]["stderr"] == "oops\n"
            assert p["result"]["exit_code"] == 4
            assert "hello" in res.content[0].text

            # A long command: accepted now, followed by cursor until it exits.
            res = await session.call_tool(
                TOOL, headless("for i in 1 2 3; do echo n$i; sleep 0.2; done", runtime={"wait_ms": 100})
            )
            p = res.structured_content
            assert p["status"] == "accepted"
            sid = p["identity"]["session_id"]
            seen = p["result"]["stdout"]
            while True:
                r = await session.call_tool(
                    TOOL, {"action": "read_output", "target": {"session_id": sid}, "runtime": {"wait_ms": 2000}}
                )
                seen += r.structured_content["result"]["stdout"]
                if not r.structured_content["result"]["running"]:
                    break
            assert seen == "n1\nn2\nn3\n"

            # Contract failures are tool results with isError and a PM_TERM_* payload.
            bad = await session.call_tool(TOOL, {"action": "launch"})
            assert bad.is_error
            assert bad.structured_content["error"]["code"] == "PM_TERM_INVALID_ACTION"
            assert bad.structured_content["fallback"]["strategy"] == "reject_no_retry"

            bad = await session.call_tool(TOOL, {"action": "read_output"})
            assert bad.is_error
            assert bad.structured_content["error"]["code"] == "PM_TERM_INVALID_PAYLOAD"

            # Legacy alias with flat keys.
            res = await session.call_tool(TOOL, {"action": "run", "command": "printf", "args": ["%s", "a b"]})
            assert res.structured_content["result"]["stdout"] == "a b"
            assert res.structured_content["resolved"]["legacy_action"] == "run"

            lst = await session.call_tool(TOOL, {"action": "list"})
            assert any(i["id"] == sid for i in lst.structured_content["result"]["items"])


@pytest.mark.anyio
async def test_timeout_and_terminate_from_outside():
    async with stdio_client(params()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            started = time.monotonic()
            res = await session.call_tool(TOOL, headless("echo begin; sleep 30", runtime={"timeout_ms": 500}))
            assert res.is_error
            assert res.structured_content["error"]["code"] == "PM_TERM_TIMEOUT"
            assert res.structured_content["error"]["details"]["stdout"] == "begin\n"
            assert time.monotonic() - started < 10

            res = await session.call_tool(TOOL, headless("sleep 30", runtime={"wait_ms": 100}))
            sid = res.structured_content["identity"]["session_id"]
            t = await session.call_tool(TOOL, {"action": "terminate", "target": {"session_id": sid}})
            assert not t.is_error
            assert t.structured_content["result"]["running"] is False
            assert t.structured_content["result"]["signal"] == "SIGKILL"


@pytest.mark.anyio
async def test_progress_notifications_reach_the_client():
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, message))

    async with stdio_client(params()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            res = await session.call_tool(
                TOOL, headless("sleep 2.2; echo done", runtime={"wait_ms": 8000}), progress_callback=on_progress
            )
            assert res.structured_content["result"]["stdout"] == "done\n"
            await anyio.sleep(0.1)
    assert len(updates) >= 2, updates
    # Each message says what is waited for and for how long, once.
    assert updates[0][1] == "running (1 s)", updates
    assert updates[1][1] == "running (2 s)", updates


@pytest.mark.anyio
async def test_the_client_sets_how_much_of_the_log_it_receives():
    messages = []

    async def on_log(params):
        messages.append(params)

    refused = {"command": "lsof"}  # off the strict allowlist: logged at info
    async with stdio_client(params()) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            init = await session.initialize()
            assert init.capabilities.logging is not None
            # Until the client asks, it receives warnings and errors only.
            await session.call_tool("memory_terminal", refused)
            await anyio.sleep(0.3)
            assert not [m for m in messages if "allowlist" in str(m.data)], messages
            with pytest.warns(Warning):
                await session.set_logging_level("info")
            await session.call_tool("memory_terminal", refused)
            for _ in range(50):
                if any("strict allowlist refused" in str(m.data) for m in messages):
                    break
                await anyio.sleep(0.1)
    hits = [m for m in messages if "strict allowlist refused" in str(m.data)]
    # The operator's quiet stderr (PM_TERM_LOG=warn) did not mute what the client asked for.
    assert hits, messages
    assert hits[0].level == "info" and hits[0].logger == "interactive-terminal-mcp"
    assert "lsof" in str(hits[0].data)
