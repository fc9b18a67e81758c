"""A pass by any of its names: its TableGen definition, C++ class and methods, Python adders, pipeline positions and
the patterns it registers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from compiler_index.queries.context import Context, connection, not_found
from compiler_index.queries.results import Adder, PassInfo, PatternRef, PipelineUse, QueryError


def pass_info(db: str | Path | sqlite3.Connection, name: str) -> list[PassInfo]:
    """A pass by argument (`tritongpu-coalesce`), TableGen def, C++ class, or Python adder (`add_coalesce`,
    `passes.ttgpuir.add_coalesce`): its .td definition, C++ implementation, adders, pipeline positions, patterns."""
    with connection(db) as con:
        ctx = Context(con)
        out = []
        for part in [p.strip() for p in name.split(",") if p.strip()]:  # composite adders print "a,b"
            out.extend(find_passes(ctx, part))
        return out


def find_passes(ctx: Context, name: str) -> list[PassInfo]:
    """pass_info for one name on an open context; QueryError when nothing matches (symbols tries it last)."""
    con = ctx.con
    q = name.removeprefix("triton._C.libtriton.")
    defs = [r[0] for r in con.execute("SELECT def_name FROM td_passes WHERE argument = ? OR def_name = ?", (q, q))]
    if not defs:
        defs = [r[0] for r in con.execute("SELECT DISTINCT def_name FROM pass_classes WHERE class_name = ?", (q,))]
    adder_rows = []
    if not defs:
        adder_rows = con.execute(
            "SELECT * FROM adders WHERE qualname = ? OR name = ? OR qualname LIKE ?", (q, q, f"%.{q}")
        ).fetchall()
        defs = sorted({r["def_name"] for r in adder_rows if r["def_name"]})
    if not defs and not adder_rows:
        raise QueryError(not_found(con, "pass", q))
    infos = [_pass_for_def(ctx, d) for d in defs]
    for r in adder_rows:  # adders of passes TableGen does not define (upstream MLIR passes)
        if not r["def_name"]:
            info = PassInfo(
                def_name=None,
                argument=None,
                summary="not a Triton TableGen pass (an upstream MLIR pass or a hand-built pipeline)",
            )
            info.adders = [_adder(ctx, r)]
            info.pipeline = _pipeline(ctx, [r["qualname"]])
            infos.append(info)
    return infos


def _adder(ctx: Context, r: sqlite3.Row) -> Adder:
    return Adder(r["qualname"], r["builder"], r["match"] or "", ctx.loc(r["file_id"], r["line"], r["snippet"]))


def _pipeline(ctx: Context, adders: list[str]) -> list[PipelineUse]:
    if not adders:
        return []
    rows = ctx.con.execute(
        f"SELECT s.*, g.stage FROM pipeline_steps s LEFT JOIN pipeline_stages g ON g.file_id = s.file_id AND "
        f"g.method = s.method WHERE s.adder IN ({','.join('?' * len(adders))}) ORDER BY s.backend, s.file_id, s.line",
        adders,
    ).fetchall()
    seen, out = set(), []
    for r in rows:
        if r["id"] in seen:  # a method mapped to two stage keys appears once
            continue
        seen.add(r["id"])
        out.append(
            PipelineUse(
                r["backend"],
                r["stage"] or "",
                r["method"],
                r["position"],
                r["adder"],
                r["args"],
                r["condition"],
                ctx.loc(r["file_id"], r["line"], r["snippet"]),
            )
        )
    return out


def _pass_for_def(ctx: Context, def_name: str) -> PassInfo:
    con = ctx.con
    p = con.execute("SELECT * FROM td_passes WHERE def_name = ?", (def_name,)).fetchone()
    info = PassInfo(
        def_name=def_name,
        argument=p["argument"],
        summary=p["summary"],
        description=p["description"],
        anchor=p["anchor"],
        options=json.loads(p["options"]),
        dependent_dialects=json.loads(p["dependent_dialects"]),
        td=ctx.loc(p["file_id"], p["line"], p["snippet"]),
    )
    classes = con.execute("SELECT * FROM pass_classes WHERE def_name = ?", (def_name,)).fetchall()
    for c in classes:
        if c["how"] == "gen-pass-def":
            info.gen_pass_def.append(ctx.loc(c["file_id"], c["line"], f"#define GEN_PASS_DEF_{def_name.upper()}"))
    for c in classes:
        if c["how"] != "impl-base":
            continue
        info.classes.append(
            ctx.loc(c["file_id"], c["line"], f"{c['class_name']} : impl::{def_name}Base<{c['class_name']}>")
        )
        for r in con.execute(
            "SELECT id FROM functions WHERE cls = ? AND file_id = ? ORDER BY line", (c["class_name"], c["file_id"])
        ):
            info.methods.append(ctx.fn_ref(ctx.function(r[0])))
    adder_rows = con.execute("SELECT * FROM adders WHERE def_name = ? ORDER BY qualname", (def_name,)).fetchall()
    info.adders = [_adder(ctx, r) for r in adder_rows]
    info.pipeline = _pipeline(ctx, [r["qualname"] for r in adder_rows])
    rows = con.execute(
        "SELECT DISTINCT pattern, class_file_id, registered_in FROM pass_patterns WHERE def_name = ? ORDER BY pattern",
        (def_name,),
    ).fetchall()
    known = _Patterns(ctx, [r["pattern"] for r in rows], [r["registered_in"] for r in rows])
    for r in rows:
        info.patterns.extend(pattern_refs(ctx, r["pattern"], r["registered_in"], r["class_file_id"], known))
    return info


class _Patterns:
    """What pattern_refs looks up, for many patterns in three queries (a pass registers up to a hundred)."""

    def __init__(self, ctx: Context, names: list[str], registered_in: list[int | None]):
        con, names = ctx.con, sorted(set(names))
        fns = sorted({f for f in registered_in if f is not None})
        self.registrations: dict[tuple[int, str], sqlite3.Row] = {}
        for r in con.execute(
            f"SELECT function_id, pattern, file_id, line FROM registrations WHERE function_id IN ({_marks(fns)}) "
            "ORDER BY rowid",
            fns,
        ):
            self.registrations.setdefault((r["function_id"], r["pattern"]), r)
        self.patterns: dict[str, list[sqlite3.Row]] = {}
        for r in con.execute(f"SELECT * FROM patterns WHERE name IN ({_marks(names)}) ORDER BY rowid", names):
            self.patterns.setdefault(r["name"], []).append(r)
        self.match_fns: dict[tuple[str, int], int] = {}
        for r in con.execute(
            f"SELECT id, cls, file_id FROM functions WHERE cls IN ({_marks(names)}) AND name IN "
            "('matchAndRewrite', 'rewrite', 'match') ORDER BY line",
            names,
        ):
            self.match_fns.setdefault((r["cls"], r["file_id"]), r["id"])
        ctx.prefetch(self.match_fns.values())


def _marks(values: list) -> str:
    return ",".join("?" * len(values))


def pattern_refs(
    ctx: Context,
    name: str,
    registered_in: int | None = None,
    file_id: int | None = None,
    known: _Patterns | None = None,
) -> list[PatternRef]:
    """The rewrite (or DRR) patterns named `name` (defined in `file_id`, when given), with where `registered_in`
    registers them. `known`: the same lookups done in bulk beforehand."""
    con = ctx.con
    reg = None
    if registered_in is not None:
        if known is not None:
            row = known.registrations.get((registered_in, name))
        else:
            row = con.execute(
                "SELECT file_id, line FROM registrations WHERE function_id = ? AND pattern = ? LIMIT 1",
                (registered_in, name),
            ).fetchone()
        reg = ctx.loc(row["file_id"], row["line"]) if row else None
    out = []
    if known is not None:
        found = [p for p in known.patterns.get(name, []) if file_id is None or p["file_id"] == file_id]
    else:
        found = con.execute(
            "SELECT * FROM patterns WHERE name = ? AND (? IS NULL OR file_id = ?)", (name, file_id, file_id)
        ).fetchall()
    for p in found:
        if known is not None:
            match_id = known.match_fns.get((name, p["file_id"]))
            fn_row = (match_id,) if match_id is not None else None
        else:
            fn_row = con.execute(
                "SELECT id FROM functions WHERE cls = ? AND file_id = ? AND name IN "
                "('matchAndRewrite', 'rewrite', 'match') ORDER BY line LIMIT 1",
                (name, p["file_id"]),
            ).fetchone()
        root = None
        if p["root_class"]:
            ops = ctx.op_by_class.get(p["root_class"], [])
            root = ops[0] if len(ops) == 1 else (f"{p['root_scope']}::{p['root_class']}".lstrip(":"))
        out.append(
            PatternRef(
                name,
                p["base"],
                root,
                ctx.loc(p["file_id"], p["line"], f"{name} : {p['base']}<…>"),
                ctx.fn_ref(ctx.function(fn_row[0])) if fn_row else None,
                reg,
            )
        )
    if not out:  # a DRR pattern
        for d in con.execute("SELECT * FROM drr_patterns WHERE def_name = ?", (name,)):
            out.append(
                PatternRef(name, "Pat (DRR)", d["root_op"], ctx.loc(d["file_id"], d["line"], d["snippet"]), None, reg)
            )
    return out
