"""Call-graph edges resolved by name, as tree-sitter sees them (no overload or type resolution).

A call `foo(…)`, `ns::foo(…)`, `Cls::foo(…)` or `x.foo(…)` may target a function named `foo`:
* a free function: plain calls, or calls qualified by a namespace (lower-case scope by convention); a plain call
  from a file that defines its own free function of that name means that one (static helpers);
* a method of `Cls`: plain calls from methods of `Cls`, calls qualified by `Cls`, and member calls whose receiver is
  of type `Cls` or of a type the extractor could not tell (marked `by_name`; followed backwards only when a single
  indexed class defines a method of that name).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

_FN_COLUMNS = "fn.id AS fn_id, fn.name AS fn_name, fn.cls AS fn_cls, fn.qualname AS fn_qualname, " \
              "fn.line AS fn_line, fn.end_line AS fn_end_line, fn.file_id AS fn_file_id"  # fmt: skip


@dataclass(frozen=True)
class FnRow:
    id: int
    name: str
    cls: str | None
    qualname: str
    file_id: int
    line: int
    end_line: int


@dataclass(frozen=True)
class Edge:
    caller: FnRow
    callee: FnRow
    line: int  # of the call, in the caller's file
    snippet: str
    by_name: bool  # a member call on a receiver of unknown type: the match is by method name only


def fn_from_row(row: sqlite3.Row, prefix: str = "fn_") -> FnRow:
    return FnRow(id=row[f"{prefix}id"], name=row[f"{prefix}name"], cls=row[f"{prefix}cls"],
                 qualname=row[f"{prefix}qualname"], file_id=row[f"{prefix}file_id"], line=row[f"{prefix}line"],
                 end_line=row[f"{prefix}end_line"])  # fmt: skip


def function(con: sqlite3.Connection, fn_id: int) -> FnRow:
    row = con.execute(f"SELECT {_FN_COLUMNS} FROM functions fn WHERE fn.id = ?", (fn_id,)).fetchone()
    return fn_from_row(row)


def callers(con: sqlite3.Connection, callee: FnRow, limit: int = 50) -> list[Edge]:
    """Calls that may reach `callee`, with their calling functions."""
    rows = con.execute(f"SELECT c.line, c.snippet, c.form, c.scope, {_FN_COLUMNS} FROM calls c "
                       "JOIN functions fn ON fn.id = c.caller_id WHERE c.callee = ? ORDER BY fn.file_id, c.line",
                       (callee.name,)).fetchall()
    out = []
    unique_method = callee.cls is not None and con.execute(
        "SELECT count(DISTINCT cls) FROM functions WHERE name = ?", (callee.name,)).fetchone()[0] == 1
    shadowing = _free_function_files(con, callee.name) - {callee.file_id} if callee.cls is None else set()
    for r in rows:
        caller = fn_from_row(r)
        if r["form"] == "member" and not r["scope"] and not unique_method:
            continue  # x.name(…) on an unknown receiver, and several classes define `name`: too vague to follow
        if r["form"] == "plain" and caller.file_id in shadowing:
            continue  # the caller's own file defines a free function of that name: the call means that one
        if caller.id != callee.id and _may_call(r["form"], r["scope"] or "", caller, callee):
            out.append(Edge(caller=caller, callee=callee, line=r["line"], snippet=r["snippet"],
                            by_name=r["form"] == "member" and not r["scope"]))
            if len(out) >= limit:
                break
    return out


def callees(con: sqlite3.Connection, caller: FnRow) -> list[tuple[sqlite3.Row, list[Edge]]]:
    """Each call in `caller` (line, callee name, scope, form, snippet) with the indexed functions it may reach."""
    out = []
    calls = con.execute("SELECT line, callee, scope, form, snippet FROM calls WHERE caller_id = ? ORDER BY line",
                        (caller.id,)).fetchall()
    for c in calls:
        rows = con.execute(f"SELECT {_FN_COLUMNS} FROM functions fn WHERE fn.name = ?", (c["callee"],)).fetchall()
        local = c["form"] == "plain" and caller.file_id in _free_function_files(con, c["callee"])
        targets = []
        for r in rows:
            fn = fn_from_row(r)
            if local and fn.cls is None and fn.file_id != caller.file_id:
                continue
            if _may_call(c["form"], c["scope"] or "", caller, fn):
                targets.append(Edge(caller=caller, callee=fn, line=c["line"], snippet=c["snippet"],
                                    by_name=c["form"] == "member" and not c["scope"]))
        out.append((c, targets))
    return out


def _free_function_files(con: sqlite3.Connection, name: str) -> set[int]:
    return {r[0] for r in con.execute("SELECT DISTINCT file_id FROM functions WHERE name = ? AND cls IS NULL", (name,))}


def _may_call(form: str, scope: str, caller: FnRow, fn: FnRow) -> bool:
    last = scope.rsplit("::", 1)[-1] if scope else ""
    if fn.cls is None:
        return form == "plain" or (form == "qualified" and not last[:1].isupper())
    if form == "plain":
        return caller.cls == fn.cls
    if form == "qualified":
        return last == fn.cls
    return not scope or scope == fn.cls
