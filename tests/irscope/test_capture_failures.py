"""Bad input gets a clear error and loses nothing: compile failures, a killed capture, the CLI's errors."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from triton import knobs

import irscope
from irscope.capture import CompileError
from irscope.capture.loader import load_module
from irscope.cli import main as cli_main
from tests.proctree import descendants, state, survivors

FAILING = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def bad_asm(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.inline_asm_elementwise("bogus.instr.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True,
                                      pack=1)
        tl.store(x_ptr + offs, y)


    @triton.jit
    def bad_frontend(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, tl.dot(x, x))


    not_a_kernel = 3
""")


@pytest.fixture()
def failing_file(tmp_path):
    path = tmp_path / "failing.py"
    path.write_text(FAILING)
    return path


def test_ptxas_failure_keeps_every_pass(failing_file, tmp_path):
    out = tmp_path / "dump"
    rc = cli_main(
        ["dump", f"{failing_file}:bad_asm", "--arg", "x_ptr=*fp32", "--constexpr", "BLOCK=128", "--out", str(out)]
    )
    assert rc == 1
    traj = irscope.load(out)
    assert traj.error is not None and traj.error.stage == "cubin"
    assert "bogus" in traj.error.message
    assert traj.stage_output("ptx").text.count("bogus.instr.f32") == 1
    assert len(list(traj.passes())) >= 55  # every MLIR pass and the PTX are kept


def test_frontend_failure_is_reported(failing_file):
    mod = load_module(failing_file, "failing_mod")
    with pytest.raises(CompileError, match="equal ranks") as info:
        irscope.capture(mod.bad_frontend, "*fp32", BLOCK=128)
    assert info.value.trajectory.snapshots == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["dump", "missing.py:k", "--out", "x"], "no such file"),
        (["dump", "{f}:nope", "--out", "x"], "bad_asm"),  # lists the kernels that exist
        (["dump", "{f}:not_a_kernel", "--out", "x"], "not a @triton.jit"),
        (["dump", "{f}:bad_asm", "--arg", "x_ptr=*fp99", "--constexpr", "BLOCK=8", "--out", "x"], "unknown dtype"),
        (["dump", "{f}:bad_asm", "--arg", "x_ptr", "--out", "x"], "NAME=VALUE"),
        (["dump", "{f}:bad_asm", "--arg", "x_ptr=*fp32", "--out", "x"], "missing argument"),
        (
            ["dump", "{f}:bad_asm", "--arg", "x_ptr=*fp32", "--constexpr", "BLOCK=8", "--num-warps", "3", "--out", "x"],
            "power of 2",
        ),
        (["dump", "{f}:bad_asm", "--target", "tpu:1", "--out", "x"], "unknown target"),
        (["ls", "/nonexistent/dir"], "no such directory"),
    ],
)
def test_cli_errors(args, message, failing_file, capsys, tmp_path):
    args = [a.replace("{f}", str(failing_file)) for a in args]
    args = [str(tmp_path / "x") if a == "x" else a for a in args]
    assert cli_main(args) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_killed_capture_keeps_finished_passes(tmp_path):
    """SIGKILL mid-compile: the journal still yields every pass journaled before the kill (a journal line is
    journaled once written to the kernel; no fsync is needed for a process death)."""
    out = tmp_path / "killed"
    script = textwrap.dedent(f"""
        import irscope
        from irscope.examples import EXAMPLES
        ex = EXAMPLES["matmul"]
        irscope.capture(ex.kernel, target="cuda:90", out_dir={str(out)!r}, kernel_kwargs=ex.args, **ex.options)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))
    journal = out / "journal.jsonl"
    deadline = time.time() + 120
    seen = 0
    while time.time() < deadline:
        seen = journal.read_text().count('"snapshot"') if journal.exists() else 0
        if seen >= 20:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lines = journal.read_text().splitlines()
    traj = irscope.load(out)
    assert not traj.complete
    assert traj.error is not None and "ended before the compile finished" in traj.error.message
    assert len(traj.snapshots) >= seen >= 20  # nothing seen in the journal before the kill is lost
    assert len(traj.snapshots) == sum('"snapshot"' in line for line in lines if line.endswith("}"))
    assert all(s.text for s in traj.snapshots)  # every journaled snapshot's IR file is readable


@pytest.mark.parametrize(("ending", "late_s"), [("kill -9", 60), ("exit", 2)])
def test_a_background_disassembly_dies_with_a_killed_capture_and_finishes_after_a_normal_exit(tmp_path, ending, late_s):
    """nvdisasm runs in the background once the trajectory is written. `kill -9` of the capturing process takes it
    along (a killed tool leaves nothing running) and the trajectory still yields its SASS on load; after a normal
    exit it finishes the file, as it did when it ran detached."""
    # the real one, late (but for Triton's --version probe): the process ends while it runs
    slow = tmp_path / "slow-nvdisasm"
    slow.write_text(f'#!/bin/sh\n[ "$1" = --version ] || sleep {late_s}\nexec {knobs.nvidia.nvdisasm.path} "$@"\n')
    slow.chmod(0o755)
    out = tmp_path / "traj"
    script = textwrap.dedent(f"""
        import os, signal
        import irscope
        from irscope.examples import EXAMPLES
        ex = EXAMPLES["matmul"]
        irscope.capture(ex.kernel, target="cuda:90", out_dir={str(out)!r}, kernel_kwargs=ex.args, **ex.options)
        print(os.getpid(), flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)  # frozen until the test has seen the disassembly running
        if {ending == "kill -9"}:
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    env = {**os.environ, "TRITON_NVDISASM_PATH": str(slow)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    try:
        capturing = int(proc.stdout.readline())
        while state(capturing) not in ("T", "t"):
            time.sleep(0.01)
        deadline = time.monotonic() + 30
        while not any(b"sleep" in cmdline(p) for p in descendants(capturing)):  # the disassembly, started
            assert time.monotonic() < deadline, "the background disassembly never started"
            time.sleep(0.05)
    except BaseException:
        proc.kill()  # a frozen process left behind by a failure here: kill -9 takes its disassembly along
        raise
    running = descendants(capturing)
    os.kill(capturing, signal.SIGCONT)
    sass = out / "artifacts" / "sass.sass"
    if ending == "kill -9":
        assert proc.wait() == -signal.SIGKILL
        assert not survivors(running)
        assert not sass.exists()
        traj = irscope.load(out)  # the real nvdisasm again (this process's knobs): the SASS is derived on first use
        text = traj.artifacts["sass"].data
    else:
        assert proc.wait() == 0
        assert survivors(running, within_s=0.5)  # the exit did not wait for it, nor take it along
        assert not survivors(running, within_s=late_s + 30)
        text = sass.read_text()  # written by the background run alone: nothing here has read the trajectory
    assert ".visible .entry" not in text and ("HMMA" in text or "MMA" in text)
    assert not list((out / "artifacts").glob("*.part"))  # a killed run's half-written file is removed


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return b""
