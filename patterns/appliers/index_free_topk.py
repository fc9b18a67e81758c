"""Index-free top-2: argmax-and-mask → max, count of maxima, masked max (value-only, tie-correct).

The pattern, inside any @triton.jit function:

    i = tl.argmax(x, axis=A)                              # the index, used for nothing else
    x2 = tl.where(offs == i, float("-inf"), x)            # or inline in the max; offs = tl.arange(0, B)
    second = tl.max(x2, axis=A)

(tl.argmin / tl.min / +inf the same way; a 2-D tile masks with `offs[None, :] == i[:, None]`). An index
reduction lowers to a two-operand tt.reduce (value and index shuffled together, compares and selects in the
combine); the values alone need none of it. The rewrite, at the second reduction:

    x_top = (x == m) | (x != x)       # m = tl.max(x, axis=A), the kernel's own when it has one
    x_ntop = tl.sum(x_top.to(tl.int32), axis=A)
    x_second = tl.where((x_ntop > 1) & (m == m), m, tl.max(tl.where(x_top, float("-inf"), x), axis=A))

Equal for every input: without NaN, removing one copy of the maximum leaves the maximum again when it occurs
more than once (a tie), else the largest value below it, -inf when nothing is left. NaN: tl.argmax picks the
first NaN under the interpreter (NumPy's argmax) and tl.max ignores NaN, so the original's second value is the
maximum of the non-NaN values (-inf when every lane is NaN); counting NaN lanes among the maxima gives exactly
that. On a GPU the original's pick among NaNs and values depends on the reduction order; the candidate always
gives the interpreter's answer. A zero second value may differ in sign (-0.0 == 0.0 ties).

Refused, with the reason: an index that is stored or used for anything but the one mask (argmax_dim1's index is
its output); the repeated form that masks x in place for a top-k (`x = tl.where(offs == i, -inf, x)` and the
next argmax); tuple forms (`tl.max(x, A, return_indices=True)`), tie_break_left=False, keep_dims; a fill other
than -inf (+inf for min); an index vector that is not the `tl.arange(0, B)` the tile was built on; kernels
whose tile rank the source does not show (reshape, join, ...).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule, float_literal, name_loads
from patterns.features import KernelAnalysis
from patterns.features.reader import attr_path, keyword_arg, tile_rank_of

# argmax / argmin → the value reduction and the fill that removes a lane from it
_KINDS = {"argmax": ("max", -math.inf), "argmin": ("min", math.inf)}
# calls that change a tile's rank or shape: with them the broadcast subscripts no longer tell the rank
_RESHAPES = {"reshape", "view", "expand_dims", "broadcast_to", "join", "split", "trans", "permute", "interleave"}


class _Refused(Exception):
    """One index reduction that is not the pattern: the reason, naming the line."""


@dataclass(frozen=True)
class _Site:
    kernel: str
    index_stmt: ast.Assign  # `i = tl.argmax(x, axis=A)`: deleted
    where_stmt: ast.Assign | None  # `x2 = tl.where(offs == i, -inf, x)`: deleted (None when inline)
    use_stmt: ast.stmt  # the statement holding the second reduction: new lines go before it
    second: ast.Call  # `tl.max(x2, axis=A)`: replaced by the new second value
    x: str
    axis: int
    rank: int
    reduce: str  # "max" / "min"
    fill: str  # the original fill's source text
    first: str | None  # a name bound to tl.max(x, axis=A) that is valid at use_stmt
    prefix: str  # how the kernel spells triton.language ("tl")


def _int_literal(expr: ast.expr | None) -> int | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        v = _int_literal(expr.operand)
        return -v if v is not None else None
    return None


def _axis(call: ast.Call, pos: int) -> ast.expr | None:
    return call.args[pos] if len(call.args) > pos else keyword_arg(call, "axis")


def _blocks(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    """Every statement list of a function: its body and those of the loops, ifs and withs inside it."""
    out, todo = [], [fn.body]
    while todo:
        block = todo.pop()
        out.append(block)
        for s in block:
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    todo.append(sub)
    return out


def _assigns(stmt: ast.stmt, name: str) -> bool:
    """Whether `stmt` (or anything nested in it) binds `name`."""
    for n in ast.walk(stmt):
        targets: list[ast.AST] = []
        if isinstance(n, ast.Assign):
            targets = list(n.targets)
        elif isinstance(n, ast.AugAssign | ast.AnnAssign | ast.For | ast.NamedExpr):
            targets = [n.target]
        if any(isinstance(t, ast.Name) and t.id == name for tg in targets for t in ast.walk(tg)):
            return True
    return False


def _parents(fn: ast.AST) -> dict[int, ast.AST]:
    return {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}


def _single_name_assign(stmt: ast.AST) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _is_full_slice(e: ast.expr) -> bool:
    return isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None


def _is_none(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is None


class _Scan:
    """The sites of one kernel and the reasons its other index reductions are not the pattern."""

    def __init__(self, mod: SourceModule, k: KernelAnalysis):
        self.mod, self.k = mod, k
        self.parents = _parents(k.fn)
        self.blocks = _blocks(k.fn)
        self.sites: list[_Site] = []
        self.reasons: list[str] = []
        for node in ast.walk(k.fn):
            if isinstance(node, ast.Call) and k.is_index_reduction(node):
                try:
                    self.sites.append(self._site(node))
                except _Refused as why:
                    self.reasons.append(str(why))

    # --- helpers ---------------------------------------------------------------------------------------------

    @staticmethod
    def _line(node: ast.expr | ast.stmt) -> str:
        return f"line {node.lineno}"

    def _stmt_of(self, node: ast.expr | ast.stmt) -> tuple[list[ast.stmt], int]:
        """The block and position of the statement that holds `node`."""
        cur: ast.AST = node
        while id(cur) in self.parents:
            par = self.parents[id(cur)]
            for block in self.blocks:
                for pos, s in enumerate(block):
                    if s is cur:
                        return block, pos
            cur = par
        raise _Refused(f"{self._line(node)}: no enclosing statement")

    def _own_lines(self, stmt: ast.stmt) -> bool:
        """The statement is alone on its physical lines (no `;` neighbours), so whole lines can go or precede it."""
        start, end = self.mod.line_of(stmt)
        a, b = self.mod.span(stmt)
        before = self.mod.data[start:a].strip()
        after = self.mod.data[b:end].strip()
        return before == b"" and (after == b"" or after.startswith(b"#"))

    def _derives(self, expr: ast.AST, names: set[str]) -> bool:
        """Whether `expr`'s value derives from `names` (comparisons and tl.where conditions only select)."""
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.Compare):
            return False
        if isinstance(expr, ast.Call) and self.mod.names.tl_call(expr) == "where":
            return any(self._derives(a, names) for a in expr.args[1:])
        return any(self._derives(c, names) for c in ast.iter_child_nodes(expr))

    def _stored(self, index: str) -> ast.Call | None:
        """A store (or atomic) whose value or address derives from the index: the index is an output."""
        names, changed = {index}, True
        while changed:
            changed = False
            for name, vals in self.k.defs.items():
                if name not in names and any(self._derives(v, names) for v in vals):
                    names.add(name)
                    changed = True
        for fname, call in self.k.calls():
            outputs = [*call.args[:2], *(kw.value for kw in call.keywords)]
            if (fname == "store" or fname.startswith("atomic_")) and any(self._derives(a, names) for a in outputs):
                return call
        return None

    def _store_around(self, node: ast.AST) -> ast.Call | None:
        """The store (or atomic) whose arguments hold `node`, if any."""
        cur = node
        while id(cur) in self.parents:
            cur = self.parents[id(cur)]
            name = self.mod.names.tl_call(cur)
            if isinstance(cur, ast.Call) and name is not None and (name == "store" or name.startswith("atomic_")):
                return cur
        return None

    # --- the pattern -----------------------------------------------------------------------------------------

    def _site(self, call: ast.Call) -> _Site:
        k, names, line = self.k, self.mod.names, self._line(call)
        fname = names.tl_call(call)
        if fname is None:
            raise _Refused(f"{line}: the method form x.{names.method_call(call)}(...) is not handled")
        if (store := self._store_around(call)) is not None:
            raise _Refused(
                f"{line}: the index of tl.{fname} is stored at line {store.lineno}: the index is an output, not only "
                "a mask"
            )
        stmt_block, stmt_pos = self._stmt_of(call)
        stmt = stmt_block[stmt_pos]
        target = _single_name_assign(stmt)
        if fname in ("max", "min"):  # the tuple form (value, index)
            index = None
            if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
                t = stmt.targets[0]
                if isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[1], ast.Name):
                    index = t.elts[1].id
            if index is not None and (store := self._stored(index)) is not None:
                raise _Refused(
                    f"{line}: the index of tl.{fname}(..., return_indices=True) is stored at line {store.lineno}: "
                    "the index is an output, not only a mask"
                )
            raise _Refused(f"{line}: the tuple form tl.{fname}(..., return_indices=True) is not handled")
        reduce, fill_value = _KINDS[fname]
        if target is None or not isinstance(stmt, ast.Assign) or stmt.value is not call:
            raise _Refused(f"{line}: tl.{fname} is not bound on its own to one name (`i = tl.{fname}(x, axis=A)`)")
        i = target
        if (store := self._stored(i)) is not None:
            raise _Refused(
                f"{line}: the index {i} of tl.{fname} is stored at line {store.lineno}: the index is an output, "
                "not only a mask"
            )
        if len(k.defs.get(i, [])) != 1:
            raise _Refused(f"{line}: the index {i} is bound more than once")
        tie = keyword_arg(call, "tie_break_left")
        if (tie is not None and not (isinstance(tie, ast.Constant) and tie.value is True)) or len(call.args) > 2:
            raise _Refused(f"{line}: tl.{fname} without the default tie_break_left=True is not handled")
        if keyword_arg(call, "keep_dims") is not None:
            raise _Refused(f"{line}: tl.{fname} with keep_dims is not handled")
        x_arg, axis = (call.args[0] if call.args else keyword_arg(call, "input")), _int_literal(_axis(call, 1))
        if not isinstance(x_arg, ast.Name) or axis is None:
            raise _Refused(f"{line}: tl.{fname} needs a local name and a literal axis (`tl.{fname}(x, axis=0)`)")
        x = x_arg.id
        prefix = attr_path(call.func).rpartition(".")[0]
        if prefix not in names.tl_aliases:
            raise _Refused(f"{line}: tl.{fname} is not called through the triton.language module")

        loads = name_loads(k.fn, i)
        if len(loads) != 1:
            uses = ", ".join(str(n.lineno) for n in loads) or "none"
            raise _Refused(
                f"{line}: the index {i} is used {len(loads)} times (lines {uses}); it must be used only once, to mask "
                "the winner out"
            )
        (use,) = loads
        i_side: ast.expr = use
        sub = self.parents.get(id(use))
        if isinstance(sub, ast.Subscript) and sub.value is use:
            i_side = sub
        cmp = self.parents.get(id(i_side))
        if not (isinstance(cmp, ast.Compare) and len(cmp.ops) == 1 and isinstance(cmp.ops[0], ast.Eq)):
            raise _Refused(
                f"{line}: the index {i} is used beyond masking the winner (line {use.lineno}); only "
                f"`tl.where(offs == {i}, ...)` is rewritten"
            )
        offs_side = cmp.comparators[0] if cmp.left is i_side else cmp.left
        where = self.parents.get(id(cmp))
        if not (
            isinstance(where, ast.Call)
            and names.tl_call(where) == "where"
            and len(where.args) == 3
            and not where.keywords
            and where.args[0] is cmp
        ):
            raise _Refused(
                f"{line}: the index {i} is compared at line {cmp.lineno} but not as the whole condition of a tl.where"
            )
        fill, masked = where.args[1], where.args[2]
        if not (isinstance(masked, ast.Name) and masked.id == x):
            raise _Refused(f"line {where.lineno}: the tl.where does not mask {x}, the tile tl.{fname} reduced")
        if float_literal(fill) != fill_value:
            raise _Refused(
                f"line {where.lineno}: the winner is masked with {self.mod.segment(fill)}, not "
                f"{'-' if fill_value < 0 else '+'}inf, so it can still win the second tl.{reduce}"
            )
        rank = self._rank(offs_side, i_side, i, axis, line)
        axis = axis + rank if axis < 0 else axis
        self._tile_on(offs_side, x, line)

        # the second reduction: straight on the where, or on a name bound to it and read once
        where_stmt: ast.Assign | None = None
        reduced: ast.AST = where
        holder = self.parents.get(id(where))
        if isinstance(holder, ast.Assign) and holder.value is where:
            x2 = _single_name_assign(holder)
            if x2 is None:
                raise _Refused(f"line {holder.lineno}: the masked tile is not bound to one name")
            if x2 == x:
                raise _Refused(
                    f"line {holder.lineno}: {x} is masked in place (repeated argmax-and-mask, a top-k): only the "
                    "top-2 form, one second reduction over a masked copy, is rewritten"
                )
            x2_loads = name_loads(k.fn, x2)
            if len(k.defs.get(x2, [])) != 1 or len(x2_loads) != 1:
                raise _Refused(
                    f"line {holder.lineno}: the masked tile {x2} is bound or read more than once; it must feed only "
                    f"the second tl.{reduce}"
                )
            where_stmt, reduced = holder, x2_loads[0]
        second = self.parents.get(id(reduced))
        if not (
            isinstance(second, ast.Call)
            and names.tl_call(second) == reduce
            and second.args
            and second.args[0] is reduced
            and all(kw.arg == "axis" for kw in second.keywords)
            and len(second.args) <= 2
        ):
            raise _Refused(f"line {where.lineno}: the masked tile does not go straight into a tl.{reduce}(…, axis)")
        if _int_literal(_axis(second, 1)) is None or self._norm(_int_literal(_axis(second, 1)), rank) != axis:
            raise _Refused(f"line {second.lineno}: the second tl.{reduce} does not reduce the axis tl.{fname} did")

        # one block, in order: the index, (the named mask,) the second reduction; x unchanged in between
        use_block, use_pos = self._stmt_of(second)
        use_stmt = use_block[use_pos]
        if use_block is not stmt_block or use_pos <= stmt_pos:
            raise _Refused(f"line {second.lineno}: the second tl.{reduce} is not in the block of {line}, after it")
        if not isinstance(use_stmt, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr | ast.Return):
            raise _Refused(f"line {second.lineno}: the second tl.{reduce} sits in a compound statement's header")
        if where_stmt is not None:
            w_block, w_pos = self._stmt_of(where_stmt)
            if w_block is not stmt_block or not stmt_pos < w_pos < use_pos:
                raise _Refused(f"line {where_stmt.lineno}: the masked tile is not built between {line} and its use")
        if any(_assigns(s, x) for s in stmt_block[stmt_pos:use_pos]):
            raise _Refused(f"{line}: {x} is reassigned before the second tl.{reduce}")
        for s in (stmt, use_stmt, where_stmt):
            if s is not None and not self._own_lines(s):
                raise _Refused(f"line {s.lineno}: the statement shares its line with another")
        first = self._first(stmt_block, use_pos, x, axis, rank, reduce)
        return _Site(
            k.fn.name,
            stmt,
            where_stmt,
            use_stmt,
            second,
            x,
            axis,
            rank,
            reduce,
            self.mod.segment(fill),
            first,
            prefix,
        )

    @staticmethod
    def _norm(axis: int | None, rank: int) -> int | None:
        if axis is None:
            return None
        return axis + rank if axis < 0 else axis

    def _rank(self, offs_side: ast.expr, i_side: ast.expr, i: str, axis: int, line: str) -> int:
        """The tile rank the mask broadcasts to; the index vector runs along `axis`, the index along the others."""
        if isinstance(offs_side, ast.Subscript):
            elts = offs_side.slice.elts if isinstance(offs_side.slice, ast.Tuple) else [offs_side.slice]
            rank = len(elts)
            along = [p for p, e in enumerate(elts) if _is_full_slice(e)]
            if len(along) != 1 or not all(_is_none(e) for p, e in enumerate(elts) if p != along[0]):
                raise _Refused(f"{line}: the index vector's broadcast {self.mod.segment(offs_side)} is not `[None, :]`")
            vec_axis = along[0]
        else:
            rank, vec_axis = 1, 0
        if not -rank <= axis < rank or self._norm(axis, rank) != vec_axis:
            raise _Refused(f"{line}: the index vector runs along axis {vec_axis}, the reduction along axis {axis}")
        if rank == 1:
            if not (isinstance(i_side, ast.Name) and i_side.id == i):
                raise _Refused(f"{line}: the index {i} is broadcast ({self.mod.segment(i_side)}) against a 1-D vector")
        else:
            sl = i_side.slice if isinstance(i_side, ast.Subscript) else None
            elts = sl.elts if isinstance(sl, ast.Tuple) else []
            if not (
                len(elts) == rank
                and all(_is_none(e) if p == vec_axis else _is_full_slice(e) for p, e in enumerate(elts))
            ):
                raise _Refused(
                    f"{line}: the index {i} is not broadcast back along axis {vec_axis} of a rank-{rank} tile"
                )
        if tile_rank_of(self.k.fn) != rank:
            raise _Refused(f"{line}: the kernel has tiles of rank {tile_rank_of(self.k.fn)}, the mask rank {rank}")
        if reshaped := sorted({n for n, c in self.k.calls() if n in _RESHAPES}):
            raise _Refused(f"{line}: tl.{reshaped[0]} changes tile shapes, so the mask's rank is not the tile's")
        for n, c in self.k.calls():
            shape = keyword_arg(c, "block_shape" if n == "make_block_ptr" else "shape")
            if n in ("zeros", "full") and c.args:
                shape = c.args[0]
            if isinstance(shape, ast.List | ast.Tuple) and len(shape.elts) > rank:
                raise _Refused(
                    f"{line}: tl.{n} at line {c.lineno} builds a rank-{len(shape.elts)} tile, the mask rank {rank}"
                )
        return rank

    def _tile_on(self, offs_side: ast.expr, x: str, line: str) -> None:
        """The index vector is a name bound once to tl.arange(0, B), and x is built from it."""
        offs = offs_side.value if isinstance(offs_side, ast.Subscript) else offs_side
        if not isinstance(offs, ast.Name) or len(self.k.defs.get(offs.id, [])) != 1:
            raise _Refused(f"{line}: the index vector {self.mod.segment(offs)} is not a name bound once")
        (val,) = self.k.defs[offs.id]
        if not (
            isinstance(val, ast.Call)
            and self.mod.names.tl_call(val) == "arange"
            and _int_literal(val.args[0] if val.args else None) == 0
        ):
            raise _Refused(f"{line}: the index vector {offs.id} is not tl.arange(0, B) (lane i must be index i)")
        if not any(self.k.mentions(e, {offs.id}) for e in self.k.expand(ast.Name(x, ast.Load()), depth=8)):
            raise _Refused(f"{line}: {x} is not built on the index vector {offs.id}")

    def _first(self, block: list[ast.stmt], use_pos: int, x: str, axis: int, rank: int, reduce: str) -> str | None:
        """A name bound once to tl.max(x, axis) before the second reduction, x unchanged since."""
        for pos in range(use_pos - 1, -1, -1):
            s = block[pos]
            name = _single_name_assign(s)
            v = s.value if isinstance(s, ast.Assign) else None
            if (
                name
                and isinstance(v, ast.Call)
                and self.mod.names.tl_call(v) == reduce
                and v.args
                and isinstance(v.args[0], ast.Name)
                and v.args[0].id == x
                and len(v.args) <= 2
                and all(kw.arg == "axis" for kw in v.keywords)
                and self._norm(_int_literal(_axis(v, 1)), rank) == axis
                and len(self.k.defs.get(name, [])) == 1
            ):
                return name
            if _assigns(s, x):
                return None
        return None


def _scan(mod: SourceModule) -> tuple[list[_Site], list[str]]:
    sites, reasons = [], []
    for k in mod.kernels.values():
        s = _Scan(mod, k)
        sites += s.sites
        reasons += [f"{k.fn.name}: {r}" for r in s.reasons]
    return sites, reasons


def _fresh(taken: set[str], base: str) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


class IndexFreeTopK(Applier):
    name = "index_free_topk"
    card = "index-free-top2"
    summary = "tl.argmax used only to mask the winner before a second tl.max → max + count of maxima + masked max"

    def applies(self, mod: SourceModule) -> bool:
        return bool(_scan(mod)[0])

    def why_not(self, mod: SourceModule) -> str | None:
        sites, reasons = _scan(mod)
        if sites:
            return None
        if not reasons:
            return f"{self.name}: no tl.argmax/tl.argmin in any @triton.jit function"
        return f"{self.name}: " + "; ".join(reasons)

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        sites, left = _scan(mod)
        taken = {n.id for n in ast.walk(mod.tree) if isinstance(n, ast.Name)} | {
            a.arg for n in ast.walk(mod.tree) if isinstance(n, ast.arguments) for a in n.args
        }
        edits: list[Edit] = []
        where: list[str] = []
        for s in sites:
            tl, a = s.prefix, s.axis
            ind = mod.indent_of(s.use_stmt)
            lines = []
            first = s.first
            if first is None:
                first = _fresh(taken, f"{s.x}_first")
                lines.append(f"{first} = {tl}.{s.reduce}({s.x}, axis={a})")
            bcast = "" if s.rank == 1 else "[" + ", ".join("None" if p == a else ":" for p in range(s.rank)) + "]"
            top, ntop = (_fresh(taken, f"{s.x}_{suffix}") for suffix in ("top", "ntop"))
            # `v2 = tl.max(x2, axis=A)` becomes `v2 = <the value-only form>`; elsewhere the call becomes a new name
            whole = _single_name_assign(s.use_stmt) if getattr(s.use_stmt, "value", None) is s.second else None
            second = whole or _fresh(taken, f"{s.x}_second")
            lines += [
                f"# top-2 without the index: a tied {s.reduce} counts twice, a NaN like tl.arg{s.reduce}'s pick",
                f"{top} = ({s.x} == {first}{bcast}) | ({s.x} != {s.x})",
                f"{ntop} = {tl}.sum({top}.to({tl}.int32), axis={a})",
                f"{second} = {tl}.where(({ntop} > 1) & ({first} == {first}), {first}, "
                f"{tl}.{s.reduce}({tl}.where({top}, {s.fill}, {s.x}), axis={a}))",
            ]
            use_lines = mod.line_of(s.use_stmt)
            if whole:
                edits.append(Edit(*use_lines, "".join(f"{ind}{ln}\n" for ln in lines)))
            else:
                edits.append(Edit(use_lines[0], use_lines[0], "".join(f"{ind}{ln}\n" for ln in lines)))
                edits.append(Edit(*mod.span(s.second), second))
            edits.append(Edit(*mod.line_of(s.index_stmt), ""))
            if s.where_stmt is not None:
                edits.append(Edit(*mod.line_of(s.where_stmt), ""))
            where.append(f"{s.kernel} line {s.index_stmt.lineno} (second tl.{s.reduce} at line {s.second.lineno})")
        desc = "argmax-and-mask → max, count of maxima, masked max (no index reduction) in " + ", ".join(where)
        if left:
            desc += "; left as they are: " + "; ".join(left)
        return [Candidate(self.name, self.card, desc, mod.apply(edits), {"sites": len(sites)})]
