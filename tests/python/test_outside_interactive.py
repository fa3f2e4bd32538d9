"""An outside MCP client (the Python `mcp` SDK) drives interactive terminals and approvals.

The client answers the server's elicitation requests the way a person would: approve,
decline with a reason, dismiss, or never answer. Each case checks what the command did on
disk, so an approval that was ignored (or a decline that still ran the command) fails.
"""

import os
import shutil
import tempfile

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, stdio_client
from outside import TOOL, interactive, params


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="itmcp-outside-") as d:
        os.makedirs(os.path.join(d, "victim", "sub"))
        yield d


class Person:
    """An elicitation callback that records every question and answers as told."""

    def __init__(self, answer):
        self.answer = answer
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params.message)
        return await self.answer(params)


async def approve(params):
    return types.ElicitResult(action="accept", content={"approve": True})


async def refuse_with_reason(params):
    return types.ElicitResult(action="accept", content={"approve": False, "reason": "not on a Friday"})


async def press_decline(params):
    return types.ElicitResult(action="decline")


async def never_answer(params):
    await anyio.sleep(3600)
    return types.ElicitResult(action="cancel")


async def call(person, workdir, request, **env):
    async with stdio_client(params(workdir, **env)) as (read, write):
        async with ClientSession(read, write, elicitation_callback=person) as session:
            await session.initialize()
            return await session.call_tool(TOOL, request)


@pytest.mark.anyio
async def test_approved_command_runs(workdir):
    person = Person(approve)
    res = await call(person, workdir, interactive("rm -r victim"))
    assert not res.is_error, res.structured_content
    p = res.structured_content
    assert p["result"]["authorization"] == "allowed_with_warning"
    assert "recursive_delete" in p["result"]["warning"]
    assert p["result"]["approval"]["decided_by"] == "elicitation"
    assert p["result"]["exit_code"] == 0
    assert len(person.asked) == 1 and "rm -r victim" in person.asked[0]
    assert not os.path.exists(os.path.join(workdir, "victim"))


@pytest.mark.anyio
async def test_declined_with_reason_never_runs_and_is_not_retried(workdir):
    person = Person(refuse_with_reason)
    res = await call(person, workdir, interactive("rm -r victim"))
    assert res.is_error
    p = res.structured_content
    assert p["error"]["code"] == "PM_TERM_DECLINED"
    assert p["error"]["retriable"] is False
    assert p["error"]["details"]["reason"] == "not on a Friday"
    assert p["fallback"]["strategy"] == "report_decline"
    assert p["fallback"]["can_auto_retry"] is False
    assert len(person.asked) == 1
    assert os.path.isdir(os.path.join(workdir, "victim", "sub"))


@pytest.mark.anyio
async def test_decline_button(workdir):
    person = Person(press_decline)
    res = await call(person, workdir, interactive("rm -r victim"))
    assert res.structured_content["error"]["code"] == "PM_TERM_DECLINED"
    assert os.path.isdir(os.path.join(workdir, "victim"))


@pytest.mark.anyio
async def test_no_answer_times_out(workdir):
    person = Person(never_answer)
    with anyio.fail_after(30):
        res = await call(person, workdir, interactive("rm -r victim", runtime={"timeout_ms": 1500}))
    assert res.is_error
    p = res.structured_content
    assert p["error"]["code"] == "PM_TERM_TIMEOUT"
    assert p["error"]["details"]["target"] == "approval"
    assert p["fallback"]["strategy"] == "suggest_retry_headless_or_interactive"
    assert os.path.isdir(os.path.join(workdir, "victim"))


@pytest.mark.anyio
async def test_blocked_is_never_asked(workdir):
    person = Person(approve)
    # Inert shells: even a policy regression could not run the line (true ignores -c; a
    # python REPL reads shell text as a syntax error).
    inert = {"PM_TERM_SHELL": "/bin/true", "PM_TERM_INTERACTIVE_SHELL": shutil.which("python3")}
    res = await call(person, workdir, interactive("sudo rm -rf --no-preserve-root /"), **inert)
    assert res.is_error
    p = res.structured_content
    assert p["error"]["code"] == "PM_TERM_BLOCKED_DESTRUCTIVE"
    assert p["fallback"]["strategy"] == "reject_with_safety_hint"
    assert person.asked == []


@pytest.mark.anyio
async def test_operator_asks_for_every_command(workdir):
    person = Person(refuse_with_reason)
    res = await call(person, workdir, interactive("touch made-it"), PM_TERM_APPROVAL="all")
    assert res.structured_content["error"]["code"] == "PM_TERM_DECLINED"
    assert not os.path.exists(os.path.join(workdir, "made-it"))


@pytest.mark.anyio
async def test_shell_repl_and_resources(workdir):
    async with stdio_client(params(workdir)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            opened = await session.call_tool(
                TOOL, {"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}
            )
            tid = opened.structured_content["identity"]["terminal_id"]

            ran = await session.call_tool(
                TOOL, interactive("echo $((6*7)); false", target={"terminal_id": tid})
            )
            r = ran.structured_content["result"]
            assert r["output"].strip() == "42"
            assert r["exit_code"] == 1

            # A REPL answered line by line through raw input.
            started = await session.call_tool(
                TOOL,
                {
                    "action": "execute",
                    "invocation": {"mode": "interactive", "intent": "execute_command"},
                    "target": {"terminal_id": tid},
                    "execution": {"input": "python3 -q\n", "wait_for": ">>> $"},
                },
            )
            assert not started.is_error, started.structured_content
            answer = await session.call_tool(
                TOOL,
                {
                    "action": "execute",
                    "invocation": {"mode": "interactive", "intent": "execute_command"},
                    "target": {"terminal_id": tid},
                    "execution": {"input": "print(6*7*1000)\n", "wait_for": ">>> $"},
                },
            )
            assert "42000" in answer.structured_content["result"]["output"]

            listed = await session.list_resources()
            assert any(str(res.uri) == f"ahp-terminal:/{tid}" for res in listed.resources)
            templates = await session.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["ahp-terminal:/{terminal_id}"]
            state = await session.read_resource(f"ahp-terminal:/{tid}")
            assert '"lifecycle"' in state.contents[0].text

            done = await session.call_tool(TOOL, {"action": "terminate", "target": {"terminal_id": tid}})
            assert not done.is_error
            assert done.structured_content["result"]["running"] is False
            assert done.structured_content["result"]["signal"] == "SIGKILL"
