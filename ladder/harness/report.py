"""Human-readable views of a suite run document (ladder.harness.suite_run): a rich table and a matplotlib plot."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table


def _ms(v: float | None) -> str:
    return f"{v:.4g}" if v else "-"


def _x(v: float | None) -> str:
    return f"{v:.2f}x" if v else "-"


def print_table(doc: dict, console: Console) -> None:
    gpu = bool((doc.get("environment") or {}).get("ceilings"))
    table = Table(title="ladder bench" + ("" if gpu else " (CPU: interpreter correctness only)"), show_lines=False)
    cols = ["op", "case", "ok"] + (
        ["cand ms", "init ms", "eager ms", "compile ms", "GB/s", "SoL", "x eager", "x compile", "flags"]
        if gpu
        else ["runs", "max abs err", "problems"]
    )
    for c in cols:
        table.add_column(c, overflow="fold")
    for entry in doc.get("operators", []):
        for rec in entry["cases"]:
            ok = "[green]ok[/]" if rec.get("correct") else "[red]FAIL[/]"
            label = rec.get("label", rec["case"])
            if gpu:
                m = rec.get("metrics") or {}
                impl = m.get("impl", {})
                cand = impl.get("candidate", {})
                frac = cand.get("frac_sol")
                table.add_row(
                    entry["op"],
                    label,
                    ok,
                    _ms(cand.get("ms")),
                    _ms(impl.get("initial", {}).get("ms")),
                    _ms(impl.get("eager", {}).get("ms")),
                    _ms(impl.get("compile", {}).get("ms")),
                    f"{cand['gbps']:.0f}" if cand.get("gbps") else "-",
                    f"{frac:.0%}" if frac else "-",
                    _x(m.get("speedup", {}).get("eager")),
                    _x(m.get("speedup", {}).get("compile")),
                    "; ".join(m.get("flags", []) + rec.get("errors", []))[:120],
                )
            else:
                v = rec.get("validation") or {}
                problems = [e.splitlines()[0] for e in rec.get("errors", [])]
                problems += [p.splitlines()[0] for f in v.get("failures", []) for p in f["problems"]][:2]
                table.add_row(
                    entry["op"],
                    label,
                    ok,
                    str(v.get("runs", 0)),
                    f"{v.get('max_abs', 0):.2g}",
                    "; ".join(problems)[:200],
                )
    console.print(table)
    agg = doc.get("aggregate") or {}
    for ref in ("initial", "eager", "compile"):
        a = agg.get(f"vs_{ref}")
        if a:
            console.print(
                f"candidate vs {ref}: geo-mean {_x(a['geomean'])}, median {_x(a['median'])}, "
                f">2x {a['over_2x']}/{a['operators']}, >5x {a['over_5x']}/{a['operators']}, "
                f"geo-mean without MoE {_x(a['geomean_without_moe'])}, fast_p {a['fast_p']}"
            )
    if doc.get("skipped"):
        console.print(f"[yellow]skipped:[/] {', '.join(s['op'] for s in doc['skipped'])}")


def save_plot(doc: dict, path: Path) -> Path | None:
    """Per-operator geo-mean speedups of the candidate (log scale) and per-case fraction of speed of light."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agg = doc.get("aggregate") or {}
    refs = [r for r in ("initial", "eager", "compile") if agg.get(f"vs_{r}")]
    ops = [e["op"] for e in doc.get("operators", [])]
    if not refs or not ops:
        return None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(10, 0.45 * len(ops)), 9))
    width = 0.8 / len(refs)
    for k, ref in enumerate(refs):
        per_op = agg[f"vs_{ref}"]["per_op"]
        xs = [i + k * width for i, op in enumerate(ops) if (per_op.get(op) or {}).get("measured_speedup")]
        ys = [per_op[op]["measured_speedup"] for op in ops if (per_op.get(op) or {}).get("measured_speedup")]
        top.bar(xs, ys, width=width, label=f"candidate vs {ref}")
    top.axhline(1.0, color="black", linewidth=0.8)
    top.set_yscale("log")
    top.set_ylabel("speedup (geo-mean over cases)")
    top.set_xticks([i + 0.4 - width / 2 for i in range(len(ops))], ops, rotation=60, ha="right", fontsize=8)
    top.legend(fontsize=8)
    for impl, marker in (("candidate", "o"), ("eager", "x"), ("compile", "^")):
        xs, ys = [], []
        for i, entry in enumerate(doc["operators"]):
            for rec in entry["cases"]:
                frac = ((rec.get("metrics") or {}).get("impl", {}).get(impl) or {}).get("frac_sol")
                if frac:
                    xs.append(i)
                    ys.append(frac)
        bottom.scatter(xs, ys, marker=marker, label=impl, s=18)
    bottom.set_ylabel("fraction of speed of light")
    bottom.set_yscale("log")
    bottom.set_xticks(range(len(ops)), ops, rotation=60, ha="right", fontsize=8)
    bottom.legend(fontsize=8)
    fig.suptitle((doc.get("environment") or {}).get("gpu", "") + " — " + doc.get("command", "")[:100], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
