"""Fuse a kernel chain that passes a temporary through HBM: the code of the elementwise side moves into the other
kernel, and one launch and the temporary's allocation go.

The pattern, in `forward`: `T = torch.empty(...)` / `torch.empty_like(...)` passed to two launches, P then C, and
used nowhere else. An elementwise kernel is straight-line code with one store, all of whose values are functions of
one index vector `idx` (loads `tl.load(x_ptr + f(idx), mask=m, other=…)`, scalar arguments, literals, elementwise tl
functions: no program id, arange, reduction or scan but through `idx`).

Form "load" (card fuse-kernel-chain): P is elementwise and stores `tl.store(t_ptr + idx, value)`; C reads T only
through `tl.load(t_ptr + o, mask=mc, other=oc)`. Then T[o] = value(idx := o) wherever P wrote it, so before each
such load C runs P's statements with `idx` bound to `o` (locals prefixed `_f_`, P's loads masked also by `mc`), and
the load becomes `tl.where(mc, value.to(T's dtype), tl.cast(oc, T's dtype))`.

Form "store" (card epilogue-fusion): C is elementwise and reads T only at `t_ptr + idx`; P writes T with one
`tl.store(t_ptr + offset, value, mask)` (a GEMM's tile store). C's statements replace that store with `idx` bound to
`offset`, C's loads of T read `value.to(T's dtype)`, and C's loads and store take P's mask as well.

The casts reproduce the rounding of T's store. Lanes of T that P left unwritten hold uninitialized memory in the
original, so any value computed there is an admissible refinement; moved loads keep their own masks (their bounds
guards) intersected with the other kernel's, so no new address is read.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, EditError, SourceModule, float_literal, name_loads
from patterns.features import KernelAnalysis, Launch
from patterns.features.reader import attr_path, keyword_arg

# tl functions that act lane by lane (no program id, index generation, reduction, scan or memory access)
ELEMENTWISE = frozenset(
    {
        *("abs", "cast", "ceil", "clamp", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma"),
        *("log", "log2", "maximum", "minimum", "rsqrt", "sigmoid", "sin", "sqrt", "sqrt_rn", "umulhi", "where"),
    }
)
TORCH_TO_TL = {
    "float32": "float32",
    "float": "float32",
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "float64": "float64",
    "double": "float64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "uint8": "uint8",
    "bool": "int1",
}


class _Refused(Exception):
    """A precondition failed; the message says which and where."""


@dataclass
class _Elementwise:
    """A straight-line elementwise kernel: one store, every value a function of the lane's index `idx`."""

    idx: str
    store: ast.Call
    stmts: list[ast.Assign]  # the assignments the store reads (the index's excluded), in the kernel's order
    params: list[str]  # parameters it reads, in the kernel's order (the temporary's excluded)
    pointers: set[str]  # those of them that are load or store roots
    t_loads: set[tuple[int, int]]  # a consumer's loads of the temporary, by source position


@dataclass
class _Load:
    call: ast.Call
    stmt: ast.stmt  # the consumer's simple statement that holds the load
    offset: ast.expr | None  # the address without its pointer term (None: the pointer alone)
    mask: ast.expr | None
    other: ast.expr | None


@dataclass
class _Store:
    """The producer's store of the temporary, where an elementwise consumer's code goes (the epilogue form)."""

    stmt: ast.stmt
    offset: ast.expr
    mask: ast.expr | None
    value: ast.expr


@dataclass
class _Plan:
    form: str  # "load": the producer moves into the consumer's loads; "store": the consumer into the producer's store
    temp: str
    alloc: ast.stmt
    target: Launch  # the kernel that is edited and keeps its launch
    source: Launch  # the kernel whose code moves; its launch goes
    source_stmt: ast.stmt  # that launch
    moved: _Elementwise
    t_param: str  # the target's parameter that received T (the new parameters take its place)
    loads: list[_Load]  # form "load": the target's loads of T
    dead: list[ast.stmt]  # form "load": the target's local pointers into T (deleted with its parameter)
    store: _Store | None  # form "store": the target's store of T
    renames: dict[str, str]  # source parameter → target parameter (reused or new)
    new_params: list[tuple[str, str]]  # (target parameter, host argument text) in place of t_param
    dtype: str  # T's element type, as kernel source

    @property
    def card(self) -> str:
        return "epilogue-fusion" if self.form == "store" else "fuse-kernel-chain"


def _flatten_add(expr: ast.expr) -> list[tuple[int, ast.expr]]:
    """`a + b - c` → [(+1, a), (+1, b), (-1, c)]."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
        right = _flatten_add(expr.right)
        if isinstance(expr.op, ast.Sub):
            right = [(-s, t) for s, t in right]
        return _flatten_add(expr.left) + right
    return [(1, expr)]


def _rebuild_add(terms: list[tuple[int, ast.expr]]) -> ast.expr:
    (sign, out), rest = terms[0], terms[1:]
    if sign < 0:
        out = ast.UnaryOp(ast.USub(), out)
    for s, t in rest:
        out = ast.BinOp(out, ast.Add() if s > 0 else ast.Sub(), t)
    return out


def _call_arg(call: ast.Call, pos: int, name: str) -> ast.expr | None:
    return call.args[pos] if len(call.args) > pos else keyword_arg(call, name)


def _split_address(addr: ast.expr, is_root) -> tuple[str, ast.expr | None]:
    """(pointer parameter, offset expression) of `ptr + offset`; raises when the address has another form."""
    terms = _flatten_add(addr)
    roots = [(s, t) for s, t in terms if isinstance(t, ast.Name) and is_root(t.id)]
    if len(roots) != 1 or roots[0][0] < 0:
        raise _Refused(f"line {addr.lineno}: address `{ast.unparse(addr)}` is not `pointer + offset`")
    root = roots[0][1]
    assert isinstance(root, ast.Name)
    rest = [(s, t) for s, t in terms if t is not root]
    return root.id, (_rebuild_add(rest) if rest else None)


def _expand_locals(k: KernelAnalysis, expr: ast.expr, keep: str, depth: int = 0) -> ast.expr:
    """`ptrs` bound once to `x_ptr + offs` → `x_ptr + offs`, through sums, stopping at `keep`."""
    if isinstance(expr, ast.Name) and expr.id != keep and len(k.defs.get(expr.id, [])) == 1 and depth < 8:
        return _expand_locals(k, k.defs[expr.id][0], keep, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
        return ast.BinOp(_expand_locals(k, expr.left, keep, depth), expr.op, _expand_locals(k, expr.right, keep, depth))
    return expr


def _launch_args(k: KernelAnalysis, lc: Launch) -> dict[str, ast.expr]:
    """Kernel parameter → the host expression passed for it."""
    out = dict(zip(k.params, lc.call.args))
    out.update({kw.arg: kw.value for kw in lc.call.keywords if kw.arg in k.params})
    return out


def _jit_helpers(mod: SourceModule) -> dict[str, ast.FunctionDef]:
    return {f.name: f for f, _ in mod.jits}


def _is_elementwise_helper(mod: SourceModule, fn: ast.FunctionDef, seen: frozenset[str] = frozenset()) -> bool:
    """A jit helper whose calls are all elementwise (tl functions, `.to`, other such helpers): a rounding helper,
    an activation."""
    helpers = _jit_helpers(mod)
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        name = _tl_function(mod, n)
        if name is not None:
            ok = name in ELEMENTWISE
        elif isinstance(n.func, ast.Name) and n.func.id in helpers:
            callee = n.func.id
            ok = callee not in seen and _is_elementwise_helper(mod, helpers[callee], seen | {fn.name})
        else:
            ok = isinstance(n.func, ast.Attribute) and n.func.attr == "to"
        if not ok:
            return False
    return True


def _tl_function(mod: SourceModule, call: ast.Call) -> str | None:
    """`tl.exp(...)`, `tl.math.erf(...)`, `libdevice`-free: the tl function's name, else None."""
    name = mod.names.tl_call(call)
    if name is not None:
        return name
    head, _, last = attr_path(call.func).rpartition(".")
    if head in {f"{a}.math" for a in mod.names.tl_aliases}:
        return last
    return None


class _ValueCheck:
    """Checks that expressions of an elementwise kernel, followed through its locals down to the index `idx`, are
    elementwise; records the parameters and locals they read. `t_loads`: loads of the temporary allowed at exactly
    `t_param + idx` (a consumer's), collected."""

    def __init__(self, mod: SourceModule, k: KernelAnalysis, idx: str, t_param: str, allow_t: bool):
        self.mod, self.k, self.idx, self.t_param, self.allow_t = mod, k, idx, t_param, allow_t
        self.params: list[str] = []
        self.pointers: set[str] = set()
        self.locals: set[str] = set()
        self.t_loads: list[ast.Call] = []

    def run(self, expr: ast.expr, depth: int = 0) -> None:
        if depth > 20:
            raise _Refused(f"{self.k.fn.name} line {expr.lineno}: the kernel's value is defined too deeply to follow")
        k = self.k
        if isinstance(expr, ast.Name):
            if expr.id in k.constexprs:
                raise _Refused(
                    f"{self.k.fn.name} line {expr.lineno}: the elementwise kernel's value reads constexpr `{expr.id}`"
                )
            if expr.id == self.t_param:
                raise _Refused(
                    f"{self.k.fn.name} line {expr.lineno}: `{self.t_param}` is used other than by its store or load"
                )
            if expr.id in k.params and expr.id not in self.params:
                self.params.append(expr.id)
            elif expr.id != self.idx and expr.id in k.defs and expr.id not in self.locals:
                self.locals.add(expr.id)
                self.run(k.defs[expr.id][0], depth + 1)
            return  # else the index, or a module global (a constexpr flag, a helper)
        if isinstance(expr, ast.Constant):
            return
        if isinstance(expr, ast.Attribute) and attr_path(expr).split(".")[0] in self.mod.names.tl_aliases:
            return  # tl.float32 and the like
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        if not isinstance(expr, ast.BinOp | ast.UnaryOp | ast.Compare):
            raise _Refused(
                f"{self.k.fn.name} line {expr.lineno}: `{ast.unparse(expr)}` in the kernel's value is not elementwise"
            )
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, ast.expr):
                self.run(child, depth)

    def _call(self, call: ast.Call, depth: int) -> None:
        mod = self.mod
        name = _tl_function(mod, call)
        if name == "load":
            self.address(call, depth)
        else:
            is_to = isinstance(call.func, ast.Attribute) and call.func.attr == "to" and name is None
            helpers = _jit_helpers(mod)
            helper = helpers.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if helper is not None and not _is_elementwise_helper(mod, helper):
                raise _Refused(f"{self.k.fn.name} line {call.lineno}: helper `{helper.name}` is not elementwise")
            if not (name in ELEMENTWISE or is_to or helper is not None):
                what = f"`{ast.unparse(call.func)}` in the kernel's value is not elementwise"
                raise _Refused(f"{self.k.fn.name} line {call.lineno}: {what}")
            if is_to:
                assert isinstance(call.func, ast.Attribute)  # `x.to(...)`
                self.run(call.func.value, depth)
        for a in [*call.args, *(kw.value for kw in call.keywords)]:
            if name != "load" or a is not _call_arg(call, 0, "pointer"):
                self.run(a, depth)

    def address(self, call: ast.Call, depth: int = 0) -> str:
        """Check the pointer of a load or store: `param + f(idx)`; returns the parameter."""
        extra = [kw.arg for kw in call.keywords if kw.arg in ("boundary_check", "padding_option")]
        if len(call.args) > 3 or extra:
            raise _Refused(f"{self.k.fn.name} line {call.lineno}: a block-pointer access in the elementwise kernel")
        addr = _call_arg(call, 0, "pointer")
        if addr is None:
            raise _Refused(f"{self.k.fn.name} line {call.lineno}: a memory access without a pointer")
        root, offset = _split_address(_expand_locals(self.k, addr, self.idx), lambda n: n in self.k.params)
        if root == self.t_param:
            if not self.allow_t or not (isinstance(offset, ast.Name) and offset.id == self.idx):
                raise _Refused(
                    f"{self.k.fn.name} line {call.lineno}: `{self.t_param}` is accessed other than at its index"
                )
            self.t_loads.append(call)
            return root
        self.pointers.add(root)  # any offset will do: its names are checked like the value's (a scalar is uniform)
        self.run(addr, depth)
        return root


def _elementwise(mod: SourceModule, k: KernelAnalysis, t_param: str, role: str) -> _Elementwise:
    """`role` "producer": its one store writes `t_param` at `t_param + idx`, only the stored value counts (lanes it
    masks off are never read). "consumer": it reads `t_param` only at `t_param + idx`, its one store goes elsewhere
    and is moved whole."""
    fn = k.fn
    stores, assigns = [], []
    for i, stmt in enumerate(fn.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # docstring
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            assigns.append((stmt, stmt.targets[0].id))
        elif isinstance(stmt, ast.Expr) and mod.names.tl_call(stmt.value) == "store":
            stores.append(stmt.value)
        else:
            raise _Refused(f"{fn.name} line {stmt.lineno}: the {role} is not straight-line elementwise code")
    for stmt, name in assigns:
        if len(k.defs[name]) != 1:
            raise _Refused(f"{fn.name} line {stmt.lineno}: `{name}` is assigned more than once")
    if len(stores) != 1:
        raise _Refused(f"{fn.name}: the {role} has {len(stores)} stores (one is needed)")
    store = stores[0]
    assert isinstance(store, ast.Call)
    addr, value = _call_arg(store, 0, "pointer"), _call_arg(store, 1, "value")
    if addr is None or value is None:
        raise _Refused(f"{fn.name} line {store.lineno}: tl.store without pointer and value")
    if role == "producer":
        root, offset = _split_address(_pointer_local(k, addr), lambda n: n in k.params)  # type: ignore[arg-type]
        if root != t_param:
            raise _Refused(f"{fn.name} line {store.lineno}: the producer stores to `{root}`, not to the temporary")
    else:
        loads = [c for name, c in k.calls() if name == "load" and t_param in _names(_call_arg(c, 0, "pointer"))]
        if not loads:
            raise _Refused(f"{fn.name}: the consumer never loads `{t_param}`")
        _, offset = _split_address(_call_arg(loads[0], 0, "pointer"), lambda n: n == t_param)  # type: ignore[arg-type]
    if not isinstance(offset, ast.Name) or offset.id not in k.defs or offset.id not in k.vector:
        raise _Refused(f"{fn.name} line {store.lineno}: the temporary's index is not one local vector of offsets")
    check = _ValueCheck(mod, k, offset.id, t_param, allow_t=role == "consumer")
    if role == "producer":
        if sum(n.id == t_param for n in ast.walk(fn) if isinstance(n, ast.Name)) != 1:
            raise _Refused(f"{fn.name}: `{t_param}` is used outside the store")
        check.run(value)
    else:
        mask = _call_arg(store, 2, "mask")
        if check.address(store) == t_param:
            raise _Refused(f"{fn.name} line {store.lineno}: the consumer stores to the temporary")
        for part in (value, mask):
            if part is not None:
                check.run(part)
        seen = {id(n) for c in check.t_loads for n in ast.walk(c)}
        if any(isinstance(n, ast.Name) and n.id == t_param and id(n) not in seen for n in ast.walk(fn)):
            raise _Refused(f"{fn.name}: the consumer uses `{t_param}` other than by its loads")
    if not check.pointers:
        raise _Refused(f"{fn.name} line {store.lineno}: the moved code reads no input")
    stmts = [s for s in fn.body if isinstance(s, ast.Assign) and _target(s) in check.locals]
    t_loads = {(c.lineno, c.col_offset) for c in check.t_loads}
    params = sorted(check.params, key=k.params.index)
    return _Elementwise(offset.id, store, stmts, params, check.pointers, t_loads)


def _target(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _names(expr: ast.AST | None) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} if expr is not None else set()


def _simple_stmt(mod: SourceModule, fn: ast.FunctionDef, node: ast.AST) -> ast.stmt:
    """The simple statement holding `node`, alone on its lines."""
    stmt = next(
        (
            st
            for st in ast.walk(fn)
            if isinstance(st, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr | ast.Return)
            and any(n is node for n in ast.walk(st))
        ),
        None,
    )
    if stmt is None:
        raise _Refused(f"{fn.name} line {getattr(node, 'lineno', '?')}: the access is not inside a simple statement")
    a, b = mod.line_of(stmt)
    if mod.data[a:b].decode().strip() != mod.segment(stmt).strip():
        raise _Refused(f"{fn.name} line {stmt.lineno} holds more than one statement")
    return stmt


def _no_prefix_names(fn: ast.FunctionDef) -> None:
    if any(isinstance(n, ast.Name) and n.id.startswith("_f") for n in ast.walk(fn)):
        raise _Refused(f"{fn.name} already has names starting with `_f` (the fused code's prefix)")


def _t_pointer(k: KernelAnalysis, addr: ast.expr, t_param: str, via: list[str]) -> ast.expr:
    """`addr` with the local pointer names bound once to `t_param + …` (`z_row = z_ptr + row * N`) replaced by their
    definitions; those names are appended to `via`."""
    if isinstance(addr, ast.BinOp) and isinstance(addr.op, ast.Add | ast.Sub):
        return ast.BinOp(_t_pointer(k, addr.left, t_param, via), addr.op, _t_pointer(k, addr.right, t_param, via))
    if isinstance(addr, ast.Name) and addr.id not in k.params and len(k.defs.get(addr.id, [])) == 1:
        inner = _t_pointer(k, k.defs[addr.id][0], t_param, via)
        if t_param in _names(inner):
            via.append(addr.id)
            return inner
    return addr


def _consumer_loads(mod: SourceModule, k: KernelAnalysis, t_param: str) -> tuple[list[_Load], list[ast.stmt]]:
    """Every use of `t_param` in C, as a `tl.load(t_param + o, mask, other)` with a side-effect-free offset (through
    local pointers bound once, whose assignments are returned: they go with the temporary's parameter)."""
    fn = k.fn
    _no_prefix_names(fn)
    if t_param in k.defs:
        raise _Refused(f"{fn.name}: `{t_param}` is reassigned in the consumer")
    loads: list[_Load] = []
    claimed: set[int] = set()
    pointer_locals: set[str] = set()
    for name, call in k.calls():
        addr = _call_arg(call, 0, "pointer")
        via: list[str] = []
        full = _t_pointer(k, addr, t_param, via) if addr is not None else None
        if name != "load" or full is None or t_param not in _names(full):
            continue
        assert addr is not None
        if len(call.args) > 3 or any(kw.arg in ("boundary_check", "padding_option") for kw in call.keywords):
            raise _Refused(f"{fn.name} line {call.lineno}: a block-pointer load of the temporary")
        _, offset = _split_address(full, lambda n: n == t_param)
        mask, other = _call_arg(call, 1, "mask"), _call_arg(call, 2, "other")
        for part in (offset, mask):
            if part is not None and not _pure(mod, part):
                raise _Refused(f"{fn.name} line {call.lineno}: `{ast.unparse(part)}` is not a plain index expression")
        # names a pointer local brought in must hold the same value at the load
        for n in _names(offset) - _names(addr) if via else ():
            if n not in k.params and len(k.defs.get(n, [])) != 1:
                raise _Refused(f"{fn.name} line {call.lineno}: `{n}` in the temporary's pointer is reassigned")
        if other is not None and float_literal(other) is None:
            raise _Refused(f"{fn.name} line {call.lineno}: the load's `other` is not a literal")
        loads.append(_Load(call, _simple_stmt(mod, fn, call), offset, mask, other))
        claimed |= {id(n) for n in ast.walk(addr)}
        pointer_locals |= set(via)
    pointer_defs = [st for st in ast.walk(fn) if isinstance(st, ast.Assign) and _target(st) in pointer_locals]
    claimed |= {id(n) for st in pointer_defs for n in ast.walk(st)}
    stray = [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.Name) and n.id in {t_param, *pointer_locals} and id(n) not in claimed
    ]
    if stray:
        raise _Refused(f"{fn.name} line {stray[0].lineno}: the consumer uses `{stray[0].id}` other than by tl.load")
    if not loads:
        raise _Refused(f"{fn.name}: the consumer never loads `{t_param}`")
    for st in pointer_defs:
        _simple_stmt(mod, fn, st.value)
    return loads, list[ast.stmt](pointer_defs)


def _producer_store(mod: SourceModule, k: KernelAnalysis, t_param: str) -> _Store:
    """The producer's one access to `t_param`: a store `tl.store(t_param + offset, value, mask)` (the pointer may be
    a local bound once), whose offset's names keep their values up to the store."""
    fn = k.fn
    _no_prefix_names(fn)
    if t_param in k.defs:
        raise _Refused(f"{fn.name}: `{t_param}` is reassigned in the producer")
    accesses = []
    for name, c in k.calls():
        ptr = _pointer_local(k, _call_arg(c, 0, "pointer"))
        if ptr is not None and t_param in _names(ptr):
            accesses.append((name, c, ptr))
    if len(accesses) != 1 or accesses[0][0] != "store":
        raise _Refused(f"{fn.name}: `{t_param}` is not written by exactly one tl.store and never read")
    _, call, expanded = accesses[0]
    addr, value, mask = _call_arg(call, 0, "pointer"), _call_arg(call, 1, "value"), _call_arg(call, 2, "mask")
    assert addr is not None and value is not None
    _, offset = _split_address(expanded, lambda n: n == t_param)
    if offset is None:
        raise _Refused(f"{fn.name} line {call.lineno}: the temporary's store has no offset")
    for n in _names(offset) | _names(mask):
        if n not in k.params and len(k.defs.get(n, [])) != 1:
            raise _Refused(
                f"{fn.name} line {call.lineno}: `{n}` in the store's address or mask is assigned more than once"
            )
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == t_param]
    if len(uses) != 1 or (isinstance(addr, ast.Name) and len(name_loads(fn, addr.id)) != 1):
        raise _Refused(f"{fn.name}: `{t_param}` or its pointer is used outside the store")
    stmt = _simple_stmt(mod, fn, call)
    if not isinstance(stmt, ast.Expr) or stmt.value is not call:
        raise _Refused(f"{fn.name} line {call.lineno}: the temporary's store is not a statement of its own")
    return _Store(stmt, offset, mask, value)


def _pointer_local(k: KernelAnalysis, addr: ast.expr | None) -> ast.expr | None:
    """A pointer expression with a local pointer name bound once (`c_ptrs`) replaced by its definition."""
    while isinstance(addr, ast.Name) and addr.id not in k.params and len(k.defs.get(addr.id, [])) == 1:
        addr = k.defs[addr.id][0]
    return addr


def _pure(mod: SourceModule, expr: ast.expr) -> bool:
    """Names, literals, arithmetic, comparisons, broadcast subscripts and tl.arange: safe to evaluate repeatedly."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            if mod.names.tl_call(n) != "arange":
                return False
        elif not isinstance(
            n,
            ast.Name
            | ast.Constant
            | ast.BinOp
            | ast.UnaryOp
            | ast.Compare
            | ast.Subscript
            | ast.Tuple
            | ast.Slice
            | ast.Attribute
            | ast.Load
            | ast.operator
            | ast.unaryop
            | ast.cmpop,
        ):
            return False
    return True


def _alloc(stmt: ast.stmt) -> tuple[str, ast.Call] | None:
    """`T = torch.empty(...)` / `torch.empty_like(...)` → (T, call)."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and attr_path(stmt.value.func) in ("torch.empty", "torch.empty_like")
    ):
        return stmt.targets[0].id, stmt.value
    return None


def _launch_stmt(stmt: ast.stmt, kernels: set[str]) -> ast.Call | None:
    if (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Subscript)
        and isinstance(stmt.value.func.value, ast.Name)
        and stmt.value.func.value.id in kernels
    ):
        return stmt.value
    return None


def _stored_params(k: KernelAnalysis) -> set[str | None]:
    out = set()
    for name, call in k.calls():
        if (name == "store" or name.startswith("atomic_")) and call.args:
            out.add(k.pointer_root(call.args[0]))
    return out


# host calls that neither write a tensor nor rebind a name: allocations and shape queries
READ_ONLY_CALLS = frozenset({"torch.empty", "torch.empty_like", "torch.zeros", "torch.zeros_like", "triton.cdiv"})
READ_ONLY_METHODS = frozenset({"numel", "size", "stride", "dim", "element_size"})


def _reads_only(stmt: ast.stmt, names: set[str]) -> bool:
    """`stmt` binds none of `names` and calls only allocations and shape queries."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and n.id in names and not isinstance(n.ctx, ast.Load):
            return False
        if isinstance(n, ast.Call) and not (
            attr_path(n.func) in READ_ONLY_CALLS
            or (isinstance(n.func, ast.Attribute) and n.func.attr in READ_ONLY_METHODS)
        ):
            return False
    return True


class _Planner:
    def __init__(self, mod: SourceModule):
        self.mod = mod
        self.forward = next((n for n in mod.tree.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)

    def plans(self) -> list[_Plan] | str:
        """Every fusion of the first temporary that admits one (form "load" first), or why none does."""
        mod, fwd = self.mod, self.forward
        if fwd is None:
            return "no `forward` function in the module"
        if not any(
            a.name == "triton.language" and a.asname == "tl"
            for n in mod.tree.body
            if isinstance(n, ast.Import)
            for a in n.names
        ):
            return "the module does not `import triton.language as tl` (the fused code is written with it)"
        reasons = []
        for i, stmt in enumerate(fwd.body):
            found = _alloc(stmt)
            if found is None or len(self._sites(i, found[0])) < 2:
                continue  # not shared by two launches: an output, or a buffer of one kernel
            temp, call = found
            try:
                host = self._host(i, temp)
            except _Refused as e:
                reasons.append(f"temporary `{temp}` (forward line {stmt.lineno}): {e}")
                continue
            plans, why = [], []
            for form in ("load", "store"):
                try:
                    plans.append(self._form(form, stmt, temp, call, *host))
                except _Refused as e:
                    why.append(f"{'into the consumer' if form == 'load' else 'into the producer'}: {e}")
            if plans:
                return plans
            reasons.append(f"temporary `{temp}` (forward line {stmt.lineno}): " + "; ".join(why))
        if not reasons:
            return "forward allocates no torch.empty/empty_like temporary that two of its launches share"
        return "; ".join(reasons)

    def _sites(self, i: int, temp: str) -> list[tuple[int, ast.Call]]:
        """The launch statements after forward's statement `i` that take `temp` as an argument."""
        assert self.forward is not None
        kernels = set(self.mod.kernels)
        sites = []
        for j, stmt in enumerate(self.forward.body[i + 1 :], i + 1):
            lc = _launch_stmt(stmt, kernels)
            if lc is not None and any(
                isinstance(a, ast.Name) and a.id == temp for a in [*lc.args, *(kw.value for kw in lc.keywords)]
            ):
                sites.append((j, lc))
        return sites

    def _host(self, i: int, temp: str) -> tuple[int, int, Launch, Launch]:
        """T assigned once, passed to exactly two launches of different kernels and used nowhere else."""
        mod, fwd = self.mod, self.forward
        assert fwd is not None
        stores = [
            n for n in ast.walk(fwd) if isinstance(n, ast.Name) and n.id == temp and not isinstance(n.ctx, ast.Load)
        ]
        if len(stores) != 1:
            raise _Refused("it is assigned more than once")
        uses = name_loads(fwd, temp)
        sites = self._sites(i, temp)
        direct = sum(
            1
            for _, lc in sites
            for a in [*lc.args, *(kw.value for kw in lc.keywords)]
            if isinstance(a, ast.Name) and a.id == temp
        )
        if len(sites) != 2 or direct != len(uses):
            raise _Refused(
                f"it must be passed to exactly two launches and used nowhere else (it has {len(uses)} uses, "
                f"{len(sites)} launch(es))"
            )
        (jp, p_call), (jc, c_call) = sites
        launches = {lc.call: lc for lc in mod.launches}
        producer, consumer = launches[p_call], launches[c_call]
        if producer.kernel == consumer.kernel:
            raise _Refused("producer and consumer are the same kernel")
        for lc in (producer, consumer):
            if sum(x.kernel == lc.kernel for x in mod.launches) != 1:
                raise _Refused(f"`{lc.kernel}` is launched more than once")
        return jp, jc, producer, consumer

    def _form(
        self,
        form: str,
        alloc: ast.stmt,
        temp: str,
        call: ast.Call,
        jp: int,
        jc: int,
        producer: Launch,
        consumer: Launch,
    ) -> _Plan:
        mod, fwd = self.mod, self.forward
        assert fwd is not None
        target, source = (consumer, producer) if form == "load" else (producer, consumer)
        kt, ks = mod.kernels[target.kernel], mod.kernels[source.kernel]
        t_args, s_args = _launch_args(kt, target), _launch_args(ks, source)
        tt = [p for p, a in t_args.items() if isinstance(a, ast.Name) and a.id == temp]
        st = [p for p, a in s_args.items() if isinstance(a, ast.Name) and a.id == temp]
        if len(tt) != 1 or len(st) != 1:
            raise _Refused("it is not bound to exactly one parameter of each kernel")
        t_param = tt[0]
        decorators = next(f for f, _ in mod.jits if f.name == kt.fn.name).decorator_list
        if any(isinstance(n, ast.Constant) and n.value == t_param for d in decorators for n in ast.walk(d)):
            raise _Refused(f"`{kt.fn.name}`'s decorators name `{t_param}`")
        if form == "load":
            moved = _elementwise(mod, ks, st[0], "producer")
            (loads, dead), store = _consumer_loads(mod, kt, t_param), None
        else:
            moved = _elementwise(mod, ks, st[0], "consumer")
            loads, dead, store = [], [], _producer_store(mod, kt, t_param)
        missing = [p for p in moved.params if p not in s_args]
        if missing:
            raise _Refused(f"`{source.kernel}`'s launch passes no argument for `{missing[0]}`")
        # The moved kernel's arguments are evaluated at the other launch: nothing in between may touch them.
        host_names = {n for p in moved.params for n in _names(s_args[p])}
        for stmt in fwd.body[min(jp, jc) + 1 : max(jp, jc)]:
            if _launch_stmt(stmt, set(mod.kernels)) is not None or (
                _names(stmt) & host_names and not _reads_only(stmt, host_names)
            ):
                raise _Refused(f"forward line {stmt.lineno} sits between the launches and touches their inputs")
        t_written, s_written = _stored_params(kt), _stored_params(ks)
        if None in t_written or None in s_written:
            raise _Refused("a kernel stores through a pointer whose parameter is unknown")
        for p in moved.pointers:
            for q, a in t_args.items():
                if q != t_param and ast.dump(a) == ast.dump(s_args[p]) and (p in s_written or q in t_written):
                    raise _Refused(f"both kernels receive `{ast.unparse(a)}` and one of them writes it")
        renames, new_params = self._renames(kt, moved, t_args, s_args, t_param)
        dtype = self._dtype(call, [(renames[p], s_args[p]) for p in moved.pointers] + list(t_args.items()), kt)
        for stmt in (alloc, fwd.body[jp if form == "load" else jc]):
            lo, hi = mod.line_of(stmt)
            if mod.data[lo:hi].decode().strip() != mod.segment(stmt).strip():
                raise _Refused(f"forward line {stmt.lineno} holds more than one statement")
        source_stmt = fwd.body[jp if form == "load" else jc]
        return _Plan(
            form,
            temp,
            alloc,
            target,
            source,
            source_stmt,
            moved,
            t_param,
            loads,
            dead,
            store,
            renames,
            new_params,
            dtype,
        )

    def _renames(self, kt, moved, t_args, s_args, t_param):
        """The moved kernel's parameters in the target: a target parameter passed the same host expression, else a
        new parameter."""
        # t_param's every use is replaced, so its name is free again
        taken = (set(kt.params) | _names(kt.fn)) - {t_param}
        renames: dict[str, str] = {}
        new: list[tuple[str, str]] = []
        for p in moved.params:
            same = [
                q
                for q, a in t_args.items()
                if q != t_param and q not in kt.constexprs and ast.dump(a) == ast.dump(s_args[p])
            ]
            if same:
                renames[p] = same[0]
                continue
            name, n = p, 2
            while name in taken:
                name, n = f"{p}_{n}", n + 1
            taken.add(name)
            renames[p] = name
            new.append((name, self.mod.segment(s_args[p])))
        return renames, new

    def _dtype(self, call: ast.Call, tensors: list[tuple[str, ast.expr]], kt: KernelAnalysis) -> str:
        """T's element type in the target: a tl dtype, or `param.dtype.element_ty` of a pointer parameter the fused
        target receives a tensor of that dtype through."""
        dt = keyword_arg(call, "dtype")
        source: ast.expr | None = None
        if dt is not None:
            path = attr_path(dt)
            if path.startswith("torch.") and path[6:] in TORCH_TO_TL:
                return f"tl.{TORCH_TO_TL[path[6:]]}"
            if isinstance(dt, ast.Attribute) and dt.attr == "dtype":
                source = dt.value
        elif attr_path(call.func) == "torch.empty_like" and call.args:
            source = call.args[0]
        pointers = _pointer_params(kt)
        if source is not None:
            for param, arg in tensors:
                if ast.dump(arg) == ast.dump(source) and (param in pointers or param not in kt.params):
                    return f"{param}.dtype.element_ty"
        raise _Refused(f"its dtype (`{ast.unparse(call)}`) cannot be named inside `{kt.fn.name}`")


def _pointer_params(k: KernelAnalysis) -> set[str]:
    return {r for name, c in k.calls() if name in ("load", "store") and c.args and (r := k.pointer_root(c.args[0]))}


class _Rename(ast.NodeTransformer):
    """The moved kernel's code as it reads inside the target: locals prefixed, parameters renamed, every load (and
    the moved store) also masked by `mask`, loads of the temporary replaced by `t_value`."""

    def __init__(
        self, mod: SourceModule, plan: _Plan, prefix: str, local: set[str], mask: ast.expr | None, t_value: str = ""
    ):
        self.mod, self.plan, self.prefix, self.local, self.mask, self.t_value = mod, plan, prefix, local, mask, t_value
        self.vector = mod.kernels[plan.source.kernel].vector | {plan.moved.idx}

    def visit_Name(self, node: ast.Name) -> ast.expr:
        name = f"{self.prefix}{node.id}" if node.id in self.local else self.plan.renames.get(node.id, node.id)
        return ast.Name(name, node.ctx)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        name = self.mod.names.tl_call(node)
        if name == "load" and (node.lineno, node.col_offset) in self.plan.moved.t_loads:
            value = ast.parse(self.t_value, mode="eval").body
            mask, other = _call_arg(node, 1, "mask"), _call_arg(node, 2, "other")
            store_mask = _call_arg(self.plan.moved.store, 2, "mask")
            if mask is None or other is None or (store_mask is not None and ast.dump(mask) == ast.dump(store_mask)):
                return value  # lanes the load masks off are undefined, or never stored
            # where the consumer's own load was masked off it read `other`, whatever its store does there
            mask, other = self.visit(copy.deepcopy(mask)), self.visit(copy.deepcopy(other))
            dtype = ast.parse(self.plan.dtype, mode="eval").body
            cast = ast.Call(ast.parse("tl.cast", mode="eval").body, [other, dtype], [])
            return ast.Call(ast.parse("tl.where", mode="eval").body, [mask, value, cast], [])
        # a block mask needs a block pointer: a load of one scalar (a scale) keeps its own form
        vector = _names(_call_arg(node, 0, "pointer")) & self.vector or _call_arg(
            node, 1 if name == "load" else 2, "mask"
        )
        self.generic_visit(node)
        if self.mask is None or name not in ("load", "store") or not vector:
            return node
        pos, own = (1, _call_arg(node, 1, "mask")) if name == "load" else (2, _call_arg(node, 2, "mask"))
        mask = self.mask
        both = mask if own is None or ast.dump(own) == ast.dump(mask) else ast.BinOp(mask, ast.BitAnd(), own)
        if len(node.args) > pos:
            node.args[pos] = both
        else:
            node.keywords = [ast.keyword("mask", both), *(kw for kw in node.keywords if kw.arg != "mask")]
        return node


def _bind_mask(prefix: str, local: set[str], mask: ast.expr | None, lines: list[str]) -> ast.expr | None:
    """A mask that is not a plain name is bound once, to a name apart from the moved kernel's prefixed locals."""
    if mask is None or isinstance(mask, ast.Name):
        return mask
    name = "mask"
    while name in local:
        name += "_"
    lines.append(f"{prefix}{name} = {ast.unparse(mask)}")
    return ast.Name(f"{prefix}{name}", ast.Load())


def _fused_load(mod: SourceModule, plan: _Plan, load: _Load, prefix: str) -> list[Edit]:
    """The producer's statements, before the consumer's statement that loads T, with its index bound to the load's
    offset; the load becomes the cast value, or `other` where the consumer's mask is off."""
    moved, ind = plan.moved, mod.indent_of(load.stmt)
    lines = [f"{prefix}{moved.idx} = {ast.unparse(load.offset) if load.offset is not None else '0'}"]
    local = {moved.idx, *(_target(s) or "" for s in moved.stmts)}
    mask = _bind_mask(prefix, local, load.mask, lines)
    rename = _Rename(mod, plan, prefix, local, mask)
    lines += [ast.unparse(rename.visit(copy.deepcopy(s))) for s in moved.stmts]
    value = _call_arg(moved.store, 1, "value")
    assert value is not None
    cast = f"({ast.unparse(rename.visit(copy.deepcopy(value)))}).to({plan.dtype})"
    if mask is not None and load.other is not None:
        cast = f"tl.where({ast.unparse(mask)}, {cast}, tl.cast({ast.unparse(load.other)}, {plan.dtype}))"
    start = mod.line_of(load.stmt)[0]
    return [Edit(start, start, "".join(f"{ind}{ln}\n" for ln in lines)), Edit(*mod.span(load.call), cast)]


def _fused_store(mod: SourceModule, plan: _Plan, prefix: str = "_f_") -> list[Edit]:
    """The consumer's statements in place of the producer's store of T, with its index bound to the store's offset
    and its loads and store masked by the store's mask; its loads of T read the stored value, cast to T's dtype."""
    store, moved = plan.store, plan.moved
    assert store is not None
    local = {moved.idx, *(_target(s) or "" for s in moved.stmts)}
    value = "value"
    while value in local:
        value += "_"
    lines = [f"{prefix}{moved.idx} = {ast.unparse(store.offset)}", f"{prefix}{value} = {mod.segment(store.value)}"]
    mask = _bind_mask(prefix, local, store.mask, lines)
    rename = _Rename(mod, plan, prefix, local, mask, f"{prefix}{value}.to({plan.dtype})")
    lines += [ast.unparse(rename.visit(copy.deepcopy(s))) for s in [*moved.stmts, ast.Expr(moved.store)]]
    ind = mod.indent_of(store.stmt)
    return [Edit(*mod.line_of(store.stmt), "".join(f"{ind}{ln}\n" for ln in lines))]


def _replace_item(mod: SourceModule, items: list, i: int, text: str) -> Edit:
    """Replace item `i` of a comma-separated list (call arguments, parameters) by `text`, or delete it."""
    a, b = mod.span(items[i])
    if text:
        return Edit(a, b, text)
    if i > 0:
        return Edit(mod.span(items[i - 1])[1], b, "")
    if i + 1 < len(items):
        return Edit(a, mod.span(items[i + 1])[0], "")
    return Edit(a, b, "")


def _function_lines(mod: SourceModule, fn: ast.FunctionDef) -> tuple[int, int]:
    """Byte span of a top-level function with its decorators and the blank lines after it."""
    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    start = mod.offset(first, 0)
    end = mod.line_of(fn)[1]
    while end < len(mod.data):
        nl = mod.data.find(b"\n", end)
        line_end = len(mod.data) if nl < 0 else nl + 1
        if mod.data[end:line_end].strip():
            break
        end = line_end
    return start, end


class FuseKernelChain(Applier):
    name = "fuse_kernel_chain"
    card = "fuse-kernel-chain"
    summary = (
        "a torch.empty temporary between two launches, one side elementwise: the producer's code moves into the "
        "consumer's loads, or an elementwise consumer's into the producer's store (a GEMM epilogue); one launch and "
        "the temporary go"
    )

    def applies(self, mod: SourceModule) -> bool:
        return isinstance(_Planner(mod).plans(), list)

    def why_not(self, mod: SourceModule) -> str | None:
        plans = _Planner(mod).plans()
        return None if isinstance(plans, list) else f"{self.name}: {plans}"

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        plans = _Planner(mod).plans()
        if not isinstance(plans, list):
            return []
        out = [c for plan in plans if (c := self._candidate(mod, plan)) is not None]
        return out[:max_candidates] if max_candidates else out

    def _candidate(self, mod: SourceModule, plan: _Plan) -> Candidate | None:
        kt = mod.kernels[plan.target.kernel]
        if plan.form == "load":
            prefixes = ["_f_"] if len(plan.loads) == 1 else [f"_f{j}_" for j in range(len(plan.loads))]
            edits = [e for ld, pre in zip(plan.loads, prefixes) for e in _fused_load(mod, plan, ld, pre)]
            edits += [Edit(*mod.line_of(st), "") for st in plan.dead]
            where = f"the load(s) of `{plan.t_param}` (line(s) {', '.join(str(ld.call.lineno) for ld in plan.loads)})"
        else:
            assert plan.store is not None
            edits = _fused_store(mod, plan)
            where = f"the store of `{plan.t_param}` (line {plan.store.stmt.lineno})"
        new_names = ", ".join(name for name, _ in plan.new_params)
        edits.append(_replace_item(mod, kt.fn.args.args, kt.params.index(plan.t_param), new_names))
        call = plan.target.call
        items: list[ast.expr | ast.keyword] = sorted(
            [*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset)
        )
        values = [n.value if isinstance(n, ast.keyword) else n for n in items]
        pos = next(i for i, v in enumerate(values) if isinstance(v, ast.Name) and v.id == plan.temp)
        if isinstance(items[pos], ast.keyword):
            text = ", ".join(f"{name}={arg}" for name, arg in plan.new_params)
        else:
            text = ", ".join(arg for _, arg in plan.new_params)
        edits.append(_replace_item(mod, items, pos, text))
        edits.append(Edit(*mod.line_of(plan.alloc), ""))
        edits.append(Edit(*mod.line_of(plan.source_stmt), ""))
        source_fn = mod.kernels[plan.source.kernel].fn
        if len([n for n in ast.walk(mod.tree) if isinstance(n, ast.Name) and n.id == source_fn.name]) == 1:
            edits.append(Edit(*_function_lines(mod, source_fn), ""))  # the deleted launch was its only use
        try:
            source = mod.apply(edits)
        except EditError:
            return None
        desc = (
            f"fused {plan.source.kernel} into {plan.target.kernel} at {where}; launch (line "
            f"{plan.source_stmt.lineno}) and temporary `{plan.temp}` (line {plan.alloc.lineno}) removed"
        )
        producer, consumer = (plan.source, plan.target) if plan.form == "load" else (plan.target, plan.source)
        params = {
            "form": plan.form,
            "producer": producer.kernel,
            "consumer": consumer.kernel,
            "temporary": plan.temp,
        }
        return Candidate(self.name, plan.card, desc, source, params)
