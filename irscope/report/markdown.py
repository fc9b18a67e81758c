"""A Markdown report: the same sections as the terminal view, for notes, issues and pull requests."""

from __future__ import annotations

from irscope.report.model import ReportModel, remark_text


def _table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    return "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in esc]
    )


def render(model: ReportModel) -> str:
    t = model.traj
    parts = [
        f"# {t.kernel.name} → {t.target}",
        "",
        f"Source `{t.kernel.source_file}:{t.kernel.first_line}`; Triton {t.versions.get('triton', '?')}; "
        f"{len(t.snapshots)} snapshots, {len(t.changed_passes())} passes changed the IR.",
        "",
    ]
    if t.error:
        parts += [
            f"**Compile failed** in {t.error.stage} {t.error.pass_arg or ''}:",
            "",
            "```",
            t.error.message.strip(),
            "```",
            "",
        ]
    parts += [
        "## Resources",
        "",
        _table(["resource", "value"], [[k, str(v)] for k, v in t.resources.items() if not isinstance(v, str)]),
        "",
    ]
    parts += [
        "## Passes that changed the IR",
        "",
        _table(
            ["#", "stage", "pass", "ops added", "ops removed", "counter deltas"],
            [
                [
                    str(e.target),
                    e.stage,
                    f"`{e.pass_arg}`" + (f" ({e.change})" if e.change else ""),
                    ", ".join(f"{k} +{v}" for k, v in e.ops_added.items()),
                    ", ".join(f"{k} −{v}" for k, v in e.ops_removed.items()),
                    ", ".join(f"{k} {v:+d}" for k, v in e.counter_deltas.items()),
                ]
                for e in model.graph.edges()
            ],
        ),
        "",
    ]
    parts += [
        "## Key counters",
        "",
        _table(
            ["counter", *model.stages], [[n, *(str(int(v[s])) for s in model.stages)] for n, v in model.counter_table()]
        ),
        "",
    ]
    parts += [
        "## Source lines",
        "",
        _table(
            ["line", "source", "counters"],
            [
                [
                    str(h.line),
                    f"`{h.text}`",
                    "; ".join(f"{st}: " + ", ".join(f"{k}={v}" for k, v in c.items()) for st, c in h.counters.items()),
                ]
                for h in model.hot_lines()
            ],
        ),
        "",
    ]
    if model.remarks:
        parts += [
            "## Compiler remarks",
            "",
            _table(
                ["#", "pass", "line", "severity", "message"],
                [
                    [str(r.snapshot), f"`{r.pass_arg}`", str(r.line or "-"), r.severity, remark_text(r)]
                    for r in model.remarks
                ],
            ),
            "",
        ]
    return "\n".join(parts)
