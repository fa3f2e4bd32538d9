"""The container path for real: the image built here (scripts/container-image: a Debian base
made with mmdebstrap, the Containerfile's `prebuilt` stage with the binaries under test), the
server in it under podman, driven by the MCP SDK over `podman run -i` on stdio with the
README's Linux recipe, and the host service on this machine.

Headless commands run in the container as its ordinary user; terminals open on the host at
the host side of the mapped workspace; the host killed and started again mid-session and the
bridge back; the container stopped or killed and nothing of it left; bridges misconfigured on
purpose and what the entrypoint and the answers say; the host's page showing the terminals the
container opened."""

import contextlib
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from outside import SERVER, TOOL, tagged
from test_page_in_a_browser import browser, wait_list
from test_page_terminal import start_host

ROOT = pathlib.Path(__file__).resolve().parents[2]
IMAGE = "localhost/interactive-terminal-mcp:test"
# The slirp4netns address of the host's loopback (the README's Linux podman recipe).
HOST_LOOPBACK = "10.0.2.2"


def podman_conf():
    """podman's default ulimits are refused where root lacks CAP_SYS_RESOURCE (as on some
    VMs), and crun some hosts' cgroup layout: unless the operator configured podman, the tests
    run it with limits no higher than this process's own, and with runc when it is there."""
    if os.environ.get("CONTAINERS_CONF"):
        return os.environ["CONTAINERS_CONF"]
    import resource

    def at_most(which, cap):
        hard = resource.getrlimit(which)[1]
        return cap if hard == resource.RLIM_INFINITY else min(hard, cap)

    nofile = at_most(resource.RLIMIT_NOFILE, 20000)
    nproc = at_most(resource.RLIMIT_NPROC, 32768)
    path = os.path.join(tempfile.mkdtemp(prefix="itmcp-podman-"), "containers.conf")
    with open(path, "w") as f:
        f.write(f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n')
        if shutil.which("runc"):
            f.write('[engine]\nruntime = "runc"\n')
    return path


@pytest.fixture(scope="module")
def image():
    """The image, built as an air-gapped user builds it, from the binaries under test."""
    binaries = os.path.relpath(os.path.dirname(os.path.abspath(SERVER)), ROOT)
    env = dict(os.environ, CONTAINERS_CONF=podman_conf())
    out = subprocess.run(
        [str(ROOT / "scripts" / "container-image"), "--binaries", binaries, "--tag", IMAGE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == IMAGE, out.stdout
    return env


@pytest.fixture
def place():
    """A host home for the host service and a workspace the container's user (uid 1000)
    owns, as a person's project directory is."""
    home = tempfile.mkdtemp(prefix="itmcp-container-home-")
    ws = tempfile.mkdtemp(prefix="itmcp-container-ws-")
    os.chmod(home, 0o755)
    os.chown(ws, 1000, 1000)
    return home, ws


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bridge:
    """The host service on this machine and the README's podman command for the server."""

    def __init__(self, env, home, ws):
        self.env, self.home, self.ws = env, home, ws
        self.port = free_port()
        self.token = secrets.token_hex(24)
        self.name = f"itmcp-test-{secrets.token_hex(4)}"
        self.host = None
        self.ready = None

    def start_host(self):
        self.host, self.ready = start_host(self.home, port=self.port, token=self.token)

    def kill_host(self):
        self.host.send_signal(signal.SIGKILL)
        self.host.wait(10)

    def params(self, alias=HOST_LOOPBACK, token=None, network="slirp4netns:allow_host_loopback=true"):
        args = ["run", "-i", "--rm", "--name", self.name, "--network", network]
        if alias:
            args += ["-e", f"PM_INTERACTIVE_TERMINAL_HOST_ALIAS={alias}"]
        args += [
            "-e", f"PM_INTERACTIVE_TERMINAL_HOST_PORT={self.port}",
            "-e", "PM_INTERACTIVE_TERMINAL_TOKEN",
            "-e", "PM_TERM_PATH_MAP",
            "-e", "PM_TERM_LOG=warn",
            "-v", f"{self.ws}:/workspace",
            IMAGE,
        ]  # fmt: skip
        env = dict(
            self.env,
            PM_INTERACTIVE_TERMINAL_TOKEN=self.token if token is None else token,
            PM_TERM_PATH_MAP=f"/workspace={self.ws}",
        )
        return StdioServerParameters(command="podman", args=args, env=env)

    def stop(self):
        if self.host and self.host.poll() is None:
            self.host.terminate()
            self.host.wait(10)
        subprocess.run(["podman", "rm", "-f", self.name], env=self.env, capture_output=True)


@pytest.fixture
def bridge(image, place):
    b = Bridge(image, *place)
    b.start_host()
    yield b
    b.stop()


@contextlib.asynccontextmanager
async def session(params, errlog=None):
    errlog = errlog or open(os.devnull, "w")
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            yield s


async def call(s, args):
    return (await s.call_tool(TOOL, args)).structured_content


def headless(command):
    return {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": command}}  # fmt: skip


def interactive(command, terminal=None):
    req = {"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
           "execution": {"command": command}, "runtime": {"wait_ms": 15000}}  # fmt: skip
    if terminal:
        req["target"] = {"terminal_id": terminal}
    return req


def container_gone(env, name):
    out = subprocess.run(
        ["podman", "ps", "-a", "--filter", f"name=^{name}$", "--format", "{{.Names}}"],
        env=env,
        capture_output=True,
        text=True,
    )
    return out.returncode == 0 and out.stdout.strip() == ""


def wait_for(predicate, what, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"never: {what}")


@pytest.mark.anyio
@pytest.mark.parametrize("network", ["slirp4netns", "host"])
async def test_commands_run_in_the_container_and_terminals_on_the_host(bridge, network):
    # The two Linux recipes: the host's loopback through slirp4netns, or the host's network.
    if network == "host":
        params = bridge.params(alias="127.0.0.1", network="host")
    else:
        params = bridge.params()
    async with session(params) as s:
        r = await call(s, headless("id -u; hostname; echo from-the-container > /workspace/made-inside.txt"))
        assert r["result"]["exit_code"] == 0, r
        uid, name = r["result"]["stdout"].split()[:2]
        assert uid == "1000", r
        assert name != socket.gethostname() or network == "host", r
        # The terminal is the host's, opened at the host side of /workspace.
        r = await call(s, interactive("pwd; hostname; cat made-inside.txt; echo from-the-host > made-outside.txt"))
        assert r["resolved"]["adapter"] == "container_bridge", r
        lines = r["result"]["output"].split()
        assert lines[:3] == [bridge.ws, socket.gethostname(), "from-the-container"], r
        r = await call(s, headless("cat /workspace/made-outside.txt"))
        assert r["result"]["stdout"] == "from-the-host\n", r


@pytest.mark.anyio
async def test_the_bridge_comes_back_after_the_host_restarts(bridge):
    async with session(bridge.params()) as s:
        r = await call(s, interactive("echo before"))
        first = r["identity"]["terminal_id"]
        bridge.kill_host()
        # Headless work goes on in the container; interactive requests say the host is down.
        r = await call(s, headless("echo still-here"))
        assert r["result"]["stdout"] == "still-here\n", r
        r = await call(s, interactive("echo while-down"))
        assert r["success"] is False, r
        assert r["error"]["retriable"] is True, r
        # The operator starts the host again on its port: the bridge reconnects by itself.
        bridge.start_host()
        r = await call(s, interactive("echo after-the-restart"))
        assert "after-the-restart" in r["result"]["output"], r
        r = await call(s, interactive("echo old", terminal=first))
        assert r["error"]["code"] == "PM_TERM_NOT_FOUND", r


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["client leaves", "podman stop", "podman kill"])
async def test_nothing_of_the_container_is_left_after_it_stops(bridge, how):
    tag = f"{secrets.randbelow(10**6) + 10**6}"
    async with session(bridge.params()) as s:
        # A command still running in the background when the container goes.
        r = await call(s, headless(f"sleep {tag} & echo started"))
        assert r["result"]["stdout"] == "started\n", r
        assert tagged(f"sleep\0{tag}"), "the background command runs"
        if how != "client leaves":
            verb = ["stop", "-t", "2"] if how == "podman stop" else ["kill"]
            subprocess.run(["podman", *verb, bridge.name], env=bridge.env, check=True, capture_output=True)
            with pytest.raises(Exception):
                with anyio.fail_after(30):
                    await call(s, headless("echo gone"))
    wait_for(lambda: container_gone(bridge.env, bridge.name), "the container removed")
    wait_for(lambda: not tagged(f"sleep\0{tag}"), "no process of the container left")


@pytest.mark.anyio
async def test_a_misconfigured_bridge_says_why(bridge):
    def check_env(params):
        """The entrypoint's own check (`--check-env`): its status and what it says."""
        args = [a for a in params.args if a != "-i"]
        out = subprocess.run(["podman", *args, "--check-env"], env=params.env, capture_output=True, text=True)
        return out.returncode, out.stderr

    # No token.
    params = bridge.params(token="")
    status, said = check_env(params)
    assert status == 1 and "PM_INTERACTIVE_TERMINAL_TOKEN is required" in said, said
    # A wrong token: the host refuses it, and the answer says so; headless work goes on.
    with tempfile.TemporaryFile("w+") as log:
        async with session(bridge.params(token="not-the-token"), errlog=log) as s:
            r = await call(s, interactive("echo hi"))
            assert r["success"] is False, r
            assert "PM_INTERACTIVE_TERMINAL_TOKEN is not the host's token" in r["error"]["message"], r
            r = await call(s, headless("echo headless-works"))
            assert r["result"]["stdout"] == "headless-works\n", r
    # The host cannot be reached: the default network (no way to the host's loopback) and
    # the default names only.
    params = bridge.params(alias=None, network="slirp4netns")
    async with session(params) as s:
        r = await call(s, interactive("echo hi"))
        assert r["success"] is False, r
        # Each address tried is named with its cause.
        message = r["error"]["message"]
        assert f"host.containers.internal:{bridge.port}: " in message, r
        assert f"host.docker.internal:{bridge.port}: " in message, r
    # The workspace mapped to a host directory that does not exist: named, with the setting,
    # and not blamed on the request.
    params = bridge.params()
    params.env["PM_TERM_PATH_MAP"] = "/workspace=/nonexistent/project"
    async with session(params) as s:
        r = await call(s, interactive("pwd"))
        assert r["error"]["code"] == "PM_TERM_INVALID_MODE", r
        message = r["error"]["message"]
        assert "/nonexistent/project" in message and "PM_TERM_PATH_MAP" in message, r
        assert "malformed" not in r["fallback"]["user_message"], r
    # A value the server refuses at start: the entrypoint stops with status 2 and says why.
    params = bridge.params()
    params.args.insert(params.args.index(IMAGE), "-e")
    params.args.insert(params.args.index(IMAGE), "PM_TERM_ADAPTER_MODE=teleport")
    status, said = check_env(params)
    assert status == 2 and "teleport" in said, said


@pytest.mark.anyio
async def test_the_hosts_page_shows_the_containers_terminals(bridge):
    driver = browser()
    try:
        driver.get(bridge.ready["login"])
        async with session(bridge.params()) as s:
            r = await call(s, interactive("echo opened-from-the-container"))
            assert r["success"], r
            texts = await anyio.to_thread.run_sync(
                lambda: wait_list(driver, lambda t: len(t) == 1, "the container's terminal")
            )
            assert "agent" in texts[0], texts
    finally:
        driver.quit()
