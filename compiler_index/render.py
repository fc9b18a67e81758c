"""Human-readable text for query results (the CLI's default output; `--json` bypasses this and is complete).

Long answers are bounded: results arrive ranked (compiler_index.explain), the text shows the first few of each
section and says how many more there are; `Limits` sets how many, `None` shows everything (`--all`).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from compiler_index.build import BuildReport
from compiler_index.explain import Explanation
from compiler_index.queries import (
    CallEdge,
    Conditions,
    GateInfo,
    Loc,
    OpSites,
    PassInfo,
    RemarkMatch,
    SearchHit,
    Site,
)

INDENT = "    "


@dataclass(frozen=True)
class Limits:
    """How many of each section `explanation` shows; the rest is counted on a "N more" line."""

    ops: int | None = 5  # op explanations (None: all)
    deltas: int | None = 12  # op count changes on the summary line
    sites: int | None = 3  # sites per op
    paths: int | None = 1  # call paths per site
    gates: int | None = 4  # gates per op
    remarks: int | None = 3  # diagnostics traced to their emitters


DEFAULT_LIMITS = Limits()
NO_LIMITS = Limits(None, None, None, None, None, None)


def _more(n: int, what: str) -> list[str]:
    return [f"{INDENT}… {n} more {what} (--all shows them)"] if n > 0 else []


def _first(items: list, limit: int | None) -> tuple[list, int]:
    return (items, 0) if limit is None else (items[:limit], max(len(items) - limit, 0))


def _cite(loc: Loc | None, snippet: bool = True) -> str:
    if loc is None:
        return "-"
    return f"{loc}  {loc.snippet}" if snippet and loc.snippet else str(loc)


def passes(infos: list[PassInfo]) -> str:
    out: list[str] = []
    for info in infos:
        title = f"pass {info.argument} ({info.def_name})" if info.def_name else "pass (no TableGen definition)"
        out.append(title)
        if info.summary:
            out.append(f"  summary: {info.summary}")
        if info.td:
            out.append(f"  td:      {_cite(info.td)}")
        if info.description:
            out.extend(INDENT + line for line in textwrap.shorten(info.description, 400).splitlines())
        for o in info.options:
            out.append(
                f"  option:  {o.get('argument')} ({o.get('type')}, default {o.get('default', '-')}): "
                f"{o.get('description', '')}"
            )
        if info.dependent_dialects:
            out.append(f"  dialects: {', '.join(info.dependent_dialects)}")
        for loc in info.gen_pass_def:
            out.append(f"  C++:     {_cite(loc)}")
        for loc in info.classes:
            out.append(f"  class:   {_cite(loc)}")
        for m in info.methods:
            out.append(f"           {m.name} {m.loc.file}:{m.loc.line}-{m.end_line}")
        for a in info.adders:
            how = f" [{a.match}]" if a.match and a.match != "factory" else ""
            out.append(f"  adder:   {a.qualname} → {a.builder}{how}  {a.loc}")
        for p in info.pipeline:
            cond = f"  if {p.condition}" if p.condition else ""
            args = f"({p.args})" if p.args else ""
            out.append(f"  runs:    {p.backend} {p.stage or p.method} #{p.position} {p.adder}{args}{cond}  {p.loc}")
        if info.patterns:
            out.append(f"  patterns ({len(info.patterns)}):")
            for pat in info.patterns:
                root = f"<{pat.root_op}>" if pat.root_op else ""
                out.append(f"{INDENT}{pat.name} : {pat.base}{root}  {pat.loc}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _site(site: Site, max_paths: int | None = None) -> list[str]:
    who = site.function.name if site.function else "(file scope)"
    flags = " (unqualified, ambiguous)" if site.ambiguous else ""
    target = f" [{site.target}]" if site.target else ""
    owners = f"  ← pass {', '.join(site.passes)}" if site.passes else ""
    lines = [f"  {site.loc}  {who}  {site.how}{target}{flags}{owners}", f"{INDENT}{site.loc.snippet}"]
    paths, hidden = _first(site.paths, max_paths)
    for path in paths:
        chain = " → ".join(f"{h.function.name} ({h.call})" if h.call else h.function.name for h in path.hops)
        lines.append(f"{INDENT}via {chain}")
    if site.paths_omitted or hidden:
        lines.append(f"{INDENT}(+{site.paths_omitted + hidden} more call paths)")
    return lines


def op_sites(result: OpSites) -> str:
    op = result.op
    head = (
        f"{result.action} sites of {op.name} (C++ {op.cpp_namespace + '::' if op.cpp_namespace else ''}"
        f"{op.cpp_class}; {op.resolved_by}{', ' + str(op.td) if op.td else ''})"
    )
    out = [head]
    direct = [s for s in result.sites if not s.paths]
    indirect = [s for s in result.sites if s.paths]
    if direct:
        out.append(f"direct ({len(direct)}):")
    for s in direct:
        out.extend(_site(s))
    if indirect:
        out.append(f"reached through callers ({len(indirect)}):")
        for s in indirect:
            out.extend(_site(s))
    return "\n".join(out) + "\n"


def conditions(result: Conditions) -> str:
    out = [f"conditions of {result.symbol}"]
    out.extend(f"  {n}" for n in result.notes)
    for t in result.targets:
        out.append(f"  {t.name}  {t.loc.file}:{t.loc.line}-{t.end_line}")
    current = None
    for g in result.gates:
        fn = g.function.name if g.function else ""
        if fn != current:
            current = fn
            out.append(f"{fn}{' (called from ' + g.via + ')' if g.via else ''}:")
        cond = f"if {g.condition}" if g.condition else "always"
        msg = f'  "{g.message}"' if g.message else ""
        expr = f"  returns {g.expr}" if g.expr else ""
        maybe = "  (may not apply)" if g.applies and g.applies != "yes" else ""
        out.append(f"  {g.kind:<13} {cond}{expr}{msg}{maybe}")
        out.append(f"{INDENT}{g.loc}  {g.loc.snippet}")
    if not result.gates:
        out.append("  (no gates recorded)")
    return "\n".join(out) + "\n"


def remarks(matches: list[RemarkMatch]) -> str:
    out = []
    for m in matches:
        fn = m.function.name if m.function else "(file scope)"
        owners = f"  ← pass {', '.join(m.passes)}" if m.passes else ""
        debug = f"  (debug-only: {m.debug_type})" if m.debug_type else ""
        out.append(f"{m.kind} [{m.score:.2f}] {m.loc}  {fn}{owners}{debug}")
        out.append(f'{INDENT}"{m.message}"')
        if m.condition:
            out.append(f"{INDENT}if {m.condition}")
        out.append(f"{INDENT}{m.loc.snippet}")
    return "\n".join(out) + "\n"


def edges(result: list[CallEdge], direction: str) -> str:
    out = []
    for e in result:
        tag = " (by name)" if e.by_name else ""
        if direction == "callers":
            callee = f"{e.callee.name} [{e.callee.loc}]" if e.callee else e.callee_name
            out.append(f"{e.caller.name} → {callee}{tag}  {_cite(e.call)}")
        else:
            where = f"  [{e.callee.loc}]" if e.callee else ""
            out.append(f"{e.caller.name} → {e.callee.name if e.callee else e.callee_name}{tag}{where}  {_cite(e.call)}")
    return "\n".join(out) + ("\n" if out else "(none)\n")


def search(hits: list[SearchHit]) -> str:
    return "\n".join(f"{h.kind:<12} {h.name}  {h.loc}  {h.snippet}" for h in hits) + ("\n" if hits else "(none)\n")


def _gate_line(g: GateInfo) -> str:
    cond = f"if {g.condition}" if g.condition else "always"
    msg = f'  "{g.message}"' if g.message else ""
    expr = f"  returns {g.expr}" if g.expr else ""
    fn = g.function.name if g.function else ""
    maybe = "  (may not apply)" if g.applies and g.applies != "yes" else ""
    return f"{INDENT}{g.kind:<13} {cond}{expr}{msg}  [{fn} {g.loc}]{maybe}"


def explanation(e: Explanation, lim: Limits = DEFAULT_LIMITS) -> str:
    """The explanation, each section cut to `lim` (ranked already: the first are the most relevant)."""
    out = [f"{e.label}  (snapshot {e.index}, adder {e.adder or '-'}{', for ' + e.target if e.target else ''})"]
    for p in e.passes:
        where = p.classes[0] if p.classes else p.td
        out.append(f"  pass {p.argument or '-'} ({p.def_name or 'no TableGen def'})  {where or ''}")
    out.extend(f"  note: {n}" for n in e.notes)
    if e.deltas:
        shown, hidden = _first(e.deltas, lim.deltas)
        more = f", … {hidden} more" if hidden else ""
        out.append("  op count changes: " + ", ".join(f"{d.op} {d.before}→{d.after}" for d in shown) + more)
    ops, hidden_ops = _first(e.ops, lim.ops)
    for o in ops:
        verb = "created" if o.action == "create" else "removed"
        out.append(f"\n{o.op} {o.before}→{o.after}: {verb} by")
        sites, hidden = _first(o.sites, lim.sites)
        for s in sites:
            out.extend(_site(s, lim.paths))
        out.extend(_more(hidden, "sites in this pass"))
        elsewhere = [
            f"{o.other_passes} other {o.action} sites belong to other passes" if o.other_passes else "",
            f"{o.other_targets} are in another backend's files" if o.other_targets else "",
        ]
        if any(elsewhere):
            out.append(f"  ({'; '.join(x for x in elsewhere if x)})")
        if o.note:
            out.append(f"  note: {o.note}")
        if o.gates:
            out.append("  gates in those functions:")
            gates, hidden = _first(o.gates, lim.gates)
            out.extend(_gate_line(g) for g in gates)
            out.extend(_more(hidden, "gates"))
        if o.gates_dropped:
            out.append(f"  ({o.gates_dropped} gates left out: their guards contradict {e.target})")
    if hidden_ops:
        names = ", ".join(f"{o.op} {o.before}→{o.after}" for o in e.ops[len(ops) :][:8])
        out.append(f"\n… {hidden_ops} more ops ({names}{', …' if hidden_ops > 8 else ''}; --all shows them)")
    if e.remarks:
        out.append("\ndiagnostics printed during the pass come from:")
        matches, hidden = _first(e.remarks, lim.remarks)
        out.append(remarks(matches).rstrip())
        out.extend(_more(hidden, "emitters"))
    return "\n".join(out) + "\n"


def build_report(r: BuildReport) -> str:
    secs = ", ".join(f"{k} {v:.2f} s" for k, v in r.seconds.items())
    lines = [
        f"{r.db}: {r.files} files ({r.parsed} parsed, {r.unchanged} unchanged, {r.removed} removed"
        f"{', relinked' if r.relinked else ''}); {secs}"
    ]
    if r.parse_error_files:
        lines.append(f"  {r.parse_error_files} files have tree-sitter ERROR nodes (facts around them were kept)")
    lines.extend(f"  {n}" for n in r.notes)
    if r.backend == "libclang":
        c = r.clang
        by_backend = ", ".join(f"{n} by {b}" for b, n in c.get("files_by_backend", {}).items())
        lines.append(
            f"  libclang ({r.compile_commands}): {c.get('translation_units', 0)} translation units parsed, "
            f"{c.get('with_errors', 0)} with errors ({c.get('errors', 0)} errors; what parsed was kept); "
            f"files: {by_backend}"
        )
        if c.get("missing_headers"):
            lines.append(
                f"  headers not found: {', '.join(c['missing_headers'])} (add their -I to the compile "
                "commands, or build the project first so generated headers exist)"
            )
        if c.get("listed_not_indexed"):
            lines.append(
                f"  {c['listed_not_indexed']} files of the compilation database are outside the indexed sources"
            )
    lines.extend(f"  error: {e}" for e in r.errors)
    return "\n".join(lines) + "\n"
