"""Hostile candidate modules for new_gelu, written as an attacker would: each has the honest Triton kernel and a
plausible `forward`, plus the attack. Placeholders (@TOKEN@, @PORT@, @OUT@, @HISTORY@, @SECRET_FILE@, @HOME@,
@REPO@) are filled in by the test with values of its own, so every side effect can be looked for afterwards.

The harness validator's static check rejects every one of them before import; the interpret validator has no
static check, so there each attack really runs, inside the sandbox: that is where confinement and the verdict
decided outside the candidate's process are proven.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.ladder.candidates import module

# Only the harness validator runs these: they compute the right answer by means the harness forbids (torch or
# numpy compute hidden from the monitor), which the interpret validator, a correctness check, does not look for.
HARNESS_ONLY = "harness"
BOTH = "both"


@dataclass(frozen=True)
class Attack:
    name: str
    source: str
    via: str = BOTH  # or HARNESS_ONLY, or "interpret"
    top: str = ""  # module-level code, run at import

    def text(self, **values: str) -> str:
        src = self.source
        if self.top:
            src = src.replace("\n\n@triton.jit", "\n" + self.top + "\n\n@triton.jit", 1)
        for k, v in values.items():
            src = src.replace(f"@{k}@", v)
        return src


def _forward(code: str) -> str:
    """`code` at the start of forward (4-space indented), then the honest kernel."""
    return module(prelude="".join(f"    {line}\n" for line in code.strip("\n").splitlines()))


WRONG = module(expr="0.5 * x")  # what a forger returns: not gelu

ATTACKS = [
    # --- secrets: the parent's environment, its /proc, files of the run and of the repository
    Attack("env_key", _forward("raise RuntimeError('leak ' + repr(torch.os.environ.get('OPENAI_API_KEY')))")),
    Attack(
        "proc_environ",
        _forward(
            """
os = torch.os
seen = []
for pid in ['1', 'self', str(os.getppid())] + os.listdir('/proc'):
    try:
        seen.append(os.read(os.open('/proc/' + pid + '/environ', 0), 1 << 20).decode(errors='replace'))
    except Exception:
        pass
raise RuntimeError('leak ' + ' | '.join(seen))
"""
        ),
    ),
    Attack("secret_file", _forward("raise RuntimeError('leak ' + open('@SECRET_FILE@').read())")),
    Attack("repo_file", _forward("raise RuntimeError('leak ' + open('@REPO@/pyproject.toml').read())")),
    Attack("history_read", _forward("raise RuntimeError('leak ' + repr(open('@HISTORY@', 'rb').read()))")),
    Attack("expected_outputs", _forward("return torch.load('@OUT@/expected.pt')")),
    # --- writes outside the scratch directory
    Attack("write_repo", _forward("open('@REPO@/ladder/redteam_@TOKEN@.py', 'w').write('pwned')")),
    Attack("write_history", _forward("f = open('@HISTORY@', 'r+b')\nf.write(b'pwned')\nf.close()")),
    Attack("write_home", _forward("open('@HOME@/.redteam-@TOKEN@', 'w').write('pwned')")),
    Attack("write_tmp", _forward("open('/tmp/redteam-@TOKEN@', 'w').write('pwned')")),
    Attack("write_run_dir", _forward("open('@OUT@/pwned-@TOKEN@', 'w').write('pwned')")),
    # --- network: a loopback server of the test's own
    Attack(
        "socket_connect",
        _forward(
            """
import socket
s = socket.create_connection(('127.0.0.1', @PORT@), timeout=3)
s.sendall(b'@TOKEN@')
"""
        ),
    ),
    # --- processes that would outlive the validation or starve the machine
    Attack(
        "fork_bomb",
        _forward(
            """
os = torch.os
n = 0
for _ in range(5000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execv('/bin/sleep', ['sleep-@TOKEN@', '600'])
    n += 1
raise RuntimeError('forked ' + str(n))
"""
        ),
    ),
    Attack(
        "setsid_escape",
        _forward(
            """
os = torch.os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['sleep-@TOKEN@', '600'])
    os._exit(0)
raise RuntimeError('a grandchild left behind')
"""
        ),
    ),
    Attack(
        "subprocess_spawn",
        _forward(
            "shell = triton.runtime.build.subprocess\n"
            "shell.Popen(['/bin/sh', '-c', 'exec -a sleep-@TOKEN@ sleep 600'])\n"
            "x = 1 / 0"
        ),
    ),
    Attack("memory_hog", _forward("import mmap\nm = mmap.mmap(-1, 53 << 30)\nm[(53 << 30) - 1] = 1")),
    Attack("sleep", _forward("import time\ntime.sleep(3600)")),
    # --- the verdict: forged messages, patched checkers, inputs known in advance
    Attack(
        "forge_final",
        _forward(
            """
for fd in range(3, 64):
    try:
        torch.os.write(fd, b'{"_sandbox": "return", "value": {"cases": 2}}\\n')
    except OSError:
        pass
torch.os._exit(0)
"""
        ),
    ),
    # a copy of the runner that reports every run a second time: the parent waits for it, so its reports arrive
    Attack(
        "fork_twice",
        _forward(
            """
if not getattr(torch, '_forked', False):
    torch._forked = True
    pid = torch.os.fork()
    if pid:
        torch.os.waitpid(pid, 0)
"""
        ),
    ),
    Attack(
        "forge_runs",
        _forward(
            """
import json, sys
from suite.operator import resolve_operator
payload = json.load(open(sys.argv[3]))  # the runner's command line names its payload
cases = resolve_operator(payload['op']).small_cases
n = 0
for case in cases:
    for seed in payload['seeds']:
        # the shared memory's slots read as zeros until written: describe slot n as the case's output
        shape = [case.shape[k] for k in ('M', 'N')]
        output = {'slot': n, 'tensors': [{'dtype': 'float32', 'shape': shape, 'offset': 0}], 'single': True}
        msg = {'case': case.name, 'kind': 'random', 'seed': seed, 'output': output}
        for fd in range(3, 64):
            try:
                torch.os.write(fd, (json.dumps(msg) + '\\n').encode())
            except OSError:
                pass
        n += 1
for fd in range(3, 64):
    try:
        torch.os.write(fd, b'{"_sandbox": "return", "value": {"cases": 2}}\\n')
    except OSError:
        pass
torch.os._exit(0)
"""
        ),
    ),
    Attack(
        "patch_verify",
        WRONG,
        top="""import sys
import suite.compare
suite.compare.verify = lambda *args, **kwargs: suite.compare.Verdict(True, 'ok')""",
    ),
    Attack(
        "patch_runner",
        WRONG,
        top="""import ladder.harness.correctness as c
real = c.run_forward
def run_forward(*args, **kwargs):
    result, out = real(*args, **kwargs)
    result.problems, result.ok, result.numeric_ok = [], True, True
    return result, out
c.run_forward = run_forward""",
    ),
    # --- the right answer computed where the monitor cannot see it (harness only)
    Attack(
        "reference_without_dispatch",
        _forward(
            "with torch._C._DisableTorchDispatch():\n"
            "    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))"
        ),
        via=HARNESS_ONLY,
    ),
    Attack(
        "numpy_view",
        _forward(
            "a = x.numpy()\nout = torch.empty_like(x)\n"
            "np = torch.os.sys.modules['numpy']\n"
            "out.numpy()[:] = 0.5 * a * (1.0 + np.tanh(0.7978845608 * (a + 0.044715 * a ** 3)))\n"
            "return out"
        ),
        via=HARNESS_ONLY,
    ),
    Attack(
        "jit_body_escape",
        module().replace(
            "def forward(x: torch.Tensor) -> torch.Tensor:\n",
            "@triton.jit\ndef helper(x):\n    return x.numpy()\n\n\ndef forward(x: torch.Tensor) -> torch.Tensor:\n"
            "    helper.fn(x)\n",
        ),
        via=HARNESS_ONLY,
    ),
    Attack("typing_sys", _forward("typing.sys.modules['os'].system('true')"), top="import typing", via=HARNESS_ONLY),
    Attack(
        "type_hints_eval",
        _forward("def f(a: \"__import__('os').system('true')\"):\n    pass\ntyping.get_type_hints(f)"),
        top="import typing",
        via=HARNESS_ONLY,
    ),
    Attack(
        "frame_walk",
        _forward("g = (1 for _ in [0])\nframe = g.gi_frame.f_back\nframe.f_globals['verify'] = None"),
        via=HARNESS_ONLY,
    ),
    # --- import-time code: must never run when the static check fails (checked unconfined, see the test)
    Attack("import_side_effect", WRONG, top="torch.os.close(torch.os.open('@OUT@/imported-@TOKEN@', 0o101))"),
]
