"""Call-graph edges: as libclang resolved them where it did, else by name, as tree-sitter sees them.

A call the libclang backend resolved (`calls.target_usr`) reaches exactly the function with that USR, or, for a call
of a virtual method through an object, also the methods overriding it (`functions.overrides`). A function that
tree-sitter read (a header, a file outside the compilation database) has no USR: it is reached by its qualified name
(overloads then stay together), and as an override when its class has the called method's class among its bases.

Calls nobody resolved are matched by name (no overload or type resolution):

A call `foo(…)`, `ns::foo(…)`, `Cls::foo(…)` or `x.foo(…)` may target a function named `foo`:
* a free function: a call qualified by a namespace that ends its namespace (`AMD::foo` → `mlir::triton::AMD::foo`);
  a plain call, when the function is visible from the caller: same file (static helpers shadow the rest), global, an
  enclosing namespace of the caller, or a `using namespace` of the caller's file. When no same-named free function
  is visible that way (the code relies on includes and lookup rules we do not model), every one is a candidate;
* a method of `Cls`: plain calls from methods of `Cls`, calls qualified by `Cls`, and member calls whose receiver is
  of type `Cls` or of a type the extractor could not tell (marked `by_name`; followed backwards only when a single
  indexed class defines a method of that name), or of a base class of `Cls` (virtual dispatch: a call on a
  `TargetInfoBase &` may run any override). Where several namespaces define a class `Cls` (NVIDIA's and AMD's
  `TargetInfo`), the same visibility rule as for free functions picks among them.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

_FN_COLUMNS = (
    "fn.id AS fn_id, fn.name AS fn_name, fn.cls AS fn_cls, fn.qualname AS fn_qualname, "
    "fn.line AS fn_line, fn.end_line AS fn_end_line, fn.file_id AS fn_file_id, fn.ns AS fn_ns, "
    "fn.usr AS fn_usr, fn.overrides AS fn_overrides"
)
_CALL_COLUMNS = "c.line, c.snippet, c.form, c.scope, c.callee, c.target_usr, c.target, c.virtual"


@dataclass(frozen=True)
class FnRow:
    id: int
    name: str
    cls: str | None
    qualname: str
    file_id: int
    line: int
    end_line: int
    ns: str = ""
    usr: str | None = None  # libclang's; None when tree-sitter read the definition
    overrides: tuple[str, ...] = ()  # USRs of the virtual methods it overrides

    @property
    def qualified(self) -> str:
        return f"{self.ns}::{self.qualname}" if self.ns else self.qualname


@dataclass(frozen=True)
class CallEdge:
    caller: FnRow
    callee: FnRow
    line: int  # of the call, in the caller's file
    snippet: str
    by_name: bool  # a member call on a receiver of unknown type: the match is by method name only


def fn_from_row(row: sqlite3.Row, prefix: str = "fn_") -> FnRow:
    overrides = row[f"{prefix}overrides"]
    return FnRow(
        id=row[f"{prefix}id"],
        name=row[f"{prefix}name"],
        cls=row[f"{prefix}cls"],
        qualname=row[f"{prefix}qualname"],
        file_id=row[f"{prefix}file_id"],
        line=row[f"{prefix}line"],
        end_line=row[f"{prefix}end_line"],
        ns=row[f"{prefix}ns"] or "",
        usr=row[f"{prefix}usr"],
        overrides=tuple(json.loads(overrides)) if overrides else (),
    )


def function(con: sqlite3.Connection, fn_id: int) -> FnRow:
    row = con.execute(f"SELECT {_FN_COLUMNS} FROM functions fn WHERE fn.id = ?", (fn_id,)).fetchone()
    return fn_from_row(row)


def functions(con: sqlite3.Connection, fn_ids: list[int]) -> list[FnRow]:
    marks = ",".join("?" * len(fn_ids))
    return [
        fn_from_row(r) for r in con.execute(f"SELECT {_FN_COLUMNS} FROM functions fn WHERE fn.id IN ({marks})", fn_ids)
    ]


class Scopes:
    """Namespace facts of one connection (aliases, each file's `using namespace` targets, free functions by name),
    loaded as needed; share one across the calls of a query."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self.aliases = {r[0]: r[1] for r in con.execute("SELECT alias, target FROM aliases")}
        self._usings: dict[int, list[str]] = {}
        self._named: dict[tuple[str, str | None], list[FnRow]] = {}
        self._bases: dict[str, set[str]] | None = None

    def ancestors(self, cls: str) -> set[str]:
        """Base classes of `cls`, transitively, by name: a call on a `TargetInfoBase &` may run `TargetInfo`'s
        override (virtual dispatch)."""
        if self._bases is None:
            self._bases = {}
            for r in self.con.execute("SELECT c.name, b.name FROM class_bases b JOIN classes c ON c.id = b.class_id"):
                self._bases.setdefault(r[0], set()).add(r[1])
        out: set[str] = set()
        todo = [cls]
        while todo:
            for base in self._bases.get(todo.pop(), ()):
                if base not in out:
                    out.add(base)
                    todo.append(base)
        return out

    def expand(self, scope: str) -> str:
        head, sep, rest = scope.lstrip(":").partition("::")
        return self.aliases.get(head, head) + sep + rest

    def usings(self, file_id: int) -> list[str]:
        if file_id not in self._usings:
            self._usings[file_id] = [
                self.expand(r[0]) for r in self.con.execute("SELECT target FROM usings WHERE file_id = ?", (file_id,))
            ]
        return self._usings[file_id]

    def same_named(self, name: str, cls: str | None) -> list[FnRow]:
        """Functions named `name` that are free (cls None) or methods of classes named `cls`."""
        key = (name, cls)
        if key not in self._named:
            self._named[key] = [
                fn_from_row(r)
                for r in self.con.execute(
                    f"SELECT {_FN_COLUMNS} FROM functions fn WHERE fn.name = ? AND fn.cls IS ?", key
                )
            ]
        return self._named[key]

    def visible(self, caller: FnRow, fn: FnRow) -> bool:
        if fn.file_id == caller.file_id or not fn.ns:
            return True
        if caller.ns == fn.ns or caller.ns.startswith(fn.ns + "::"):
            return True
        return any(_ends_with(fn.ns, u) for u in self.usings(caller.file_id))

    def targets(self, caller: FnRow, name: str, cls: str | None) -> set[int]:
        """Ids of the same-named functions (free, or methods of same-named classes, as NVIDIA's and AMD's
        `TargetInfo`) that `caller` can see; all of them when it sees none."""
        cands = self.same_named(name, cls)
        if len(cands) == 1:
            return {cands[0].id}
        local = [f for f in cands if f.file_id == caller.file_id]
        if local:
            return {f.id for f in local}
        seen = [f for f in cands if self.visible(caller, f)]
        return {f.id for f in (seen or cands)}

    def reaches(self, call: sqlite3.Row, fn: FnRow) -> bool:
        """Whether a call libclang resolved runs `fn`."""
        usr, target, virtual = call["target_usr"], call["target"] or "", bool(call["virtual"])
        if fn.usr is not None:
            return fn.usr == usr or (virtual and usr in fn.overrides)
        if fn.qualified == target:
            return True
        owner, _, name = target.rpartition("::")
        return (
            virtual and fn.cls is not None and name == fn.name and owner.rpartition("::")[2] in self.ancestors(fn.cls)
        )

    def may_call(self, form: str, scope: str, caller: FnRow, fn: FnRow) -> bool:
        if fn.cls is None:
            if form == "plain":
                return fn.id in self.targets(caller, fn.name, None)
            return form == "qualified" and _ends_with(fn.ns, self.expand(scope))
        ns, _, last = scope.rpartition("::")
        if form == "plain":
            ok = caller.cls == fn.cls
        elif form == "qualified":
            ok = last == fn.cls
        else:  # member: the receiver's type (`NVIDIA::TargetInfo` also names the namespace), or a base of the class
            ok = (
                not scope
                or (last == fn.cls and (not ns or _ends_with(fn.ns, self.expand(ns))))
                or last in self.ancestors(fn.cls)
            )
        return ok and fn.id in self.targets(caller, fn.name, fn.cls)


def _ends_with(ns: str, scope: str) -> bool:
    """`mlir::triton::AMD` ends with `AMD` and `triton::AMD`, not with `MD`."""
    return ("::" + ns).endswith("::" + scope) if scope else not ns


def callers(con: sqlite3.Connection, callee: FnRow, limit: int = 50, scopes: Scopes | None = None) -> list[CallEdge]:
    """Calls that may reach `callee`, with their calling functions."""
    scopes = scopes or Scopes(con)
    rows = con.execute(
        f"SELECT {_CALL_COLUMNS}, {_FN_COLUMNS} FROM calls c "
        "JOIN functions fn ON fn.id = c.caller_id WHERE c.callee = ? ORDER BY fn.file_id, c.line",
        (callee.name,),
    ).fetchall()
    out = []
    unique_method = (
        callee.cls is not None
        and con.execute("SELECT count(DISTINCT cls) FROM functions WHERE name = ?", (callee.name,)).fetchone()[0] == 1
    )
    for r in rows:
        caller = fn_from_row(r)
        if r["target_usr"] is not None:
            if caller.id != callee.id and scopes.reaches(r, callee):
                out.append(CallEdge(caller=caller, callee=callee, line=r["line"], snippet=r["snippet"], by_name=False))
            if len(out) >= limit:
                break
            continue
        if r["form"] == "member" and not r["scope"] and not unique_method:
            continue  # x.name(…) on an unknown receiver, and several classes define `name`: too vague to follow
        if caller.id != callee.id and scopes.may_call(r["form"], r["scope"] or "", caller, callee):
            out.append(
                CallEdge(
                    caller=caller,
                    callee=callee,
                    line=r["line"],
                    snippet=r["snippet"],
                    by_name=r["form"] == "member" and not r["scope"],
                )
            )
            if len(out) >= limit:
                break
    return out


def callees(
    con: sqlite3.Connection, caller: FnRow, scopes: Scopes | None = None
) -> list[tuple[sqlite3.Row, list[CallEdge]]]:
    """Each call in `caller` (line, callee name, scope, form, snippet) with the indexed functions it may reach."""
    scopes = scopes or Scopes(con)
    out = []
    calls = con.execute(
        f"SELECT {_CALL_COLUMNS} FROM calls c WHERE c.caller_id = ? ORDER BY c.line", (caller.id,)
    ).fetchall()
    for c in calls:
        rows = con.execute(f"SELECT {_FN_COLUMNS} FROM functions fn WHERE fn.name = ?", (c["callee"],)).fetchall()
        targets = []
        resolved = c["target_usr"] is not None
        for r in rows:
            fn = fn_from_row(r)
            if scopes.reaches(c, fn) if resolved else scopes.may_call(c["form"], c["scope"] or "", caller, fn):
                targets.append(
                    CallEdge(
                        caller=caller,
                        callee=fn,
                        line=c["line"],
                        snippet=c["snippet"],
                        by_name=not resolved and c["form"] == "member" and not c["scope"],
                    )
                )
        out.append((c, targets))
    return out
