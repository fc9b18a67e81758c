"""What a confined candidate can write, checked by writing: exactly its scratch directory (a tmpfs of its own,
mounted at the scratch's path) and the files it was granted; every read-only bind refuses. The child runs as the
sandbox's own unprivileged id (ladder.confine: sandbox_uid, enter), and the read-only folder given here is
world-writable on the host, so that only the bind's read-only mount stands between the child and it: permissions
cannot hide a bind made writable by mistake (as they would for root-owned /usr). Then the host is checked for
what reached it: the granted file's line only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from irscope.childproc import python_path
from ladder import confine
from tests import sandbox_required

# The child: enter the sandbox's id and limits, then try to write each path it is given (a directory: create a
# file in it; a file: append a line) and report, per path, "written" or the error's name, with its ids.
PROBE = """
import errno, json, os, sys
from ladder.confine import enter
enter(json.loads(sys.argv[1]))
mark, paths = sys.argv[2], json.loads(sys.argv[3])
seen = {}
for p in paths:
    try:
        if os.path.isdir(p):
            with open(os.path.join(p, mark), "x") as f:
                f.write("from the sandbox\\n")
        else:
            with open(p, "a") as f:
                f.write("from the sandbox\\n")
        seen[p] = "written"
    except OSError as e:
        seen[p] = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps({"uid": os.getuid(), "euid": os.geteuid(), "seen": seen}))
"""


def binds(argv: list[str], option: str) -> list[str]:
    """The destinations of every `option SRC DST` of a bwrap command line."""
    return [argv[i + 2] for i, a in enumerate(argv) if a == option]


@pytest.fixture(scope="module")
def confinement() -> confine.Confinement:
    return sandbox_required.confinement()


def test_only_the_scratch_and_the_granted_files_are_writable(confinement: confine.Confinement, tmp_path: Path):
    scratch, shared, mark = tmp_path / "scratch", tmp_path / "ro", f"probe-{uuid.uuid4().hex}"
    scratch.mkdir()
    uid = confine.sandbox_uid()
    confine.prepare_scratch(scratch, uid)
    shared.mkdir()
    (shared / "data.txt").write_text("as written\n")
    shared.chmod(0o777)  # writable by anyone on the host: only the read-only bind may refuse the child
    (shared / "data.txt").chmod(0o666)
    granted = confine.shared_file(tmp_path / "granted.lock")
    argv_probe = [sys.executable, "-c", PROBE, json.dumps(confinement.child_limits(uid)), mark]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": python_path()}
    cmd = confinement.command([*argv_probe, "[]"], scratch=scratch, env=env, read_only=[shared], writable=[granted])

    # what the command line grants: the granted file bound writable, the scratch a fresh tmpfs, the rest read-only
    assert binds(cmd, "--bind") == [str(granted)]
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--tmpfs"] == ["/tmp", str(scratch)]
    read_only = binds(cmd, "--ro-bind")
    assert str(shared) in read_only and "/usr" in read_only and not set(read_only) & {str(scratch), str(granted)}

    # what the child can do: each read-only bind (a folder: a new file in it; a file: appending), a file inside
    # the read-only folder, the root of its file system, its /tmp and /dev/shm, the scratch and the granted file
    probes = [*read_only, str(shared / "data.txt"), "/", "/tmp", "/dev/shm", str(scratch), str(granted)]
    cmd = confinement.command(
        [*argv_probe, json.dumps(probes)], scratch=scratch, env=env, read_only=[shared], writable=[granted]
    )
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["uid"] == report["euid"] != 0  # a dropped id, not root
    if uid is not None:
        assert report["euid"] == uid
    written = {p for p, outcome in report["seen"].items() if outcome == "written"}
    assert written == {str(scratch), str(granted)}, json.dumps(report["seen"], indent=1)
    for p in read_only:
        assert report["seen"][p] in ("EROFS", "EACCES", "EPERM"), (p, report["seen"][p])
    assert report["seen"][str(shared)] == report["seen"][str(shared / "data.txt")] == "EROFS"  # the mount refused

    # what reached the host: the granted file's line, nothing else (the scratch's file lived in its tmpfs)
    assert granted.read_text() == "from the sandbox\n"
    assert list(scratch.iterdir()) == []
    assert (shared / "data.txt").read_text() == "as written\n" and sorted(os.listdir(shared)) == ["data.txt"]
    assert not (Path("/tmp") / mark).exists()
    assert not any(Path(p, mark).exists() for p in read_only if Path(p).is_dir())
