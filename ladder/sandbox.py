"""Run untrusted Python (candidate kernels, LLM-written code) in a subprocess that can fail alone.

`run_sandboxed("pkg.module:function", payload, timeout_s=...)` starts `python -m ladder.sandbox` through
irscope.childproc: in a new process group, in a fresh temporary working directory (also its HOME and TMPDIR),
with the allowlisted environment (`child_env`: no credentials, no proxy settings). The child imports the entry
point and calls `function(payload, emit)`; `emit(dict)` sends one JSON line over a dedicated pipe (not stdout,
which the candidate may scribble on), and the return value is sent last.

Whatever the candidate does ends that candidate only: a hang (total timeout, or `silence_s` without a message)
or output flooding kills the whole process group; a segfault, `os._exit`, a CUDA fault or a `sys.exit` inside
the entry point is reported as a status. The parent never raises for anything the child does.

With a `confinement` (ladder.confine: bubblewrap namespaces, a read-only allowlisted file system, no network,
rlimits) the child is also walled off from the machine. Nothing the child reports decides a verdict: whatever
runs inside may forge every message, so callers judge what it produced (ladder.harness.evaluate compares its
output files in the parent).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscope.childproc import child_env, kill_group, spawn
from ladder.confine import Confinement, enter, prepare_scratch, sandbox_uid

OK, EXCEPTION, TIMEOUT, SILENT, FLOOD, CRASHED = "ok", "exception", "timeout", "silent", "output_flood", "crashed"
_MARK = "_sandbox"
_TAIL = 16_384  # bytes of stdout/stderr kept for the report
SENT_AFTER = "_sent_after"  # set by the parent on every message: the child cannot have sent it before this time


@dataclass
class SandboxResult:
    """`status`: ok | exception (the entry point raised, SystemExit included) | timeout | silent (no message
    within silence_s) | output_flood | crashed (died without a final message: signal, os._exit, abort)."""

    status: str
    value: Any = None  # the entry point's return value when status == ok
    messages: list[dict] = field(default_factory=list)  # what emit() sent, in order (final marker excluded)
    error: dict | None = None  # {"type", "message", "traceback"} when status == exception
    returncode: int | None = None
    signal: str | None = None  # e.g. "SIGSEGV" when the child died of a signal
    stdout_tail: str = ""
    stderr_tail: str = ""
    output_bytes: int = 0
    seconds: float = 0.0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK

    def summary(self) -> str:
        if self.ok:
            return "ok"
        if self.status == EXCEPTION and self.error:
            return f"exception: {self.error.get('type')}: {self.error.get('message', '')[:300]}"
        return f"{self.status}: {self.detail}"


def run_sandboxed(
    entry: str,
    payload: Any,
    *,
    timeout_s: float,
    silence_s: float | None = None,
    max_output_bytes: int = 8 << 20,
    max_message_bytes: int = 64 << 20,
    extra_env: Mapping[str, str] | None = None,
    python: str = sys.executable,
    on_message: Callable[[dict], None] | None = None,
    confinement: Confinement | None = None,
    scratch: Path | None = None,
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
) -> SandboxResult:
    """Run `entry` ("pkg.module:function") on `payload` (JSON-serializable) in a sandboxed subprocess.

    timeout_s: wall-clock limit for the whole run. silence_s: limit between two messages (from the start to the
    first message too), so a long job that reports progress is not cut but a hung step is. max_output_bytes:
    stdout + stderr together. on_message: called in the parent for each message as it arrives, with SENT_AFTER set
    (overwriting any value the child gave): a monotonic time before which the child cannot have sent it.
    confinement: run the child under it (None: a plain child process). scratch: the child's working directory,
    HOME and only writable directory, which the caller owns and reads (default: a temporary one, removed).
    read_only / writable: further paths the confined child sees (the operator's files; GPU lock files).
    """
    if ":" not in entry:
        raise ValueError(f"sandbox entry {entry!r} must be 'package.module:function'")
    t0 = time.monotonic()
    with contextlib.ExitStack() as dirs:
        workdir = scratch or Path(dirs.enter_context(tempfile.TemporaryDirectory(prefix="ladder-sandbox-")))
        payload_path = workdir / "payload.json"
        payload_path.write_text(json.dumps(payload))
        env = child_env(workdir, extra_env)
        read_fd, write_fd = os.pipe()
        argv = [python, "-P", "-m", "ladder.sandbox", entry, str(write_fd), str(payload_path)]  # -P: not the cwd
        if confinement is not None:
            uid = sandbox_uid()
            prepare_scratch(workdir, uid)
            # caches inside the scratch: the host's are read-only in there, and a shared one would let one
            # candidate plant compiled code for the next
            for name, sub in (("TRITON_CACHE_DIR", "triton-cache"), ("TORCHINDUCTOR_CACHE_DIR", "inductor-cache")):
                env[name] = str(workdir / sub)
            env["XDG_CACHE_HOME"] = str(workdir / ".cache")
            argv.append(json.dumps(confinement.child_limits(uid)))
            argv = confinement.command(argv, scratch=workdir, env=env, read_only=read_only, writable=writable)
        with contextlib.ExitStack() as stack:
            try:
                proc = stack.enter_context(
                    spawn(
                        argv,
                        env=env,
                        cwd=workdir,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        pass_fds=(write_fd,),
                    )
                )
            finally:
                os.close(write_fd)  # the child's copy is the only writer: its end closes the channel
            return _supervise(proc, read_fd, t0, timeout_s, silence_s, max_output_bytes, max_message_bytes, on_message)


def _supervise(
    proc: subprocess.Popen,
    channel_fd: int,
    t0: float,
    timeout_s: float,
    silence_s: float | None,
    max_output: int,
    max_messages: int,
    on_message: Callable[[dict], None] | None,
) -> SandboxResult:
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None
    streams = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr", channel_fd: "channel"}
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    tails = {"stdout": bytearray(), "stderr": bytearray()}
    output_bytes = message_bytes = 0
    pending = bytearray()
    # The channel was last seen empty at `drained`: a message first seen in a later read was sent after it. A
    # busy parent reads late, so receipt times alone would date a message too late (a timing window too short).
    drained = t0
    pending_since = t0  # `drained` when the oldest byte still in `pending` had not arrived yet
    messages: list[dict] = []
    final: dict | None = None
    killed: tuple[str, str] | None = None  # (status, detail)
    last_message = t0
    exited_at: float | None = None
    while sel.get_map():
        now = time.monotonic()
        if killed is None:
            if now - t0 > timeout_s:
                killed = (TIMEOUT, f"no result within {timeout_s:g} s")
            elif silence_s is not None and final is None and now - last_message > silence_s:
                killed = (SILENT, f"no message for {silence_s:g} s")
            if killed:
                kill_group(proc)
        if proc.poll() is not None:
            exited_at = exited_at or now
            if now - exited_at > 2.0:  # a grandchild still holds a pipe open: stop waiting for it
                kill_group(proc)
                break
        for key, _ in sel.select(timeout=0.05):
            fd = key.fd
            read_at = time.monotonic()  # a short read took all the channel held: the rest was sent after this
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(fd)
                continue
            name = streams[fd]
            if name == "channel":
                if not pending:
                    pending_since = drained
                if len(chunk) < 65536:
                    drained = read_at
                message_bytes += len(chunk)
                pending += chunk
                while b"\n" in pending:
                    line, _, rest = pending.partition(b"\n")
                    pending = bytearray(rest)
                    msg = _parse(line)
                    last_message = time.monotonic()
                    if msg.get(_MARK):
                        final = msg
                    else:
                        messages.append(msg)
                        if on_message is not None:
                            on_message({**msg, SENT_AFTER: pending_since})
                if message_bytes > max_messages and killed is None:
                    killed = (FLOOD, f"more than {max_messages} bytes of messages")
                    kill_group(proc)
            else:
                output_bytes += len(chunk)
                tail = tails[name]
                tail += chunk
                del tail[:-_TAIL]
                if output_bytes > max_output and killed is None:
                    killed = (FLOOD, f"more than {max_output} bytes on stdout/stderr")
                    kill_group(proc)
    sel.close()
    with contextlib.suppress(OSError):
        os.close(channel_fd)
    returncode = proc.wait()
    kill_group(proc)  # leftovers of a finished child must not outlive it
    result = SandboxResult(
        status=CRASHED,
        messages=messages,
        returncode=returncode,
        signal=_signal_name(returncode),
        stdout_tail=tails["stdout"].decode(errors="replace"),
        stderr_tail=tails["stderr"].decode(errors="replace"),
        output_bytes=output_bytes,
        seconds=round(time.monotonic() - t0, 3),
    )
    if killed is not None:
        result.status, result.detail = killed
    elif final is not None and final[_MARK] == "return":
        result.status, result.value = OK, final.get("value")
    elif final is not None and final[_MARK] == "exception":
        result.status, result.error = EXCEPTION, {k: final.get(k) for k in ("type", "message", "traceback")}
        result.detail = f"{final.get('type')}: {final.get('message')}"
    else:
        how = f"signal {result.signal}" if result.signal else f"exit code {returncode}"
        result.detail = f"the process ended ({how}) without a result"
    return result


def _signal_name(returncode: int) -> str | None:
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _parse(line: bytes | bytearray) -> dict:
    try:
        msg = json.loads(line)
    except ValueError:
        return {"unparsable": line[:500].decode(errors="replace")}
    return msg if isinstance(msg, dict) else {"value": msg}


def _child_main(entry: str, channel_fd: int, payload_path: str, confine_spec: str | None) -> None:
    """The sandboxed side: limits (and a user id of its own when confined) or at least no core dumps, call the
    entry point, send its result, leave without cleanup."""
    import resource

    if confine_spec:
        enter(json.loads(confine_spec))  # before the entry's module, and so any candidate code, is imported
    else:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    channel = os.fdopen(channel_fd, "w", buffering=1)

    def emit(obj: dict) -> None:
        channel.write(json.dumps(obj, default=str) + "\n")
        channel.flush()

    try:
        payload = json.loads(Path(payload_path).read_text())
        module_name, func_name = entry.split(":", 1)
        func = getattr(importlib.import_module(module_name), func_name)
        value = func(payload, emit)
        emit({_MARK: "return", "value": value})
    except BaseException as e:  # SystemExit and KeyboardInterrupt from the candidate are results too
        emit(
            {
                _MARK: "exception",
                "type": type(e).__name__,
                "message": str(e)[:4000],
                "traceback": traceback.format_exc()[-16000:],
            }
        )
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    channel.close()
    os._exit(0)  # skip interpreter teardown: candidate threads or CUDA teardown must not hang the exit


if __name__ == "__main__":
    _child_main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
