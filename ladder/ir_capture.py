"""Per-pass IR of every kernel a candidate's `forward` compiles, on a CPU machine, for L3.

    capture(kernel.py, op, case, out_dir, target="cuda:90") → [trajectory directories]

The module runs in a child process (`python -m ladder.ir_capture …`): it is untrusted code. Inside, Triton's
JIT compiles for `target` through irscope's dry-run driver, whose launches do nothing
(`irscope.capture.dry_run_driver`), and `irscope.record` keeps one trajectory per compiled kernel. Inputs are the
operator's real case layouts on CPU, uninitialized (`Operator.placeholder_inputs`: nothing is generated), so the
JIT specializes (divisibility, constexprs) as it would on the GPU; the outputs are left unwritten and ignored.

An autotuned kernel cannot be timed here, so the driver's benchmarker reports every config as equally fast: each
config is compiled (and captured) once, as the autotuner's benchmark would on the GPU, and the first is then used.
L3 therefore sees every config the GPU could pick, one trajectory each.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from irscope import childproc
from irscope.targets import DEFAULT_TARGET, Target

if TYPE_CHECKING:  # the parent never imports the capture machinery: only its child runs it
    from irscope.capture.api import Recording
    from suite.operator import Operator


class CaptureError(RuntimeError):
    pass


def capture(
    kernel: Path, op_ref: str, case: str, out_dir: Path, target: str | Target = DEFAULT_TARGET, timeout_s: float = 600
) -> list[Path]:
    from suite.operator import resolve_operator

    layout = case_layout(resolve_operator(op_ref), case)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ladder-ir-") as tmp:
        # A real compile: an interpreter mode the parent may be in must not reach the child.
        env = childproc.child_env(Path(tmp), {"TRITON_INTERPRET": "0", "TRITON_CACHE_DIR": str(Path(tmp) / "cache")})
        cmd = [
            sys.executable,
            "-m",
            "ladder.ir_capture",
            str(kernel.resolve()),
            op_ref,
            case,
            str(out_dir.resolve()),
            str(target),
            json.dumps(layout),
        ]
        run = childproc.run(cmd, env=env, cwd=tmp, timeout_s=timeout_s)
    if run.timed_out:
        raise CaptureError(f"capturing {kernel.name} timed out after {timeout_s:g} s")
    if run.returncode != 0:
        raise CaptureError(f"capturing {kernel.name} on case {case} exited {run.returncode}: {run.stderr[-3000:]}")
    dirs = [Path(p) for p in json.loads(run.stdout.strip().splitlines()[-1])]
    if not dirs:
        raise CaptureError(f"{kernel.name}: forward compiled no Triton kernel on case {case}")
    return dirs


def case_layout(op: Operator, case: str) -> list[dict] | None:
    """The placeholder layout of `op`'s case `case`, computed here so that the child need not import torch's dynamo
    (Operator.placeholder_layout). None when make_inputs cannot run under FakeTensorMode: the child then tries
    itself, and its error is the capture's."""
    chosen = next((c for c in op.cases if c.name == case), None)
    if chosen is None:
        raise CaptureError(f"{op.name} has no case {case!r}; its cases are {', '.join(c.name for c in op.cases)}")
    try:
        return op.placeholder_layout(chosen)
    except Exception:
        return None


def record_forward(
    kernel: str,
    op_ref: str,
    case: str,
    target: str,
    out_dir: str | None = None,
    disassemble: bool = True,
    layout: list[dict] | None = None,
) -> Recording:
    """In a child process only (it imports and runs the module): `forward` on the case's CPU inputs under the
    dry-run driver, every kernel it compiles recorded (kept in `out_dir` when given). layout: the case's
    placeholder layout, as the parent computed it (Operator.placeholder_layout; None: computed here)."""
    import irscope
    from irscope.capture import dry_run_driver
    from irscope.capture.loader import load_module
    from suite.operator import resolve_operator

    op = resolve_operator(op_ref)
    chosen = next(c for c in op.cases if c.name == case)
    mod = load_module(kernel, "candidate")
    inputs = op.placeholder_inputs(chosen, "cpu", layout)  # layouts, not values, decide what compiles
    with dry_run_driver(target), irscope.record(out_dir, disassemble=disassemble) as rec:
        mod.forward(*inputs)
    return rec


def _child(kernel: str, op_ref: str, case: str, out_dir: str, target: str, layout: str) -> list[str]:
    rec = record_forward(kernel, op_ref, case, target, out_dir, layout=json.loads(layout))
    return [str(Path(out_dir) / f"{i:03d}-{t.kernel.name}") for i, t in enumerate(rec.trajectories)]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="child process of ladder.ir_capture.capture")
    ap.add_argument("kernel")
    ap.add_argument("op_ref")
    ap.add_argument("case")
    ap.add_argument("out_dir")
    ap.add_argument("target")
    ap.add_argument("layout", help="Operator.placeholder_layout of the case, as JSON (null: computed in the child)")
    print(json.dumps(_child(**vars(ap.parse_args()))))
