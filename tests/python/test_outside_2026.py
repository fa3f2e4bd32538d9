"""An outside client of the 2026-07-28 protocol (the Python `mcp` SDK's `Client`, which
probes `server/discover` first) against the real binary: the version it settles on, a
terminal's updates through `subscriptions/listen`, and approvals asked in rounds
(`input_required`, then the call again with the person's answer), which must run the
command only on an approval of that same call.
"""

import os
import tempfile

import anyio
import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from outside import TOOL, execute, interactive, params, tagged

MODERN = "2026-07-28"
# Long enough for a command in a fresh terminal on a busy machine.
WAIT = {"wait_ms": 10000}


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="itmcp-2026-") as d:
        yield d


class Person:
    """Answers each approval form as told, and records the questions."""

    def __init__(self, approve, reason=None):
        self.approve = approve
        self.reason = reason
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params.message)
        content = {"approve": self.approve}
        if self.reason:
            content["reason"] = self.reason
        return types.ElicitResult(action="accept", content=content)


@pytest.mark.anyio
async def test_a_2026_client_discovers_the_server_and_listens_to_a_terminal(workdir):
    async with Client(params(workdir)) as client:
        assert client.session.protocol_version == MODERN
        opened = await client.call_tool(
            TOOL, {"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}
        )
        assert not opened.is_error, opened.structured_content
        tid = opened.structured_content["identity"]["terminal_id"]
        uri = f"ahp-terminal:/{tid}"
        async with client.listen(resource_subscriptions=[uri], resources_list_changed=True) as sub:
            assert list(sub.honored.resource_subscriptions or []) == [uri]
            ran = await client.call_tool(TOOL, interactive("echo listened", target={"terminal_id": tid}, runtime=WAIT))
            assert ran.structured_content["result"]["output"] == "listened\n", ran.structured_content
            seen = []
            with anyio.fail_after(10):
                async for event in sub:
                    seen.append(event)
                    if event == ResourceUpdated(uri=uri):
                        break
            # A second terminal changes the list.
            await client.call_tool(
                TOOL, {"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}
            )
            with anyio.fail_after(10):
                async for event in sub:
                    if isinstance(event, ResourcesListChanged):
                        break
        state = await client.read_resource(uri)
        assert '"lifecycle"' in state.contents[0].text


@pytest.mark.anyio
async def test_a_2026_client_approves_in_rounds_and_a_decline_runs_nothing(workdir):
    warn = {"PM_TERM_POLICY_WARN": "touch"}
    person = Person(approve=True)
    async with Client(params(workdir, **warn), elicitation_callback=person) as client:
        assert client.session.protocol_version == MODERN
        done = await client.call_tool(TOOL, interactive("touch approved.txt && echo made", runtime=WAIT))
        r = done.structured_content
        assert not done.is_error, r
        assert r["result"]["approval"]["decided_by"] == "elicitation", r
        assert len(person.asked) == 1 and "touch approved.txt" in person.asked[0]
        assert os.path.exists(os.path.join(workdir, "approved.txt"))

    person = Person(approve=False, reason="not today")
    async with Client(params(workdir, **warn), elicitation_callback=person) as client:
        done = await client.call_tool(TOOL, interactive("touch declined.txt", runtime=WAIT))
        r = done.structured_content
        assert r["error"]["code"] == "PM_TERM_DECLINED", r
        assert "not today" in r["error"]["message"], r
        assert len(person.asked) == 1
        assert not os.path.exists(os.path.join(workdir, "declined.txt"))


@pytest.mark.anyio
async def test_a_2026_request_gets_its_own_log_at_the_level_it_asked(workdir):
    """2026-07-28 has no `logging/setLevel`: a request that carries
    `io.modelcontextprotocol/logLevel` gets the events of its own work at that level and
    above, before its answer; one that does not gets nothing, nor does another request
    running at the same time."""
    messages = []

    async def on_log(params):
        messages.append(params)

    def heard(word):
        return [m for m in messages if word in str(m.data)]

    refused = {"command": "lsof"}  # off the strict allowlist: logged at info
    async with Client(params(workdir), logging_callback=on_log) as client:
        assert client.session.protocol_version == MODERN
        # No level asked: nothing is sent.
        await client.call_tool("memory_terminal", refused)
        # Asked for warnings: the refusal (info) is below that.
        await client.call_tool("memory_terminal", refused, meta={"io.modelcontextprotocol/logLevel": "warning"})
        await anyio.sleep(0.3)
        assert not messages, messages
        # Asked for info: the refusal arrives, before the answer.
        await client.call_tool("memory_terminal", refused, meta={"io.modelcontextprotocol/logLevel": "info"})
        hits = heard("strict allowlist refused")
        assert len(hits) == 1, messages
        assert hits[0].level == "info" and hits[0].logger == "interactive-terminal-mcp"
        assert "lsof" in str(hits[0].data)
        # Two calls at once, one asking: only the asking one's events are sent.
        messages.clear()

        async def run(word, meta):
            r = await client.call_tool(TOOL, interactive(f"echo {word}", runtime=WAIT), meta=meta)
            assert r.structured_content["result"]["output"] == f"{word}\n", r.structured_content

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "asking-call", {"io.modelcontextprotocol/logLevel": "debug"})
            tg.start_soon(run, "quiet-call", None)
        assert heard("asking-call"), messages
        assert not heard("quiet-call"), messages


async def _until(what, check, within=10):
    with anyio.fail_after(within):
        while not check():
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_a_call_the_client_abandons_stops_its_command(workdir):
    """The SDK abandons a call whose task is cancelled (`notifications/cancelled`, as a stop
    button does): the headless command it started is stopped, not left running."""
    n = f"{900 + os.getpid() % 97}.{os.getpid()}"
    async with Client(params(workdir)) as client:
        assert client.session.protocol_version == MODERN

        async def run():
            await client.call_tool(TOOL, execute("headless", f"sleep {n}", runtime={"wait_ms": 60000}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await _until("the command started", lambda: tagged(f"sleep {n}"))
            tg.cancel_scope.cancel()
        await _until("the command stopped", lambda: not tagged(f"sleep {n}"))
        # Ended once its supervisor has reported the end, a moment after the processes.
        with anyio.fail_after(10):
            while True:
                listed = await client.call_tool(TOOL, {"action": "list"})
                items = listed.structured_content["result"]["items"]
                assert len(items) == 1, items
                if items[0]["state"] == "exited":
                    break
                await anyio.sleep(0.05)
