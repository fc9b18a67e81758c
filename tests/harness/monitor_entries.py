"""Sandbox entry for tests/harness/test_anticheat.py: the runtime monitor on real interpreted launches. It must
run in a fresh process started with TRITON_INTERPRET=1: triton.language's own @jit helpers (tl.sum, …) are
interpreted only if the variable is set when triton is first imported."""

import torch

from irscope.capture.loader import load_module
from ladder.harness.anticheat import ForwardMonitor
from suite.operator import KERNELS_DIR


def monitor_scenarios(payload, emit):
    import triton

    out = {}
    forward = load_module(KERNELS_DIR / "batch_norm_train.py", "monitor_bn").forward
    hook_calls = []
    triton.knobs.runtime.launch_enter_hook.add(hook_calls.append)
    inputs = torch.randn(2, 3, 4, 5), torch.randn(3), torch.randn(3)
    with ForwardMonitor() as m:
        forward(*inputs)
    triton.knobs.runtime.launch_enter_hook.remove(hook_calls.append)
    out["kernel"] = {
        "hook_calls": len(hook_calls),
        "launches": m.report.launches,
        "kernels": dict(m.report.kernels),
        "aten_ops": dict(m.report.aten_ops),
        "problems": m.report.problems(),
    }
    with ForwardMonitor() as m:
        y = torch.randn(3, 4)
        (y * 2 + 1).sum()
    out["torch_only"] = {"problems": m.report.problems()}
    x = torch.randn(4, 4).t()
    with ForwardMonitor() as m:
        x.contiguous()
        x.to(torch.float64)
    out["copies"] = {"forbidden": m.report.forbidden_ops}
    return out
