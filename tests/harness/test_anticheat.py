"""Anti-cheat: the static rules on real candidate sources, and the runtime monitor on real interpreted launches."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from irscope.childproc import REPO_ROOT
from ladder.harness.anticheat import static_check
from ladder.harness.correctness import poisoned_allocations
from ladder.sandbox import run_sandboxed
from suite.operator import KERNELS_DIR

CANDIDATES = Path(__file__).parent / "candidates"


def rules(source: str) -> list[tuple[str, str]]:
    return [(v.rule, v.message) for v in static_check(textwrap.dedent(source))]


@pytest.mark.parametrize("path", sorted(KERNELS_DIR.glob("*.py")), ids=lambda p: p.stem)
def test_every_frozen_initial_kernel_passes_the_static_check(path):
    assert static_check(path.read_text(), str(path)) == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("never_launches", {"torch-compute"}),
        ("uses_stream_and_thread", {"import", "banned-api"}),
        ("patches_timer", {"banned-api", "dunder", "builtin", "module-value"}),
        ("lazy_subclass", {"torch-compute"}),
        ("returns_reference", set()),  # plain operators: only the runtime monitor sees them
        ("caches_by_data_ptr", set()),
        ("argmax_wrong_on_ties", set()),
    ],
)
def test_candidate_files(name, expected):
    found = {v.rule for v in static_check((CANDIDATES / f"{name}.py").read_text())}
    assert found == expected


def test_aliases_are_resolved():
    src = """
        import torch as T
        from torch.nn import functional as Fn
        from torch import cuda
        def forward(x):
            a = T.tanh(x)
            b = Fn.gelu(x)
            s = cuda.Stream()
            return a
    """
    found = rules(src)
    assert ("torch-compute", "torch.tanh(...) computes with torch in the forward path") in found
    assert ("torch-compute", "torch.nn.functional.gelu(...) computes with torch in the forward path") in found
    assert ("banned-api", "torch.cuda.Stream is not allowed in a candidate") in found


def test_jit_bodies_are_triton_code_and_host_code_is_not():
    src = """
        import torch
        import triton
        import triton.language as tl
        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            x = tl.load(x_ptr + tl.arange(0, BLOCK))
            tl.store(x_ptr + tl.arange(0, BLOCK), x.to(tl.float32).exp())
        def forward(x, input):
            sizes = {"a": 1}
            total = sum(sizes.values())
            out = torch.empty_like(x).view(-1)
            k[(1,)](out, BLOCK=triton.next_power_of_2(total + input))
            return out.exp()
    """
    found = rules(src)
    assert found == [("torch-compute", ".exp(...) is a torch compute op in the forward path")]


def test_knobs_are_off_limits_except_reading_the_interpreter_mode():
    src = """
        import triton
        import triton.language as tl
        INTERPRETED = tl.constexpr(triton.knobs.runtime.interpret)
        triton.knobs.runtime.interpret = False
        triton.knobs.runtime.launch_enter_hook.add(print)
    """
    found = rules(src)
    assert [r for r, _ in found] == ["banned-api", "banned-api"]
    assert found[0][1].startswith("triton.knobs") and "line" not in found[0][1]


def test_forbidden_imports_builtins_and_escapes():
    src = """
        import os
        import numpy as np
        from . import helper
        def forward(x):
            f = eval
            return x.__class__
    """
    found = {r for r, _ in rules(src)}
    assert found == {"import", "builtin", "dunder"}
    assert rules("def f(:\n") and rules("def f(:\n")[0][0] == "syntax"


EVERY_RULE = """\
from __future__ import annotations

import torch
import triton
import triton.language as tl
import torch.nn.functional as F
import os
import torch.utils.data
from torch import cuda
from triton import knobs
from . import helper

_T = torch
T2: object = _T
(nn, (ut, gelu)) = (torch.nn, (torch.utils, F.gelu))


def setup():
    global G
    G = torch


setup()
U = G


@triton.autotune(configs=[], key=["n"])
def scale(x_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), x.sum() * 2)


@triton.heuristics({"BLOCK": lambda args: 64})
def shift(x_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), x.max() + 1)


def help(t):
    return t


def forward(x, input=None):
    x._base
    x.__class__
    x.__secret
    x.tolist()
    T2.sigmoid(x)
    ut.data
    gelu(x)
    nn.functional.silu(x)
    U.relu(x)
    torch.os.getcwd()
    cuda.Event()
    if (w := _T).cuda.is_available() and triton.knobs.runtime.interpret:
        w.relu(x)
    triton.knobs.runtime.interpret = False
    vars(x), input, help(x)
    exit = 0
    out = torch.empty_like(x)
    scale[(1,)](out, out.numel(), BLOCK=64)
    return helper, nn.Linear, F, exit
"""


def test_every_rule_on_its_line_with_its_message():
    """One candidate breaking each rule once, through every way of binding a name: an alias of an alias, an
    annotated one, nested tuple unpacking, a walrus, a global bound in a function and aliased at module level (the
    alias found on a second pass). A function under @triton.autotune or @triton.heuristics alone is a kernel (its
    tensor methods are Triton's); a parameter, a function or a variable named like a builtin is the candidate's own;
    `__secret` is private, not a dunder; a dotted import binds its first name."""
    assert [str(v) for v in static_check(EVERY_RULE, "candidate.py")] == [
        "line 7: [import] import of 'os'; allowed: torch, triton, triton.language, math, functools, typing, __future__",
        "line 8: [banned-api] torch.utils.data is not allowed in a candidate",
        "line 10: [banned-api] triton.knobs is not allowed in a candidate",
        "line 11: [import] import of ''; allowed: torch, triton, triton.language, math, functools, typing, __future__",
        "line 11: [import] relative imports are not allowed",
        "line 15: [banned-api] torch.utils is not allowed in a candidate",
        "line 44: [private] private attribute _base is not allowed",
        "line 45: [dunder] attribute __class__ is not allowed",
        "line 46: [private] private attribute __secret is not allowed",
        "line 47: [escape] attribute tolist is not allowed in a candidate",
        "line 47: [torch-compute] .tolist(...) is a torch compute op in the forward path",
        "line 48: [torch-compute] torch.sigmoid(...) computes with torch in the forward path",
        "line 49: [banned-api] torch.utils.data is not allowed in a candidate",
        "line 50: [torch-compute] torch.nn.functional.gelu(...) computes with torch in the forward path",
        "line 51: [torch-compute] torch.nn.functional.silu(...) computes with torch in the forward path",
        "line 52: [torch-compute] torch.relu(...) computes with torch in the forward path",
        "line 53: [banned-api] torch.os reaches module os, which a candidate may not use",
        "line 54: [banned-api] torch.cuda.Event is not allowed in a candidate",
        "line 56: [torch-compute] torch.relu(...) computes with torch in the forward path",
        "line 57: [banned-api] triton.knobs is not allowed in a candidate",
        "line 58: [builtin] vars is not allowed in a candidate",
        "line 62: [module-value] module F used as a value; use its attributes directly",
    ]


def test_a_syntax_error_is_one_violation_on_its_line():
    (v,) = static_check("def forward(x):\n    return x +\n", "candidate.py")
    assert (v.line, v.rule) == (2, "syntax") and "candidate.py" in v.message and "invalid syntax" in v.message
    assert static_check("def forward(x:\n")[0].message.endswith("(<candidate>, line 1)")  # the default name
    # a null byte: the parser names no line, and the violation is on line 0, before the source's first
    assert [str(v) for v in static_check("x = 1\x00\n")] == [
        "line 0: [syntax] source code string cannot contain null bytes"
    ]
    (dotted,) = static_check("import torch.nn.functional\n\ndef forward(x):\n    return torch.nn.functional.relu(x)\n")
    assert str(dotted) == (
        "line 4: [torch-compute] torch.nn.functional.relu(...) computes with torch in the forward path"
    )


def test_source_nested_deeper_than_the_parser_or_the_checker_can_follow_is_a_violation_not_a_crash():
    """The check runs in the trusted parent: a candidate that is valid Python, but one long chain of `+`, must not
    raise out of it (a RecursionError there once ended a whole multi-operator run's evaluation)."""

    def chain(terms: int) -> str:
        return "def forward(x):\n    return " + " + ".join(["x"] * terms) + "\n"

    compile(chain(1500), "<chain>", "exec")  # the interpreter would import it
    assert [str(v) for v in static_check(chain(1500))] == [
        "line 0: [syntax] expressions nested too deep to check: split them into statements"
    ]
    (too_deep_to_parse,) = static_check(chain(20000))
    assert (too_deep_to_parse.line, too_deep_to_parse.rule) == (0, "syntax")
    assert too_deep_to_parse.message == (
        "the source cannot be parsed: RecursionError: maximum recursion depth exceeded during ast construction"
    )
    assert static_check(chain(50)) == []  # a short chain is checked as usual


def test_a_module_passed_as_a_value_is_found_through_its_dotted_alias_and_nothing_else_is_a_module():
    """`tl` stands for `triton.language` and `lm` for `triton.language.math`, modules (the second found attribute by
    attribute from the first name): passing one carries the module where the check cannot follow. `float32` (a
    dtype) and a name the module does not have are values."""
    source = textwrap.dedent(
        """
        import torch
        import triton.language as tl
        from torch import float32
        from triton.language import no_such_name

        def helper(*values):
            return values

        def forward(x):
            helper(tl, float32, no_such_name)
            lm = tl.math
            helper(lm)
            return x
        """
    )
    assert [str(v) for v in static_check(source)] == [
        "line 11: [module-value] module tl used as a value; use its attributes directly",
        "line 13: [module-value] module lm used as a value; use its attributes directly",
    ]


def test_a_line_of_banned_names_reports_its_shortest_and_of_those_as_short_the_first_written():
    """One banned-api finding per line: the shortest name of the chain (`torch.jit` of `torch.jit.script`), and of
    two as short (`torch.jit`, `torch.ops`) the one written first, imported or used, whatever their alias."""
    src = """\
        import torch
        from torch import jit, ops
        from torch import ops as o, jit as j
        x = (torch.jit.script, torch.ops)
        y = (torch.ops, torch.jit.script)
    """
    assert [str(v) for v in static_check(textwrap.dedent(src))] == [
        "line 2: [banned-api] torch.jit is not allowed in a candidate",
        "line 3: [banned-api] torch.ops is not allowed in a candidate",
        "line 4: [banned-api] torch.jit is not allowed in a candidate",
        "line 5: [banned-api] torch.ops is not allowed in a candidate",
    ]


def test_a_function_nested_in_a_kernel_is_kernel_code_down_to_its_decorators():
    """Everything written inside a @triton.jit function is the kernel's: a function defined in it, the calls of its
    decorators included (they run when the kernel's body does), has no host-compute finding, while the same
    decorators on a host function and on a function nested in one are host calls."""
    src = """\
        import torch
        import triton
        import triton.language as tl
        @triton.jit
        def kernel(x_ptr, BLOCK: tl.constexpr):
            @torch.no_grad()
            def inner(v):
                return v.sum()
            tl.store(x_ptr + tl.arange(0, BLOCK), inner(tl.load(x_ptr + tl.arange(0, BLOCK))))
        @torch.no_grad()
        def host(x):
            @torch.no_grad()
            def inner(v):
                return v
            return inner(x)
    """
    assert [str(v) for v in static_check(textwrap.dedent(src))] == [
        "line 10: [torch-compute] torch.no_grad(...) computes with torch in the forward path",
        "line 12: [torch-compute] torch.no_grad(...) computes with torch in the forward path",
    ]


def test_banned_prefixes_match_whole_names_and_name_prefixes_only_where_they_end_in_an_underscore():
    from ladder.harness.anticheat import banned_api, foreign_module

    assert banned_api("torch.jit") and banned_api("torch.jit.script") and not banned_api("torch.jitter")
    assert banned_api("torch.set_grad_enabled") and banned_api("torch._C") and not banned_api("torch.settings")
    assert foreign_module("torch.os.path") == "os" and foreign_module("typing.sys") == "sys"
    assert foreign_module("torch.nn.functional.gelu") is None and foreign_module("os.path") is None
    assert foreign_module("torch.no_such_name.os") is None  # fails when run, reaching nothing


def test_checking_a_candidate_never_imports_what_it_names(tmp_path, monkeypatch):
    """The check runs in the trusted parent: a module the candidate imports (one written beside it, say) must not
    be imported there to see whether a name is a module; the import is a violation, nothing more."""
    marker = tmp_path / "ran"
    (tmp_path / "planted.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = static_check("import planted\n\ndef forward(x):\n    return planted, planted.thing(x)\n")
    assert [v.rule for v in found] == ["import"] and not marker.exists()


@pytest.fixture(scope="module")
def monitored():
    r = run_sandboxed(
        "tests.harness.monitor_entries:monitor_scenarios", {}, timeout_s=120, extra_env={"TRITON_INTERPRET": "1"}
    )
    assert r.ok, r.summary() + r.stderr_tail
    return r.value


def test_monitor_counts_interpreted_launches_and_allows_allocation(monitored):
    k = monitored["kernel"]
    assert k["hook_calls"] == 0  # launch_enter_hook never fires under the interpreter: hence the run() wrapper
    assert k["launches"] == 2 and k["kernels"] == {"channel_stats_kernel": 1, "normalize_kernel": 1}
    assert k["problems"] == []
    assert set(k["aten_ops"]) <= {"empty", "empty_like"}  # the interpreter's host copies are not counted


def test_monitor_flags_torch_compute_and_missing_launches(monitored):
    problems = monitored["torch_only"]["problems"]
    assert "no Triton kernel was launched" in problems
    assert any(p.startswith("torch compute in the forward path: add, mul, randn, sum") for p in problems)


def test_monitor_allows_same_dtype_copies_only(monitored):
    assert monitored["copies"]["forbidden"] == ["_to_copy"]


def test_poisoned_allocations_fill_fresh_memory():
    with poisoned_allocations():
        f = torch.empty(64)
        i = torch.empty(8, dtype=torch.int64)
        like = torch.empty_like(torch.zeros(3, 3))
    assert torch.isnan(f).all() and torch.isnan(like).all()
    assert (i == torch.iinfo(torch.int64).max).all()
    assert not torch.are_deterministic_algorithms_enabled()


def test_poisoned_allocations_leave_the_inductor_unimported():
    """torch.use_deterministic_algorithms imports the inductor and dynamo, which cost a runner's first validation
    run 3–8 s with the GPU held; the poisoning sets torch's switch itself."""
    code = (
        "import sys, torch\n"
        "from ladder.harness.correctness import poisoned_allocations\n"
        "with poisoned_allocations():\n"
        "    assert torch.isnan(torch.empty(4)).all()\n"
        "print(sorted(m for m in ('torch._inductor', 'torch._dynamo') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_monitors_first_dispatch_leaves_dynamo_unimported():
    """torch wraps a dispatch mode's handler in torch._disable_dynamo, whose first call imports dynamo, the inductor
    and sympy: 2.5 s here and more in a sandbox without their bytecode, in every runner's first forward (a stack dump
    of a ten-job suite caught two of ten runners in it). The monitor's mode opts out."""
    code = (
        "import sys, torch\n"
        "from ladder.harness.anticheat import ForwardMonitor\n"
        "with ForwardMonitor() as m:\n"
        "    torch.empty(4).fill_(1.0)\n"
        "assert m.report.aten_ops == {'empty': 1, 'fill_': 1}, m.report.aten_ops\n"
        "print(sorted(m for m in ('torch._inductor', 'torch._dynamo', 'sympy') if m in sys.modules))\n"
    )
    env = {**os.environ, "TRITON_INTERPRET": "1"}  # the monitor counts interpreted launches: no GPU needed
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
