"""The README's `--gui` set-up, as a person meets it: an MCP client starts the server with
`--gui`, the page is opened in a real browser (headless Chromium) from the address in the
server's log alone, and the person approves or declines the agent's warned commands there —
interactive and headless, whichever adapter the agent would like.
"""

import contextlib
import os
import re
import tempfile
import time

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait
from outside import SERVER, TOOL

CHROMIUM = os.environ.get("PM_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PM_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tempfile.mkdtemp(prefix='itmcp-chromium-')}",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def link_in(log_path, deadline=20):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with open(log_path) as f:
            m = re.search(r"(http://\S+/login\?code=[0-9a-f]+)", f.read())
        if m:
            return m.group(1)
        time.sleep(0.1)
    raise AssertionError("no sign-in link in the server's log:\n" + open(log_path).read())


def params(home, *extra):
    return StdioServerParameters(
        command=os.path.abspath(SERVER),
        args=["--gui", *extra],
        env={
            "PM_TERM_LOG": "warn",
            "PM_TERM_INTERACTIVE_SHELL": "bash",
            "PM_TERM_NO_USER_RC": "1",
            "PM_TERM_POLICY_WARN": "echo careful",
            # Were the page not asked, the command would be declined by the operator default.
            "PM_TERM_APPROVAL_DEFAULT": "decline",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
        },
        cwd=home,
    )


@contextlib.asynccontextmanager
async def agent_with_gui(prefix):
    """An MCP client's session with the `--gui` server and a browser not yet on its page; the
    server's home directory and the page's sign-in address from the server's log alone."""
    home = tempfile.mkdtemp(prefix=prefix)
    log_path = os.path.join(home, "server.log")
    driver = browser()
    try:
        with open(log_path, "w") as log:
            async with stdio_client(params(home), errlog=log) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session, driver, home, link_in(log_path)
    finally:
        driver.quit()


@contextlib.asynccontextmanager
async def agent_with_page_open(prefix):
    """As `agent_with_gui`, with the browser signed in to the page: the session, the
    browser and the server's home directory."""
    async with agent_with_gui(prefix) as (session, driver, home, link):
        driver.get(link)
        WebDriverWait(driver, 20).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected"))
        yield session, driver, home


def decide(driver, command, button, reason=None, context=()):
    card = WebDriverWait(driver, 20).until(
        EC.presence_of_element_located((By.XPATH, f"//div[@class='appr'][code[contains(., '{command}')]]"))
    )
    for expected in context:
        assert expected in card.text, card.text
    if reason:
        card.find_element(By.TAG_NAME, "input").send_keys(reason)
    card.find_element(By.XPATH, f".//button[. = '{button}']").click()


async def call_while(session, args, on_the_page):
    """Call the tool with `args` while `on_the_page` (the browser's side, blocking) runs in a
    thread; the call's result."""
    result = {}
    async with anyio.create_task_group() as tg:

        async def call():
            result["r"] = await session.call_tool(TOOL, args)

        tg.start_soon(call)
        await anyio.to_thread.run_sync(on_the_page)
    return result["r"]


@pytest.mark.anyio
async def test_the_person_at_the_page_decides():
    # The page is up with the server: signed in from the logged address alone.
    async with agent_with_page_open("itmcp-gui-") as (session, driver, home):
        assert "token" not in driver.current_url

        async def ask(args):
            return await session.call_tool(TOOL, args)

        # The card says what, why, where, who asks and how long is left.
        r = await call_while(
            session,
            {
                "action": "execute",
                "invocation": {"mode": "interactive", "intent": "execute_command"},
                "execution": {"command": "echo careful in-a-terminal"},
                "runtime": {"wait_ms": 10000},
            },
            lambda: decide(
                driver,
                "careful in-a-terminal",
                "Approve",
                context=("echo careful", f"In: {home}", "Asked by: mcp-client", "expires in"),
            ),
        )
        r = r.structured_content
        assert r["success"], r
        assert r["result"]["approval"]["decided_by"] == "page", r
        assert "in-a-terminal" in r["result"]["output"]
        # The agent's terminal is listed and shown (the first is selected on
        # load), drawn from the same screen the agent reads.
        WebDriverWait(driver, 20).until(
            lambda d: "in-a-terminal" in d.find_element(By.CSS_SELECTOR, ".term-view").text
        )
        # Row for row, the page shows the screen the agent reads.
        terminal_id = r["identity"]["terminal_id"]
        seen = await ask(
            {"action": "read_output", "target": {"terminal_id": terminal_id}, "output": {"view": "screen"}}
        )
        agent_rows = [l.rstrip() for l in seen.structured_content["result"]["screen"]["text"].split("\n")]
        while agent_rows and not agent_rows[-1]:
            agent_rows.pop()

        def page_rows(d):
            rows = d.execute_script(
                "return [...document.querySelectorAll('.term-view .screen .row')].map(r => r.textContent.replace(/\\s+$/, ''))"
            )
            while rows and not rows[-1]:
                rows.pop()
            return rows

        # The page draws what arrives as it arrives: give it the time to catch up
        # with what the agent already read.
        try:
            WebDriverWait(driver, 20).until(lambda d: page_rows(d) == agent_rows)
        except TimeoutException:
            pass
        assert page_rows(driver) == agent_rows, (page_rows(driver), agent_rows)

        # Headless is no way around the person.
        r = await call_while(
            session,
            {
                "action": "execute",
                "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": "echo careful headless"},
            },
            lambda: decide(driver, "careful headless", "Decline", reason="not on a Friday"),
        )
        r = r.structured_content
        assert r["error"]["code"] == "PM_TERM_DECLINED", r
        assert r["error"]["details"]["decided_by"] == "page", r
        assert r["error"]["details"]["reason"] == "not on a Friday", r
        # Both decisions stay in the page's history.
        driver.find_element(By.CSS_SELECTOR, "#past summary").click()
        history = driver.find_element(By.ID, "history").text
        assert "approved" in history and "careful in-a-terminal" in history, history
        assert "declined" in history and "not on a Friday" in history, history

        # Nor is asking for a local terminal the page never sees.
        r = await ask(
            {
                "action": "execute",
                "invocation": {"mode": "interactive", "intent": "execute_command"},
                "execution": {"command": "echo careful local"},
                "runtime": {"adapter_override": "local"},
            }
        )
        r = r.structured_content
        assert r["error"]["code"] == "PM_TERM_INVALID_PAYLOAD", r
        assert r["error"]["details"]["field"] == "runtime.adapter_override", r


WARNED = {
    "action": "execute",
    "invocation": {"mode": "interactive", "intent": "execute_command"},
    "execution": {"command": "echo careful before-the-page"},
    "runtime": {"wait_ms": 10000, "timeout_ms": 30000},
}


@pytest.mark.anyio
async def test_a_warned_command_waits_for_the_page_to_open():
    async with agent_with_gui("itmcp-gui-wait-") as (session, driver, _, link):
        results = {}
        async with anyio.create_task_group() as tg:

            async def warned():
                results["r"] = await session.call_tool(TOOL, WARNED)

            tg.start_soon(warned)
            # Nobody has opened the page yet: the command waits instead of falling to the
            # operator's default (decline, here).
            await anyio.sleep(2)
            assert "r" not in results, results
            driver.get(link)
            await anyio.to_thread.run_sync(decide, driver, "before-the-page", "Approve")
        r = results["r"].structured_content
        assert r["success"], r
        assert r["result"]["approval"]["decided_by"] == "page", r


@pytest.mark.anyio
async def test_no_page_within_the_wait_falls_to_the_operator_default():
    home = tempfile.mkdtemp(prefix="itmcp-gui-nopage-")
    with open(os.path.join(home, "server.log"), "w") as log:
        async with stdio_client(params(home, "--page-wait-ms", "500"), errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                r = (await session.call_tool(TOOL, WARNED)).structured_content
                assert r["error"]["code"] == "PM_TERM_DECLINED", r
                assert r["error"]["details"]["decided_by"] == "operator_default", r


def list_texts(driver):
    # Read in one script: the list is rebuilt whenever the host's list changes.
    return driver.execute_script("return [...document.querySelectorAll('#list .term')].map((e) => e.innerText)")


def wait_list(driver, predicate, what, timeout=20):
    end = time.monotonic() + timeout
    texts = []
    while time.monotonic() < end:
        texts = list_texts(driver)
        if predicate(texts):
            return texts
        time.sleep(0.1)
    raise AssertionError(f"the page's list never showed {what}: {texts}")


@pytest.mark.anyio
async def test_the_open_page_follows_an_agent_among_many_terminals():
    """A person keeps the page open while an agent opens a dozen terminals and drives a
    REPL in one: every terminal appears without a reload, the agent's claim shows while a
    long command runs and goes back to the background after, and an ended terminal shows
    as ended. (The host publishes its list once changes settle, not at every keystroke.)"""
    async with agent_with_page_open("itmcp-gui-many-") as (session, driver, _):

        async def ask(args):
            r = (await session.call_tool(TOOL, args)).structured_content
            assert r["success"], r
            return r

        opened = [
            (await ask({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}))[
                "identity"
            ]["terminal_id"]
            for _ in range(12)
        ]
        texts = await anyio.to_thread.run_sync(
            lambda: wait_list(driver, lambda t: len(t) == 12, "the agent's 12 terminals")
        )
        assert all("agent" in t for t in texts), texts
        work = opened[0]

        def typed(data):
            return ask(
                {
                    "action": "execute",
                    "invocation": {"mode": "interactive", "intent": "execute_command"},
                    "target": {"terminal_id": work},
                    "execution": {"input": data, "wait_for": ">>> $"},
                    "runtime": {"wait_ms": 10000},
                }
            )

        await typed("python3 -q\r")
        for i in range(20):
            r = await typed(f"{i}+1\r")
            assert f"\n{i + 1}\n" in r["result"]["output"], r
        r = await call_while(
            session,
            {
                "action": "execute",
                "invocation": {"mode": "interactive", "intent": "execute_command"},
                "target": {"terminal_id": opened[1]},
                "execution": {"command": "sleep 3"},
                "runtime": {"wait_ms": 10000},
            },
            lambda: wait_list(
                driver, lambda t: any("in a tool call" in x for x in t), "the agent's claim in a call"
            ),
        )
        assert r.structured_content["success"], r.structured_content
        await anyio.to_thread.run_sync(
            lambda: wait_list(
                driver, lambda t: not any("in a tool call" in x for x in t), "every claim in the background"
            )
        )
        await ask({"action": "terminate", "target": {"terminal_id": opened[2]}})
        texts = await anyio.to_thread.run_sync(
            lambda: wait_list(driver, lambda t: any("exited" in x for x in t), "the ended terminal")
        )
        assert len(texts) == 12, texts


@pytest.mark.anyio
async def test_a_question_the_client_cancels_leaves_the_page():
    """The agent's client gives up on a warned call (its stop button, or its own timeout)
    while the person still has the question on the page: the card leaves the page, the
    history says it was withdrawn, and a late click cannot run the command."""
    async with agent_with_page_open("itmcp-gui-withdraw-") as (session, driver, home):
        marker = os.path.join(home, "ran")
        call = {
            "action": "execute",
            "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": f"echo careful withdrawn && touch {marker}"},
        }
        card_xpath = "//div[@class='appr'][code[contains(., 'careful withdrawn')]]"
        async with anyio.create_task_group() as tg:

            async def asked():
                await session.call_tool(TOOL, call)

            tg.start_soon(asked)
            card = await anyio.to_thread.run_sync(
                lambda: WebDriverWait(driver, 20).until(EC.presence_of_element_located((By.XPATH, card_xpath)))
            )
            tg.cancel_scope.cancel()
        # The card goes without a reload: its buttons are gone with it.
        await anyio.to_thread.run_sync(lambda: WebDriverWait(driver, 20).until(EC.staleness_of(card)))
        assert not driver.find_elements(By.XPATH, card_xpath)
        driver.find_element(By.CSS_SELECTOR, "#past summary").click()
        history = await anyio.to_thread.run_sync(
            lambda: WebDriverWait(driver, 20).until(
                lambda d: (t := d.find_element(By.ID, "history").text) and "withdrawn" in t and t
            )
        )
        assert "careful withdrawn" in history, history
        # Nothing ran, and the session is still good for the next call.
        assert not os.path.exists(marker)
        r = (await session.call_tool(TOOL, {"action": "list"})).structured_content
        assert r["success"], r
        assert r["result"]["items"] == [], r
        assert not os.path.exists(marker)


AGENT_PAGE = """<!doctype html><meta charset=utf-8><title>loading</title><script>
// What an agent's own page tries once the signed-in person opens it: the page's WebSocket
// with every credential it could find, and the sign-in exchange.
const host = "HOST";
const tried = [];
function attempt(protocols) {
  return new Promise((done) => {
    let ws;
    try { ws = protocols ? new WebSocket(`ws://${host}/ahp`, protocols) : new WebSocket(`ws://${host}/ahp`); }
    catch (e) { tried.push("throw"); return done(); }
    ws.onopen = () => {
      tried.push("open");
      ws.send(JSON.stringify({jsonrpc: "2.0", id: 1, method: "initialize", params: {channel: "ahp-root://",
        protocolVersions: ["1.0.0"], clientId: "agent-page", _meta: {interactiveTerminal: {approver: true}}}}));
      setTimeout(done, 500);
    };
    ws.onerror = () => { tried.push("refused"); done(); };
  });
}
(async () => {
  await attempt(null);
  await attempt(["itmcp-page"]);
  await attempt(["itmcp-page", "itmcp-session." + (document.cookie || "none")]);
  let post = "none";
  try { post = String((await fetch(`http://${host}/session`, {method: "POST", body: "x", credentials: "include"})).status); }
  catch (e) { post = "blocked"; }
  document.title = "done " + tried.join(",") + " post=" + post;
})();
</script>"""


@pytest.mark.anyio
async def test_a_page_the_agent_serves_on_loopback_cannot_approve():
    """The agent serves a page of its own on another loopback port and the signed-in person
    opens it: the page session is not sent to it (no cookie: a cookie reaches every port of
    an address), and its script can neither open the page's socket nor approve."""
    import http.server
    import threading

    async with agent_with_page_open("itmcp-gui-hostile-") as (session, driver, home):
        host = re.search(r"http://([^/]+)/", driver.current_url).group(1)
        seen_headers = []

        class Agent(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen_headers.append(dict(self.headers))
                body = AGENT_PAGE.replace("HOST", host).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        agent = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Agent)
        threading.Thread(target=agent.serve_forever, daemon=True).start()
        try:
            marker = os.path.join(home, "approved-by-the-agent")
            call = {
                "action": "execute",
                "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": f"echo careful hostile && touch {marker}"},
                "runtime": {"timeout_ms": 15000},
            }

            def on_the_page():
                card = "//div[@class='appr'][code[contains(., 'careful hostile')]]"
                WebDriverWait(driver, 20).until(EC.presence_of_element_located((By.XPATH, card)))
                page = driver.current_window_handle
                driver.switch_to.new_window("tab")
                driver.get(f"http://127.0.0.1:{agent.server_address[1]}/")
                WebDriverWait(driver, 20).until(lambda d: d.title.startswith("done"))
                tried = driver.title
                driver.close()
                driver.switch_to.window(page)
                # The question is still the person's: they decline it.
                decide(driver, "careful hostile", "Decline", reason="not mine")
                return tried

            result = {}
            async with anyio.create_task_group() as tg:

                async def asked():
                    result["r"] = await session.call_tool(TOOL, call)

                tg.start_soon(asked)
                result["tried"] = await anyio.to_thread.run_sync(on_the_page)
            tried = result["tried"]
            assert "open" not in tried, tried
            assert "post=200" not in tried, tried
            r = result["r"].structured_content
            assert r["error"]["code"] == "PM_TERM_DECLINED", r
            assert r["error"]["details"]["decided_by"] == "page", r
            assert not os.path.exists(marker)
            for h in seen_headers:
                assert not any("itmcp" in v for v in h.values()), h
                assert "Cookie" not in h, h
        finally:
            agent.shutdown()
