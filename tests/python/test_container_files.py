"""The container files as a user builds them: the Containerfile passes hadolint, runs its
commands as an ordinary user and carries the tools an agent expects. (No base image can be
pulled where these tests run; the entrypoint and the server in the container's environment
are exercised by tests/entrypoint.rs.)"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "Containerfile"


def test_the_containerfile_is_hadolint_clean():
    hadolint = pathlib.Path(sys.executable).parent / "hadolint"
    out = subprocess.run([str(hadolint), str(CONTAINERFILE)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_image_runs_as_an_ordinary_user_with_an_agents_tools():
    lines = [l.strip() for l in CONTAINERFILE.read_text().splitlines()]
    users = [l.split(None, 1)[1] for l in lines if l.startswith("USER ")]
    assert users, "the runtime stage sets a USER"
    assert users[-1].split(":")[0] not in ("root", "0"), users
    text = CONTAINERFILE.read_text()
    for tool in ("git", "python3", "build-essential"):
        assert f" {tool} " in text or f" {tool}\n" in text, tool
    assert "org.opencontainers.image.licenses" in text
