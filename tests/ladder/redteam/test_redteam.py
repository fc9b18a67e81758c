"""The red-team corpus (corpus.py, and the hostile candidates of tests/ladder/candidates.py) through the validators,
exactly as a rewriter's candidate goes (`validate(op, path, workdir)`), confined as `ladder optimize` confines it.

Each attack must be CAUGHT: the validation fails with a recorded reason, and its side effect did not happen (no
secret in any result or file, nothing written outside the scratch directory, the loopback server saw no
connection, no process of it alive afterwards). The harness validator rejects them all by its static check,
unimported; the interpret validator has none, so there every attack runs in the sandbox.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from irscope.childproc import REPO_ROOT
from ladder import confine
from ladder.confine import Confinement, GiB, Limits
from ladder.validators.harness import HarnessValidator
from ladder.validators.interpret import InterpretValidator
from suite.operator import get_operator
from tests import sandbox_required
from tests.ladder import candidates
from tests.ladder.redteam.corpus import ATTACKS, BOTH, Attack

OP = get_operator("new_gelu")
SECRET = "sk-redteam-must-never-leak-7f3a"
TOKEN = f"rt{os.getpid()}x{int(time.time()) % 100000}"
# Small limits keep a fork bomb or a memory hog cheap on a CI machine; the runner itself needs well under these.
LIMITS = Limits(memory_bytes=6 * GiB, cpu_s=120, processes=256, file_bytes=256 << 20)
TIMEOUT_S = 60
HANG_TIMEOUT_S = 15  # for the attacks that only hang
HANGS = {"sleep", "candidates.spins"}
# The interpret validator checks correctness only: a correct kernel whose side effect stays inside the sandbox
# passes it (the harness rejects it); what is asserted there is that the effect did not escape.
# Correct kernels whose extra process stays inside the sandbox and dies with it: accepted or not, they did nothing
# (a fork's copy is caught by its duplicate reports only when they arrive before the sandbox ends: fork_twice
# makes them arrive).
CONTAINED = {("candidates.spawns", "interpret"), ("candidates.forks", "interpret")}
# The spinning one passes the static check: the harness's handling of hangs is tests/harness's (hangs.py).
HOSTILE = [
    Attack(f"candidates.{name}", source, via="interpret" if name == "spins" else BOTH)
    for name, source in sorted(candidates.HOSTILE.items())
]
ALL = [a for a in ATTACKS if a.name != "import_side_effect"] + HOSTILE

pytestmark = pytest.mark.skipif(sandbox_required.may_skip(), reason=f"no sandbox here: {confine.problem()}")


class Loopback:
    """A TCP server on 127.0.0.1 that counts what reaches it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def _alive_with(token: str) -> list[int]:
    """Host processes (not zombies) whose command line holds `token`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state not in ("Z", "X") and int(pid) != os.getpid():
            found.append(int(pid))
    return found


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The parent's world as a run sees it: a run directory with history.sqlite, a secret file, reference outputs,
    an API key in the environment, a loopback server; then every attack through both validators."""
    out = tmp_path_factory.mktemp("run")
    history = out / "history.sqlite"
    with sqlite3.connect(history) as db:
        db.execute("create table rounds (op text, round int, record text)")
        db.execute("insert into rounds values ('new_gelu', 1, 'accepted')")
    secret_file = out / "secret.txt"
    secret_file.write_text(SECRET)
    import torch

    torch.save(OP.reference(*OP.make_inputs(OP.small_cases[0], 0, "cpu", "random")), out / "expected.pt")
    server = Loopback()
    old_key = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET
    values = {
        "TOKEN": TOKEN,
        "PORT": str(server.port),
        "OUT": str(out),
        "HISTORY": str(history),
        "SECRET_FILE": str(secret_file),
        "HOME": os.path.expanduser("~"),
        "REPO": str(REPO_ROOT),
    }
    history_digest = hashlib.sha256(history.read_bytes()).hexdigest()
    confinement = Confinement(confine.find_bwrap() or "", LIMITS)
    validators = {
        "harness": HarnessValidator(seeds=1, timeout_s=TIMEOUT_S, confinement=confinement),
        "interpret": InterpretValidator(seeds=1, timeout_s=TIMEOUT_S, confinement=confinement),
        "hang": InterpretValidator(seeds=1, timeout_s=HANG_TIMEOUT_S, confinement=confinement),
    }
    for leftover in ("/tmp/ladder-pwned", "/tmp/ladder-outside.txt"):  # what candidates.py's attacks aim at
        Path(leftover).unlink(missing_ok=True)
    jobs = [(a, via) for a in ALL for via in (("harness", "interpret") if a.via == BOTH else (a.via,))]

    def validate(job):
        attack, via = job
        work = out / "rounds" / f"{attack.name}-{via}"
        work.mkdir(parents=True)
        path = work / "candidate.py"
        path.write_text(attack.text(**values))
        validator = validators["hang" if attack.name in HANGS and via == "interpret" else via]
        return (attack.name, via), (validator.validate(OP, path, work), work)

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = dict(pool.map(validate, jobs))
    finally:
        if old_key is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old_key
        server.close()
    yield {"results": results, "server": server, "out": out, "values": values, "history_digest": history_digest}


def _texts(world, name: str) -> str:
    """Everything a validation of `name` left: its Validation and every file in its round directories."""
    parts = []
    for (attack, _via), (v, work) in world["results"].items():
        if attack == name:
            parts.append(repr(v))
            parts += [
                p.read_text(errors="replace") for p in work.rglob("*") if p.is_file() and p.name != "candidate.py"
            ]
    return "\n".join(parts)


@pytest.mark.parametrize("attack", ALL, ids=[a.name for a in ALL])
def test_every_attack_is_caught_with_a_reason(world, attack):
    for (name, via), (v, _) in world["results"].items():
        if name == attack.name and (name, via) not in CONTAINED:
            assert not v.correct, f"{name} through {via} was accepted"
            assert v.detail.strip(), f"{name} through {via}: rejected without a reason"
            if via == "harness":
                assert v.detail.startswith("static:"), f"{name}: the harness imported it: {v.detail[:300]}"
    assert SECRET not in _texts(world, attack.name)


def detail(world, name: str, via: str = "interpret") -> str:
    return world["results"][(name, via)][0].detail


def test_secrets_never_reach_the_candidate(world):
    assert "leak None" in detail(world, "env_key")  # it ran, and found no key
    assert "leak " in detail(world, "proc_environ")  # it ran, and read only the sandbox's own environments
    for name in ("secret_file", "history_read", "expected_outputs"):
        assert "No such file or directory" in detail(world, name), detail(world, name)
    assert "optional-dependencies" not in detail(world, "repo_file") and "No such file" in detail(world, "repo_file")


def test_nothing_is_written_outside_the_scratch_directory(world):
    values = world["values"]
    assert not (REPO_ROOT / "ladder" / f"redteam_{TOKEN}.py").exists()
    assert not Path(values["HOME"], f".redteam-{TOKEN}").exists()
    for path in (f"/tmp/redteam-{TOKEN}", "/tmp/ladder-pwned", "/tmp/ladder-outside.txt"):
        assert not Path(path).exists(), path
    assert not Path(values["OUT"], f"pwned-{TOKEN}").exists()
    assert hashlib.sha256(Path(values["HISTORY"]).read_bytes()).hexdigest() == world["history_digest"]
    for name in ("write_repo", "write_home", "write_run_dir", "write_history"):
        assert any(s in detail(world, name) for s in ("Read-only file system", "No such file", "Permission denied"))


def test_no_network(world):
    assert world["server"].connections == 0
    assert "socket_connect" in {n for n, _ in world["results"]}
    assert any(s in detail(world, "socket_connect") for s in ("Network is unreachable", "Connection refused"))


def test_no_process_outlives_its_validation(world):
    deadline = time.monotonic() + 5
    while _alive_with(f"sleep-{TOKEN}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _alive_with(f"sleep-{TOKEN}") == []
    forked = re.search(r"RuntimeError: forked (\d+)", detail(world, "fork_bomb"))
    assert forked and int(forked[1]) < LIMITS.processes, detail(world, "fork_bomb")


def test_resource_limits_and_hangs(world):
    assert "Cannot allocate memory" in detail(world, "memory_hog") or "MemoryError" in detail(world, "memory_hog")
    for name in HANGS:
        assert detail(world, name) == f"timed out after {HANG_TIMEOUT_S} s"


def test_forged_messages_and_patched_checkers_decide_nothing(world):
    assert "runs reported" in detail(world, "forge_final")
    assert "outside" in detail(world, "forge_runs")  # zeros where gelu was due: judged here, not there
    for name in ("patch_verify", "patch_runner"):
        assert "outside" in detail(world, name), detail(world, name)
    assert "reported twice" in detail(world, "fork_twice")


def test_import_time_code_never_runs_when_the_static_check_fails(tmp_path):
    """Unconfined on purpose: the marker it writes at import would land. The harness never imports it; the
    interpret validator (no static check) does, which proves the marker would show."""
    attack = next(a for a in ATTACKS if a.name == "import_side_effect")
    marker = tmp_path / f"imported-{TOKEN}"
    path = tmp_path / "candidate.py"
    path.write_text(attack.text(OUT=str(tmp_path), TOKEN=TOKEN))
    v = HarnessValidator(seeds=1, timeout_s=TIMEOUT_S, confinement=None).validate(OP, path, tmp_path / "h")
    assert not v.correct and v.detail.startswith("static:") and not marker.exists()
    InterpretValidator(seeds=1, timeout_s=TIMEOUT_S, confinement=None).validate(OP, path, tmp_path / "i")
    assert marker.exists()
