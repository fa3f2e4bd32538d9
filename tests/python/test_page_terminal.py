"""The host's page as a terminal a person keeps open, in a real headless Chromium: the page
draws the host's own screen (the one the agent reads), so `top` updates in place, `vim`
shows its alternate screen and gives the shell back, a `\\r` progress bar ends as one line;
every key reaches the shell as a terminal would send it (arrows recall history, Tab
completes); two terminals side by side; the page comes back by itself after the host
restarts. Screenshots go to the test's artefact directory, not into the repository.
"""

import json
import os
import subprocess
import tempfile
import time

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from test_page_in_a_browser import SERVER, browser

HOST = os.path.join(os.path.dirname(os.path.abspath(SERVER)), "interactive-terminal")
ARTEFACTS = os.environ.get("PM_TEST_ARTEFACTS", os.path.join(tempfile.gettempdir(), "itmcp-page-artefacts"))

# A person's ordinary bash set-up: a coloured prompt, history, an alias.
BASHRC = r"""
HISTFILE=~/.bash_history
HISTSIZE=1000
shopt -s histappend
alias ll='ls -l'
PS1='\[\e[32m\]\u@\h\[\e[0m\]:\[\e[34m\]\w\[\e[0m\]\$ '
"""


def start_host(home, port=0, token="page-terminal-token", extra=()):
    env = {
        "HOME": home,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PM_TERM_INTERACTIVE_SHELL": "bash",
        "PM_TERM_LOG": "warn",
        "TERM": "dumb",
        "PM_INTERACTIVE_TERMINAL_TOKEN": token,
    }
    proc = subprocess.Popen(
        [HOST, "--port", str(port), *extra],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(os.path.join(home, "host.log"), "a"),
        text=True,
    )
    ready = json.loads(proc.stdout.readline())
    assert ready["event"] == "ready", ready
    return proc, ready


@pytest.fixture
def home():
    h = tempfile.mkdtemp(prefix="itmcp-page-term-")
    with open(os.path.join(h, ".bashrc"), "w") as f:
        f.write(BASHRC)
    return h


@pytest.fixture
def page(home):
    proc, ready = start_host(home)
    driver = browser()
    driver.set_window_size(1400, 900)
    driver.get(ready["login"])
    WebDriverWait(driver, 20).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected"))
    yield driver, proc, ready, home
    os.makedirs(ARTEFACTS, exist_ok=True)
    driver.save_screenshot(os.path.join(ARTEFACTS, f"{os.path.basename(home)}.png"))
    driver.quit()
    proc.terminate()
    proc.wait(10)


def pane(driver, i=0):
    return driver.find_elements(By.CSS_SELECTOR, ".term-view")[i]


def screen_text(driver, i=0):
    return driver.execute_script(
        "return [...arguments[0].querySelectorAll('.row')].map(r => r.textContent.replace(/\\s+$/, '')).join('\\n')",
        pane(driver, i),
    )


def wait_screen(driver, predicate, what, i=0, timeout=20):
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        text = screen_text(driver, i)
        if predicate(text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"the screen never showed {what}:\n{text}")


def at_prompt(text):
    return text.rstrip().endswith(("$", "#"))


def new_terminal(driver):
    driver.find_element(By.ID, "new").click()
    wait_screen(driver, at_prompt, "a prompt")


def type_keys(driver, *keys, i=0):
    p = pane(driver, i)
    p.click()
    p.send_keys(*keys)


def test_programs_draw_in_place(page):
    driver, _, _, home = page
    new_terminal(driver)
    # A progress bar redrawn with \r ends as one line.
    type_keys(driver, "for i in 1 2 3 4; do printf '\\rprogress %s/4' $i; sleep 0.1; done; echo\n")
    text = wait_screen(driver, lambda t: "progress 4/4" in t, "the finished progress bar")
    assert "progress 1/4" not in text and text.count("progress") == 2, text  # the typed line + the bar

    # top is one screen that updates in place, then q gives the shell back.
    rows = len(driver.find_elements(By.CSS_SELECTOR, ".term-view .row"))
    type_keys(driver, "top -d 0.3\n")
    first = wait_screen(driver, lambda t: "load average" in t, "top's header")
    assert first.count("load average") == 1, first
    wait_screen(driver, lambda t: t != first and "load average" in t, "top refreshing")
    assert len(driver.find_elements(By.CSS_SELECTOR, ".term-view .row")) == rows
    assert screen_text(driver).count("load average") == 1
    type_keys(driver, "q")
    # top leaves its last frame on the main screen (as in any terminal); the prompt follows.
    wait_screen(driver, lambda t: at_prompt(t) and not t.rstrip().endswith("top -d 0.3"), "the shell back after top")

    # vim draws on the alternate screen and restores the shell's screen after :q.
    type_keys(driver, "vim notes.txt\n")
    WebDriverWait(driver, 20).until(lambda d: "alternate" in pane(d).get_attribute("class"))
    wait_screen(driver, lambda t: "notes.txt" in t and "~" in t, "vim's empty buffer")
    type_keys(driver, "ihello from the page", Keys.ESCAPE, ":wq\n")
    WebDriverWait(driver, 20).until(lambda d: "alternate" not in pane(d).get_attribute("class"))
    wait_screen(driver, lambda t: at_prompt(t) and "vim notes.txt" in t and "hello from the page" not in t, "the shell's screen again")
    with open(os.path.join(home, "notes.txt")) as f:
        assert f.read() == "hello from the page\n"


def test_every_key_reaches_the_shell(page):
    driver, _, _, home = page
    os.mkdir(os.path.join(home, "uniquely-named-dir"))
    new_terminal(driver)
    type_keys(driver, "echo first-line\n")
    wait_screen(driver, lambda t: "\nfirst-line" in t, "the echo")
    # Up recalls the history; Enter runs it again.
    type_keys(driver, Keys.ARROW_UP)
    wait_screen(driver, lambda t: t.rstrip().endswith("echo first-line"), "the recalled line")
    type_keys(driver, Keys.ENTER)
    wait_screen(driver, lambda t: t.count("\nfirst-line") == 2, "the line run again")
    # Tab completes.
    type_keys(driver, "cd uniquely-na", Keys.TAB)
    wait_screen(driver, lambda t: "cd uniquely-named-dir/" in t, "the completed name")
    type_keys(driver, "\n")
    wait_screen(driver, lambda t: t.rstrip().endswith(("uniquely-named-dir$", "uniquely-named-dir#")), "the prompt in the new directory")
    # Ctrl-C interrupts, Ctrl-L clears.
    type_keys(driver, "sleep 30\n")
    time.sleep(0.3)
    type_keys(driver, Keys.CONTROL, "c")
    wait_screen(driver, lambda t: "^C" in t, "the interrupt")
    type_keys(driver, Keys.CONTROL, "l")
    wait_screen(driver, lambda t: "first-line" not in t, "a cleared screen")
    # Keyboard only: Shift-Escape leaves the pane for the list, Enter on an entry shows it.
    type_keys(driver, Keys.SHIFT, Keys.ESCAPE)
    # The list is rebuilt every few seconds (its entries are new elements, the focus kept):
    # the focused element is read in one script, never held across a rebuild.
    focused = "return [document.activeElement.className, document.activeElement.outerHTML]"
    cls, html = driver.execute_script(focused)
    assert "term" in cls, html
    # The list is refreshed every few seconds; the keyboard stays on the same entry.
    time.sleep(2.5)
    cls, html = driver.execute_script(focused)
    assert "term" in cls, html
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    WebDriverWait(driver, 5).until(lambda d: "sel" in d.execute_script("return document.activeElement.className"))


def test_two_terminals_side_by_side(page):
    driver, _, _, _ = page
    new_terminal(driver)
    type_keys(driver, "echo in-the-first\n")
    wait_screen(driver, lambda t: "\nin-the-first" in t, "the first terminal's output")
    driver.find_element(By.ID, "split").click()
    WebDriverWait(driver, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".term-view")) == 2)
    second = pane(driver, 1)
    second.click()
    driver.find_element(By.ID, "new").click()
    wait_screen(driver, at_prompt, "a prompt in the second pane", i=1)
    type_keys(driver, "echo in-the-second\n", i=1)
    wait_screen(driver, lambda t: "\nin-the-second" in t, "the second terminal's output", i=1)
    assert "in-the-second" not in screen_text(driver, 0)
    # The pty has the size of the (half-width) pane the person types in.
    type_keys(driver, "stty size\n", i=1)
    cols, rows = driver.execute_script(
        "const p = panes[1].pane; const [cw, ch] = p.cell();"
        "const s = getComputedStyle(p.root);"
        "return [Math.floor((p.root.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)) / cw),"
        "        Math.floor((p.root.clientHeight - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom)) / ch)]"
    )
    assert cols < 100, cols
    wait_screen(driver, lambda t: f"\n{rows} {cols}\n" in t, f"stty size {rows} {cols}", i=1)
    items = driver.find_elements(By.CSS_SELECTOR, "#list .term")
    assert len(items) == 2 and all("running" in i.text for i in items), [i.text for i in items]


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_page_comes_back_after_the_host_restarts(home):
    port = free_port()
    proc, ready = start_host(home, port=port)
    driver = browser()
    try:
        driver.get(ready["login"])
        WebDriverWait(driver, 20).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected"))
        new_terminal(driver)
        type_keys(driver, "echo before-the-restart\n")
        wait_screen(driver, lambda t: "\nbefore-the-restart" in t, "the output")
        # The host dies as it would under the OOM killer, then its operator starts it again.
        proc.kill()
        proc.wait(10)
        WebDriverWait(driver, 20).until(EC.text_to_be_present_in_element((By.ID, "status"), "reconnecting"))
        proc, _ = start_host(home, port=port)
        # Nobody reloads the page: it signs back in with its session and marks what was lost.
        WebDriverWait(driver, 30).until(EC.text_to_be_present_in_element((By.ID, "status"), "connected"))
        # The list is drawn again as the host's state comes back: an element found may be
        # replaced before it is read or clicked, and is then looked up again.
        steady = WebDriverWait(driver, 20, ignored_exceptions=(StaleElementReferenceException,))
        steady.until(lambda d: any("gone" in e.text for e in d.find_elements(By.CSS_SELECTOR, "#list .term")))
        # A gone terminal can be dismissed, and a new one works.
        steady.until(lambda d: d.find_element(By.CSS_SELECTOR, "#list .term.gone .dismiss").click() or True)
        WebDriverWait(driver, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#list .term.gone"))
        new_terminal(driver)
        type_keys(driver, "echo after-the-restart\n")
        wait_screen(driver, lambda t: "\nafter-the-restart" in t, "output on the new host")
    finally:
        os.makedirs(ARTEFACTS, exist_ok=True)
        driver.save_screenshot(os.path.join(ARTEFACTS, "restart.png"))
        driver.quit()
        proc.kill()
        proc.wait(10)


# A program with the token (as an agent's MCP server would be) opens a terminal and types.
AGENT_SCRIPT = """
const [addr, token, done] = arguments;
const ws = new WebSocket(`ws://${addr}/ahp?token=${token}`);
let id = 1;
const send = (method, params) => ws.send(JSON.stringify({jsonrpc: "2.0", id: id++, method, params}));
ws.onopen = () => {
  send("initialize", {channel: "ahp-root://", protocolVersions: ["1.0.0"], clientId: "agent-x"});
  send("createTerminal", {channel: "ahp-terminal:/agents", claim: {kind: "client", clientId: "agent-x"}});
  setTimeout(() => ws.send(JSON.stringify({jsonrpc: "2.0", method: "dispatchAction", params: {
    channel: "ahp-terminal:/agents", clientSeq: 1, action: {type: "terminal/input", data: "echo typed-by-the-agent\\r"}}})), 1500);
  setTimeout(() => done("ok"), 2000);
};
ws.onerror = () => done("error");
"""


def test_a_read_only_page_watches_and_touches_nothing(home):
    proc, ready = start_host(home, extra=("--page-read-only",))
    driver = browser()
    try:
        driver.get(ready["login"])
        WebDriverWait(driver, 20).until(EC.text_to_be_present_in_element((By.ID, "status"), "read-only"))
        assert not driver.find_element(By.ID, "new").is_enabled()
        addr = ready["address"]
        assert driver.execute_async_script(AGENT_SCRIPT, addr, "page-terminal-token") == "ok"
        # The agent's terminal shows up by itself, selected, with what the agent typed.
        wait_screen(driver, lambda t: "\ntyped-by-the-agent" in t, "the agent's output")
        type_keys(driver, "echo typed-by-the-person\n")
        WebDriverWait(driver, 10).until(EC.text_to_be_present_in_element((By.ID, "status"), "read-only"))
        WebDriverWait(driver, 10).until(EC.text_to_be_present_in_element((By.ID, "status"), "refused"))
        time.sleep(0.5)
        assert "typed-by-the-person" not in screen_text(driver)
    finally:
        driver.quit()
        proc.kill()
        proc.wait(10)


def history_text(driver, i=0):
    return driver.execute_script(
        "return [...arguments[0].querySelectorAll('.history .row')].map(r => r.textContent.replace(/\\s+$/, '')).join('\\n')",
        pane(driver, i),
    )


def test_scrollback_less_and_a_repl(page):
    driver, _, _, home = page
    new_terminal(driver)
    # What scrolled off the screen comes back when the person scrolls up.
    type_keys(driver, "seq 1 300\n")
    wait_screen(driver, lambda t: "\n300\n" in t and at_prompt(t), "the end of seq")
    type_keys(driver, Keys.SHIFT, Keys.PAGE_UP)
    WebDriverWait(driver, 10).until(lambda d: history_text(d).startswith("root@") or "\n1\n" in history_text(d))
    past = history_text(driver).split("\n")
    assert "1" in past and "250" in past, past[:5]
    assert "300" not in past, "the live screen is not repeated in the history"

    # less pages through a file: space, then q gives the shell back.
    with open(os.path.join(home, "long.txt"), "w") as f:
        f.write("".join(f"line {n}\n" for n in range(1, 501)))
    type_keys(driver, "less long.txt\n")
    wait_screen(driver, lambda t: "line 1\n" in t and "long.txt" in t, "less's first page")
    type_keys(driver, " ")
    wait_screen(driver, lambda t: t.startswith("line ") and not t.startswith("line 1\n"), "less's next page")
    type_keys(driver, "G")
    wait_screen(driver, lambda t: "line 500" in t, "the end of the file")
    type_keys(driver, "q")
    wait_screen(driver, lambda t: at_prompt(t) and "less long.txt" in t, "the shell after less")

    # A REPL: lines typed into python come back evaluated; Ctrl-D leaves it.
    type_keys(driver, "python3 -q\n")
    wait_screen(driver, lambda t: t.rstrip().endswith(">>>"), "python's prompt")
    type_keys(driver, "6 * 7\n")
    wait_screen(driver, lambda t: "\n42\n" in t, "the answer")
    type_keys(driver, Keys.ARROW_UP)
    wait_screen(driver, lambda t: t.rstrip().endswith(">>> 6 * 7"), "python's own history")
    type_keys(driver, Keys.CONTROL, "u")
    type_keys(driver, Keys.CONTROL, "d")
    wait_screen(driver, lambda t: at_prompt(t), "the shell after python")
