"""Run untrusted Python (candidate kernels, LLM-written code) in a subprocess that can fail alone.

`run_sandboxed("pkg.module:function", payload, timeout_s=...)` starts `python -m ladder.sandbox` through
irscope.childproc: in a new process group, in a fresh temporary working directory (also its HOME and TMPDIR),
with the allowlisted environment (`child_env`: no credentials, no proxy settings). The child imports the entry
point and calls `function(payload, emit)`; `emit(dict)` sends one JSON line over a dedicated pipe (not stdout,
which the candidate may scribble on), and the return value is sent last.

`Session` is the same child kept in conversation: the entry is called as `function(payload, emit, commands)`,
and the caller sends it commands (`send`) and waits for the message that answers each (`until`). The harness
(ladder.harness.evaluate) drives its runner this way, one step at a time, so that the parent, not the child,
decides when the child may use the GPU.

Whatever the candidate does ends that candidate only: a hang (total timeout, or `silence_s` without a message)
or output flooding (bytes on stdout/stderr, bytes or lines of messages) kills the whole process group; a
segfault, `os._exit`, a CUDA fault or a `sys.exit` inside the entry point is reported as a status; a message that
does not parse, however it fails to, is kept as an unparsable message for the caller to blame on the child. The
parent never raises for anything the child does.

With a `confinement` (ladder.confine: bubblewrap namespaces, a read-only allowlisted file system, no network,
rlimits, a size-bounded scratch) the child is also walled off from the machine. Nothing the child reports
decides a verdict: whatever runs inside may forge every message, so callers judge what it produced
(ladder.harness.evaluate compares its outputs in the parent).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscope.childproc import bytecode_cache, child_env, kill_group, run, spawn
from ladder.confine import Confinement, enter, prepare_scratch, sandbox_uid

OK, EXCEPTION, TIMEOUT, SILENT, FLOOD, CRASHED = "ok", "exception", "timeout", "silent", "output_flood", "crashed"
_MARK = "_sandbox"
_TAIL = 16_384  # bytes of stdout/stderr kept for the report
SENT_AFTER = "_sent_after"  # set by the parent on every message: the child cannot have sent it before this time
UNPARSABLE = "unparsable"  # key of the stand-in for a line that is not a JSON object the parent could read
KEPT_MESSAGES = 10_000  # messages kept in SandboxResult.messages; later ones are passed on, not kept
EXIT_GRACE_S = 2.0  # after the child exits: how long a grandchild may hold its pipes open
WARM_TIMEOUT_S = 600.0
_WARMED: set[str] = set()
_WARMING = threading.Lock()


@dataclass
class SandboxResult:
    """`status`: ok | exception (the entry point raised, SystemExit included) | timeout | silent (no message
    within silence_s) | output_flood | crashed (died without a final message: signal, os._exit, abort)."""

    status: str
    value: Any = None  # the entry point's return value when status == ok
    messages: list[dict] = field(default_factory=list)  # what emit() sent, in order (the first KEPT_MESSAGES)
    error: dict | None = None  # {"type", "message", "traceback"} when status == exception
    returncode: int | None = None
    signal: str | None = None  # e.g. "SIGSEGV" when the child died of a signal
    stdout_tail: str = ""
    stderr_tail: str = ""
    output_bytes: int = 0
    message_count: int = 0
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


@dataclass(frozen=True)
class Bounds:
    """What one child may do before it is killed: wall time, silence between messages, bytes on stdout and stderr
    together, bytes of messages, and the number of messages."""

    timeout_s: float
    silence_s: float | None = None
    max_output_bytes: int = 8 << 20
    max_message_bytes: int = 64 << 20
    max_messages: int = 200_000


class Session:
    """A sandboxed child in conversation with its parent. Its bounds count while the parent waits for it (in
    `until`), not while the parent keeps it waiting between commands. Use as a context manager; the child is
    killed, with its whole process group, when the block ends.

        with Session("pkg.mod:serve", payload, Bounds(timeout_s=600), on_message=judge) as child:
            child.send({"cmd": "run"})
            reply = child.until(lambda m: m.get("type") == "done")   # None: the child is gone
        result = child.result()

    `on_message(msg)` sees every message as it arrives, with SENT_AFTER set (overwriting any value the child gave):
    a monotonic time before which the child cannot have sent it. confinement: run the child under it (None: a
    plain child process). scratch: the child's working directory, HOME and TMPDIR (default: a temporary one,
    removed); under a confinement it is a size-bounded tmpfs the parent does not read. read_only / writable:
    further paths the confined child sees. pass_fds: further file descriptors the child inherits (shared memory
    for outputs)."""

    def __init__(
        self,
        entry: str,
        payload: Any,
        bounds: Bounds,
        *,
        extra_env: Mapping[str, str] | None = None,
        python: str = sys.executable,
        on_message: Callable[[dict], None] | None = None,
        confinement: Confinement | None = None,
        scratch: Path | None = None,
        read_only: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        pass_fds: Sequence[int] = (),
        commands: bool = True,
    ):
        if ":" not in entry:
            raise ValueError(f"sandbox entry {entry!r} must be 'package.module:function'")
        self.entry, self.payload, self.bounds, self.on_message = entry, payload, bounds, on_message
        self.extra_env, self.python, self.confinement = extra_env, python, confinement
        self.scratch, self.read_only, self.writable = scratch, read_only, writable
        self.pass_fds, self.commands = tuple(pass_fds), commands
        self._stack = contextlib.ExitStack()
        self._proc: subprocess.Popen | None = None
        self._command_fd: int | None = None
        self._channel_fd = -1
        self._sel = selectors.DefaultSelector()
        self._streams: dict[int, str] = {}
        self._tails = {"stdout": bytearray(), "stderr": bytearray()}
        self._pending = bytearray()
        self._output_bytes = self._message_bytes = self._message_count = 0
        self._messages: list[dict] = []
        self._final: dict | None = None
        self._killed: tuple[str, str] | None = None  # (status, detail)
        self._exited_at: float | None = None
        self._active = 0.0  # seconds spent waiting for the child in `until`: what timeout_s bounds
        self._until_began: float | None = None
        self.t0 = self._last_message = self._drained = self._pending_since = time.monotonic()

    # ------------------------------------------------------------------------------------------ lifecycle

    def __enter__(self) -> Session:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            kill_group(self._proc)
        self._close_command()
        self._stack.close()

    def _start(self) -> None:
        workdir = self.scratch or Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="ladder-sandbox-")))
        inbox = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="ladder-inbox-")))
        inbox.chmod(0o755)  # the dropped user id reads its payload here
        payload_path = inbox / "payload.json"
        payload_path.write_text(json.dumps(self.payload))
        payload_path.chmod(0o644)
        env = child_env(workdir, self.extra_env)
        read_fd, write_fd = os.pipe()
        command_read = -1
        if self.commands:
            command_read, self._command_fd = os.pipe()
        argv = [self.python, "-P", "-m", "ladder.sandbox", self.entry, str(write_fd), str(payload_path)]
        argv += [str(command_read), ""]  # -P: the child does not import from its working directory
        confinement = self.confinement
        if confinement is not None:
            uid = sandbox_uid()
            prepare_scratch(workdir, uid)
            # caches inside the scratch: the host's are read-only in there, and a shared one would let one
            # candidate plant compiled code for the next
            for name, sub in (("TRITON_CACHE_DIR", "triton-cache"), ("TORCHINDUCTOR_CACHE_DIR", "inductor-cache")):
                env[name] = str(workdir / sub)
            env["XDG_CACHE_HOME"] = str(workdir / ".cache")
            bytecode = warm_bytecode(self.entry, self.python)  # read-only in there: only a trusted child writes it
            env.update(PYTHONPYCACHEPREFIX=str(bytecode), PYTHONDONTWRITEBYTECODE="1")
            argv[-1] = json.dumps(confinement.child_limits(uid))
            argv = confinement.command(
                argv, scratch=workdir, env=env, read_only=[*self.read_only, inbox, bytecode], writable=self.writable
            )
        fds = (write_fd, *([command_read] if self.commands else []), *self.pass_fds)
        try:
            self._proc = self._stack.enter_context(
                spawn(
                    argv,
                    env=env,
                    cwd=workdir,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=fds,
                )
            )
        finally:
            os.close(write_fd)  # the child's copy is the only writer: its end closes the channel
            if command_read >= 0:
                os.close(command_read)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._channel_fd = read_fd
        self._stack.callback(self._close_channel)
        self._streams = {self._proc.stdout.fileno(): "stdout", self._proc.stderr.fileno(): "stderr", read_fd: "channel"}
        for fd in self._streams:
            os.set_blocking(fd, False)
            self._sel.register(fd, selectors.EVENT_READ)
        self.t0 = self._last_message = self._drained = self._pending_since = time.monotonic()

    @property
    def pid(self) -> int | None:
        """The guard's pid: the child's process group (irscope.childproc)."""
        return self._proc.pid if self._proc else None

    def alive(self) -> bool:
        """Whether the child runs and nothing ended it (a bound, a kill)."""
        return self._proc is not None and self._proc.poll() is None and self._killed is None

    def _close_channel(self) -> None:
        self._sel.close()
        with contextlib.suppress(OSError):
            os.close(self._channel_fd)

    def _close_command(self) -> None:
        if self._command_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._command_fd)
            self._command_fd = None

    # ------------------------------------------------------------------------------------------ talking

    def send(self, obj: dict) -> bool:
        """One command line to the child; False when it cannot take it (gone, or not reading: a full pipe)."""
        if self._command_fd is None or self._proc is None or self._proc.poll() is not None:
            return False
        data = (json.dumps(obj) + "\n").encode()
        self._last_message = time.monotonic()  # the child's silence counts from the command it was given
        try:
            os.set_blocking(self._command_fd, False)
            written = os.write(self._command_fd, data)
        except (BlockingIOError, BrokenPipeError, OSError):
            return False
        return written == len(data)

    def until(self, predicate: Callable[[dict], bool], timeout_s: float | None = None) -> dict | None:
        """Read the child's messages (each through on_message) until one satisfies `predicate`, and return it; None
        when the child ended, was killed (bounds) or `timeout_s` passed first (the child is then killed too)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._until_began = time.monotonic()
        try:
            while self._sel.get_map():
                if deadline is not None and time.monotonic() > deadline and self._killed is None:
                    self._kill(TIMEOUT, f"no answer within {timeout_s:g} s")
                for msg in self._pump():
                    if predicate(msg):
                        return msg
            return None
        finally:
            self._active += time.monotonic() - self._until_began
            self._until_began = None

    def finish(self) -> SandboxResult:
        """Let the child end (no more commands: its command reader sees end of file), read what it still says,
        and return the result."""
        self._close_command()
        self.until(lambda m: False)
        return self.result()

    def _kill(self, status: str, detail: str) -> None:
        if self._killed is None:
            self._killed = (status, detail)
        if self._proc is not None:
            kill_group(self._proc)

    def _pump(self) -> Iterator[dict]:
        """One round of the supervision loop: lines already read, bounds checked, then whatever the pipes hold, as
        messages."""
        assert self._proc is not None
        yield from self._lines()
        b = self.bounds
        now = time.monotonic()
        active = self._active + (now - self._until_began if self._until_began is not None else 0.0)
        if self._killed is None:
            if active > b.timeout_s:
                self._kill(TIMEOUT, f"no result within {b.timeout_s:g} s")
            elif b.silence_s is not None and self._final is None and now - self._last_message > b.silence_s:
                self._kill(SILENT, f"no message for {b.silence_s:g} s")
        if self._proc.poll() is not None:
            self._exited_at = self._exited_at or now
            if now - self._exited_at > EXIT_GRACE_S:  # a grandchild still holds a pipe open: stop waiting for it
                kill_group(self._proc)
                for fd in list(self._sel.get_map()):
                    self._sel.unregister(fd)
                return
        for key, _ in self._sel.select(timeout=0.05):
            fd = key.fd
            read_at = time.monotonic()  # a short read took all the channel held: the rest was sent after this
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                self._sel.unregister(fd)
                continue
            name = self._streams[fd]
            if name != "channel":
                self._output_bytes += len(chunk)
                tail = self._tails[name]
                tail += chunk
                del tail[:-_TAIL]
                if self._output_bytes > b.max_output_bytes:
                    self._kill(FLOOD, f"more than {b.max_output_bytes} bytes on stdout/stderr")
                continue
            if not self._pending:
                self._pending_since = self._drained
            if len(chunk) < 65536:
                self._drained = read_at
            self._message_bytes += len(chunk)
            self._pending += chunk
            if self._message_bytes > b.max_message_bytes:
                self._kill(FLOOD, f"more than {b.max_message_bytes} bytes of messages")
            yield from self._lines()

    def _lines(self) -> Iterator[dict]:
        """The complete lines read so far, as messages. A caller may stop at any message: the rest stay pending
        and come first next time."""
        while b"\n" in self._pending and self._killed is None:
            line, _, rest = self._pending.partition(b"\n")
            self._pending = bytearray(rest)
            self._message_count += 1
            if self._message_count > self.bounds.max_messages:
                self._kill(FLOOD, f"more than {self.bounds.max_messages} messages")
                return
            msg = parse_message(line)
            self._last_message = time.monotonic()
            if msg.get(_MARK) in ("return", "exception"):
                self._final = msg
                continue
            if len(self._messages) < KEPT_MESSAGES:
                self._messages.append(msg)
            stamped = {**msg, SENT_AFTER: self._pending_since}
            if self.on_message is not None:
                self.on_message(stamped)
            yield stamped

    def result(self) -> SandboxResult:
        """The child's end, once `until` or `finish` returned None (it is killed now if it still runs)."""
        assert self._proc is not None
        if self._proc.poll() is None and self._killed is None:
            with contextlib.suppress(subprocess.TimeoutExpired):  # it closed its pipes: it is on its way out
                self._proc.wait(EXIT_GRACE_S)
        if self._proc.poll() is None:
            self._kill(self._killed[0] if self._killed else CRASHED, self._killed[1] if self._killed else "stopped")
        returncode = self._proc.wait()
        kill_group(self._proc)  # leftovers of a finished child must not outlive it
        result = SandboxResult(
            status=CRASHED,
            messages=self._messages,
            returncode=returncode,
            signal=_signal_name(returncode),
            stdout_tail=self._tails["stdout"].decode(errors="replace"),
            stderr_tail=self._tails["stderr"].decode(errors="replace"),
            output_bytes=self._output_bytes,
            message_count=self._message_count,
            seconds=round(time.monotonic() - self.t0, 3),
        )
        final = self._final
        if self._killed is not None:
            result.status, result.detail = self._killed
        elif final is not None and final[_MARK] == "return":
            result.status, result.value = OK, final.get("value")
        elif final is not None and final[_MARK] == "exception":
            result.status, result.error = EXCEPTION, {k: final.get(k) for k in ("type", "message", "traceback")}
            result.detail = f"{final.get('type')}: {final.get('message')}"
        else:
            how = f"signal {result.signal}" if result.signal else f"exit code {returncode}"
            result.detail = f"the process ended ({how}) without a result"
        return result


def warm_bytecode(entry: str, python: str = sys.executable) -> Path:
    """The bytecode cache confined children read, filled for `entry` once per process: a trusted child (never
    candidate code) imports the entry's module and calls its `warm()`, if it has one, which imports what the
    entry will import later. A confined child cannot write a cache (and must not: it could plant bytecode for
    the next one), so without this each would compile torch's and Triton's modules from source where the
    installation ships no .pyc files. A failed warm-up costs only that time: the child compiles what it lacks."""
    cache = bytecode_cache("sandbox")
    module = entry.partition(":")[0]
    key = f"{module} {cache}"
    with _WARMING:
        if key not in _WARMED:
            cache.mkdir(parents=True, exist_ok=True)
            code = "import importlib, sys; m = importlib.import_module(sys.argv[1]); getattr(m, 'warm', lambda: 0)()"
            with tempfile.TemporaryDirectory(prefix="ladder-warm-") as home:
                env = child_env(Path(home), {"PYTHONPYCACHEPREFIX": str(cache)})
                run([python, "-c", code, module], env=env, cwd=home, timeout_s=WARM_TIMEOUT_S)
            _WARMED.add(key)
    return cache


def run_sandboxed(
    entry: str,
    payload: Any,
    *,
    timeout_s: float,
    silence_s: float | None = None,
    max_output_bytes: int = 8 << 20,
    max_message_bytes: int = 64 << 20,
    max_messages: int = 200_000,
    extra_env: Mapping[str, str] | None = None,
    python: str = sys.executable,
    on_message: Callable[[dict], None] | None = None,
    confinement: Confinement | None = None,
    scratch: Path | None = None,
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    pass_fds: Sequence[int] = (),
) -> SandboxResult:
    """Run `entry` ("pkg.module:function", called as `function(payload, emit)`) on `payload` (JSON-serializable)
    in a sandboxed subprocess, to its end. timeout_s: wall-clock limit for the whole run. silence_s: limit between
    two messages (from the start to the first message too), so a long job that reports progress is not cut but a
    hung step is. The other arguments are Session's and Bounds'."""
    bounds = Bounds(timeout_s, silence_s, max_output_bytes, max_message_bytes, max_messages)
    with Session(
        entry,
        payload,
        bounds,
        extra_env=extra_env,
        python=python,
        on_message=on_message,
        confinement=confinement,
        scratch=scratch,
        read_only=read_only,
        writable=writable,
        pass_fds=pass_fds,
        commands=False,
    ) as child:
        return child.finish()


def parse_message(line: bytes | bytearray) -> dict:
    """A message line as a dict; anything else (not JSON, nested too deep to parse, not an object) becomes
    {UNPARSABLE: its start}, for the caller to hold against the child."""
    try:
        msg = json.loads(line)
    except Exception:  # ValueError, RecursionError on deep nesting, MemoryError: the child's fault, never ours
        return {UNPARSABLE: bytes(line[:500]).decode(errors="replace")}
    return msg if isinstance(msg, dict) else {UNPARSABLE: bytes(line[:500]).decode(errors="replace")}


def _signal_name(returncode: int) -> str | None:
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class Commands:
    """The child's end of the command pipe: JSON lines from the parent, read one at a time. `next(timeout_s)`
    returns the next command, None at end of file (the parent is done), or raises TimeoutError."""

    def __init__(self, fd: int):
        self.fd = fd
        self._buffer = bytearray()
        self._eof = False

    def next(self, timeout_s: float | None = None) -> dict | None:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            if self._eof:
                return None
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise TimeoutError("no command from the parent")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self._eof = True
                continue
            self._buffer += chunk
        line, _, rest = self._buffer.partition(b"\n")
        self._buffer = bytearray(rest)
        return json.loads(line)


def _child_main(entry: str, channel_fd: int, payload_path: str, command_fd: int, confine_spec: str) -> None:
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
        value = func(payload, emit, Commands(command_fd)) if command_fd >= 0 else func(payload, emit)
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
    _child_main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5])
