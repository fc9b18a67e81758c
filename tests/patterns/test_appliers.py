"""Mechanical appliers: precise edits, pattern detection, and candidates that are correct under the
interpreter and compile for cuda:90 with Triton's real compiler."""

import ast
import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import TensorSpec, build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, applicable, generate
from patterns.appliers.autotune import AddAutotune, _Plan
from patterns.appliers.check import check_candidates, check_many
from patterns.appliers.source import Edit, EditError, SourceModule
from suite.operator import all_operators

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
NEW_GELU = (REPO / "suite" / "kernels" / "new_gelu.py").read_text()


def touched(before: str, after: str) -> tuple[list[str], list[str]]:
    """(original lines removed or changed, lines added) by a candidate."""
    sm = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    removed, added = [], []
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op != "equal":
            removed += before.splitlines()[a0:a1]
            added += after.splitlines()[b0:b1]
    return removed, added


def test_new_gelu_candidates_touch_only_their_lines():
    cands = generate(NEW_GELU, "new_gelu.py")
    assert {c.applier for c in cands} == {
        "launch_config_sweep",
        "autotune",
        "divisibility_hints",
        "cache_hints",
        "persistent_grid",  # tests/patterns/test_persistent_grid.py checks its edit line by line
        "tune_search",
    }
    for c in cands:
        if c.applier == "persistent_grid":
            continue
        removed, added = touched(NEW_GELU, c.source)
        if c.applier == "launch_config_sweep" and "BLOCK" in c.params:
            assert removed == ["    BLOCK = 256"] and added == [f"    BLOCK = {c.params['BLOCK']}"]
        elif c.applier == "launch_config_sweep":
            launch = "    new_gelu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK"
            assert removed == [launch + ")"] and added == [launch + f", num_warps={c.params['num_warps']})"]
        elif c.applier in ("autotune", "tune_search"):
            launch = "    new_gelu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)"
            assert removed == ["    BLOCK = 256", launch]
            assert added[0] == "@triton.autotune(" and 'key=["n_elements"],' in [a.strip() for a in added]
            assert added[-1] == '    new_gelu_kernel[lambda META: ((triton.cdiv(n, META["BLOCK"]),))](x, out, n)'
            configs = c.params["configs" if c.applier == "autotune" else "space"]
            assert len(configs) == (8 if c.applier == "autotune" else 19)  # the search: BLOCK × warps, 1–64/thread
            assert configs[0] == {"kwargs": {"BLOCK": 256}, "num_warps": 4}
        elif c.applier == "divisibility_hints":
            assert removed == [] and added == ["    offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK)"]
        else:
            assert removed == ["    x = tl.load(x_ptr + offs, mask=mask)"]
            assert added[0] in (
                '    x = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_first")',
                '    x = tl.load(x_ptr + offs, mask=mask, cache_modifier=".cg")',
            )
        assert "·" in c.source and "−" in c.source  # the non-ASCII docstring survives byte for byte


def test_edits_use_byte_offsets_on_non_ascii_lines():
    src = 'import triton.language as tl\n\n\ndef k(p):\n    s = "é·"; x = tl.load(p + 1,\n        mask=None,)\n'
    mod = SourceModule(src)
    call = next(n for n in ast.walk(mod.tree) if isinstance(n, ast.Call) and mod.names.tl_call(n) == "load")
    out = mod.apply([mod.call_append(call, 'eviction_policy="evict_first"')])
    assert out.endswith('    s = "é·"; x = tl.load(p + 1,\n        mask=None, eviction_policy="evict_first")\n')
    with pytest.raises(EditError, match="overlapping"):
        mod.apply([Edit(0, 5, "a"), Edit(3, 8, "b")])
    with pytest.raises(EditError, match="does not parse"):
        mod.apply([Edit(0, 0, "(")])


@pytest.mark.parametrize(
    "names, expected",
    [
        ({"BLOCK"}, "k[g](x, y, num_warps=4)"),
        ({"num_warps"}, "k[g](x, y, BLOCK=B)"),
        ({"BLOCK", "num_warps"}, "k[g](x, y)"),
    ],
)
def test_remove_keywords_takes_the_separating_commas(names, expected):
    mod = SourceModule("k[g](x, y, BLOCK=B, num_warps=4)\n")
    call = mod.tree.body[0].value
    assert mod.apply(mod.remove_keywords(call, names)) == expected + "\n"
    only = SourceModule("k[g](BLOCK=B, num_warps=4)\n")
    assert only.apply(only.remove_keywords(only.tree.body[0].value, {"BLOCK"})) == "k[g](num_warps=4)\n"


@pytest.mark.parametrize(
    "change, reason",
    [
        (
            (
                "x = tl.load(x_ptr + offs, mask=mask)",
                "x = tl.load(x_ptr + offs, mask=mask)\n    tl.atomic_add(out_ptr, 1.0)",
            ),
            "atomics",
        ),
        (
            (
                "out = torch.empty_like(x)",
                "out = torch.empty(triton.cdiv(n, 256) * 256, device=x.device)\n    print(BLOCK)",
            ),
            "used outside the grid",
        ),
        (
            ("    return out", "    new_gelu_kernel[(1,)](x, out, 1, BLOCK=BLOCK)\n    return out"),
            "launched more than once",
        ),
        (("BLOCK=BLOCK)", "BLOCK=BLOCK, num_warps=x.shape[0] // 4)"), "computed at run time"),
        (("@triton.jit", "@triton.heuristics({})\n@triton.jit"), "already autotuned or heuristics"),
    ],
)
def test_autotune_declines_kernels_it_would_break(change, reason):
    src = NEW_GELU.replace(*change)
    mod = SourceModule(src)
    assert not AddAutotune().applies(mod)
    assert reason in _Plan(mod, mod.launches[0]).why_not


INTERPRET_CHECK = """
import sys, torch
from irscope.capture.loader import load_module
m = load_module(sys.argv[1], "cand")
torch.manual_seed(0)
if sys.argv[2] == "matmul":
    a, b = torch.randn(70, 40), torch.randn(40, 50)
    print(torch.allclose(m.forward(a, b), a @ b, atol=1e-4))
else:
    x = torch.randn(5, 4 * 19)
    print(torch.equal(m.forward(x, 4), x.view(5, 4, 19).amax(-1).sum(-1)))
"""


@pytest.mark.parametrize(
    "fixture, applier, kind", [("matmul_2d", "grouped_order", "matmul"), ("group_sum", "static_range", "group")]
)
def test_kernel_rewrites_keep_results_and_compile(tmp_path, fixture, applier, kind):
    src = (KERNELS / f"{fixture}.py").read_text()
    assert APPLIERS[applier] in applicable(src)
    (cand,) = generate(src, fixture, [applier])
    path = tmp_path / f"{fixture}_{applier}.py"
    path.write_text(cand.source)
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", INTERPRET_CHECK, str(path), kind], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.stdout.strip() == "True", run.stderr[-2000:]
    mod = load_module(path, f"cand_{fixture}")
    if kind == "matmul":
        assert "_g_group_id" in cand.source and "pid_n = tl.program_id(1)" not in cand.source
        args = ["*fp16", "*fp16", "*fp32", 4096, 4096, 4096, 4096, 4096, 4096]
        req = build_request(
            mod.matmul_kernel, args, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_stages": 3}, "cuda:90"
        )
    else:
        assert "for g in tl.static_range(G):" in cand.source
        req = build_request(
            mod.group_max_sum_kernel, [TensorSpec("fp32"), TensorSpec("fp32"), 20], {"G": 8, "BLOCK": 32}, "cuda:90"
        )
    compiled = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
    assert "ptx" in compiled.asm


def test_the_check_catches_wrong_and_uncompilable_candidates(tmp_path):
    wrong = NEW_GELU.replace("0.5 * x * (1.0 + t)", "0.5 * x * (1.0 - t)")
    bad_warps = NEW_GELU.replace("BLOCK=BLOCK)", "BLOCK=BLOCK, num_warps=3)")
    res = check_candidates("new_gelu", [("wrong", wrong), ("warps", bad_warps)], cache_dir=tmp_path)
    assert not res["wrong"].correct and res["wrong"].compiles and "elements outside" in res["wrong"].failures()[0]
    assert res["warps"].correct and not res["warps"].compiles
    assert "num_warps must be a power of 2" in res["warps"].failures()[0]


SUITE = [op for op in all_operators().values() if op.kernel_path.exists()]


def test_every_new_gelu_candidate_is_correct_and_compiles_for_cuda90(tmp_path):
    cands = generate(NEW_GELU, "new_gelu.py")
    results = check_candidates(
        "new_gelu", [(f"{c.applier}.{i}", c.source) for i, c in enumerate(cands)], cache_dir=tmp_path / "triton-cache"
    )
    assert {cid: r.failures()[:1] for cid, r in results.items() if not r.ok} == {}
    autotuned = next(r for cid, r in results.items() if cid.startswith("autotune"))
    assert len(autotuned.compiled) == 8  # every config compiled, not only the first


@pytest.mark.slow
def test_every_candidate_for_every_suite_kernel_compiles_for_cuda90(tmp_path):
    """Every candidate of every applier for every suite kernel it applies to: its forward runs on the first small
    case with launches recorded (not executed) and each launch configuration, every autotune config included,
    compiles for cuda:90 with a cold cache. Correctness under the interpreter is the per-operator
    `patterns apply --check` (and the new_gelu test above): running all of them costs minutes of CPU."""
    items, claimed = [], {}
    # tune_search's candidate is its whole static space, where a config may well not compile: the search compiles
    # each one itself and prunes those (tests/ladder/test_tune_compile.py); only its survivors reach a GPU
    names = [name for name in APPLIERS if name != "tune_search"]
    for op in SUITE:
        for i, c in enumerate(generate(op.initial_source(), str(op.kernel_path), names=names)):
            items.append((f"{op.name}.{c.applier}.{i}", op.name, c.source))
            claimed.setdefault(c.applier, set()).add(op.name)
    assert set(claimed["launch_config_sweep"]) == {op.name for op in SUITE}  # every kernel has a launch to sweep
    results = check_many(items, cache_dir=tmp_path / "triton-cache", workers=2, correctness=False)
    bad = {cid: r.failures()[:2] for cid, r in results.items() if not r.ok}
    assert not bad, bad
    for cid, r in results.items():
        assert r.correct is None and r.launches >= 1 and r.compiled, cid
        assert all("ptx" in c["stages"] and "cubin" in c["stages"] for c in r.compiled), cid
