"""The candidate sandbox with real subprocesses: results, clean environment, and failures that end the child only."""

import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from irscope import childproc
from irscope.childproc import REPO_ROOT
from ladder import sandbox
from ladder.sandbox import run_sandboxed
from tests import sandbox_required

E = "tests.harness.sandbox_entries"


def test_result_messages_and_workdir():
    seen = []
    r = run_sandboxed(f"{E}:echo", {"a": [1, 2]}, timeout_s=30, on_message=seen.append)
    assert r.ok, r.summary()
    assert r.value == {"echo": {"a": [1, 2]}}
    assert [m["step"] for m in r.messages] == [1, 2]
    assert [{k: v for k, v in m.items() if k != sandbox.SENT_AFTER} for m in seen] == r.messages
    cwd = r.messages[1]["cwd"]
    assert cwd == r.messages[1]["home"] and "ladder-sandbox-" in cwd
    assert not os.path.exists(cwd), "the temporary working directory must be removed"


def test_every_message_is_dated_no_later_than_it_was_sent_however_late_the_parent_reads():
    """A busy parent (here: a callback that blocks the reading loop for a second) reads a message long after it was
    sent; its SENT_AFTER still precedes the send, so a timing window built from it cannot come out too short."""
    seen: list[tuple[dict, float]] = []

    def slow(msg: dict) -> None:
        seen.append((dict(msg), time.monotonic()))
        if msg["step"] == 0:
            time.sleep(1.0)

    r = run_sandboxed(f"{E}:dated_messages", {}, timeout_s=30, on_message=slow)
    assert r.ok, r.summary()
    assert [m["step"] for m, _ in seen] == [0, 1, 2]
    for msg, received in seen:
        assert msg[sandbox.SENT_AFTER] <= msg["sent_at"] <= received  # the child's forged 0.0 was overwritten
    late, received = seen[1]
    assert received - late["sent_at"] > 0.5  # it waited in the channel while the parent was busy
    assert late[sandbox.SENT_AFTER] != 0.0


def test_stdout_and_stderr_do_not_mix_with_results():
    r = run_sandboxed(f"{E}:print_some", {}, timeout_s=30)
    assert r.ok and r.value == 7
    assert "hello from the child" in r.stdout_tail and "to stderr" in r.stderr_tail


def test_environment_is_clean(monkeypatch):
    for name, value in {
        "OPENAI_API_KEY": "sk-1",
        "ANTHROPIC_API_KEY": "a",
        "GITHUB_TOKEN": "t",
        "MY_SECRET": "s",
        "DB_PASSWORD": "p",
        "HTTPS_PROXY": "http://p:1",
        "http_proxy": "http://p:2",
        "NO_PROXY": "x",
        "TRITON_API_KEY": "k",
        "RANDOM_SETTING": "r",
        "TRITON_CACHE_DIR": "/tmp/tc",
        "CUDA_VISIBLE_DEVICES": "0",
    }.items():
        monkeypatch.setenv(name, value)
    r = run_sandboxed(f"{E}:environment", {}, timeout_s=30, extra_env={"TRITON_INTERPRET": "1", "HF_TOKEN": "x"})
    assert r.ok, r.summary()
    env = r.value
    for gone in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "MY_SECRET",
        "DB_PASSWORD",
        "HTTPS_PROXY",
        "http_proxy",
        "NO_PROXY",
        "TRITON_API_KEY",
        "RANDOM_SETTING",
        "HF_TOKEN",
    ):
        assert gone not in env, gone
    assert env["TRITON_CACHE_DIR"] == "/tmp/tc" and env["CUDA_VISIBLE_DEVICES"] == "0"
    assert env["TRITON_INTERPRET"] == "1" and env["PYTHONPATH"].split(os.pathsep)[0] == str(childproc.REPO_ROOT)
    assert not any(m in k.upper() for k in env for m in ("KEY", "TOKEN", "SECRET", "PASSWORD", "PROXY"))


def test_timeout_kills_the_process_group():
    t0 = time.monotonic()
    r = run_sandboxed(f"{E}:hang_with_grandchild", {}, timeout_s=3)
    assert r.status == sandbox.TIMEOUT and time.monotonic() - t0 < 15
    grandchild = r.messages[0]["grandchild"]
    time.sleep(0.2)
    assert not _alive(grandchild), "the grandchild survived the kill"


def _alive(pid: int) -> bool:
    """Running and not a zombie (a container's init may be slow to reap the killed grandchild)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
    except FileNotFoundError:
        return False
    state = next(line.split()[1] for line in status.splitlines() if line.startswith("State:"))
    return state not in ("Z", "X")


def test_silence_timeout_spares_a_job_that_reports_progress():
    r = run_sandboxed(f"{E}:progress_then_stall", {}, timeout_s=60, silence_s=1.5)
    assert r.status == sandbox.SILENT
    assert [m["tick"] for m in r.messages] == [0, 1, 2, 3]
    assert r.seconds < 20


@pytest.mark.parametrize(
    ("entry", "status", "check"),
    [
        ("segfault", sandbox.CRASHED, lambda r: r.signal == "SIGSEGV" and r.messages == [{"about_to": "segfault"}]),
        ("hard_exit", sandbox.CRASHED, lambda r: r.returncode == 0 and "without a result" in r.detail),
        ("system_exit", sandbox.EXCEPTION, lambda r: r.error["type"] == "SystemExit"),
        (
            "raise_error",
            sandbox.EXCEPTION,
            lambda r: "candidate says no" in r.error["message"] and "ValueError" in r.error["traceback"],
        ),
    ],
)
def test_crashes_end_the_candidate_only(entry, status, check):
    r = run_sandboxed(f"{E}:{entry}", {}, timeout_s=30)
    assert r.status == status, r.summary()
    assert check(r), r


def test_output_flood_is_cut():
    r = run_sandboxed(f"{E}:flood_stdout", {}, timeout_s=60, max_output_bytes=1 << 20)
    assert r.status == sandbox.FLOOD
    assert r.output_bytes > 1 << 20 and len(r.stdout_tail) <= 16384


def test_bad_entry_is_reported_not_raised():
    r = run_sandboxed(f"{E}:no_such_function", {}, timeout_s=30)
    assert r.status == sandbox.EXCEPTION and r.error["type"] == "AttributeError"
    with pytest.raises(ValueError, match=r"package\.module:function"):
        run_sandboxed("no_colon", {}, timeout_s=1)


def test_a_writable_file_in_a_private_temporary_folder_is_reachable_when_confined(tmp_path):
    """A GPU lock file lives in a folder mkdtemp made (mode 0700) under /tmp: the confined child, dropped to an
    id of its own, must reach it through the folders bwrap creates for the bind (seen on the H200: permission
    denied when /tmp's tmpfs was mounted after them)."""
    from ladder import confine

    confinement = sandbox_required.confinement()
    with tempfile.TemporaryDirectory(prefix="ladder-lock-") as private:
        lock = confine.shared_file(Path(private) / "gpu.lock")
        r = run_sandboxed(
            "tests.harness.sandbox_entries:append_to",
            {"path": str(lock)},
            timeout_s=120,
            confinement=confinement,
            writable=[lock],
        )
        assert r.ok, r.summary() + r.stderr_tail
        assert lock.read_text() == "from the sandbox\n"


def test_a_sandbox_without_a_gpu_bounds_shared_mappings_too():
    """RLIMIT_DATA misses an anonymous shared mapping (seen on the H200, where a 53 GB one fit in its RAM); a
    CPU-only sandbox bounds the address space as well. 4 GiB fits this machine's memory, not a 2 GiB bound."""
    from dataclasses import replace

    confinement = sandbox_required.confinement()
    small = replace(confinement, limits=replace(confinement.limits, memory_bytes=1 << 30))
    payload = {"bytes": 4 << 30}
    assert run_sandboxed(f"{E}:map_shared", payload, timeout_s=120, confinement=small).ok  # RLIMIT_DATA: passes
    r = run_sandboxed(f"{E}:map_shared", payload, timeout_s=120, confinement=small.without_gpu())
    assert r.status == sandbox.EXCEPTION and "Cannot allocate memory" in r.error["message"], r.summary()


def test_a_confined_child_reads_bytecode_a_trusted_child_compiled_and_cannot_write_it(tmp_path, monkeypatch):
    """Without a cache of bytecode, every runner compiled torch's modules from source where the installation
    ships no .pyc files (8 s each on the H200 machine). The cache a confined child reads is filled by a trusted
    child only (the entry module's warm()), and is read-only in there: no candidate plants bytecode for the next."""

    confinement = sandbox_required.confinement()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    r = run_sandboxed(f"{E}:bytecode", {}, timeout_s=120, confinement=confinement)
    assert r.ok, r.summary()
    cache = tmp_path / "cache" / "irscope" / "bytecode" / "sandbox"
    assert r.value["prefix"] == str(cache)
    assert r.value["dont_write"] and r.value["warmed"] and r.value["own_module_cached"]
    assert r.value["write"] in ("EROFS", "EACCES")
    assert not (cache / "planted.pyc").exists()


def test_trusted_children_keep_bytecode_in_the_cache_not_beside_the_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "fresh_module.py").write_text("VALUE = 1\n")
    code = "import importlib.util, fresh_module; print(importlib.util.cache_from_source(fresh_module.__file__))"
    env = childproc.child_env(tmp_path, {"PYTHONPATH": str(src)})
    r = childproc.run([sys.executable, "-c", code], env=env, cwd=tmp_path, timeout_s=60)
    assert r.returncode == 0, r.stderr
    cached = Path(r.stdout.strip())
    assert cached.is_relative_to(tmp_path / "cache" / "irscope" / "bytecode" / "children") and cached.is_file()
    assert not (src / "__pycache__").exists()


def test_a_confined_runner_starts_from_a_copy_of_the_trusted_triton_seed_and_cannot_write_the_seed():
    """Each confined runner built Triton's driver module and its launchers with the C compiler, its cache being
    empty; it now copies a cache a trusted child built (ladder.harness.triton_seed) into its own before any
    candidate code exists in it. The seed is read-only in there: no candidate plants a binary for the next."""
    from ladder.harness import triton_seed
    from ladder.harness.worker import SEED_ENV

    confinement = sandbox_required.confinement()
    cache = triton_seed.seed_root() / "cache"
    (cache / "entry").mkdir(parents=True)
    (cache / "entry" / "cuda_utils.so").write_bytes(b"built by a trusted child")
    triton_seed.share(cache)
    r = run_sandboxed(
        f"{E}:seeded_cache",
        {},
        timeout_s=120,
        confinement=confinement,
        read_only=[cache],
        extra_env={SEED_ENV: str(cache)},
    )
    assert r.ok, r.summary() + r.stderr_tail
    assert r.value["files"] == ["entry/cuda_utils.so"] and r.value["cache"] != str(cache)
    assert r.value["seed_write"] in ("EROFS", "EACCES") and r.value["own_write"] == "written"
    assert sorted(p.name for p in (cache / "entry").iterdir()) == ["cuda_utils.so"]


def test_a_runners_warm_up_imports_what_its_first_kernel_compile_imports(tmp_path):
    """The bytecode cache holds what `warm()` imports; a module first imported later compiles from source in every
    runner. A kernel's first compile imports Triton's code generator and with it 38 modules of gluon (0.3 s a
    runner): warm() imports them."""
    code = textwrap.dedent(
        """
        import sys
        import triton, triton.language as tl
        from triton.backends.compiler import GPUTarget
        from ladder.harness import worker

        @triton.jit
        def double(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

        worker.warm()
        before = set(sys.modules)
        signature = {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
        src = triton.compiler.ASTSource(fn=double, signature=signature, constexprs={"BLOCK": 128})
        triton.compile(src, target=GPUTarget("cuda", 90, 32))
        print(sorted(m for m in set(sys.modules) - before if m.startswith(("triton", "torch"))))
        """
    )
    script = tmp_path / "first_compile.py"  # a file: Triton reads a kernel's source
    script.write_text(code)
    env = childproc.child_env(tmp_path, {"TRITON_INTERPRET": "0", "PYTHONPATH": str(REPO_ROOT)})
    r = childproc.run([sys.executable, str(script)], env=env, cwd=REPO_ROOT, timeout_s=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
