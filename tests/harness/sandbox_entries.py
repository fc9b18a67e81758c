"""Entry points run by tests/harness/test_sandbox.py inside real sandboxed subprocesses."""

import ctypes
import os
import subprocess
import sys
import time


def echo(payload, emit):
    emit({"step": 1})
    emit({"step": 2, "cwd": os.getcwd(), "home": os.environ.get("HOME")})
    return {"echo": payload}


def environment(payload, emit):
    return dict(os.environ)


def hang(payload, emit):
    emit({"started": True})
    while True:
        time.sleep(0.01)


def hang_with_grandchild(payload, emit):
    child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.05)"])
    emit({"grandchild": child.pid})
    while True:
        time.sleep(0.01)


def progress_then_stall(payload, emit):
    for i in range(4):
        emit({"tick": i})
        time.sleep(0.2)
    time.sleep(60)


def segfault(payload, emit):
    emit({"about_to": "segfault"})
    ctypes.string_at(0)


def hard_exit(payload, emit):
    os._exit(payload.get("code", 0))


def system_exit(payload, emit):
    sys.exit(3)


def raise_error(payload, emit):
    raise ValueError("candidate says no")


def flood_stdout(payload, emit):
    line = "x" * 1023 + "\n"
    while True:
        sys.stdout.write(line)


def print_some(payload, emit):
    print("hello from the child")
    print("to stderr", file=sys.stderr)
    return 7


def append_to(payload, emit):
    with open(payload["path"], "a") as f:
        f.write("from the sandbox\n")
    return {"uid": os.getuid()}


def map_shared(payload, emit):
    import mmap

    region = mmap.mmap(-1, payload["bytes"])  # anonymous and shared: RLIMIT_DATA does not count it
    region[payload["bytes"] - 1] = 1
    return {"mapped": payload["bytes"]}


def dated_messages(payload, emit):
    """Messages carrying the monotonic time (one clock for every process) just before each was sent, a pause
    between them, and a forged parent stamp."""
    for step in range(3):
        emit({"step": step, "sent_at": time.monotonic(), "_sent_after": 0.0})
        time.sleep(0.2)
    return None


def deep_nesting(payload, emit):
    """One message line the JSON parser cannot take: nested too deep (RecursionError, not ValueError)."""
    fd = int(sys.argv[2])  # the channel, as the sandbox's command line names it
    os.write(fd, b"[" * 200_000 + b"\n")
    emit({"after": True})
    return "done"


def many_messages(payload, emit):
    for _ in range(payload["n"]):
        emit({})
    return "done"


def fill_scratch(payload, emit):
    """Write `bytes` into the working directory, 16 MiB at a time; report how far it got."""
    chunk, written = b"x" * (16 << 20), 0
    try:
        with open("fill.bin", "wb") as f:
            while written < payload["bytes"]:
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as e:
        return {"written": written, "error": e.strerror}
    return {"written": written, "error": None}


def bytecode(payload, emit):
    """Where this confined child reads bytecode from, whether its own module's was compiled before it started
    (by the trusted warm-up), and what writing into that cache does."""
    import errno
    import importlib.util

    prefix = sys.pycache_prefix
    cached = importlib.util.cache_from_source(__file__)
    try:
        with open(os.path.join(prefix, "planted.pyc"), "x") as f:
            f.write("x")
        write = "written"
    except OSError as e:
        write = errno.errorcode.get(e.errno, str(e.errno))
    return {
        "prefix": prefix,
        "dont_write": bool(sys.flags.dont_write_bytecode),
        "own_module_cached": os.path.exists(cached),
        "warmed": os.path.exists(os.path.join(prefix, "warmed-by-trusted-child")),
        "write": write,
    }


def warm():
    """Called by ladder.sandbox.warm_bytecode in a trusted child before the first confined one: leaves a mark in
    the cache it fills, which the confined child can read but not write."""
    prefix = sys.pycache_prefix
    with open(os.path.join(prefix, "warmed-by-trusted-child"), "w") as f:
        f.write(str(os.getuid()))


def seeded_cache(payload, emit):
    """A runner's start from a trusted Triton cache (ladder.harness.worker._seed_cache): what its own cache holds
    then, and what writing into the seed and into its own copy does."""
    import errno

    from ladder.harness.worker import SEED_ENV, _seed_cache

    _seed_cache()
    cache = os.environ["TRITON_CACHE_DIR"]
    files = sorted(os.path.relpath(os.path.join(d, f), cache) for d, _, names in os.walk(cache) for f in names)
    writes = {}
    for where in (os.environ[SEED_ENV], cache):
        try:
            with open(os.path.join(where, "entry", "planted"), "x") as f:
                f.write("x")
            writes[where] = "written"
        except OSError as e:
            writes[where] = errno.errorcode.get(e.errno, str(e.errno))
    return {"cache": cache, "files": files, "seed_write": writes[os.environ[SEED_ENV]], "own_write": writes[cache]}
