"""What a confined child sees of the machine, read from inside it, for each isolation the sandbox's command line
asks of bubblewrap: its own process, network, IPC, host-name and cgroup namespaces, its own session, no capability
but the two `enter()` needs to drop root, only the environment it was given, bounded temporary file systems, the
scratch as its working directory. Each assertion fails when its flag is missing from `Confinement.command`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ladder import confine
from tests import sandbox_required

PROBE = r"""
import json, os
status = dict(l.rstrip("\n").split(":\t", 1) for l in open("/proc/self/status") if ":\t" in l)
tmp, scratch = os.statvfs("/tmp"), os.statvfs(os.getcwd())
print(json.dumps({
    "ns": {n: os.readlink(f"/proc/self/ns/{n}") for n in ("pid", "net", "ipc", "uts", "cgroup")},
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "interfaces": sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]),
    "session": os.getsid(0),  # 0: the session's leader is outside this process namespace
    "caps": {k: int(v, 16) for k, v in status.items() if k.startswith("Cap")},
    "no_new_privs": status["NoNewPrivs"],
    "env": dict(os.environ),
    "tmp_bytes": tmp.f_blocks * tmp.f_frsize,
    "scratch_bytes": scratch.f_blocks * scratch.f_frsize,
    "cwd": os.getcwd(),
    "dev": sorted(os.listdir("/dev")),
}))
"""
SETUID_SETGID = (1 << 6) | (1 << 7)  # CAP_SETGID (6) and CAP_SETUID (7)


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict:
    confinement = sandbox_required.confinement()
    limits = confine.Limits(scratch_bytes=64 << 20, tmp_bytes=32 << 20)
    confinement = confine.Confinement(confinement.bwrap, limits)
    scratch = tmp_path_factory.mktemp("isolation") / "scratch"
    scratch.mkdir()
    uid = confine.sandbox_uid()
    confine.prepare_scratch(scratch, uid)
    env = {"PATH": "/usr/bin:/bin", "ONLY_THIS": "given"}
    argv = [sys.executable, "-c", PROBE]
    done = subprocess.run(
        confinement.command(argv, scratch=scratch, env=env, uid=uid),
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SECRET_TOKEN": "never inside"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {**json.loads(done.stdout), "scratch": str(scratch)}


def test_every_namespace_is_the_childs_own(seen):
    mine = {n: os.readlink(f"/proc/self/ns/{n}") for n in seen["ns"]}
    assert {n for n in seen["ns"] if seen["ns"][n] == mine[n]} == set()
    assert max(seen["pids"]) < 10  # a process tree of its own: bwrap and the child, nothing of the host
    assert seen["interfaces"] == ["lo"]  # no network but its own loopback


def test_a_session_of_its_own_and_no_capability_but_those_to_drop_root(seen):
    assert seen["session"] != 0  # --new-session: a session led inside the sandbox, no terminal of the parent's
    # --cap-drop ALL, then only what enter() needs; the bounding set stays, but no execve can raise privileges
    held = {k: v & ~SETUID_SETGID for k, v in seen["caps"].items() if k != "CapBnd"}
    assert held == {"CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapAmb": 0} and seen["no_new_privs"] == "1"


def test_only_the_given_environment_reaches_the_child(seen):
    # besides what Python's locale coercion (LC_CTYPE) and bwrap's --chdir (PWD) set: nothing of the parent's
    env = {k: v for k, v in seen["env"].items() if k not in ("LC_CTYPE", "PWD")}
    assert env == {"PATH": "/usr/bin:/bin", "ONLY_THIS": "given", "USER": "sandbox", "LOGNAME": "sandbox"}


def test_its_temporary_file_systems_are_bounded_and_the_scratch_is_its_working_directory(seen):
    assert seen["tmp_bytes"] == 32 << 20 and seen["scratch_bytes"] == 64 << 20
    assert seen["cwd"] == seen["scratch"]
    assert {"null", "zero", "urandom", "shm"} <= set(seen["dev"])  # a minimal /dev of its own
