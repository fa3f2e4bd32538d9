"""Peer comparison: interactive-terminal-mcp against Desktop Commander, same machine, same run.

Both servers are driven by the same outside client (the Python `mcp` SDK) over stdio, with
the `sh -c true` spawn time measured in the same run as the floor. Not part of the test
suite (it needs Desktop Commander from npm); run it by hand:

    python3 -m venv /tmp/peers-venv && /tmp/peers-venv/bin/pip install 'mcp==2.3.0'
    (cd /tmp/peers && PUPPETEER_SKIP_DOWNLOAD=1 npm install --ignore-scripts @wonderwhy-er/desktop-commander)
    cargo build --release --bins
    /tmp/peers-venv/bin/python benches/peers.py --dc /tmp/peers/node_modules/@wonderwhy-er/desktop-commander/dist/index.js

It prints a Markdown table for docs/benchmarks.md.
"""

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = os.path.join(HERE, "..", "target", "release", "interactive-terminal-mcp")
TOOL = "memory_terminal_interactive"
ROUNDS = 20
SEQ_LINES = 200_000


def median_ms(samples):
    return statistics.median(samples) * 1000


def floor_spawn():
    samples = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", "true"], check=True)
        samples.append(time.perf_counter() - t)
    return median_ms(samples)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def tree_rss_kib(pid):
    """RSS of a process and its descendants (npx/node may fork)."""
    total = rss_kib(pid)
    for child in os.popen(f"pgrep -P {pid}").read().split():
        total += tree_rss_kib(int(child))
    return total


def pids_with(marker):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(d))
        except OSError:
            pass
    return out


class Server:
    def __init__(self, name, params):
        self.name = name
        self.params = params


def ours_params(cwd):
    return StdioServerParameters(
        command=os.path.abspath(OURS),
        env={"PM_TERM_LOG": "warn", "PATH": os.environ["PATH"], "HOME": cwd,
             "PM_TERM_INTERACTIVE_SHELL": "bash", "PM_TERM_NO_USER_RC": "1"},
        cwd=cwd,
    )


def dc_params(path, cwd):
    return StdioServerParameters(
        command="node", args=[path], env={"PATH": os.environ["PATH"], "HOME": cwd}, cwd=cwd
    )


def server_pid(marker):
    found = pids_with(marker)
    return max(found) if found else None


async def cold_start(params):
    samples = []
    for _ in range(5):
        t = time.perf_counter()
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                samples.append(time.perf_counter() - t)
    return median_ms(samples)


def headless(command):
    return {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": command}}


async def ours_suite(params, marker):
    res = {"cold start → initialize": await cold_start(params)}
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await anyio.sleep(0.5)
            pid = server_pid(os.path.basename(OURS))
            res["idle server RSS (KiB)"] = tree_rss_kib(pid) if pid else None

            samples = []
            for _ in range(ROUNDS):
                t = time.perf_counter()
                p = (await s.call_tool(TOOL, headless("echo hi"))).structured_content
                samples.append(time.perf_counter() - t)
                assert p["result"]["stdout"] == "hi\n", p
            res["`echo hi` end to end"] = median_ms(samples)

            # Every line of a 1.3 MB output, by cursor.
            t = time.perf_counter()
            p = (await s.call_tool(TOOL, headless(f"seq 1 {SEQ_LINES}"))).structured_content
            sid = p["identity"]["session_id"]
            # The default answer is an excerpt; every byte is read by cursor, in 1 MiB pages.
            out, pos = "", 0
            total = p["result"]["streams"]["stdout"]["total"]
            while pos < total or p["result"]["running"]:
                p = (await s.call_tool(TOOL, {"action": "read_output", "target": {"session_id": sid},
                                              "output": {"stdout_cursor": pos, "max_bytes": 1048576},
                                              "runtime": {"wait_ms": 1000}})).structured_content
                out += p["result"]["stdout"]
                pos = p["result"]["streams"]["stdout"]["end"]
                total = p["result"]["streams"]["stdout"]["total"]
            res["`seq 1 200000`: lines retrieved"] = out.count("\n")
            res["`seq 1 200000`: time to all of it"] = (time.perf_counter() - t) * 1000

            # A command waiting on stdin.
            t = time.perf_counter()
            p = (await s.call_tool(TOOL, headless("cat; echo after-eof"))).structured_content
            res["`cat` (reads stdin): returns after"] = (time.perf_counter() - t) * 1000
            res["`cat` (reads stdin): finished"] = not p["result"]["running"]

            # Python REPL round trip in a terminal.
            o = await s.call_tool(TOOL, {"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
            tid = o.structured_content["identity"]["terminal_id"]

            def inp(text):
                return {"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                        "target": {"terminal_id": tid}, "execution": {"input": text, "wait_for": ">>> $"}}
            await s.call_tool(TOOL, inp("python3 -q\n"))
            samples = []
            for i in range(ROUNDS):
                t = time.perf_counter()
                a = (await s.call_tool(TOOL, inp(f"{i}+1\n"))).structured_content
                samples.append(time.perf_counter() - t)
                assert str(i + 1) in a["result"]["output"], a
            res["python REPL `n+1` round trip"] = median_ms(samples)
            await s.call_tool(TOOL, {"action": "terminate", "target": {"terminal_id": tid}})

            # Escaping children: background job + setsid, then terminate.
            p = (await s.call_tool(TOOL, {**headless(f"sleep 901.{marker} & setsid sleep 902.{marker} & sleep 903.{marker}"),
                                          "runtime": {"wait_ms": 300}})).structured_content
            sid = p["identity"]["session_id"]
            await anyio.sleep(0.3)
            before = len(pids_with(f".{marker}"))
            await s.call_tool(TOOL, {"action": "terminate", "target": {"session_id": sid}})
            await anyio.sleep(0.5)
            res["terminate (background job + setsid child): processes left"] = f"{len(pids_with(f'.{marker}'))} (of {before} started)"
    return res


def dc_text(result):
    return "".join(c.text for c in result.content if hasattr(c, "text"))


def dc_pid(text):
    m = re.search(r"PID (\d+)", text)
    return int(m.group(1)) if m else None


async def dc_suite(params, marker):
    res = {"cold start → initialize": await cold_start(params)}
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await anyio.sleep(0.5)
            pid = server_pid("desktop-commander")
            res["idle server RSS (KiB)"] = tree_rss_kib(pid) if pid else None

            samples = []
            for _ in range(ROUNDS):
                t = time.perf_counter()
                text = dc_text(await s.call_tool("start_process", {"command": "echo hi", "timeout_ms": 5000}))
                samples.append(time.perf_counter() - t)
                assert "hi" in text, text
            res["`echo hi` end to end"] = median_ms(samples)

            t = time.perf_counter()
            text = dc_text(await s.call_tool("start_process", {"command": f"seq 1 {SEQ_LINES}", "timeout_ms": 30000}))
            pid = dc_pid(text)
            got = set(int(x) for x in re.findall(r"^(\d+)$", text, re.M))
            offset = 0
            for _ in range(400):
                q = dc_text(await s.call_tool("read_process_output", {"pid": pid, "offset": offset, "length": 5000, "timeout_ms": 1000}))
                nums = [int(x) for x in re.findall(r"^(\d+)$", q, re.M)]
                if not nums:
                    break
                got.update(nums)
                offset += 5000
            res["`seq 1 200000`: lines retrieved"] = len(got)
            res["`seq 1 200000`: time to all of it"] = (time.perf_counter() - t) * 1000

            t = time.perf_counter()
            text = dc_text(await s.call_tool("start_process", {"command": "cat; echo after-eof", "timeout_ms": 5000}))
            res["`cat` (reads stdin): returns after"] = (time.perf_counter() - t) * 1000
            res["`cat` (reads stdin): finished"] = "after-eof" in text
            cat_pid = dc_pid(text)
            if cat_pid:
                await s.call_tool("force_terminate", {"pid": cat_pid})

            text = dc_text(await s.call_tool("start_process", {"command": "python3 -i -q", "timeout_ms": 5000}))
            py = dc_pid(text)
            samples = []
            for i in range(ROUNDS):
                t = time.perf_counter()
                a = dc_text(await s.call_tool("interact_with_process", {"pid": py, "input": f"{i}+1", "timeout_ms": 5000}))
                samples.append(time.perf_counter() - t)
                assert str(i + 1) in a, a
            res["python REPL `n+1` round trip"] = median_ms(samples)
            await s.call_tool("force_terminate", {"pid": py})

            text = dc_text(await s.call_tool("start_process", {
                "command": f"sleep 901.{marker} & setsid sleep 902.{marker} & sleep 903.{marker}", "timeout_ms": 300}))
            await anyio.sleep(0.3)
            before = len(pids_with(f".{marker}"))
            await s.call_tool("force_terminate", {"pid": dc_pid(text)})
            await anyio.sleep(0.5)
            left = pids_with(f".{marker}")
            res["terminate (background job + setsid child): processes left"] = f"{len(left)} (of {before} started)"
            for p in left:
                try:
                    os.kill(p, 9)
                except OSError:
                    pass
    return res


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dc", required=True, help="path to desktop-commander's dist/index.js")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as cwd:
        floor = floor_spawn()
        ours = await ours_suite(ours_params(cwd), f"{os.getpid()}1")
        dc = await dc_suite(dc_params(a.dc, cwd), f"{os.getpid()}2")
    print(f"floor: `sh -c true` spawn+wait = {floor:.2f} ms\n")
    print("| measure | interactive-terminal-mcp | Desktop Commander 0.2.52 |")
    print("| --- | --- | --- |")
    for k in ours:
        def fmt(v):
            if isinstance(v, float):
                return f"{v:.2f} ms ({v / floor:.1f}x floor)" if "RSS" not in k else f"{v:.0f}"
            return str(v)
        print(f"| {k} | {fmt(ours[k])} | {fmt(dc.get(k))} |")


anyio.run(main)
