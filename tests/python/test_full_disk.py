"""A spool directory on a small tmpfs that the agent itself fills: the server, started from a
shell in a mount namespace of its own, keeps serving, bounds its memory, says what output it
could not keep, and names a full disk as the reason a terminal cannot open — never an
internal error."""

import json
import os
import subprocess
import tempfile

import pytest
from outside import SERVER, TOOL


def can_mount_tmpfs():
    r = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
                       capture_output=True)
    return r.returncode == 0


class Raw:
    """The server over stdio, spoken to line by line."""

    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "full-disk", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, m):
        self.p.stdin.write((json.dumps(m) + "\n").encode())
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            m = json.loads(self.p.stdout.readline())
            if m.get("id") == self.n:
                return m

    def call(self, args):
        return self.rpc("tools/call", {"name": TOOL, "arguments": args})["result"]["structuredContent"]

    def rss_kib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=20)


def headless(command):
    return {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": command}, "runtime": {"wait_ms": 120000}}


@pytest.mark.skipif(not can_mount_tmpfs(), reason="no user and mount namespaces here")
def test_a_full_spool_disk_is_named_and_memory_stays_bounded():
    mnt = tempfile.mkdtemp(prefix="itmcp-full-")
    server = os.path.abspath(SERVER)
    env = {**os.environ, "PM_TERM_LOG": "warn", "PM_TERM_NO_USER_RC": "1"}
    s = Raw(["unshare", "-rm", "sh", "-c",
             f"mount -t tmpfs -o size=4m tmpfs {mnt} && PM_TERM_SPOOL_DIR={mnt}/spool exec {server}"], env)
    try:
        # The agent fills the disk the server spools to.
        r = s.call(headless(f"dd if=/dev/zero of={mnt}/fill bs=64k 2>/dev/null; df -k {mnt} | tail -1"))
        assert r["success"], r
        assert " 100% " in r["result"]["stdout"], r["result"]["stdout"]
        before = s.rss_kib()
        # 100 MB of output with nowhere to spool it: the command's answer comes, ends as it
        # should, and says how much was not kept and why.
        r = s.call(headless("head -c 100000000 /dev/zero | tr '\\0' x; echo END"))
        assert r["success"], r
        res = r["result"]
        assert res["exit_code"] == 0 and res["stdout"].endswith("xEND\n"), res["stdout"][-40:]
        dropped = res["streams"]["stdout"]["dropped"]
        assert dropped["limit"] == "disk_space", dropped
        assert 80_000_000 < dropped["bytes"] < 100_000_000, dropped
        assert "disk refused" in res["note"] and str(dropped["bytes"]) in res["note"], res["note"]
        # Memory held the newest bytes only, not the 100 MB.
        grown = s.rss_kib() - before
        assert grown < 60_000, f"server RSS grew by {grown} KiB"
        # A terminal cannot open: the answer names the disk, retriable, not an internal error.
        r = s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
        err = r["error"]
        assert err["code"] == "PM_TERM_TIMEOUT" and err["retriable"] is True, err
        assert err["details"]["limit"] == "disk_space", err
        assert "No space left on device" in err["message"], err
        # Space comes back: the agent deletes its file and the next terminal opens.
        assert s.call(headless(f"rm {mnt}/fill"))["success"]
        r = s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
        assert r["success"], r
    finally:
        s.close()


@pytest.mark.skipif(not can_mount_tmpfs(), reason="no user and mount namespaces here")
def test_a_flood_past_the_stream_limit_keeps_head_and_tail_and_gives_the_space_back():
    mnt = tempfile.mkdtemp(prefix="itmcp-cap-")
    server = os.path.abspath(SERVER)
    env = {**os.environ, "PM_TERM_LOG": "warn", "PM_TERM_NO_USER_RC": "1",
           "PM_TERM_SPOOL_MAX_STREAM": str(8 << 20)}
    s = Raw(["unshare", "-rm", "sh", "-c",
             f"mount -t tmpfs -o size=64m tmpfs {mnt} && PM_TERM_SPOOL_DIR={mnt}/spool exec {server}"], env)
    try:
        r = s.call({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                    "execution": {"command": "echo FIRST; yes | head -c 120000000; echo; echo LAST"},
                    "runtime": {"wait_ms": 120000}})
        assert r["success"], r
        res = r["result"]
        assert res["exit_code"] == 0, res
        dropped = res["streams"]["output"]["dropped"]
        assert dropped["limit"] == "spool_per_stream", dropped
        assert dropped["bytes"] > 100_000_000, dropped
        assert "per stream" in res["note"], res["note"]
        assert "LAST" in res["output"], res["output"][-200:]
        # The head is kept: read from the start.
        tid = r["identity"]["terminal_id"]
        head = s.call({"action": "read_output", "target": {"terminal_id": tid},
                       "output": {"cursor": 0, "max_bytes": 4096}})
        assert "FIRST" in head["result"]["output"], head
        # The disk holds about the limit, not the 120 MB the command printed.
        used = s.call(headless(f"df -k {mnt} | tail -1"))["result"]["stdout"].split()
        assert int(used[2]) < 16 * 1024, used
    finally:
        s.close()
