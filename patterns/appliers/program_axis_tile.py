"""Program-axis tiling: a scalar a kernel derives from its program id becomes a tile dimension, so one program
does the work of LIFT consecutive programs.

Two placements of the lifted axis, two appliers:

* columns (card coalesce-strided-axis): `r = pid % N` indexes the contiguous axis while the kernel's 1-D tile
  strides over another one (`base + r + offs * N`) or its loads are scalars (`base + c * N + r` in a loop). Each
  program takes LIFT consecutive r values as the tile's last (contiguous) dimension: `[BLOCK, LIFT]` tiles (or
  `[LIFT]` vectors) whose rows are coalesced. A loop-chunk BLOCK shrinks so the tile stays about as large.
* rows (card block-small-rows): a loop-free kernel whose `row = tl.program_id(0)` picks a row that fits one tile
  takes LIFT rows as a new leading dimension: `[LIFT, BLOCK]` tiles, reductions along axis 1.

The rewrite is a shape lifting of the jit function's syntax tree. Every local is classified as a per-program
scalar, a 1-D tile ("v"), lifted ("l") or both, by a fixpoint over its assignments; every expression then combines
its operands by explicit broadcasting (`x[:, None]`, `x[None, :]`), reductions over the tile move to the tile's
axis, initial values of lifted locals widen (`tl.zeros([BLOCK])` → `tl.zeros([BLOCK, LIFT])`, `0.0` →
`tl.full([LIFT], 0.0, tl.float32)`), and every load or store whose address is lifted gets the lifted lanes' mask
(in range of the lifted index and of the original program count). Anything the lifting cannot prove
shape-correct is refused with the line: atomics, stores whose address does not depend on the lifted index, control
flow on a lifted value, program ids used in unmodelled ways, tiles already 2-D, calls it does not know, more than
one launch, a grid that is not a tuple literal. The launch passes the original program count (`n_programs`) and
the LIFT constexpr, and the grid's axis 0 shrinks accordingly.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis, Launch

V, L = "v", "l"
Type = frozenset[str]
NONE: Type = frozenset()
LIFTED: Type = frozenset({L})

ELEMENTWISE = {
    "where", "maximum", "minimum", "clamp", "exp", "exp2", "log", "log2", "log1p", "sqrt", "sqrt_rn", "rsqrt",
    "abs", "sin", "cos", "sigmoid", "erf", "floor", "ceil", "fma", "fdiv", "div_rn", "cdiv", "umulhi", "cast",
}  # fmt: skip
REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}
SCANS = {"cumsum", "cumprod", "associative_scan"}
HINTS = {"multiple_of", "max_contiguous", "max_constancy"}
HOST_CALLS = {"min", "max", "int", "len", "abs", "cdiv", "next_power_of_2", "size", "numel", "stride", "dim"}
ROW_TILE_FLOOR = 16  # a shrunk loop chunk keeps at least this many rows (or its original size if smaller)
PROGRAMS = "n_programs"  # the new runtime argument: the original grid's axis-0 extent


class Refuse(Exception):
    """A precondition of the lifting failed; the message names it and the line."""


@dataclass(frozen=True)
class Mode:
    name: str
    card: str
    constexpr: str  # preferred name of the LIFT constexpr
    lifted_last: bool  # columns: [BLOCK, LIFT]; rows: [LIFT, BLOCK]
    variants: tuple[int, ...]  # columns: BLOCK_COL values; rows: tile budgets, ROWS = max(1, budget // BLOCK)

    def order(self, t: Type) -> tuple[str, ...]:
        axes = (V, L) if self.lifted_last else (L, V)
        return tuple(a for a in axes if a in t)


COLUMNS = Mode("program_axis_tile_cols", "coalesce-strided-axis", "BLOCK_COL", True, (32, 64, 16))
ROWS = Mode("program_axis_tile_rows", "block-small-rows", "ROWS", False, (2048, 1024, 4096))


def _where(node: ast.AST) -> str:
    return f"line {getattr(node, 'lineno', '?')}"


def _parse_expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _parse_stmts(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


def _const_int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _const_int(node.operand)
        return None if v is None else -v
    return None


def _scalar_literal(node: ast.expr) -> tuple[ast.expr, str] | None:
    """(value, tl dtype) of a Python number literal (`0.0`, `-1`, `float("-inf")`, `True`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _scalar_literal(node.operand)
        return (node, inner[1]) if inner else None
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return node, "tl.int1"
        if isinstance(v, int):
            return (node, "tl.int32") if -(2**31) <= v < 2**31 else None
        if isinstance(v, float):
            return node, "tl.float32"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node, "tl.float32"
    return None


def _program_id_axis(mod: SourceModule, node: ast.AST) -> int | None:
    if not isinstance(node, ast.Call) or mod.names.tl_call(node) != "program_id":
        return None
    axis = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
    return _const_int(axis)


def _single_name(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


@dataclass
class _Seed:
    """How the lifted index enters: replacement statements for some top-level statements, fixed types."""

    replace: dict[int, list[ast.stmt]]  # id(original stmt) → statements emitted in its place
    types: dict[str, Type]
    index_name: str  # the lifted index, for the report
    stride: str | None = None  # columns: the kernel parameter N of `pid % N`


class _Lifter:
    """Type inference and rewrite of one jit function for one mode; raises Refuse."""

    def __init__(self, mod: SourceModule, k: KernelAnalysis, mode: Mode, lift_name: str, seed: _Seed):
        self.mod, self.k, self.mode, self.lift = mod, k, mode, lift_name
        self.seed = seed
        self.env: dict[str, Type] = dict(seed.types)
        self.fixed = set(seed.types)
        helpers = {f.name: f for f, _ in mod.jits}
        self.elementwise_helpers = {n for n, f in helpers.items() if self._is_elementwise_helper(f)}
        self.final = False
        self.tile_sizes: set[str | int] = set()  # constexpr names or literals of the 1-D tile extents

    # --- helpers -------------------------------------------------------------------------------------------

    def _is_elementwise_helper(self, fn: ast.FunctionDef) -> bool:
        for n in ast.walk(fn):
            if isinstance(n, ast.Subscript | ast.For | ast.While | ast.If | ast.IfExp):  # shape or control flow
                return False
            if isinstance(n, ast.Call):
                name = self.mod.names.tl_call(n)
                if name is not None and name not in ELEMENTWISE:
                    return False
                if name is None and not (isinstance(n.func, ast.Attribute) and n.func.attr == "to"):
                    return False
        return True

    def expand(self, node: ast.expr, t: Type, target: Type) -> ast.expr:
        if not t or t == target:
            return node
        if not t <= target or len(target) != 2:
            raise Refuse(f"cannot broadcast a {sorted(t)} value to {sorted(target)} at {_where(node)}")
        axes = self.mode.order(target)
        index: list[ast.expr] = [ast.Slice() if a in t else ast.Constant(None) for a in axes]
        return ast.Subscript(value=node, slice=ast.Tuple(elts=index, ctx=ast.Load()), ctx=ast.Load())

    def shape_of(self, t: Type, v_extent: ast.expr | None, at: ast.AST) -> ast.List:
        elts: list[ast.expr] = []
        for a in self.mode.order(t):
            if a == L:
                elts.append(ast.Name(self.lift, ast.Load()))
            elif v_extent is None:
                raise Refuse(f"cannot widen a scalar initial value to a tile at {_where(at)}")
            else:
                elts.append(copy.deepcopy(v_extent))
        return ast.List(elts=elts, ctx=ast.Load())

    def note_extent(self, node: ast.expr, at: ast.AST) -> None:
        if isinstance(node, ast.Name) and node.id in self.k.constexprs:
            self.tile_sizes.add(node.id)
        elif (v := _const_int(node)) is not None:
            self.tile_sizes.add(v)
        else:
            raise Refuse(f"a tile extent is neither a constexpr parameter nor a literal at {_where(at)}")

    # --- expressions ---------------------------------------------------------------------------------------

    def visit(self, e: ast.expr) -> tuple[ast.expr, Type | tuple[Type, ...]]:
        if isinstance(e, ast.Constant):
            return copy.deepcopy(e), NONE
        if isinstance(e, ast.Name):
            return copy.deepcopy(e), self.env.get(e.id, NONE)
        if isinstance(e, ast.Attribute):
            value, t = self.scalar_or_tile(e.value)
            if t and e.attr != "dtype":
                raise Refuse(f"attribute .{e.attr} of a tile at {_where(e)} is not modelled")
            return ast.Attribute(value=value, attr=e.attr, ctx=ast.Load()), NONE
        if isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.MatMult):
                raise Refuse(f"matrix product at {_where(e)}")
            (lv, lt), (rv, rt) = self.scalar_or_tile(e.left), self.scalar_or_tile(e.right)
            t = lt | rt
            return ast.BinOp(left=self.expand(lv, lt, t), op=e.op, right=self.expand(rv, rt, t)), t
        if isinstance(e, ast.UnaryOp):
            v, t = self.scalar_or_tile(e.operand)
            return ast.UnaryOp(op=e.op, operand=v), t
        if isinstance(e, ast.Compare):
            if len(e.ops) != 1:
                raise Refuse(f"chained comparison at {_where(e)}")
            (lv, lt), (rv, rt) = self.scalar_or_tile(e.left), self.scalar_or_tile(e.comparators[0])
            t = lt | rt
            return ast.Compare(left=self.expand(lv, lt, t), ops=e.ops, comparators=[self.expand(rv, rt, t)]), t
        if isinstance(e, ast.IfExp):
            test, tt = self.scalar_or_tile(e.test)
            if tt:
                raise Refuse(f"conditional expression on a tile at {_where(e)}")
            (bv, bt), (ov, ot) = self.scalar_or_tile(e.body), self.scalar_or_tile(e.orelse)
            t = bt | ot
            return ast.IfExp(test=test, body=self.expand(bv, bt, t), orelse=self.expand(ov, ot, t)), t
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Subscript):
            raise Refuse(f"the kernel indexes or reshapes a tile at {_where(e)} (only 1-D tiles are lifted)")
        raise Refuse(f"{type(e).__name__} expression at {_where(e)} is not modelled")

    def scalar_or_tile(self, e: ast.expr) -> tuple[ast.expr, Type]:
        v, t = self.visit(e)
        if isinstance(t, tuple):
            raise Refuse(f"a tuple value used as an operand at {_where(e)}")
        return v, t

    def elementwise(self, e: ast.Call, func: ast.expr) -> tuple[ast.expr, Type]:
        args = [self.scalar_or_tile(a) for a in e.args]
        kws = [(k.arg, *self.scalar_or_tile(k.value)) for k in e.keywords]
        if any(k is None for k, _, _ in kws):
            raise Refuse(f"**kwargs in a call at {_where(e)}")
        t = frozenset().union(*(x for _, x in args), *(x for _, _, x in kws))
        call = ast.Call(
            func=func,
            args=[self.expand(v, x, t) for v, x in args],
            keywords=[ast.keyword(arg=k, value=self.expand(v, x, t)) for k, v, x in kws],
        )
        return call, t

    def call(self, e: ast.Call) -> tuple[ast.expr, Type | tuple[Type, ...]]:
        mod = self.mod
        name = mod.names.tl_call(e)
        if name is None:
            return self.other_call(e)
        if name == "arange":
            if len(e.args) != 2 or _const_int(e.args[0]) != 0 or e.keywords:
                raise Refuse(f"tl.arange not of the form tl.arange(0, BLOCK) at {_where(e)}")
            self.note_extent(e.args[1], e)
            return copy.deepcopy(e), frozenset({V})
        if name == "program_id":
            if _program_id_axis(mod, e) is None:
                raise Refuse(f"tl.program_id with a computed axis at {_where(e)}")
            return copy.deepcopy(e), NONE
        if name in ("zeros", "full"):
            shape = e.args[0] if e.args else next((k.value for k in e.keywords if k.arg == "shape"), None)
            if not isinstance(shape, ast.List | ast.Tuple) or len(shape.elts) > 1:
                raise Refuse(f"tl.{name} with a shape other than [] or [BLOCK] at {_where(e)}")
            for x in shape.elts:
                self.note_extent(x, e)
            rest = [a for a in [*e.args[1:], *(k.value for k in e.keywords)] if a is not shape]
            if any(self.scalar_or_tile(a)[1] for a in rest):
                raise Refuse(f"tl.{name} with a tile argument at {_where(e)}")
            return copy.deepcopy(e), frozenset({V}) if shape.elts else NONE
        if name == "load":
            return self.load(e)
        if name in REDUCTIONS or name in SCANS:
            return self.reduction(e, name)
        if name in HINTS:
            v, t = self.scalar_or_tile(e.args[0]) if e.args else (None, NONE)
            if v is None:
                raise Refuse(f"tl.{name} without arguments at {_where(e)}")
            if L in t:  # a hint sized for the 1-D tile does not fit the lifted one; dropping a hint is exact
                return v, t
            return copy.deepcopy(e), t
        if name in ELEMENTWISE:
            return self.elementwise(e, copy.deepcopy(e.func))
        if name == "store" or name.startswith("atomic_"):
            raise Refuse(f"tl.{name} used as a value at {_where(e)}")
        raise Refuse(f"tl.{name} at {_where(e)} is not modelled")

    def other_call(self, e: ast.Call) -> tuple[ast.expr, Type]:
        func = e.func
        if isinstance(func, ast.Attribute) and func.attr == "to":
            v, t = self.scalar_or_tile(func.value)
            if any(self.scalar_or_tile(a)[1] for a in [*e.args, *(k.value for k in e.keywords)]):
                raise Refuse(f".to() with a tile argument at {_where(e)}")
            return ast.Call(
                func=ast.Attribute(value=v, attr="to", ctx=ast.Load()),
                args=[copy.deepcopy(a) for a in e.args],
                keywords=copy.deepcopy(e.keywords),
            ), t
        if isinstance(func, ast.Name) and func.id in self.elementwise_helpers:
            return self.elementwise(e, copy.deepcopy(func))
        call, t = self.elementwise(e, copy.deepcopy(func))
        if t:
            what = func.id if isinstance(func, ast.Name) else ast.unparse(func)
            raise Refuse(f"call of {what} with a tile argument at {_where(e)} is not modelled")
        return call, t

    def load(self, e: ast.Call) -> tuple[ast.expr, Type]:
        names = ["mask", "other"]
        parts: dict[str, ast.expr] = {"pointer": e.args[0]} if e.args else {}
        for n, a in zip(names, e.args[1:]):
            parts[n] = a
        if len(e.args) > 3:
            raise Refuse(f"tl.load with more than three positional arguments at {_where(e)}")
        rest = []
        for k in e.keywords:
            if k.arg in ("pointer", "mask", "other"):
                parts[k.arg] = k.value
            elif k.arg in ("boundary_check", "padding_option"):
                raise Refuse(f"tl.load of a block pointer at {_where(e)}")
            else:
                rest.append(copy.deepcopy(k))
        if "pointer" not in parts:
            raise Refuse(f"tl.load without a pointer at {_where(e)}")
        seen = {n: self.scalar_or_tile(x) for n, x in parts.items()}
        t = frozenset().union(*(x for _, x in seen.values()))
        new = {n: self.expand(v, x, t) for n, (v, x) in seen.items()}
        if L in t:
            new["mask"] = self.with_lift_mask(new.get("mask"), t)
        keywords = [ast.keyword(arg=n, value=new[n]) for n in names if n in new]
        call = ast.Call(func=copy.deepcopy(e.func), args=[new["pointer"]], keywords=keywords + rest)
        return call, t

    def with_lift_mask(self, mask: ast.expr | None, t: Type) -> ast.expr:
        lane = self.expand(ast.Name("_pa_mask", ast.Load()), LIFTED, t)
        return lane if mask is None else ast.BinOp(left=mask, op=ast.BitAnd(), right=lane)

    def reduction(self, e: ast.Call, name: str) -> tuple[ast.expr, Type | tuple[Type, ...]]:
        if not e.args:
            raise Refuse(f"tl.{name} without an input at {_where(e)}")
        src, t = self.scalar_or_tile(e.args[0])
        axis_pos = 1 if len(e.args) > 1 else None
        axis = e.args[1] if axis_pos else next((k.value for k in e.keywords if k.arg == "axis"), None)
        keep = next((k.value for k in e.keywords if k.arg == "keep_dims"), None)
        indices = next((k.value for k in e.keywords if k.arg == "return_indices"), None)
        returns_pair = isinstance(indices, ast.Constant) and indices.value is True
        if indices is not None and not isinstance(indices, ast.Constant):
            raise Refuse(f"tl.{name} with a computed return_indices at {_where(e)}")
        scan = name in SCANS
        out_t = t if scan else t - {V}
        result: Type | tuple[Type, ...] = (out_t, out_t) if returns_pair else out_t
        if L not in t:
            if t != frozenset({V}) and not scan:
                raise Refuse(f"tl.{name} of a scalar at {_where(e)}")
            return copy.deepcopy(e), result
        if V not in t:
            raise Refuse(f"tl.{name} reduces a lifted scalar at {_where(e)}")
        if _const_int(axis) not in (0, -1):
            raise Refuse(f"tl.{name} over an axis other than 0 of a 1-D tile at {_where(e)}")
        if keep is not None and not (isinstance(keep, ast.Constant) and keep.value is False):
            raise Refuse(f"tl.{name} with keep_dims at {_where(e)}")
        new_axis = ast.Constant(self.mode.order(t).index(V))
        args = [src] + [copy.deepcopy(a) for a in e.args[1:]]
        keywords = copy.deepcopy(e.keywords)
        if axis_pos:
            args[1] = new_axis
        else:
            for k in keywords:
                if k.arg == "axis":
                    k.value = new_axis
        others = [*e.args[2:], *(k.value for k in e.keywords if k.arg != "axis")]
        if any(self.scalar_or_tile(a)[1] for a in others):
            raise Refuse(f"tl.{name} with a tile argument besides its input at {_where(e)}")
        return ast.Call(func=copy.deepcopy(e.func), args=args, keywords=keywords), result

    def store(self, e: ast.Call) -> ast.Call:
        parts: dict[str, ast.expr] = dict(zip(["pointer", "value", "mask"], e.args))
        if len(e.args) > 3:
            raise Refuse(f"tl.store with more than three positional arguments at {_where(e)}")
        rest = []
        for k in e.keywords:
            if k.arg in ("pointer", "value", "mask"):
                parts[k.arg] = k.value
            elif k.arg == "boundary_check":
                raise Refuse(f"tl.store to a block pointer at {_where(e)}")
            else:
                rest.append(copy.deepcopy(k))
        if "pointer" not in parts or "value" not in parts:
            raise Refuse(f"tl.store without a pointer and a value at {_where(e)}")
        seen = {n: self.scalar_or_tile(x) for n, x in parts.items()}
        pt = seen["pointer"][1]
        if L not in pt:
            raise Refuse(
                f"the store at {_where(e)} writes an address that does not depend on the lifted index "
                f"{self.seed.index_name}"
            )
        t = frozenset().union(*(x for _, x in seen.values()))
        if t != pt:
            raise Refuse(f"the store at {_where(e)} stores a value wider than its address")
        new = {n: self.expand(v, x, t) for n, (v, x) in seen.items()}
        new["mask"] = self.with_lift_mask(new.get("mask"), t)
        keywords = [ast.keyword(arg=n, value=new[n]) for n in ("value", "mask")]
        return ast.Call(func=copy.deepcopy(e.func), args=[new["pointer"]], keywords=keywords + rest)

    # --- statements ----------------------------------------------------------------------------------------

    def bind(self, name: str, t: Type, at: ast.AST) -> Type:
        if name in self.k.params and t:  # reads before the assignment see the scalar argument
            raise Refuse(f"the parameter {name} is reassigned with a tile or lifted value at {_where(at)}")
        if name in self.fixed:
            if t and t != self.env[name]:
                raise Refuse(f"{name} is reassigned at {_where(at)}")
            return self.env[name]
        self.env[name] = self.env.get(name, NONE) | t
        return self.env[name]

    def widen(self, value: ast.expr, orig: ast.expr, t: Type, target: Type, at: ast.AST) -> ast.expr:
        """`value` (of type t) as the initial value of a local of type `target`."""
        if t == target:
            return value
        if isinstance(orig, ast.Call) and self.mod.names.tl_call(orig) in ("zeros", "full"):
            assert isinstance(value, ast.Call)
            shape_node = orig.args[0] if orig.args else next(k.value for k in orig.keywords if k.arg == "shape")
            assert isinstance(shape_node, ast.List | ast.Tuple)
            extent = shape_node.elts[0] if shape_node.elts else None
            new_shape = self.shape_of(target, extent, at)
            if value.args:
                value.args[0] = new_shape
            else:
                for k in value.keywords:
                    if k.arg == "shape":
                        k.value = new_shape
            return value
        if not t and (lit := _scalar_literal(orig)) is not None:
            fill, dtype = lit
            shape = self.shape_of(target, None, at)
            return _parse_expr(f"tl.full({ast.unparse(shape)}, {ast.unparse(fill)}, {dtype})")
        raise Refuse(f"cannot widen the value assigned at {_where(at)} to the lifted shape")

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            if id(s) in self.seed.replace:
                out += copy.deepcopy(self.seed.replace[id(s)])
            else:
                out += self.statement(s)
        return out

    def statement(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return [copy.deepcopy(s)]
        if isinstance(s, ast.Pass):
            return [copy.deepcopy(s)]
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            name = self.mod.names.tl_call(s.value)
            if name == "store":
                return [ast.Expr(value=self.store(s.value))]
            if name is not None and name.startswith("atomic_"):
                raise Refuse(f"tl.{name} at {_where(s)}: a lifted program would update shared outputs")
            raise Refuse(f"the call statement at {_where(s)} is not modelled")
        if isinstance(s, ast.Assign):
            return [self.assign(s)]
        if isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name):
                raise Refuse(f"augmented assignment to a non-name at {_where(s)}")
            v, t = self.scalar_or_tile(s.value)
            target = self.bind(s.target.id, t, s)
            return [ast.AugAssign(target=copy.deepcopy(s.target), op=s.op, value=self.expand(v, t, target))]
        if isinstance(s, ast.For):
            it = s.iter
            if not (
                isinstance(it, ast.Call)
                and (
                    (isinstance(it.func, ast.Name) and it.func.id == "range")
                    or self.mod.names.tl_call(it) in ("range", "static_range")
                )
                and isinstance(s.target, ast.Name)
                and not s.orelse
            ):
                raise Refuse(f"the loop at {_where(s)} is not a `for name in range(...)` loop")
            it_new, tt = self.elementwise(it, copy.deepcopy(it.func))
            if tt:
                raise Refuse(f"the loop bounds at {_where(s)} depend on a tile or the lifted index")
            self.bind(s.target.id, NONE, s)
            return [ast.For(target=copy.deepcopy(s.target), iter=it_new, body=self.block(s.body), orelse=[])]
        if isinstance(s, ast.If | ast.While):
            test, tt = self.scalar_or_tile(s.test)
            if L in tt:
                raise Refuse(f"control flow on the lifted index at {_where(s)}")
            if tt:
                raise Refuse(f"control flow on a tile at {_where(s)}")
            body, orelse = self.block(s.body), self.block(s.orelse)
            return [type(s)(test=test, body=body, orelse=orelse)]
        raise Refuse(f"{type(s).__name__} statement at {_where(s)} is not modelled")

    def assign(self, s: ast.Assign) -> ast.Assign:
        if len(s.targets) != 1:
            raise Refuse(f"chained assignment at {_where(s)}")
        target = s.targets[0]
        v, t = self.visit(s.value)
        if isinstance(target, ast.Name):
            if isinstance(t, tuple):
                raise Refuse(f"a tuple assigned to one name at {_where(s)}")
            want = self.bind(target.id, t, s)
            if self.final:
                v = self.widen(v, s.value, t, want, s)
            return ast.Assign(targets=[copy.deepcopy(target)], value=v)
        if isinstance(target, ast.Tuple) and all(isinstance(x, ast.Name) for x in target.elts):
            if isinstance(t, tuple):
                parts = list(t)
            elif isinstance(s.value, ast.Tuple):
                raise Refuse(f"tuple assignment at {_where(s)} is not modelled")
            else:
                raise Refuse(f"unpacking a non-tuple value at {_where(s)}")
            if len(parts) != len(target.elts):
                raise Refuse(f"unpacking {len(parts)} values into {len(target.elts)} names at {_where(s)}")
            for x, pt in zip(target.elts, parts):
                assert isinstance(x, ast.Name)
                if self.bind(x.id, pt, s) != pt and self.final:
                    raise Refuse(f"{x.id} is widened after a tuple assignment at {_where(s)}")
            return ast.Assign(targets=[copy.deepcopy(target)], value=v)
        raise Refuse(f"assignment to {type(target).__name__} at {_where(s)}")

    def run(self) -> ast.FunctionDef:
        for _ in range(16):
            before = dict(self.env)
            self.block(self.k.fn.body)
            if self.env == before:
                break
        else:
            raise Refuse("the shape inference did not settle")
        self.final = True
        body = self.block(self.k.fn.body)
        fn = copy.deepcopy(self.k.fn)
        fn.body = body
        fn.args.args += [
            ast.arg(arg=PROGRAMS),
            ast.arg(arg=self.lift, annotation=_parse_expr("tl.constexpr")),
        ]
        return ast.fix_missing_locations(fn)


# --- seeds: where the lifted index comes from -------------------------------------------------------------------


def _program_id_statements(mod: SourceModule, k: KernelAnalysis) -> dict[int, ast.Assign]:
    """axis → the top-level `name = tl.program_id(axis)`; Refuse on any other use of tl.program_id."""
    found: dict[int, ast.Assign] = {}
    tops = {id(s.value) for s in k.fn.body if _single_name(s) and isinstance(s, ast.Assign)}
    for n in ast.walk(k.fn):
        if isinstance(n, ast.Call) and mod.names.tl_call(n) in ("program_id", "num_programs"):
            axis = _program_id_axis(mod, n)
            if mod.names.tl_call(n) == "num_programs":
                raise Refuse(f"tl.num_programs at {_where(n)}: the grid changes")
            if id(n) not in tops or axis is None or axis in found:
                raise Refuse(f"tl.program_id at {_where(n)} is not a single top-level `name = tl.program_id(k)`")
            found[axis] = next(s for s in k.fn.body if isinstance(s, ast.Assign) and s.value is n)
    for s in found.values():
        name = _single_name(s)
        if name is None or len(k.defs.get(name, [])) != 1:
            raise Refuse(f"the program id {name} ({_where(s)}) is reassigned")
    return found


def _loads_of(k: KernelAnalysis, name: str) -> list[ast.Name]:
    return [n for n in ast.walk(k.fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def _column_seed(mod: SourceModule, k: KernelAnalysis, lift: str) -> _Seed:
    pids = _program_id_statements(mod, k)
    if 0 not in pids:
        raise Refuse("no top-level `pid = tl.program_id(0)`")
    pid_stmt = pids[0]
    pid = _single_name(pid_stmt)
    assert pid is not None
    split: dict[type, tuple[ast.Assign, str, str]] = {}
    for s in k.fn.body:
        name = _single_name(s)
        v = s.value if isinstance(s, ast.Assign) else None
        if (
            name
            and isinstance(v, ast.BinOp)
            and isinstance(v.op, ast.FloorDiv | ast.Mod)
            and isinstance(v.left, ast.Name)
            and v.left.id == pid
            and isinstance(v.right, ast.Name)
        ):
            assert isinstance(s, ast.Assign)
            if type(v.op) in split:
                raise Refuse(f"{pid} is split twice by the same operator ({_where(s)})")
            split[type(v.op)] = (s, name, v.right.id)
    if ast.Mod not in split:
        raise Refuse(f"no `index = {pid} % N` splits tl.program_id(0) ({_where(pid_stmt)})")
    mod_stmt, index, n = split[ast.Mod]
    if ast.FloorDiv in split and split[ast.FloorDiv][2] != n:
        raise Refuse(f"{pid} is split by two different divisors ({_where(split[ast.FloorDiv][0])})")
    if n not in k.params or n in k.constexprs or n in k.defs:
        raise Refuse(f"the divisor {n} of `{index} = {pid} % {n}` ({_where(mod_stmt)}) is not a runtime parameter")
    for name in [index] + ([split[ast.FloorDiv][1]] if ast.FloorDiv in split else []):
        if len(k.defs.get(name, [])) != 1:
            raise Refuse(f"{name} is reassigned (first at {_where(mod_stmt)})")
    # the pattern: a load reads `index` as a unit-stride term while the rest of its address is the same for
    # neighbouring programs' lanes: its tile strides by a run-time value, or it has no tile (a scalar load)
    coalesces = False
    for name, call in k.calls():
        if name == "load" and call.args:
            terms = k.additive_terms(call.args[0])
            # additive_terms looks through `index` to its definition, `pid % N`
            unit = any(t is mod_stmt.value or (isinstance(t, ast.Name) and t.id == index) for t in terms)
            scalar = not any(k.is_vector(t) for t in terms)
            if unit and (scalar or k.strided_address(call.args[0])):
                coalesces = True
    if not coalesces:
        raise Refuse(
            f"no load reads `{index} = {pid} % {n}` ({_where(mod_stmt)}) as a unit-stride term of a scalar "
            "address or of one whose tile strides by a run-time value: nothing to coalesce"
        )
    split_stmts = {id(st) for st, _, _ in split.values()}
    lefts = [st.value.left for st, _, _ in split.values() if isinstance(st.value, ast.BinOp)]
    other_uses = [u for u in _loads_of(k, pid) if not any(u is left for left in lefts)]
    setup = [
        "_pa_pid = tl.program_id(0)",
        f"_pa_nblk = tl.cdiv({n}, {lift})",
        "_pa_q = _pa_pid // _pa_nblk",
        f"_pa_r = _pa_pid % _pa_nblk * {lift} + tl.arange(0, {lift})",
        f"_pa_mask = (_pa_r < {n}) & (_pa_q * {n} + _pa_r < {PROGRAMS})",
    ]
    types = {"_pa_pid": NONE, "_pa_nblk": NONE, "_pa_q": NONE, "_pa_r": LIFTED, "_pa_mask": LIFTED, index: LIFTED}
    if other_uses:  # pid == (pid // N) * N + pid % N: the lifted program id
        setup.append(f"{pid} = _pa_q * {n} + _pa_r")
        types[pid] = LIFTED
    replace = {id(pid_stmt): _parse_stmts("\n".join(setup)), id(mod_stmt): _parse_stmts(f"{index} = _pa_r")}
    if ast.FloorDiv in split:
        div_stmt, quotient, _ = split[ast.FloorDiv]
        replace[id(div_stmt)] = _parse_stmts(f"{quotient} = _pa_q")
        types[quotient] = NONE
    assert split_stmts <= set(replace)
    return _Seed(replace, types, index, n)


def _row_seed(mod: SourceModule, k: KernelAnalysis, lift: str) -> _Seed:
    pids = _program_id_statements(mod, k)
    if 0 not in pids:
        raise Refuse("no top-level `row = tl.program_id(0)`")
    if k.loops:
        raise Refuse(f"the kernel loops ({_where(k.loops[0])}): its rows do not fit one tile")
    if not any(name in REDUCTIONS for name, _ in k.calls()):
        raise Refuse("no reduction over the tile: nothing is per row")
    stmt = pids[0]
    row = _single_name(stmt)
    assert row is not None
    setup = f"{row} = tl.program_id(0) * {lift} + tl.arange(0, {lift})\n_pa_mask = {row} < {PROGRAMS}"
    return _Seed({id(stmt): _parse_stmts(setup)}, {row: LIFTED, "_pa_mask": LIFTED}, row)


# --- host side ----------------------------------------------------------------------------------------------


def _pure(node: ast.AST) -> bool:
    """A host expression safe to evaluate twice: names, literals, arithmetic, shapes, triton.cdiv & co."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name not in HOST_CALLS:
                return False
        elif not isinstance(
            n,
            ast.Name | ast.Constant | ast.BinOp | ast.UnaryOp | ast.Attribute | ast.Subscript | ast.Slice
            | ast.operator | ast.unaryop | ast.expr_context | ast.keyword | ast.Tuple,
        ):  # fmt: skip
            return False
    return True


def _argument(k: KernelAnalysis, lc: Launch, param: str) -> ast.expr | None:
    kw = next((x.value for x in lc.call.keywords if x.arg == param), None)
    if kw is not None:
        return kw
    i = k.params.index(param)
    return lc.call.args[i] if i < len(lc.call.args) else None


def _chunk_param(k: KernelAnalysis, p: str) -> bool:
    """Every use of constexpr `p` sizes a loop chunk: `for s in range(a, b, p)` with tiles `s + tl.arange(0, p)`
    and `[p]` shapes. The loop covers the same range with any power-of-two chunk that divides the old one."""
    steps: set[str] = set()
    allowed: set[int] = set()
    for loop in k.loops:
        it = loop.iter if isinstance(loop, ast.For) else None
        if (
            isinstance(loop, ast.For)
            and isinstance(loop.target, ast.Name)
            and isinstance(it, ast.Call)
            and len(it.args) == 3
            and isinstance(it.args[2], ast.Name)
            and it.args[2].id == p
        ):
            steps.add(loop.target.id)
            allowed.add(id(it.args[2]))
    if not steps or not all(_chunk_invariant(k, lp) for lp in k.loops if lp.target.id in steps):  # type: ignore[union-attr]
        return False
    for n in ast.walk(k.fn):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            for a, b in ((n.left, n.right), (n.right, n.left)):
                if (
                    isinstance(a, ast.Name)
                    and a.id in steps
                    and isinstance(b, ast.Call)
                    and k.mod.tl_call(b) == "arange"
                    and len(b.args) == 2
                    and isinstance(b.args[1], ast.Name)
                    and b.args[1].id == p
                ):
                    allowed.add(id(b.args[1]))
        if isinstance(n, ast.Call) and k.mod.tl_call(n) in ("zeros", "full") and n.args:
            shape = n.args[0]
            if isinstance(shape, ast.List | ast.Tuple):
                allowed |= {id(x) for x in shape.elts if isinstance(x, ast.Name) and x.id == p}
    return all(id(u) in allowed for u in _loads_of(k, p))


def _chunk_invariant(k: KernelAnalysis, loop: ast.For | ast.While) -> bool:
    """Guards that the chunk loop's result does not depend on its chunk size beyond reassociation: the chunk start
    is used only as `start + tl.arange(...)` or `start + <index from an index reduction>`, never after the loop;
    every value the loop assigns derives from the start, a load or a value of the loop (no `n += 1` chunk
    counting); masked
    loads pad with a literal (0 or ±inf: the identity of sums and extrema)."""
    assert isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
    start = loop.target.id
    starts = _loads_of(k, start)
    binding = [lp for lp in k.loops if isinstance(lp.target, ast.Name) and lp.target.id == start]  # type: ignore[union-attr]
    inside = {id(n) for lp in binding for n in ast.walk(lp)}  # loops reusing the name rebind it
    allowed: set[int] = set()
    for n in (n for lp in binding for n in ast.walk(lp)):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            for a, b in ((n.left, n.right), (n.right, n.left)):
                if isinstance(a, ast.Name) and a.id == start:
                    arange = isinstance(b, ast.Call) and k.mod.tl_call(b) == "arange"
                    if arange or (isinstance(b, ast.Name) and b.id in k.argidx):
                        allowed.add(id(a))
    if not all(id(n) in inside and id(n) in allowed for n in starts):
        return False
    local = {t.id for n in ast.walk(loop) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    for n in ast.walk(loop):
        if isinstance(n, ast.Assign | ast.AugAssign) and not (
            any(isinstance(x, ast.Name) and x.id in local | {start} for x in ast.walk(n.value))
            or any(k.mod.tl_call(x) == "load" for x in ast.walk(n.value))
        ):
            return False
        if isinstance(n, ast.Call) and k.mod.tl_call(n) == "load":
            mask = n.args[1] if len(n.args) > 1 else next((x.value for x in n.keywords if x.arg == "mask"), None)
            other = n.args[2] if len(n.args) > 2 else next((x.value for x in n.keywords if x.arg == "other"), None)
            if mask is None:
                continue
            if (
                other is None
                or _scalar_literal(other) is None
                or ast.literal_eval(_padding(other)) not in (0, INF, -INF)
            ):
                return False
    return True


INF = float("inf")


def _padding(node: ast.expr) -> str:
    """A padding literal as Python text literal_eval reads (`float("-inf")` → `-1e999`)."""
    text = ast.unparse(node)
    return text.replace("float('-inf')", "-1e999").replace("float('inf')", "1e999")


def _unique(taken: set[str], name: str) -> str:
    while name in taken:
        name += "_PA"
    return name


@dataclass
class _Plan:
    """The rewrite of one kernel and its launch for one mode, or why it cannot be done."""

    mod: SourceModule
    k: KernelAnalysis
    mode: Mode
    why_not: str | None = None
    fn: ast.FunctionDef | None = None
    launch: Launch | None = None
    seed: _Seed | None = None
    lift: str = ""
    tile_sizes: set[str | int] = field(default_factory=set)
    shrink: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            self._check()
        except Refuse as e:
            self.why_not = f"{self.mode.name}: {self.k.fn.name}: {e}"

    def _check(self) -> None:
        mod, k = self.mod, self.k
        imports = {(a.name, a.asname) for n in mod.tree.body if isinstance(n, ast.Import) for a in n.names}
        if ("triton", None) not in imports or ("triton.language", "tl") not in imports:
            raise Refuse("the module does not `import triton` and `import triton.language as tl`")
        if set(mod.decorators(k.fn.name)) & {"autotune", "heuristics"}:
            raise Refuse("the kernel is autotuned or heuristics-decorated")
        a = k.fn.args
        if a.defaults or a.kwonlyargs or a.vararg or a.kwarg or a.posonlyargs:
            raise Refuse("the kernel signature has defaults, *args, **kwargs or keyword-only parameters")
        taken = {n.id for n in ast.walk(k.fn) if isinstance(n, ast.Name)} | set(k.params)
        if any(t.startswith("_pa_") for t in taken):
            raise Refuse("the kernel already uses names starting with _pa_")
        if PROGRAMS in taken:
            raise Refuse(f"the kernel already has a name {PROGRAMS}")
        self.lift = _unique(taken, self.mode.constexpr)
        launches = [lc for lc in mod.launches if lc.kernel == k.fn.name]
        if len(launches) != 1:
            raise Refuse(f"the kernel is launched {len(launches)} times (one launch is rewritten)")
        lc = self.launch = launches[0]
        if lc.host is None:
            raise Refuse(f"the launch at {_where(lc.call)} is not inside a host function")
        if not isinstance(lc.grid, ast.Tuple) or not lc.grid.elts or not _pure(lc.grid.elts[0]):
            raise Refuse(f"the grid at {_where(lc.call)} is not a tuple literal with a plain axis-0 expression")
        if any(isinstance(x, ast.Starred) for x in lc.call.args) or any(kw.arg is None for kw in lc.call.keywords):
            raise Refuse(f"the launch at {_where(lc.call)} unpacks arguments")
        seed_fn = _column_seed if self.mode is COLUMNS else _row_seed
        self.seed = seed_fn(mod, k, self.lift)
        lifter = _Lifter(mod, k, self.mode, self.lift, self.seed)
        self.fn = lifter.run()
        self.tile_sizes = lifter.tile_sizes
        for p in (x for x in self.tile_sizes if isinstance(x, str)):
            arg = _argument(k, lc, p)
            if arg is None or not _pure(arg):
                raise Refuse(f"the tile size {p} is not passed as a plain expression at {_where(lc.call)}")
        if self.seed.stride is not None:
            arg = _argument(k, lc, self.seed.stride)
            if arg is None or not _pure(arg):
                raise Refuse(f"{self.seed.stride} is not passed as a plain expression at {_where(lc.call)}")
        names = [x for x in self.tile_sizes if isinstance(x, str)]
        if self.mode is COLUMNS and names and all(_chunk_param(k, p) for p in names):
            if any(isinstance(x, int) for x in self.tile_sizes):
                raise Refuse("the kernel mixes literal and constexpr tile sizes")
            self.shrink = sorted(names)

    def host_text(self, lc: Launch, value: int) -> tuple[str, str]:
        """(statements before the launch, the LIFT expression)."""
        k = self.k
        sizes = [
            f"({self.mod.segment(a)})" if isinstance(x, str) and (a := _argument(k, lc, x)) is not None else str(x)
            for x in sorted(self.tile_sizes, key=str)
        ]
        if self.mode is COLUMNS and self.shrink:
            lift = str(value)
        elif self.mode is COLUMNS:
            widest = sizes[0] if len(sizes) == 1 else f"max({', '.join(sizes)})"
            lift = f"max(1, min({value}, 4096 // {widest}))" if sizes else str(value)
        else:
            widest = sizes[0] if len(sizes) == 1 else f"max({', '.join(sizes)})"
            lift = f"max(1, {value} // {widest})" if sizes else f"max(1, {value})"
        return f"_pa_programs = {self.mod.segment(lc.grid.elts[0])}\n_pa_lift = {lift}\n", lift  # type: ignore[attr-defined]

    def edits(self, value: int) -> list[Edit]:
        mod, k, lc = self.mod, self.k, self.launch
        assert lc is not None and self.fn is not None and self.seed is not None
        assert isinstance(lc.grid, ast.Tuple)
        first = k.fn.decorator_list[0] if k.fn.decorator_list else k.fn
        start, end = mod.line_of(first)[0], mod.line_of(k.fn)[1]
        edits = [Edit(start, end, ast.unparse(self.fn) + "\n")]
        stmt = min(
            (s for s in ast.walk(lc.host) if isinstance(s, ast.stmt) and _contains(s, lc.call)),  # type: ignore[arg-type]
            key=lambda s: mod.span(s)[1] - mod.span(s)[0],
        )
        pre, _ = self.host_text(lc, value)
        indent = mod.indent_of(stmt)
        at = mod.line_of(stmt)[0]
        edits.append(Edit(at, at, "".join(f"{indent}{line}\n" for line in pre.splitlines())))
        g0 = lc.grid.elts[0]
        if self.mode is COLUMNS:
            n = mod.segment(_argument(k, lc, self.seed.stride))  # type: ignore[arg-type]
            grid0 = f"triton.cdiv(_pa_programs, max({n}, 1)) * triton.cdiv({n}, _pa_lift)"
        else:
            grid0 = "triton.cdiv(_pa_programs, _pa_lift)"
        edits.append(Edit(*mod.span(g0), grid0))
        for p in self.shrink:
            arg = _argument(k, lc, p)
            assert arg is not None
            seg = mod.segment(arg)
            floor = ROW_TILE_FLOOR
            edits.append(Edit(*mod.span(arg), f"max(min({seg}, {floor}), ({seg}) // _pa_lift)"))
        edits.append(mod.call_append(lc.call, f"{PROGRAMS}=_pa_programs, {self.lift}=_pa_lift"))
        return edits

    def describe(self, value: int) -> str:
        assert self.seed is not None and self.launch is not None
        kname = self.k.fn.name
        if self.mode is COLUMNS:
            shrunk = f"; {', '.join(self.shrink)} → max(min(B, {ROW_TILE_FLOOR}), B // {value})" if self.shrink else ""
            return (
                f"{kname}: the contiguous index {self.seed.index_name} = pid % {self.seed.stride} becomes "
                f"{self.lift} = {value} columns of a [rows, {self.lift}] tile, loads and stores masked, reductions "
                f"keep the column vector{shrunk}; grid axis 0 → cdiv(programs, {self.seed.stride}) × "
                f"cdiv({self.seed.stride}, {self.lift}) (launch line {self.launch.call.lineno})"
            )
        return (
            f"{kname}: each program takes {self.lift} = max(1, {value} // BLOCK) rows "
            f"({self.seed.index_name} becomes a leading tile axis, row tail masked, reductions along axis 1); "
            f"grid axis 0 → cdiv(programs, {self.lift}) (launch line {self.launch.call.lineno})"
        )


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer))


class ProgramAxisTile(Applier):
    """One lifting, two placements of the lifted axis (see the module docstring)."""

    def __init__(self, mode: Mode):
        self.mode = mode
        self.name = mode.name
        self.card = mode.card
        if mode is COLUMNS:
            self.summary = (
                "`r = pid % N` indexing the contiguous axis of a strided-tile kernel becomes a vector of "
                "BLOCK_COL columns per program ([rows, BLOCK_COL] tiles, coalesced)"
            )
        else:
            self.summary = "a loop-free one-row-per-program kernel takes ROWS rows per program ([ROWS, BLOCK] tiles)"

    def plans(self, mod: SourceModule) -> list[_Plan]:
        return [_Plan(mod, k, self.mode) for k in mod.kernels.values() if mod.launches]

    def applies(self, mod: SourceModule) -> bool:
        return any(p.why_not is None for p in self.plans(mod))

    def why_not(self, mod: SourceModule) -> str | None:
        plans = self.plans(mod)
        if any(p.why_not is None for p in plans):
            return None
        launched = {lc.kernel for lc in mod.launches}
        reasons = [p.why_not for p in plans if p.k.fn.name in launched and p.why_not]
        return "; ".join(reasons) or f"{self.name}: no launched @triton.jit kernel"

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        plans = [p for p in self.plans(mod) if p.why_not is None]
        out = []
        for value in self.mode.variants[:max_candidates] if max_candidates else self.mode.variants:
            edits = [e for p in plans for e in p.edits(value)]
            desc = "; ".join(p.describe(value) for p in plans)
            key = "BLOCK_COL" if self.mode is COLUMNS else "tile_budget"
            out.append(Candidate(self.name, self.card, desc, mod.apply(edits), {key: value}))
        return out
