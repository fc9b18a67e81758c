"""`compiler-index fetch`: a shallow clone of the Triton release branch matching a version, then a check that it is
that version. Fails fast, with the manual alternative, where the repository host cannot be reached.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from compiler_index.sources import is_triton_checkout

TRITON_URL = "https://github.com/triton-lang/triton.git"
CONNECT_TIMEOUT_S = 5.0
CLONE_TIMEOUT_S = 900


class FetchError(RuntimeError):
    pass


@dataclass
class FetchResult:
    path: Path
    branch: str
    version: str  # python/triton/__init__.py __version__
    commit: str
    seconds: float


def release_branch(version: str) -> str:
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?(?:\w*)", version)
    if not m:
        raise FetchError(f"--triton-version {version!r} is not a version like 3.6.0")
    return f"release/{m.group(1)}.{m.group(2)}.x"


KNOWN_COMMITS = {"3.6.0": "7c56a5e4"}  # release tips; triton-lang/triton-windows carries these branches unchanged


def manual_hint(version: str, into: Path) -> str:
    commit = KNOWN_COMMITS.get(version)
    pinned = (
        (
            f" (for {version}: commit {commit}, also in triton-lang/triton-windows: "
            f"`git archive {commit} | tar x -C {into}`)"
        )
        if commit
        else ""
    )
    return (
        f"get the sources another way and put them in {into}: any checkout of triton-lang/triton branch "
        f"{release_branch(version)}{pinned}, or a source archive of that branch unpacked there; then "
        f"`compiler-index build --source {into}`"
    )


def reachable(url: str, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """None when a TCP connection to the URL's host opens, else why not. Local paths and file:// need none."""
    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        return None
    host, port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
    if host is None:
        return f"no host in {url}"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as e:
        return f"cannot connect to {host}:{port} ({e.strerror or type(e).__name__})"


def checkout_version(path: Path) -> str | None:
    init = path / "python" / "triton" / "__init__.py"
    if not init.exists():
        return None
    m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", init.read_text())
    return m.group(1) if m else None


def verify(path: Path, version: str) -> str:
    """The checkout's version; FetchError unless it is a Triton source tree of `version`."""
    if not is_triton_checkout(path) or not (path / "python" / "src" / "passes.cc").exists():
        raise FetchError(f"{path} is not a Triton source checkout (no include/triton, lib, python/src/passes.cc)")
    found = checkout_version(path)
    if found != version:
        raise FetchError(f"{path} holds Triton {found or '(unknown version)'}, not {version}")
    return found


def fetch(version: str, into: str | Path, url: str = TRITON_URL, timeout: float = CLONE_TIMEOUT_S) -> FetchResult:
    into = Path(into)
    branch = release_branch(version)
    t0 = time.perf_counter()
    if into.exists() and any(into.iterdir()):
        found = verify(into, version)  # already there: accept it if it is the right version
        return FetchResult(into, branch, found, _head(into), time.perf_counter() - t0)
    why = reachable(url)
    if why is not None:
        raise FetchError(f"cannot fetch Triton {version}: {why}. {manual_hint(version, into)}")
    into.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    cmd = ["git", "clone", "--depth", "1", "--branch", branch, "--single-branch", url, str(into)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise FetchError(
            f"git clone of {url} ({branch}) took longer than {timeout:.0f} s; {manual_hint(version, into)}"
        ) from None
    except FileNotFoundError:
        raise FetchError(f"git is not installed; {manual_hint(version, into)}") from None
    if proc.returncode != 0:
        raise FetchError(
            f"git clone of {url} ({branch}) failed: {proc.stderr.strip()[-500:]}; {manual_hint(version, into)}"
        )
    found = verify(into, version)
    return FetchResult(into, branch, found, _head(into), time.perf_counter() - t0)


def _head(path: Path) -> str:
    if not (path / ".git").exists():
        return ""
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""
