"""Keep a row in registers: a multi-pass row kernel gets a one-pass twin for rows that fit in one tile.

A kernel with one program per row that loops over the row in chunks of BLOCK several times (max, sum, write;
mean, variance, normalize) reads it from memory once per pass. The twin is the same kernel run with BLOCK =
next_power_of_2(N) ≥ N: every pass's loop then runs exactly once with start = 0, so each loop is replaced by its
body (after `start = 0`), and a later pass's load of the same address with the same mask reuses the tile the first
pass loaded (`tl.where(mask, tile, other)` where its `other` differs). Accumulators keep their initial values and
update statements verbatim, so the arithmetic is the original kernel's at that BLOCK, masked lanes and dtype casts
included. The host launches the twin when N fits (`0 < N <= LIMIT`) and the original launch otherwise.

Why the twin equals the original: the original's BLOCK is a free constexpr (every BLOCK tuner relies on that), and
each pass's loop-carried state is a chunking-independent accumulator (a sum, a max/min, or the online softmax pair
of a running max and a rescaled running sum); a vector accumulator is only ever reduced whole after its loop. Stores
come only where no later load reads the same tensor back, and a load is reused only while no store to its tensor
came between.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis, Launch

# LIMIT elements of the row per program: 16384 fp32 over 16 warps (512 threads) is 32 registers per live tile per
# thread, so a few live tiles (x, exp(x), weight) stay well under the 128 registers a thread may hold at 512
# threads; 8192 is the safer variant for kernels that keep more tiles alive.
LIMITS = (16384, 8192)
REDUCE = {"sum": "sum", "max": "maximum", "min": "minimum"}  # reduction → the elementwise combine of that form
PURE_HOST_CALLS = {"numel", "size", "stride", "dim", "len", "int", "min", "max"}


class Refused(Exception):
    """A precondition failed; the message names it and its line."""


@dataclass
class _Pass:
    loop: ast.For
    var: str
    body: list[ast.stmt]


@dataclass
class _Plan:
    kernel: KernelAnalysis
    launch: Launch
    block: str  # the BLOCK constexpr parameter
    passes: list[_Pass]
    n_host: str  # the loop bound as a host expression
    tiles: dict[int, str] = field(default_factory=dict)  # id(load call) → tile name it defines
    reuses: dict[int, tuple[str, ast.Call, bool]] = field(default_factory=dict)  # id(call) → (tile, call, exact)


def _name_loads(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _targets(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, ast.AugAssign | ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def _reads(stmt: ast.stmt) -> list[str]:
    reads = _name_loads(stmt)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        reads.append(stmt.target.id)
    return reads


def _kw(call: ast.Call, name: str, pos: int) -> ast.expr | None:
    if len(call.args) > pos:
        return call.args[pos]
    return next((k.value for k in call.keywords if k.arg == name), None)


class _Planner:
    def __init__(self, mod: SourceModule, k: KernelAnalysis):
        self.mod, self.k = mod, k
        self.where = k.fn.name
        self.body_defs: dict[str, list[ast.expr]] = {}  # the current pass body's definitions

    def fail(self, node: ast.AST | None, what: str) -> Refused:
        line = f" (line {node.lineno})" if node is not None and hasattr(node, "lineno") else ""
        return Refused(f"{self.where}{line}: {what}")

    def tl(self, node: ast.AST) -> str | None:
        return self.mod.names.tl_call(node)

    # --- the passes ----------------------------------------------------------------------------------------

    def passes(self) -> tuple[list[_Pass], str, ast.expr]:
        k = self.k
        found: list[_Pass] = []
        bound: ast.expr | None = None
        block = ""
        if len(k.loops) < 2:
            raise self.fail(None, f"{len(k.loops)} loop(s); a multi-pass row kernel loops over the row 2 or more times")
        for lp in k.loops:
            it = lp.iter if isinstance(lp, ast.For) else None
            ok = (
                isinstance(lp, ast.For)
                and any(lp is s for s in k.fn.body)
                and isinstance(lp.target, ast.Name)
                and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id == "range"
                and len(it.args) == 3
                and not it.keywords
                and isinstance(it.args[0], ast.Constant)
                and it.args[0].value == 0
                and isinstance(it.args[2], ast.Name)
                and it.args[2].id in k.constexprs
            )
            if not ok:
                raise self.fail(lp, "a loop that is not a top-level `for start in range(0, N, BLOCK)` pass")
            assert isinstance(lp, ast.For) and isinstance(it, ast.Call) and isinstance(lp.target, ast.Name)
            step = it.args[2]
            assert isinstance(step, ast.Name)
            if bound is None:
                bound, block = it.args[1], step.id
            elif ast.dump(it.args[1]) != ast.dump(bound) or step.id != block:
                raise self.fail(lp, "passes loop over different ranges")
            if lp.orelse:
                raise self.fail(lp, "a pass loop with an else clause")
            if lp.body[0].lineno == lp.lineno:
                raise self.fail(lp, "a pass body on the loop's own line")
            for s in lp.body:
                if not isinstance(s, ast.Assign | ast.AugAssign | ast.Expr) or (
                    isinstance(s, ast.Assign) and not all(isinstance(t, ast.Name) for t in s.targets)
                ):
                    raise self.fail(s, "a pass body holds control flow or an unsupported statement")
            found.append(_Pass(lp, lp.target.id, lp.body))
        if len(found) < 2:
            raise self.fail(None, f"{len(found)} looped pass(es) over the row; a multi-pass kernel has 2 or more")
        assert bound is not None
        return found, block, bound

    def check_block_uses(self, passes: list[_Pass], block: str) -> None:
        """BLOCK only as the loop step, in tl.arange(0, BLOCK) and in accumulator shapes: the kernel is generic
        in BLOCK, so running it at BLOCK = next_pow2(N) is the same computation."""
        allowed: set[int] = {id(p.loop.iter.args[2]) for p in passes}  # type: ignore[attr-defined]
        for name, call in self.k.calls():
            if name == "arange" and len(call.args) == 2:
                allowed.add(id(call.args[1]))
            if name in ("zeros", "full") and call.args and isinstance(call.args[0], ast.List | ast.Tuple):
                allowed |= {id(e) for e in call.args[0].elts}
        for n in ast.walk(self.k.fn):
            if isinstance(n, ast.Name) and n.id == block and id(n) not in allowed:
                raise self.fail(n, f"{block} is used other than as the pass step, tl.arange bound or tile shape")

    # --- loop-carried state --------------------------------------------------------------------------------

    def flat(self, passes: list[_Pass]) -> list[ast.stmt]:
        """The kernel's statements in order with each pass's body in place of its loop."""
        by_loop = {id(p.loop): p for p in passes}
        out: list[ast.stmt] = []
        for s in self.k.fn.body:
            out += by_loop[id(s)].body if id(s) in by_loop else [s]
        return out

    def carried(self, p: _Pass, flat: list[ast.stmt]) -> tuple[set[str], set[str]]:
        """(names read before written in an iteration or read after the loop, all names the body assigns)."""
        assigned = {t for s in p.body for t in _targets(s)}
        defined: set[str] = set()
        carried: set[str] = set()
        for s in p.body:
            carried |= {n for n in _reads(s) if n in assigned and n not in defined}
            defined |= set(_targets(s))
        after = flat[flat.index(p.body[-1]) + 1 :]
        for name in assigned - carried:
            for s in after:
                if name in _reads(s):
                    carried.add(name)
                    break
                if name in _targets(s):
                    break
        return carried, assigned

    def check_accumulators(self, p: _Pass, flat: list[ast.stmt]) -> None:
        carried, _ = self.carried(p, flat)
        self.body_defs = {
            t: [s.value for s in p.body if isinstance(s, ast.Assign) and t in _targets(s)]
            for s in p.body
            for t in _targets(s)
        }
        updates: dict[str, list[ast.stmt]] = {}
        for s in p.body:
            for t in _targets(s):
                updates.setdefault(t, []).append(s)
        # chunk-local names computed from carried state (the online softmax's m_new)
        tainted: set[str] = set()
        for s in p.body:
            if any(n in carried or n in tainted for n in _reads(s)):
                tainted |= set(_targets(s)) - carried
        forms: dict[str, tuple[str, str, str]] = {}
        allowed: dict[int, set[str]] = {}  # id(statement) → the carried or derived names it may read
        for c in sorted(carried):
            ups = updates.get(c, [])
            if len(ups) != 1:
                raise self.fail(p.loop, f"`{c}` is carried across iterations but assigned {len(ups)} times")
            forms[c] = self.form(c, ups[0], carried, tainted)
            allowed.setdefault(id(ups[0]), set()).add(c)
        paired: set[str] = set()
        for c, (kind, m, t) in forms.items():
            if kind != "online":
                continue
            up = updates[m][0]
            if forms.get(m, ("",))[0] != "online-max" or not (
                isinstance(up, ast.Assign) and isinstance(up.value, ast.Name) and up.value.id == t
            ):
                raise self.fail(up, f"the running max `{m}` of the rescaled sum `{c}` is not updated as `{m} = {t}`")
            paired.add(m)
            allowed[id(updates[c][0])] |= {m, t}
            allowed.setdefault(id(updates[t][0]), set()).add(m)
            allowed[id(up)].add(t)
        for c, (kind, _, _) in forms.items():
            if kind == "online-max" and c not in paired:
                raise self.fail(updates[c][0], f"carried `{c}` is not a sum, max/min or online-softmax accumulator")
        for s in p.body:
            for n in _reads(s):
                if (n in carried or n in tainted) and n not in allowed.get(id(s), set()):
                    what = "carried" if n in carried else "computed from carried state,"
                    raise self.fail(s, f"`{n}` ({what}) is read outside an accumulator update")
        self.check_vector_uses(p, carried, flat)

    def form(self, c: str, s: ast.stmt, carried: set[str], tainted: set[str]) -> tuple[str, str, str]:
        """The accumulator form of `c`'s update: ("sum"|"max"|"min"|"online"|"online-max", ...)."""
        banned = carried | tainted

        def clean(e: ast.AST) -> bool:
            return not any(n in banned for n in _name_loads(e))

        if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add) and clean(s.value):
            return ("sum", "", "")
        v = s.value if isinstance(s, ast.Assign) else None
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
            for acc, e in ((v.left, v.right), (v.right, v.left)):
                if isinstance(acc, ast.Name) and acc.id == c and clean(e):
                    return ("sum", "", "")
            online = self.online(c, v, carried, tainted)
            if online:
                return online
        if isinstance(v, ast.Call) and self.tl(v) in ("maximum", "minimum") and len(v.args) == 2:
            for acc, e in ((v.args[0], v.args[1]), (v.args[1], v.args[0])):
                if isinstance(acc, ast.Name) and acc.id == c and clean(e):
                    return ("max", "", "")
        if isinstance(v, ast.Name) and v.id in tainted:
            return ("online-max", "", "")  # `m = m_new`; checked with its rescaled sum
        raise self.fail(s, f"carried `{c}` is not a sum, max/min or online-softmax accumulator")

    def online(self, c: str, v: ast.BinOp, carried: set[str], tainted: set[str]) -> tuple[str, str, str] | None:
        """`s = s * F(m - t) + tl.sum(F(x - t))` with `t = tl.maximum(m, tl.max(x))`, F = exp or exp2(· * c)."""
        for scaled, added in ((v.left, v.right), (v.right, v.left)):
            if not (isinstance(scaled, ast.BinOp) and isinstance(scaled.op, ast.Mult)):
                continue
            for acc, factor in ((scaled.left, scaled.right), (scaled.right, scaled.left)):
                if not (isinstance(acc, ast.Name) and acc.id == c):
                    continue
                f1 = self.exp_of_diff(factor)
                if not (isinstance(added, ast.Call) and self.tl(added) == "sum" and added.args):
                    continue
                f2 = self.exp_of_diff(added.args[0])
                if f1 is None or f2 is None or f1[0] != f2[0] or f1[3] != f2[3]:
                    continue
                m, t = f1[1], f1[2]
                if not (isinstance(m, ast.Name) and isinstance(t, ast.Name) and m.id in carried):
                    continue
                if not (isinstance(f2[2], ast.Name) and f2[2].id == t.id):
                    continue
                if any(n in carried | tainted for n in _name_loads(f2[1])):
                    continue
                t_defs = self.body_defs.get(t.id, [])
                if len(t_defs) != 1 or t.id in carried:
                    continue
                tv = t_defs[0]
                if not (isinstance(tv, ast.Call) and self.tl(tv) == "maximum" and len(tv.args) == 2):
                    continue
                for a, b in ((tv.args[0], tv.args[1]), (tv.args[1], tv.args[0])):
                    if (
                        isinstance(a, ast.Name)
                        and a.id == m.id
                        and isinstance(b, ast.Call)
                        and self.tl(b) == "max"
                        and not any(n in carried | tainted for n in _name_loads(b))
                    ):
                        return ("online", m.id, t.id)
        return None

    def exp_of_diff(self, e: ast.expr) -> tuple[str, ast.expr, ast.expr, str] | None:
        """tl.exp(a - b) → ("exp", a, b, ""); tl.exp2((a - b) * k) → ("exp2", a, b, dump(k))."""
        if not (isinstance(e, ast.Call) and self.tl(e) in ("exp", "exp2") and len(e.args) == 1):
            return None
        fn, arg, scale = self.tl(e) or "", e.args[0], ""
        if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mult) and fn == "exp2":
            scale = ast.dump(arg.right)
            arg = arg.left
        if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub):
            return fn, arg.left, arg.right, scale
        return None

    def check_vector_uses(self, p: _Pass, carried: set[str], flat: list[ast.stmt]) -> None:
        """A vector accumulator's lanes depend on BLOCK: after its loop it may only be reduced whole."""
        start = flat.index(p.body[0])
        before = flat[:start]
        for c in carried:
            inits = [s for s in before if c in _targets(s)]
            init = inits[-1].value if inits and isinstance(inits[-1], ast.Assign) else None
            shaped = isinstance(init, ast.Call) and self.tl(init) in ("zeros", "full")
            if init is None or not (shaped or self.k.is_vector(init)):
                continue
            form = "sum"
            up = next(s for s in p.body if c in _targets(s))
            if isinstance(up, ast.Assign) and isinstance(up.value, ast.Call):
                form = "max" if self.tl(up.value) == "maximum" else "min"
            elif isinstance(up, ast.Assign) and isinstance(up.value, ast.Name):
                raise self.fail(up, f"vector running max `{c}` of an online softmax (only the scalar form is done)")
            ok_args: set[int] = set()
            for s in flat[flat.index(p.body[-1]) + 1 :]:
                for n in ast.walk(s):
                    if isinstance(n, ast.Call) and self.tl(n) == form and n.args:
                        ok_args.add(id(n.args[0]))
                for n in ast.walk(s):
                    if isinstance(n, ast.Name) and n.id == c and isinstance(n.ctx, ast.Load) and id(n) not in ok_args:
                        raise self.fail(s, f"vector accumulator `{c}` is used after its pass other than by tl.{form}")
                if c in _targets(s):
                    break

    # --- memory --------------------------------------------------------------------------------------------

    def resolve(self, e: ast.expr, p: _Pass, stmt_index: int, passes: list[_Pass]) -> ast.expr | None:
        """`e` with the pass's chunk-local names replaced by their definitions and the loop variable by a
        placeholder; None when it reads a name that may change between passes."""
        local: dict[str, ast.expr | None] = {}
        for s in p.body[:stmt_index]:
            for t in _targets(s):
                # a name bound twice (or by a tuple or +=) is not followed: `offs = offs + 1` would not resolve
                once = t not in local and isinstance(s, ast.Assign) and len(_targets(s)) == 1
                local[t] = s.value if once and isinstance(s, ast.Assign) else None
        in_passes = {t for q in passes for s in q.body for t in _targets(s)}
        k = self.k

        class Sub(ast.NodeTransformer):
            bad = False
            depth = 0  # the carried-state check leaves no cycles; a bound keeps an unforeseen one finite

            def visit_Name(self, n: ast.Name) -> ast.AST:
                if n.id == p.var:
                    return ast.Name("__start__", ast.Load())
                if n.id in local:
                    value = local[n.id]
                    self.depth += 1
                    if value is None or self.depth > 64:
                        self.bad = True
                        return n
                    return self.visit(copy.deepcopy(value))
                if n.id in in_passes or len(k.defs.get(n.id, [])) > 1:
                    self.bad = True
                return n

        sub = Sub()
        out = sub.visit(copy.deepcopy(e))
        return None if sub.bad else out

    def memory(self, plan: _Plan, flat: list[ast.stmt]) -> None:
        passes = plan.passes
        last_start = flat.index(passes[-1].body[0])
        pass_of = {id(s): (p, i) for p in passes for i, s in enumerate(p.body)}
        ops: list[tuple[int, str, ast.Call]] = []  # (flat index, name, call) in program order
        for i, s in enumerate(flat):
            calls = [n for n in ast.walk(s) if isinstance(n, ast.Call) and self.tl(n)]
            # a statement's loads run before its store (the store's arguments)
            for c in sorted(calls, key=lambda n: (self.tl(n) == "store", n.lineno, n.col_offset)):
                name = self.tl(c) or ""
                if name.startswith("atomic_"):
                    raise self.fail(c, "an atomic operation")
                if name in ("load", "store"):
                    ops.append((i, name, c))
        for i, name, c in ops:
            if name != "store" or i >= last_start:
                continue
            root = self.k.pointer_root(c.args[0]) if c.args else None
            later = [c2 for j, n2, c2 in ops if n2 == "load" and j > i and self.k.pointer_root(c2.args[0]) == root]
            if root is None or later:
                at = f"line {later[0].lineno}" if later else "a later pass"
                raise self.fail(c, f"a store before the last pass is read back ({at})")
        seen: dict[str, tuple[str, ast.Call, str]] = {}  # key → (tile, first load, its other)
        stored_since: dict[str, set[str]] = {}  # tile → roots stored after it was loaded
        n_tiles = 0
        for i, name, c in ops:
            if id(flat[i]) not in pass_of:
                if name == "store":
                    for roots in stored_since.values():
                        roots.add(self.k.pointer_root(c.args[0]) or "?")
                continue
            p, si = pass_of[id(flat[i])]
            if not c.args or not self.k.is_vector(c.args[0]):
                continue
            mask = _kw(c, "mask", 1)
            if mask is None:
                raise self.fail(c, f"a {name} of the row without a mask (lanes past N would be touched)")
            root = self.k.pointer_root(c.args[0]) or "?"
            if name == "store":
                for roots in stored_since.values():
                    roots.add(root)
                continue
            vol = _kw(c, "volatile", 6)
            ptr, msk = self.resolve(c.args[0], p, si, passes), self.resolve(mask, p, si, passes)
            if (
                ptr is None
                or msk is None
                or (vol is not None and not (isinstance(vol, ast.Constant) and not vol.value))
            ):
                continue
            key = ast.dump(ptr) + "|" + ast.dump(msk)
            other = _kw(c, "other", 2)
            other_key = ast.dump(other) if other is not None else ""
            if key in seen and root not in stored_since[seen[key][0]] and "?" not in stored_since[seen[key][0]]:
                tile, first, first_other = seen[key]
                if id(first) not in plan.tiles:
                    plan.tiles[id(first)] = tile
                plan.reuses[id(c)] = (tile, c, other is None or other_key == first_other)
                continue
            tile = f"_row_tile{n_tiles}"
            n_tiles += 1
            seen[key] = (tile, c, other_key)
            stored_since[tile] = set()
        if not plan.reuses:
            raise self.fail(None, "no pass re-reads a row an earlier pass loaded (same address and mask)")

    # --- the host ------------------------------------------------------------------------------------------

    def host_bound(self, bound: ast.expr, lc: Launch) -> str:
        k = self.k

        def to_params(e: ast.expr, depth: int = 6) -> ast.expr:
            if isinstance(e, ast.Name):
                if e.id in k.params and e.id not in k.defs:
                    return e
                defs = k.defs.get(e.id, [])
                if depth and len(defs) == 1:
                    return to_params(defs[0], depth - 1)
                raise self.fail(e, f"the pass bound `{e.id}` is not computed once from kernel arguments")
            if isinstance(e, ast.Constant) and isinstance(e.value, int):
                return e
            if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub | ast.Mult | ast.FloorDiv):
                return ast.BinOp(to_params(e.left, depth), e.op, to_params(e.right, depth))
            raise self.fail(e, "the pass bound is not integer arithmetic on kernel arguments")

        expr = to_params(bound)
        args: dict[str, ast.expr] = dict(zip(k.params, lc.call.args))
        args |= {kw.arg: kw.value for kw in lc.call.keywords if kw.arg}
        for n in ast.walk(expr):
            if isinstance(n, ast.Name):
                if n.id not in args:
                    raise self.fail(lc.call, f"the launch does not pass `{n.id}`, which the pass bound needs")
                for x in ast.walk(args[n.id]):
                    if isinstance(x, ast.Call):
                        fn = x.func.attr if isinstance(x.func, ast.Attribute) else getattr(x.func, "id", "")
                        if fn not in PURE_HOST_CALLS:
                            raise self.fail(x, f"the launch argument for `{n.id}` calls {fn or 'a function'}")
                    if isinstance(x, ast.NamedExpr | ast.Lambda | ast.Await | ast.Yield):
                        raise self.fail(x, f"the launch argument for `{n.id}` is not a plain expression")

        class Sub(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                return copy.deepcopy(args[n.id])

        return ast.unparse(Sub().visit(copy.deepcopy(expr)))

    def plan(self) -> _Plan:
        mod, k = self.mod, self.k
        passes, block, bound = self.passes()
        self.check_block_uses(passes, block)
        flat = self.flat(passes)
        for p in passes:
            self.check_accumulators(p, flat)
        launches = [lc for lc in mod.launches if lc.kernel == k.fn.name]
        if len(launches) != 1:
            raise self.fail(None, f"launched {len(launches)} times (one launch is rewritten)")
        lc = launches[0]
        if not isinstance(_launch_stmt(lc), ast.Expr):
            raise self.fail(lc.call, "the launch is not a statement of its own")
        if lc.host is None:
            raise self.fail(lc.call, "the launch is not inside a host function")
        if block not in {kw.arg for kw in lc.call.keywords} and len(lc.call.args) <= k.params.index(block):
            raise self.fail(lc.call, f"the launch does not pass {block}")
        plan = _Plan(k, lc, block, passes, self.host_bound(bound, lc))
        self.memory(plan, flat)
        return plan


def _launch_stmt(lc: Launch) -> ast.stmt | None:
    return next(
        (s for s in ast.walk(lc.host) if isinstance(s, ast.Expr) and s.value is lc.call),  # type: ignore[arg-type]
        None,
    )


def _triton_alias(mod: SourceModule) -> str | None:
    for n in mod.tree.body:
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name == "triton":
                    return a.asname or "triton"
    return None


def _splice(mod: SourceModule, start: int, end: int, edits: list[Edit]) -> str:
    """The bytes [start, end) with the edits that fall inside applied."""
    out = bytearray(mod.data[start:end])
    for e in sorted((e for e in edits if start <= e.start and e.end <= end), key=lambda e: e.start, reverse=True):
        out[e.start - start : e.end - start] = e.text.encode()
    return out.decode()


def _fresh(base: str, taken: set[str]) -> str:
    name, i = base, 1
    while name in taken:
        name, i = f"{base}{i}", i + 1
    return name


def _all_names(tree: ast.AST) -> set[str]:
    out = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    out |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return out | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}


def plan_module(mod: SourceModule) -> tuple[list[_Plan], list[str]]:
    """The kernels to rewrite, and why each other looped kernel is not."""
    plans, reasons = [], []
    if "tl" not in mod.names.tl_aliases or _triton_alias(mod) is None:
        return [], ["the module does not `import triton` (the launch needs triton.next_power_of_2)"]
    for k in mod.kernels.values():
        if not k.loops:
            continue
        try:
            plans.append(_Planner(mod, k).plan())
        except Refused as r:
            reasons.append(str(r))
    return plans, reasons


def _kernel_text(mod: SourceModule, plan: _Plan, new_name: str, block_n: str) -> str:
    """The one-pass twin of the kernel: loops unrolled once, BLOCK renamed, re-reads replaced by the tile."""
    fn = plan.kernel.fn
    start = mod.offset(fn.decorator_list[0].lineno, 0) if fn.decorator_list else mod.offset(fn.lineno, 0)
    end = mod.line_of(fn)[1]
    def_at = mod.offset(fn.lineno, fn.col_offset) + len("def ")
    renames = [Edit(def_at, def_at + len(fn.name), new_name)]
    for param in fn.args.args:
        if param.arg == plan.block:
            at = mod.offset(param.lineno, param.col_offset)
            renames.append(Edit(at, at + len(param.arg), block_n))
    renames += [Edit(*mod.span(n), block_n) for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == plan.block]
    replaced: list[tuple[int, int]] = []
    edits: list[Edit] = []
    for p in plan.passes:
        for stmt in p.body:
            for n in ast.walk(stmt):
                if id(n) in plan.tiles and isinstance(n, ast.Call):
                    a, b = mod.span(n)
                    line = mod.line_of(stmt)[0]
                    tile_def = f"{mod.indent_of(stmt)}{plan.tiles[id(n)]} = {_splice(mod, a, b, renames)}\n"
                    edits.append(Edit(line, line, tile_def))
                    edits.append(Edit(a, b, plan.tiles[id(n)]))
                    replaced.append((a, b))
                elif id(n) in plan.reuses:
                    tile, call, exact = plan.reuses[id(n)]
                    a, b = mod.span(call)
                    text = tile
                    if not exact:
                        mask, other = _kw(call, "mask", 1), _kw(call, "other", 2)
                        assert mask is not None and other is not None
                        m, o = (_splice(mod, *mod.span(x), renames) for x in (mask, other))
                        text = f"tl.where({m}, {tile}, {o})"
                    edits.append(Edit(a, b, text))
                    replaced.append((a, b))
    edits += [e for e in renames if not any(a <= e.start and e.end <= b for a, b in replaced)]
    loop_edits: list[Edit] = []
    for p in plan.passes:
        lp = p.loop
        l0, l1 = mod.line_of(lp)
        b0 = mod.offset(p.body[0].lineno, 0)
        body = _splice(mod, b0, l1, edits)
        indent, outer = mod.indent_of(p.body[0]), mod.indent_of(lp)
        lines = [ln[len(indent) - len(outer) :] if ln.strip() else ln for ln in body.splitlines(keepends=True)]
        head = f"{outer}{p.var} = 0  # the row is one tile of {block_n} >= N lanes: this pass runs once\n"
        loop_edits.append(Edit(l0, l1, head + "".join(lines)))
    outside = [
        e for e in edits if not any(mod.line_of(p.loop)[0] <= e.start < mod.line_of(p.loop)[1] for p in plan.passes)
    ]
    return _splice(mod, start, end, outside + loop_edits)


def _check_dedent(mod: SourceModule, plan: _Plan) -> None:
    for p in plan.passes:
        indent = mod.indent_of(p.body[0])
        b0, l1 = mod.offset(p.body[0].lineno, 0), mod.line_of(p.loop)[1]
        for ln in mod.data[b0:l1].decode().splitlines():
            if ln.strip() and not ln.startswith(indent):
                raise Refused(
                    f"{plan.kernel.fn.name} (line {p.loop.lineno}): a pass body line is indented less than the body"
                )


def rewrite(mod: SourceModule, limit: int) -> tuple[str, str, dict]:
    """The candidate module for a tile limit of `limit` elements: (source, description, params)."""
    plans, _ = plan_module(mod)
    triton_name = _triton_alias(mod)
    taken = _all_names(mod.tree)
    edits: list[Edit] = []
    descs, reused = [], []
    for plan in plans:
        _check_dedent(mod, plan)
        fn = plan.kernel.fn
        new_name = _fresh(f"{fn.name}_one_pass", taken)
        block_n = _fresh("BLOCK_N", taken | set(plan.kernel.params) | set(plan.kernel.defs))
        taken |= {new_name, block_n}
        text = _kernel_text(mod, plan, new_name, block_n)
        edits.append(Edit(mod.line_of(fn)[1], mod.line_of(fn)[1], "\n\n" + text))
        lc, stmt = plan.launch, _launch_stmt(plan.launch)
        assert stmt is not None and lc.host is not None
        host_names = _all_names(lc.host)
        n_var, b_var = _fresh("_n_row", host_names), _fresh("_block_n", host_names)
        call_edits = [Edit(*mod.span(lc.call.func.value), new_name)]  # type: ignore[attr-defined]
        kw = next((k for k in lc.call.keywords if k.arg == plan.block), None)
        if kw is not None:
            call_edits.append(Edit(*mod.span(kw), f"{block_n}={b_var}"))
        else:
            call_edits.append(Edit(*mod.span(lc.call.args[plan.kernel.params.index(plan.block)]), b_var))
        # an autotuned kernel's configs give its warps: a launch that names num_warps too raises TypeError
        # (JITFunction.run gets it twice), so the twin, which keeps the decorators, leaves them to the configs
        if "autotune" not in mod.decorators(fn.name):
            warps = f"4 if {b_var} <= 2048 else 8" + (f" if {b_var} <= 8192 else 16" if limit > 8192 else "")
            nw = next((k for k in lc.call.keywords if k.arg == "num_warps"), None)
            call_edits.append(
                Edit(*mod.span(nw), f"num_warps={warps}") if nw else mod.call_append(lc.call, f"num_warps={warps}")
            )
        fast = _splice(mod, *mod.span(lc.call), call_edits)
        i = mod.indent_of(stmt)
        l0, l1 = mod.line_of(stmt)
        old = "".join(f"    {ln}" if ln.strip() else ln for ln in mod.data[l0:l1].decode().splitlines(keepends=True))
        new = (
            f"{i}{n_var} = {plan.n_host}\n"
            f"{i}if 0 < {n_var} <= {limit}:  # the row fits in registers: {new_name} loads it once\n"
            f"{i}    {b_var} = {triton_name}.next_power_of_2({n_var})\n"
            f"{i}    {fast}\n"
            f"{i}else:\n{old}"
        )
        edits.append(Edit(l0, l1, new))
        descs.append(
            f"{new_name} (from {fn.name}, passes at lines {', '.join(str(p.loop.lineno) for p in plan.passes)})"
        )
        reused += [c.lineno for _, c, _ in plan.reuses.values()]
    desc = (
        f"one-pass twin for rows of N <= {limit}: "
        + "; ".join(descs)
        + f"; re-reads at lines {', '.join(map(str, sorted(reused)))} reuse the loaded tile"
        + "; longer rows keep the looped launch"
    )
    return mod.apply(edits), desc, {"LIMIT": limit, "reused_loads": sorted(reused)}


class RowInRegisters(Applier):
    name = "row_in_registers"
    card = "row-in-registers"
    summary = "a one-pass twin of a multi-pass row kernel (the row as one tile, re-reads reuse it) for N <= LIMIT"

    def applies(self, mod: SourceModule) -> bool:
        return self.why_not(mod) is None

    def why_not(self, mod: SourceModule) -> str | None:
        plans, reasons = plan_module(mod)
        if plans:
            try:
                for plan in plans:
                    _check_dedent(mod, plan)
            except Refused as r:
                return f"{self.name}: {r}"
            return None
        if reasons:
            return f"{self.name}: " + "; ".join(reasons)
        return f"{self.name}: no kernel loops over a row in passes (`for start in range(0, N, BLOCK)`)"

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        out = []
        for limit in LIMITS[:max_candidates] if max_candidates else LIMITS:
            source, desc, params = rewrite(mod, limit)
            out.append(Candidate(self.name, self.card, desc, source, params))
        return out
