"""`irscope show`: the trajectory at a glance in the terminal (rich)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from irscope.report.model import ReportModel, remark_text


def _fmt_delta(d: dict[str, int], limit: int = 6) -> str:
    items = sorted(d.items(), key=lambda kv: -abs(kv[1]))[:limit]
    more = f" …+{len(d) - limit}" if len(d) > limit else ""
    return ", ".join(f"{k} {v:+d}" for k, v in items) + more


def render(model: ReportModel) -> Group:
    t = model.traj
    head = Text.assemble((f"{t.kernel.name}", "bold"), f" → {t.target}   {t.kernel.source_file}:{t.kernel.first_line}")
    if t.error:
        head.append(
            f"\ncompile failed in {t.error.stage} {t.error.pass_arg or ''}: "
            f"{t.error.message.splitlines()[0] if t.error.message else ''}",
            style="red",
        )
    res = ", ".join(f"{k}={v}" for k, v in t.resources.items() if not isinstance(v, str))

    passes = Table(title="passes that changed the IR", expand=False)
    for col in ("#", "stage", "pass", "ops added", "ops removed", "counter deltas"):
        passes.add_column(col, overflow="fold")
    for e in model.graph.edges():
        passes.add_row(
            str(e.target),
            e.stage,
            e.pass_label,
            _fmt_delta(e.ops_added),
            _fmt_delta(e.ops_removed),
            _fmt_delta(e.counter_deltas),
        )

    counters = Table(title="key counters (final text of each stage)")
    counters.add_column("counter")
    for st in model.stages:
        counters.add_column(st, justify="right")
    for name, values in model.counter_table():
        counters.add_row(name, *(str(int(values[st])) if values[st] else "" for st in model.stages))

    lines = Table(title="source lines")
    for col in ("line", "source", "counters (stage: name=value)"):
        lines.add_column(col, overflow="fold")
    for hl in model.hot_lines():
        desc = "; ".join(
            f"{st}: " + ", ".join(f"{k}={v}" for k, v in c.items())
            for st, c in hl.counters.items()
            if st in model.focus_stages
        )
        lines.add_row(str(hl.line), hl.text, desc)
    memory = Table(title="memory accesses")
    for col in ("line", "kind", "shape", "verdict", "vector bits"):
        memory.add_column(col, justify="right" if col in ("line", "vector bits") else "left")
    for x in model.accesses:
        memory.add_row(
            str(x.line or "?"),
            x.kind,
            "×".join(map(str, x.shape)) or "scalar",
            x.verdict,
            str(x.vector_bits) if x.vector_bits is not None else "-",
            style=None if x.verdict in ("wide", "scalar") else "yellow",
        )
    parts: list[RenderableType] = [head, Text(f"resources: {res}"), passes, counters, lines, memory]
    if model.remarks:
        remarks = Table(title="compiler remarks (MLIR diagnostics, per pass)")
        for col in ("#", "pass", "line", "severity", "message"):
            remarks.add_column(col, overflow="fold")
        for r in model.remarks:
            remarks.add_row(str(r.snapshot), r.pass_arg, str(r.line or "-"), r.severity, remark_text(r))
        parts.append(remarks)
    return Group(*parts)


def show(model: ReportModel, console: Console) -> None:
    console.print(render(model))
