"""The evidence packet of a round as chat messages: operator contract, current kernel, timings, diagnosis."""

from __future__ import annotations

import inspect

from ladder.rewriters.base import RewriteRequest
from ladder.rewriters.extract import ALLOWED_IMPORTS

SYSTEM = """You optimize Triton kernels for NVIDIA GPUs (Hopper). You receive an operator's PyTorch reference, \
the current Triton kernel module, its measurements, and a diagnosis whose every claim cites its evidence.

Reply with one short paragraph saying what you changed and why, then exactly one fenced ```python block holding \
the complete new module. The module must:
- define `forward(*inputs)` with the same parameters and outputs (shapes, dtypes, order) as the current one;
- compute with Triton kernels (@triton.jit); use torch only to allocate outputs and make views;
- import only: {allowed};
- be correct on every listed shape case and on adversarial inputs (ties, large magnitudes, odd sizes).
Give no other code block."""


def _reference_source(request: RewriteRequest) -> str:
    try:
        return inspect.getsource(request.op.reference).rstrip()
    except (OSError, TypeError):
        return f"# source unavailable; {request.op.reference!r}"


def _measurements(request: RewriteRequest) -> str:
    v = request.base_validation
    if v is None:
        return "Not validated yet."
    if not v.timed:
        return f"Validated on {v.device}: {'correct' if v.correct else 'INCORRECT: ' + v.detail}; not timed."
    rows = ["| case | ms | speed of light ms | % of SoL | eager ms | torch.compile ms |", "|---|---|---|---|---|---|"]
    for c in v.cases:
        sol = f"{c.sol_ms:.4g}" if c.sol_ms else "?"
        pct = f"{c.sol_ms / c.ms:.0%}" if c.sol_ms and c.ms else "?"
        eager = f"{c.eager_ms:.4g}" if c.eager_ms else "?"
        comp = f"{c.compile_ms:.4g}" if c.compile_ms else "?"
        rows.append(f"| {c.case} | {c.ms:.4g} | {sol} | {pct} | {eager} | {comp} |")
    return f"Measured on {v.device} (medians):\n" + "\n".join(rows)


def _diagnosis(request: RewriteRequest) -> tuple[str, str]:
    """(the diagnosis section, the task sentence)."""
    d = request.diagnosis
    if d is None:
        return "No diagnosis this round.", "Make the kernel faster on the shape cases while keeping it correct."
    if d.family is None or d.hypothesis is None:
        raise ValueError(f"a rewrite needs an actionable diagnosis, not an {d.outcome} one")
    lines = [
        f"The ladder stopped at {d.level}.",
        f"Hypothesis: {d.hypothesis.bottleneck} at {d.hypothesis.hotspot} "
        f"(cases: {', '.join(d.hypothesis.cases) or 'all'}).",
        f"Rewrite family: {d.family.name}: {d.family.description}",
    ]
    cf = d.hypothesis.counterfactual
    if cf and cf.get("verdict") == "confirmed":
        lines.append(
            f"Requirement (confirmed by compiling the current kernel with it on the CPU): {cf['requirement']}. "
            f"Result of that compile: {cf['detail']}"
        )
    elif cf:
        lines.append(f"A compile-time condition was tested and did not remove the symptom: {cf['detail']}")
    lines += [
        "",
        "Evidence:",
    ]
    lines += [f"- {e.render()}" for e in d.evidence()]
    if d.escalations():
        lines += ["", "Lower levels that could not settle it:"]
        lines += [f"- {x['level']} ({x['status']}): {x['failed_test']} {x['why']}".rstrip() for x in d.escalations()]
    task = (
        f"Apply the rewrite family `{d.family.name}` to the current kernel, guided by the evidence, keeping it correct."
    )
    if d.hypothesis.confirmed:
        task += " The rewrite must meet the confirmed requirement above."
    return "\n".join(lines), task


def _history(request: RewriteRequest) -> str:
    if not request.history:
        return "None yet."
    out = []
    for r in request.history:
        speed = f", {r.speedup:.3g}x vs its base" if r.speedup is not None else ""
        note = f" ({r.note})" if r.note else ""
        out.append(f"- round {r.round}: {r.family or 'no family'} → {r.decision}{speed}{note}")
    return "\n".join(out)


def build_messages(request: RewriteRequest) -> list[dict[str, str]]:
    op = request.op
    cases = "\n".join(f"- {c.label()} {c.role}".rstrip() for c in op.cases)
    t = op.tolerance
    diagnosis, task = _diagnosis(request)
    user = f"""# Operator {op.name} (#{op.number}, {op.source}; {op.category}; dtype {op.dtype})

## Reference (PyTorch)
```python
{_reference_source(request)}
```

## Shape cases
{cases}

## Correctness
Tolerance: {t.kind}, rtol {t.rtol}, atol {t.atol}, relative L2 {t.rel_l2}. Input kinds checked: \
{", ".join(op.input_kinds)}.{(" Notes: " + op.notes) if op.notes else ""}

## Current kernel (round {request.base_round})
```python
{request.base_source.rstrip()}
```

## Measurements of the current kernel
{_measurements(request)}

## Diagnosis
{diagnosis}

## Earlier rounds
{_history(request)}

## Task
{task}"""
    return [
        {"role": "system", "content": SYSTEM.format(allowed=", ".join(sorted(ALLOWED_IMPORTS)))},
        {"role": "user", "content": user},
    ]


def correction(error: str) -> str:
    return (
        f"Your reply could not be used: {error}.\nReply again: one short paragraph, then exactly one ```python "
        f"block with the whole module (defining forward; importing only "
        f"{', '.join(sorted(ALLOWED_IMPORTS))})."
    )
