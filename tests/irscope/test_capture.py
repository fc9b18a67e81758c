"""Capture is faithful: stage outputs byte-identical to a plain compile, the same passes as MLIR_ENABLE_DUMP,
the JIT's specialization, and nothing of the user's environment touched."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import triton
from triton import knobs
from triton.runtime.driver import driver as driver_config

import irscope
from irscope.capture import cpu_driver, dry_run_driver
from irscope.capture.loader import load_module
from irscope.capture.pass_names import dump_headers
from irscope.capture.specialize import SpecError, TensorSpec, build_request
from irscope.examples import EXAMPLES
from irscope.parse import parse_mlir

from .conftest import capture_example


def plain_compile(name: str, target: str):
    ex = EXAMPLES[name]
    req = build_request(ex.kernel, ex.args, dict(ex.options), target)
    with knobs.cache.scope():
        knobs.compilation.always_compile = True
        return triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)


def test_matmul_has_every_pass_and_artifacts(matmul_dump):
    traj, _ = matmul_dump
    passes = list(traj.passes())
    assert len(passes) >= 60
    assert traj.stages == ["ttir", "ttgir", "llir", "llvm", "ptx"]
    assert {"cubin", "sass", "ptxas-log"} <= set(traj.artifacts)
    assert "wgmma.mma_async" in traj.stage_output("ptx").text
    assert "cp.async" in traj.stage_output("ptx").text  # pipelined: the JIT's divisibility attrs were applied
    assert "HGMMA" in traj.artifacts["sass"].data
    assert traj.resources["registers"] > 0 and traj.resources["shared_bytes"] > 0
    names = {s.pass_arg for s in passes}
    assert {"tritongpu-coalesce", "tritongpu-remove-layout-conversions", "tritongpu-pipeline"} <= names
    assert all(s.pass_name for s in passes if s.kind == "mlir"), "every MLIR pass has its MLIR name"


@pytest.mark.parametrize("target", ["cuda:90", "hip:gfx942"])
def test_stage_outputs_byte_identical_to_plain_compile(target, matmul_dump):
    traj = matmul_dump[0] if target == "cuda:90" else capture_example("matmul", target)
    plain = plain_compile("matmul", target)
    # Triton's llir stage output (LLVM IR) is irscope's llvm stage; irscope's llir holds the LLVM-dialect passes
    for stage, ours in (("ttir", "ttir"), ("ttgir", "ttgir"), ("llir", "llvm")) + (
        (("ptx", "ptx"),) if target.startswith("cuda") else (("amdgcn", "amdgcn"),)
    ):
        assert traj.stage_output(ours).text == plain.asm[stage], f"{stage} differs from the compiler's output"
    binary = "cubin" if target.startswith("cuda") else "hsaco"
    assert traj.artifacts[binary].data == plain.asm[binary]


def test_ttgir_ops_resolve_to_kernel_lines(matmul_dump):
    traj, _ = matmul_dump
    src = traj.kernel.source_file
    total = resolved = 0
    for snap in traj.stage_snapshots("ttgir"):
        for op in parse_mlir(snap.text).ops:
            if op.name in ("builtin.module",):
                continue
            total += 1
            frame = op.location.user_frame(src)
            resolved += frame is not None and traj.kernel.first_line <= frame.line <= traj.kernel.last_line
    assert total > 1000
    assert resolved / total >= 0.95, f"only {resolved}/{total} TTGIR ops resolved to a line of the kernel"


def test_pass_sequence_equals_mlir_enable_dump(argmax_traj, tmp_path):
    script = textwrap.dedent("""
        import os, sys
        os.environ["MLIR_ENABLE_DUMP"] = "1"
        import triton
        from irscope.examples import EXAMPLES
        from irscope.capture.specialize import build_request
        ex = EXAMPLES["top2_argmax"]
        req = build_request(ex.kernel, ex.args, dict(ex.options), "cuda:90")
        triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
    """)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    headers = dump_headers(proc.stderr)
    assert len(headers) > 60
    # Module-level passes in order; the inliner's nested per-function canonicalizations belong to `inline`.
    dumped = [(name, arg) for name, arg, anchor in headers if anchor == "builtin.module"]
    ours = []
    for s in argmax_traj.passes():
        if s.kind == "mlir":
            ours.append((s.pass_name, s.pass_arg))
            ours.extend(DYNAMIC_SUBPIPELINES.get(s.pass_arg, []))
    assert ours == dumped


# Passes that run a nested pipeline from inside (OpPassManager + runPipeline): the dump prints those nested
# passes as if they were top-level; in the trajectory they are part of their parent's snapshot.
DYNAMIC_SUBPIPELINES = {
    # lib/Dialect/TritonGPU/Transforms/OptimizeDotOperands.cpp:336-338
    "tritongpu-optimize-dot-operands": [("Canonicalizer", "canonicalize")],
    # third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/ConvertWarpSpecializeToLLVM.cpp:558-560
    "convert-warp-specialize-to-llvm": [("ReconcileUnrealizedCastsPass", "reconcile-unrealized-casts")],
}


def test_environment_cache_and_knobs_untouched(tmp_path, monkeypatch):
    user_cache = tmp_path / "user-cache"
    user_cache.mkdir()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(user_cache))
    env_before = dict(os.environ)
    knobs_before = (
        knobs.cache.dir,
        knobs.runtime.add_stages_inspection_hook,
        knobs.compilation.listener,
        knobs.nvidia.dump_ptxas_log,
        knobs.compilation.always_compile,
    )
    from triton._C import libtriton

    pm_class, adder = libtriton.ir.pass_manager, libtriton.passes.ttgpuir.add_coalesce
    capture_example("add")
    assert dict(os.environ) == env_before
    assert list(user_cache.iterdir()) == [], "the user's Triton cache was written"
    assert (
        knobs.cache.dir,
        knobs.runtime.add_stages_inspection_hook,
        knobs.compilation.listener,
        knobs.nvidia.dump_ptxas_log,
        knobs.compilation.always_compile,
    ) == knobs_before
    assert libtriton.ir.pass_manager is pm_class and libtriton.passes.ttgpuir.add_coalesce is adder


def test_repeated_and_nested_captures_agree():
    a = capture_example("add")
    with irscope.record() as rec:
        b = capture_example("add")  # an inner capture inside a live recording
    assert [s.sha1 for s in a.snapshots] == [s.sha1 for s in b.snapshots]
    assert len(rec) == 0, "the inner capture's compile belongs to the inner session only"


def test_user_hook_still_runs_during_capture():
    seen = []
    knobs.runtime.add_stages_inspection_hook = lambda *args: seen.append(args[0].target)
    try:
        capture_example("add")
    finally:
        knobs.runtime.add_stages_inspection_hook = None
    assert len(seen) == 1


def test_specialization_matches_the_jit():
    from irscope.examples.kernels import add_kernel

    x = torch.empty(4096)
    with cpu_driver("cuda:90"), irscope.record() as rec:
        add_kernel.warmup(x, x, x[1:], 4096, BLOCK=1024, grid=(1,))  # x[1:] is 4-byte aligned only
    (jit_traj,) = rec.trajectories
    req = build_request(add_kernel, (x, x, x[1:], 4096), {"BLOCK": 1024}, "cuda:90")
    assert req.specialization.signature == jit_traj.specialization.signature
    assert req.specialization.attrs == jit_traj.specialization.attrs
    assert req.specialization.attrs["out_ptr"] == []  # unaligned: no divisibility, like the JIT
    assert req.specialization.attrs["x_ptr"] == [["tt.divisibility", 16]]
    spec_req = build_request(
        add_kernel, ("*fp32", "*fp32", TensorSpec("fp32", (4096,), align=4), 4096), {"BLOCK": 1024}, "cuda:90"
    )
    assert spec_req.specialization.attrs == req.specialization.attrs
    meta = torch.empty(4096, device="meta")
    assert build_request(add_kernel, (meta, meta, meta, 4096), {"BLOCK": 1024}).specialization.attrs["out_ptr"]


TUNED = """
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (128, 256, 512)], key=["n"])
@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
"""


def test_dry_run_driver_compiles_every_autotune_config_and_launches_nothing(tmp_path):
    (tmp_path / "tuned.py").write_text(TUNED)
    kernel = load_module(tmp_path / "tuned.py", "dry_run_tuned").double_kernel
    x, out = torch.ones(1000), torch.zeros(1000)
    before = driver_config._active
    with dry_run_driver("cuda:90"), irscope.record() as rec:
        kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
    assert sorted(t.specialization.constexprs["BLOCK"] for t in rec.trajectories) == [128, 256, 512]
    assert all(t.complete and t.error is None and "ptx" in t.stages for t in rec.trajectories)
    assert torch.equal(out, torch.zeros(1000))  # no launch ran
    assert driver_config._active is before


def test_integer_one_becomes_constexpr_and_options_recorded():
    ex = EXAMPLES["matmul"]
    req = build_request(ex.kernel, ex.args, dict(ex.options), "cuda:90")
    assert req.specialization.signature["stride_ak"] == "constexpr"
    assert req.specialization.constexprs["stride_ak"] == 1
    assert req.specialization.options["num_stages"] == 3
    assert json.loads(req.specialization.triton)["name"].endswith("matmul_kernel")


def test_bad_arguments_are_clear():
    from irscope.examples.kernels import add_kernel

    with pytest.raises(SpecError, match="missing argument"):
        build_request(add_kernel, ("*fp32",), {"BLOCK": 64})
    with pytest.raises(SpecError, match="unknown dtype"):
        build_request(add_kernel, ("*fp33", "*fp32", "*fp32", 10), {"BLOCK": 64})
    with pytest.raises(SpecError, match="not a parameter"):
        build_request(add_kernel, ("*fp32", "*fp32", "*fp32", 10), {"BLOCK": 64, "BLOK": 3})
    with pytest.raises(SpecError, match=r"not a @triton\.jit"):
        build_request(len, (), {})


def test_amd_and_ampere_targets():
    hip = capture_example("matmul", "hip:gfx942")
    assert hip.stages == ["ttir", "ttgir", "llir", "llvm", "amdgcn"] and "hsaco" in hip.artifacts
    assert "v_mfma" in hip.stage_output("amdgcn").text and hip.resources["vgprs"] > 0
    amp = capture_example("matmul", "cuda:80")
    ptx = amp.stage_output("ptx").text
    assert "mma.sync" in ptx and "wgmma" not in ptx
