"""Eight everyday tasks, done as an agent does them, against interactive-terminal-mcp and
(when given) Desktop Commander: calls, seconds and characters per task, and whether the task
got done. Each of our answers is followed the way a model would: its `next` step when it
has one. Characters are what a model is handed: the structured content when present, else
the text (Claude Code and Codex pass only `structuredContent`; other clients only text), and
the largest single answer is reported beside the total.

Not part of the test suite; run it by hand (Desktop Commander's setup is in peers.py):

    cargo build --release --bins
    .venv-test/bin/python benches/tasks.py [--dc /tmp/peers/node_modules/@wonderwhy-er/desktop-commander/dist/index.js]

It prints a Markdown table for docs/benchmarks.md.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = os.path.join(HERE, "..", "target", "release", "interactive-terminal-mcp")
TOOL = "memory_terminal_interactive"

TASKS = [
    "failing test run (6,000 log lines, failure at the end)",
    "dev server in the background, seen serving, stopped",
    "python REPL: start, 6*7",
    "`git commit` without -m (the editor opens)",
    "`read -p` prompt answered",
    "5 MB of output (`seq 1 700000`)",
    "vim: edit a file and save",
    "Ctrl-C a running command",
]


class Tally:
    def __init__(self):
        self.calls, self.chars, self.largest, self.seconds = 0, 0, 0, 0.0

    def add(self, chars, seconds):
        self.calls += 1
        self.chars += chars
        self.largest = max(self.largest, chars)
        self.seconds += seconds


class Ours:
    def __init__(self, session):
        self.s = session

    async def call(self, tally, args):
        t = time.perf_counter()
        r = await self.s.call_tool(TOOL, args)
        dt = time.perf_counter() - t
        p = r.structured_content
        tally.add(len(json.dumps(p, separators=(',', ':'), ensure_ascii=False)), dt)
        return p


def interactive(command=None, target=None, **execution):
    args = {"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "runtime": {"wait_ms": 10000}}
    if command is not None:
        execution["command"] = command
    args["execution"] = execution
    if target:
        args["target"] = {"terminal_id": target}
    return args


def headless(command):
    return {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": command}}


async def ours_tasks(s, work):
    o = Ours(s)
    out = {}

    t = Tally()
    p = await o.call(t, headless("for i in $(seq 6000); do echo \"test $i ... ok\"; done; echo 'FAILED: test_payment' >&2; exit 1"))
    out[TASKS[0]] = (t, p["result"]["exit_code"] == 1 and "FAILED: test_payment" in p["result"]["stderr"]
                     and "test 6000 ... ok" in p["result"]["stdout"])

    t = Tally()
    p = await o.call(t, {**interactive("python3 -m http.server 18765 --bind 127.0.0.1"), "runtime": {"wait_ms": 1500}})
    tid = p["identity"]["terminal_id"]
    seen = "Serving HTTP" in p["result"].get("output", "")
    if not seen:
        p = await o.call(t, {"action": "read_output", "target": {"terminal_id": tid}, "runtime": {"wait_ms": 5000}})
        seen = "Serving HTTP" in p["result"].get("output", "")
    await o.call(t, {"action": "terminate", "target": {"terminal_id": tid}})
    out[TASKS[1]] = (t, seen)

    t = Tally()
    p = await o.call(t, interactive("python3 -q"))
    tid = p["identity"]["terminal_id"]
    p = await o.call(t, interactive(target=tid, input="6*7\n"))
    out[TASKS[2]] = (t, "42" in p["result"].get("output", ""))

    repo = os.path.join(work, "repo-ours")
    subprocess.run(f"git init -q {repo} && cd {repo} && git config user.email a@b && git config user.name a && echo x > f && git add f",
                   shell=True, check=True)
    t = Tally()
    p = await o.call(t, interactive(f"cd {repo} && GIT_EDITOR='vim -u NONE' git commit"))
    tid = p["identity"]["terminal_id"]
    await o.call(t, interactive(target=tid, input="iadd f\x1b:wq\r"))
    log = subprocess.run(["git", "-C", repo, "log", "--format=%s"], capture_output=True, text=True).stdout
    out[TASKS[3]] = (t, log.strip() == "add f")

    t = Tally()
    p = await o.call(t, interactive("read -p 'Continue? ' a; echo \"got $a\""))
    tid = p["identity"]["terminal_id"]
    p = await o.call(t, interactive(target=tid, input="y\n"))
    out[TASKS[4]] = (t, "got y" in p["result"].get("output", ""))

    t = Tally()
    p = await o.call(t, headless("seq 1 700000"))
    out[TASKS[5]] = (t, p["result"]["stdout"].endswith("700000\n"))

    path = os.path.join(work, "ours.txt")
    with open(path, "w") as f:
        f.write("one\ntwo\n")
    t = Tally()
    p = await o.call(t, interactive(f"vim -u NONE {path}"))
    tid = p["identity"]["terminal_id"]
    await o.call(t, interactive(target=tid, input="Gothree\x1b:wq\r"))
    out[TASKS[6]] = (t, open(path).read() == "one\ntwo\nthree\n")

    t = Tally()
    p = await o.call(t, {**interactive("sleep 100; echo not-interrupted"), "runtime": {"wait_ms": 1000}})
    tid = p["identity"]["terminal_id"]
    p = await o.call(t, interactive(target=tid, keys=["ctrl-c"]))
    out[TASKS[7]] = (t, p["result"]["running"] is False and "not-interrupted" not in p["result"].get("output", ""))
    return out


def dc_text(result):
    return "".join(c.text for c in result.content if hasattr(c, "text"))


class Dc:
    def __init__(self, session):
        self.s = session

    async def call(self, tally, tool, args):
        t = time.perf_counter()
        r = await self.s.call_tool(tool, args)
        dt = time.perf_counter() - t
        text = dc_text(r)
        tally.add(len(json.dumps(r.structured_content, separators=(',', ':'), ensure_ascii=False)) if r.structured_content else len(text), dt)
        return text


def dc_pid(text):
    import re
    m = re.search(r"PID (\d+)", text)
    return int(m.group(1)) if m else None


async def dc_type_into(d, t, command, keys):
    """Start `command` there, type `keys` into it, then stop whatever is left of it."""
    pid = dc_pid(await d.call(t, "start_process", {"command": command, "timeout_ms": 8000}))
    if pid:
        await d.call(t, "interact_with_process", {"pid": pid, "input": keys, "timeout_ms": 8000})
        await d.s.call_tool("force_terminate", {"pid": pid})


async def dc_tasks(s, work):
    d = Dc(s)
    out = {}

    t = Tally()
    text = await d.call(t, "start_process", {"command": "for i in $(seq 6000); do echo \"test $i ... ok\"; done; echo 'FAILED: test_payment' >&2; exit 1", "timeout_ms": 10000})
    out[TASKS[0]] = (t, "FAILED: test_payment" in text and "test 6000 ... ok" in text)

    t = Tally()
    text = await d.call(t, "start_process", {"command": "python3 -m http.server 18766 --bind 127.0.0.1", "timeout_ms": 1500})
    pid = dc_pid(text)
    seen = "Serving HTTP" in text
    if not seen and pid:
        text = await d.call(t, "read_process_output", {"pid": pid, "timeout_ms": 5000})
        seen = "Serving HTTP" in text
    if pid:
        await d.call(t, "force_terminate", {"pid": pid})
    out[TASKS[1]] = (t, seen)

    t = Tally()
    text = await d.call(t, "start_process", {"command": "python3 -i -q", "timeout_ms": 8000})
    pid = dc_pid(text)
    text = await d.call(t, "interact_with_process", {"pid": pid, "input": "6*7", "timeout_ms": 8000})
    out[TASKS[2]] = (t, "42" in text)
    await d.s.call_tool("force_terminate", {"pid": pid})

    repo = os.path.join(work, "repo-dc")
    subprocess.run(f"git init -q {repo} && cd {repo} && git config user.email a@b && git config user.name a && echo x > f && git add f",
                   shell=True, check=True)
    t = Tally()
    await dc_type_into(d, t, f"cd {repo} && GIT_EDITOR='vim -u NONE' git commit", "iadd f\x1b:wq")
    log = subprocess.run(["git", "-C", repo, "log", "--format=%s"], capture_output=True, text=True).stdout
    out[TASKS[3]] = (t, log.strip() == "add f")

    t = Tally()
    text = await d.call(t, "start_process", {"command": "bash -c 'read -p \"Continue? \" a; echo \"got $a\"'", "timeout_ms": 8000})
    pid = dc_pid(text)
    if pid:
        text = await d.call(t, "interact_with_process", {"pid": pid, "input": "y", "timeout_ms": 8000})
    out[TASKS[4]] = (t, "got y" in text)

    t = Tally()
    text = await d.call(t, "start_process", {"command": "seq 1 700000", "timeout_ms": 30000})
    out[TASKS[5]] = (t, "700000" in text)

    path = os.path.join(work, "dc.txt")
    with open(path, "w") as f:
        f.write("one\ntwo\n")
    t = Tally()
    await dc_type_into(d, t, f"vim -u NONE {path}", "Gothree\x1b:wq")
    out[TASKS[6]] = (t, open(path).read() == "one\ntwo\nthree\n")

    t = Tally()
    text = await d.call(t, "start_process", {"command": "sleep 100; echo not-interrupted", "timeout_ms": 1000})
    pid = dc_pid(text)
    if pid:
        text = await d.call(t, "interact_with_process", {"pid": pid, "input": "\x03", "timeout_ms": 3000})
        text = await d.call(t, "read_process_output", {"pid": pid, "timeout_ms": 1000})
    out[TASKS[7]] = (t, "not-interrupted" not in text and ("finished" in text.lower() or "exit" in text.lower()))
    if pid:
        await d.s.call_tool("force_terminate", {"pid": pid})
    return out


async def run(params, tasks, work):
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            return await tasks(s, work)


def cell(t, done):
    return f"{'done' if done else 'NOT done'}: {t.calls} calls, {t.seconds:.2f} s, {t.chars:,} chars (largest {t.largest:,})"


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dc", help="path to desktop-commander's dist/index.js")
    ap.add_argument("--ours", default=OURS, help="the server binary (default: the release build)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        env = {"PM_TERM_LOG": "warn", "PATH": os.environ["PATH"], "HOME": work,
               "PM_TERM_INTERACTIVE_SHELL": "bash", "PM_TERM_NO_USER_RC": "1"}
        ours = await run(StdioServerParameters(command=os.path.abspath(a.ours), env=env, cwd=work), ours_tasks, work)
        dc = None
        if a.dc:
            dc = await run(StdioServerParameters(command="node", args=[a.dc], env={"PATH": os.environ["PATH"], "HOME": work}, cwd=work),
                           dc_tasks, work)
    head = "| task | interactive-terminal-mcp |" + (" Desktop Commander |" if dc else "")
    print(head)
    print("| --- | --- |" + (" --- |" if dc else ""))
    totals = [[0, 0, 0], [0, 0, 0]]
    for k in TASKS:
        t, done = ours[k]
        row = f"| {k} | {cell(t, done)} |"
        totals[0] = [totals[0][0] + t.calls, totals[0][1] + t.chars, totals[0][2] + done]
        if dc:
            t2, done2 = dc[k]
            row += f" {cell(t2, done2)} |"
            totals[1] = [totals[1][0] + t2.calls, totals[1][1] + t2.chars, totals[1][2] + done2]
        print(row)
    row = f"| all | {totals[0][2]}/8 done, {totals[0][0]} calls, {totals[0][1]:,} chars |"
    if dc:
        row += f" {totals[1][2]}/8 done, {totals[1][0]} calls, {totals[1][1]:,} chars |"
    print(row)


anyio.run(main)
