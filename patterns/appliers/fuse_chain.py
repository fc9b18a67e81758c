"""Fuse a kernel chain that passes a temporary through HBM: an elementwise producer's code moves in front of the
consumer's loads of the temporary, and the producer's launch and the temporary's allocation go.

The pattern, in `forward`: `T = torch.empty(...)` / `torch.empty_like(...)`, a launch P(…, T, …) whose kernel's
only effect is one `tl.store(t_ptr + idx, value, mask=…)`, then a launch C(…, T, …) whose kernel reads `t_ptr`
only through `tl.load(t_ptr + o, mask=mc, other=oc)`; T is used nowhere else. `value`, followed through P's
locals down to `idx`, must be elementwise: loads `tl.load(x_ptr + f(idx), mask=m, other=…)` of P's other
pointers, P's scalar arguments, literals and elementwise tl functions (no program id, arange, reduction or scan).
Then T[o] = value(idx := o) wherever P wrote it, so before each load of T, C runs P's statements with `idx` bound
to `o` (locals prefixed `_f_`, P's loads masked also by `mc`), and the load becomes

    tl.where(mc, value.to(T's dtype), tl.cast(oc, T's dtype))

The cast reproduces the rounding of T's store; `where` reproduces the load's `other`. Lanes of T that P's store
mask left unwritten hold uninitialized memory in the original, so any value there is an admissible refinement.
P's loads keep their own masks (their bounds guards) intersected with C's, so no new address is read.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, EditError, SourceModule
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
LOAD_ARGS = ("pointer", "mask", "other")


class _Refused(Exception):
    """A precondition failed; the message says which and where."""


@dataclass
class _Load:
    call: ast.Call
    stmt: ast.stmt  # the consumer's simple statement that holds the load
    offset: ast.expr | None  # the address without its pointer term (None: the pointer alone)
    mask: ast.expr | None
    other: ast.expr | None


@dataclass
class _Producer:
    idx: str  # P's store index name
    value: ast.expr  # the stored value, as P writes it
    stmts: list[ast.Assign]  # P's assignments the value reads (the index's excluded), in P's order
    params: list[str]  # P's parameters the value reads, in P's order
    pointers: set[str]  # those of them that are load roots


@dataclass
class _Plan:
    temp: str
    alloc: ast.stmt
    producer: Launch
    consumer: Launch
    p_stmt: ast.stmt
    prod: _Producer
    t_param: str  # C's parameter that received T
    loads: list[_Load]  # C's loads of T
    renames: dict[str, str]  # P parameter → C parameter (reused or new)
    new_params: list[tuple[str, str]]  # (C parameter, host argument text) added in place of t_param
    dtype: str  # T's element type, as kernel source


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
    rest = [(s, t) for s, t in terms if t is not roots[0][1]]
    return roots[0][1].id, (_rebuild_add(rest) if rest else None)  # type: ignore[union-attr]


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
    """Checks that P's stored value, followed through P's locals down to the store index, is elementwise; records
    the parameters and locals it reads."""

    def __init__(self, mod: SourceModule, k: KernelAnalysis, idx: str, t_param: str):
        self.mod, self.k, self.idx, self.t_param = mod, k, idx, t_param
        self.params: list[str] = []
        self.pointers: set[str] = set()  # P's parameters used as load roots
        self.locals: set[str] = set()  # P's locals the value reads (the index excluded)

    def run(self, expr: ast.expr, depth: int = 0) -> None:
        if depth > 20:
            raise _Refused(f"line {expr.lineno}: the producer's value is defined too deeply to follow")
        k = self.k
        if isinstance(expr, ast.Name):
            if expr.id in k.constexprs:
                raise _Refused(f"line {expr.lineno}: the producer's value reads constexpr `{expr.id}`")
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
            raise _Refused(f"line {expr.lineno}: `{ast.unparse(expr)}` in the producer's value is not elementwise")
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, ast.expr):
                self.run(child, depth)

    def _call(self, call: ast.Call, depth: int) -> None:
        mod = self.mod
        name = _tl_function(mod, call)
        if name == "load":
            self._load(call, depth)
        else:
            is_to = isinstance(call.func, ast.Attribute) and call.func.attr == "to" and name is None
            helpers = _jit_helpers(mod)
            helper = helpers.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if helper is not None and not _is_elementwise_helper(mod, helper):
                raise _Refused(f"line {call.lineno}: helper `{helper.name}` is not elementwise")
            if not (name in ELEMENTWISE or is_to or helper is not None):
                raise _Refused(
                    f"line {call.lineno}: `{ast.unparse(call.func)}` in the producer's value is not elementwise"
                )
            if is_to:
                self.run(call.func.value, depth)  # type: ignore[union-attr]
        for a in [*call.args, *(kw.value for kw in call.keywords)]:
            if name != "load" or a is not _call_arg(call, 0, "pointer"):
                self.run(a, depth)

    def _load(self, call: ast.Call, depth: int) -> None:
        extra = [kw.arg for kw in call.keywords if kw.arg in ("boundary_check", "padding_option")]
        if len(call.args) > 3 or extra:
            raise _Refused(f"line {call.lineno}: a block-pointer load in the producer")
        addr = _call_arg(call, 0, "pointer")
        if addr is None:
            raise _Refused(f"line {call.lineno}: tl.load without a pointer")
        root, offset = _split_address(_expand_locals(self.k, addr, self.idx), lambda n: n in self.k.params)
        if root == self.t_param:
            raise _Refused(f"line {call.lineno}: the producer reads the temporary it writes")
        if offset is None or not any(isinstance(n, ast.Name) and n.id == self.idx for n in ast.walk(offset)):
            raise _Refused(f"line {call.lineno}: the producer's load does not move with its store index")
        self.pointers.add(root)
        self.run(addr, depth)


def _producer(mod: SourceModule, k: KernelAnalysis, t_param: str) -> _Producer:
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
            raise _Refused(f"{fn.name} line {stmt.lineno}: the producer is not straight-line elementwise code")
    for stmt, name in assigns:
        if len(k.defs[name]) != 1:
            raise _Refused(f"{fn.name} line {stmt.lineno}: `{name}` is assigned more than once")
    if len(stores) != 1:
        raise _Refused(f"{fn.name}: the producer has {len(stores)} stores (one, to the temporary, is needed)")
    store = stores[0]
    assert isinstance(store, ast.Call)
    addr, value = _call_arg(store, 0, "pointer"), _call_arg(store, 1, "value")
    if addr is None or value is None:
        raise _Refused(f"{fn.name} line {store.lineno}: tl.store without pointer and value")
    root, offset = _split_address(addr, lambda n: n in k.params)
    if root != t_param:
        raise _Refused(f"{fn.name} line {store.lineno}: the producer stores to `{root}`, not to the temporary")
    if not isinstance(offset, ast.Name) or offset.id not in k.defs or offset.id not in k.vector:
        raise _Refused(f"{fn.name} line {store.lineno}: the store index is not one local vector of offsets")
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == t_param]
    if len(uses) != 1:
        raise _Refused(f"{fn.name}: `{t_param}` is used outside the store")
    inl = _ValueCheck(mod, k, offset.id, t_param)
    inl.run(value)
    if not inl.pointers:
        raise _Refused(f"{fn.name} line {store.lineno}: the stored value reads no input")
    stmts = [
        s
        for s in fn.body
        if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and s.targets[0].id in inl.locals
    ]
    return _Producer(offset.id, value, stmts, sorted(inl.params, key=k.params.index), inl.pointers)


def _consumer_loads(mod: SourceModule, k: KernelAnalysis, t_param: str) -> list[_Load]:
    """Every use of `t_param` in C, as a `tl.load(t_param + o, mask, other)` with a side-effect-free offset."""
    fn = k.fn
    if any(isinstance(n, ast.Name) and n.id.startswith("_f") for n in ast.walk(fn)):
        raise _Refused(f"{fn.name}: the consumer already has names starting with `_f` (the fused code's prefix)")
    if t_param in k.defs:
        raise _Refused(f"{fn.name}: `{t_param}` is reassigned in the consumer")
    loads: list[_Load] = []
    claimed: set[int] = set()
    for name, call in k.calls():
        if name != "load":
            continue
        addr = _call_arg(call, 0, "pointer")
        if addr is None or not any(isinstance(n, ast.Name) and n.id == t_param for n in ast.walk(addr)):
            continue
        if len(call.args) > 3 or any(kw.arg in ("boundary_check", "padding_option") for kw in call.keywords):
            raise _Refused(f"{fn.name} line {call.lineno}: a block-pointer load of the temporary")
        _, offset = _split_address(addr, lambda n: n == t_param)
        mask, other = _call_arg(call, 1, "mask"), _call_arg(call, 2, "other")
        for part in (offset, mask):
            if part is not None and not _pure(mod, part):
                raise _Refused(f"{fn.name} line {call.lineno}: `{ast.unparse(part)}` is not a plain index expression")
        if other is not None and not _literal(other):
            raise _Refused(f"{fn.name} line {call.lineno}: the load's `other` is not a literal")
        stmt = next(
            (
                st
                for st in ast.walk(fn)
                if isinstance(st, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr | ast.Return)
                and any(n is call for n in ast.walk(st))
            ),
            None,
        )
        if stmt is None:
            raise _Refused(f"{fn.name} line {call.lineno}: the load of the temporary is not inside a simple statement")
        a, b = mod.line_of(stmt)
        if mod.data[a:b].decode().strip() != mod.segment(stmt).strip():
            raise _Refused(f"{fn.name} line {stmt.lineno} holds more than one statement")
        loads.append(_Load(call, stmt, offset, mask, other))
        claimed |= {id(n) for n in ast.walk(addr)}
    stray = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == t_param and id(n) not in claimed]
    if stray:
        raise _Refused(f"{fn.name} line {stray[0].lineno}: the consumer uses `{t_param}` other than by tl.load")
    if not loads:
        raise _Refused(f"{fn.name}: the consumer never loads `{t_param}`")
    return loads


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


def _literal(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
        expr = expr.operand
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, int | float) and not isinstance(expr.value, bool)
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "float"
        and len(expr.args) == 1
        and isinstance(expr.args[0], ast.Constant)
        and isinstance(expr.args[0].value, str)
    )


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
            r = k.pointer_root(call.args[0])
            out.add(r)
    return out


class _Planner:
    def __init__(self, mod: SourceModule):
        self.mod = mod
        self.forward = next((n for n in mod.tree.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)

    def plan(self) -> _Plan | str:
        mod, fwd = self.mod, self.forward
        if fwd is None:
            return "no `forward` function in the module"
        if not any(
            a.name == "triton.language" and a.asname == "tl"
            for n in mod.tree.body
            if isinstance(n, ast.Import)
            for a in n.names
        ):
            return "the module does not `import triton.language as tl` (the fused loads are written with it)"
        body = fwd.body
        reasons = []
        for i, stmt in enumerate(body):
            found = _alloc(stmt)
            if found is None or len(self._sites(i, found[0])) < 2:
                continue  # not shared by two launches: an output, or a buffer of one kernel
            temp, call = found
            try:
                return self._chain(i, stmt, temp, call)
            except _Refused as e:
                reasons.append(f"temporary `{temp}` (forward line {stmt.lineno}): {e}")
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

    def _chain(self, i: int, alloc: ast.stmt, temp: str, call: ast.Call) -> _Plan:
        mod, fwd = self.mod, self.forward
        assert fwd is not None
        kernels = set(mod.kernels)
        if (
            sum(
                isinstance(n, ast.Name) and n.id == temp and isinstance(n.ctx, ast.Store | ast.Del)
                for n in ast.walk(fwd)
            )
            != 1
        ):
            raise _Refused("it is assigned more than once")
        uses = [n for n in ast.walk(fwd) if isinstance(n, ast.Name) and n.id == temp and isinstance(n.ctx, ast.Load)]
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
        if sum(lc.kernel == consumer.kernel for lc in mod.launches) != 1:
            raise _Refused(f"the consumer `{consumer.kernel}` is launched more than once")
        kp, kc = mod.kernels[producer.kernel], mod.kernels[consumer.kernel]
        p_args, c_args = _launch_args(kp, producer), _launch_args(kc, consumer)
        pt = [p for p, a in p_args.items() if isinstance(a, ast.Name) and a.id == temp]
        ct = [p for p, a in c_args.items() if isinstance(a, ast.Name) and a.id == temp]
        if len(pt) != 1 or len(ct) != 1:
            raise _Refused("it is not bound to exactly one parameter of each kernel")
        if any(
            isinstance(n, ast.Constant) and n.value == ct[0]
            for d in next(f for f, _ in mod.jits if f.name == kc.fn.name).decorator_list
            for n in ast.walk(d)
        ):
            raise _Refused(f"the consumer's decorators name `{ct[0]}`")
        prod = _producer(mod, kp, pt[0])
        loads = _consumer_loads(mod, kc, ct[0])
        # The producer's arguments are evaluated at the consumer's launch instead: nothing in between may touch them.
        host_names = {n.id for p in prod.params for n in ast.walk(p_args[p]) if isinstance(n, ast.Name)}
        for stmt in fwd.body[jp + 1 : jc]:
            if _launch_stmt(stmt, kernels) is not None or any(
                isinstance(n, ast.Name) and n.id in host_names for n in ast.walk(stmt)
            ):
                raise _Refused(f"forward line {stmt.lineno} sits between the launches and touches their inputs")
        missing = [p for p in prod.params if p not in p_args]
        if missing:
            raise _Refused(f"the producer's launch passes no argument for `{missing[0]}`")
        written = _stored_params(kc)
        if None in written:
            raise _Refused(f"the consumer `{kc.fn.name}` stores through a pointer whose parameter is unknown")
        for p in prod.params:
            for q, a in c_args.items():
                if q in written and ast.dump(a) == ast.dump(p_args[p]):
                    raise _Refused(f"the consumer writes `{ast.unparse(a)}`, which the producer reads")
        renames, new_params = self._renames(kp, kc, prod, p_args, c_args, ct[0])
        dtype = self._dtype(call, prod, p_args, c_args, renames)
        for stmt in (alloc, fwd.body[jp]):
            a, b = mod.line_of(stmt)
            if mod.data[a:b].decode().strip() != mod.segment(stmt).strip():
                raise _Refused(f"forward line {stmt.lineno} holds more than one statement")
        return _Plan(temp, alloc, producer, consumer, fwd.body[jp], prod, ct[0], loads, renames, new_params, dtype)

    def _renames(self, kp, kc, prod, p_args, c_args, t_param):
        """P's parameters in C: an existing C parameter passed the same host expression, else a new parameter."""
        # t_param's every use is replaced, so its name is free again
        taken = (set(kc.params) | {n.id for n in ast.walk(kc.fn) if isinstance(n, ast.Name)}) - {t_param}
        renames: dict[str, str] = {}
        new: list[tuple[str, str]] = []
        for p in prod.params:
            same = [
                q
                for q, a in c_args.items()
                if q != t_param and q not in kc.constexprs and ast.dump(a) == ast.dump(p_args[p])
            ]
            if same:
                renames[p] = same[0]
                continue
            name, n = p, 2
            while name in taken:
                name, n = f"{p}_{n}", n + 1
            taken.add(name)
            renames[p] = name
            new.append((name, self.mod.segment(p_args[p])))
        return renames, new

    def _dtype(self, call: ast.Call, prod, p_args, c_args, renames) -> str:
        """T's element type in the consumer: a tl dtype, or `param.dtype.element_ty` of a tensor of that dtype."""
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
        if source is not None:
            for p in prod.params:
                if ast.dump(p_args[p]) == ast.dump(source) and p in prod.pointers:
                    return f"{renames[p]}.dtype.element_ty"
        raise _Refused(f"its dtype (`{ast.unparse(call)}`) cannot be named inside the consumer")


def _fused_load(mod: SourceModule, plan: _Plan, load: _Load, prefix: str) -> list[Edit]:
    """P's statements, before the consumer's statement that loads T, with P's index bound to the load's offset and
    P's locals prefixed; the load becomes the cast value, or `other` where the consumer's mask is off."""
    prod, ind = plan.prod, mod.indent_of(load.stmt)
    lines = [f"{prefix}{prod.idx} = {ast.unparse(load.offset) if load.offset is not None else '0'}"]
    local = {prod.idx, *(s.targets[0].id for s in prod.stmts)}  # type: ignore[attr-defined]
    mask = load.mask
    if mask is not None and not isinstance(mask, ast.Name):
        name = "mask"
        while name in local:  # a name of its own, apart from P's prefixed locals
            name += "_"
        lines.append(f"{prefix}{name} = {ast.unparse(mask)}")
        mask = ast.Name(f"{prefix}{name}", ast.Load())

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            name = f"{prefix}{node.id}" if node.id in local else plan.renames.get(node.id, node.id)
            return ast.Name(name, node.ctx)

        def visit_Call(self, node: ast.Call) -> ast.expr:
            self.generic_visit(node)
            if mask is None or mod.names.tl_call(node) != "load":
                return node
            own = _call_arg(node, 1, "mask")
            both = mask if own is None or ast.dump(own) == ast.dump(mask) else ast.BinOp(mask, ast.BitAnd(), own)
            if len(node.args) > 1:
                node.args[1] = both
            else:
                node.keywords = [ast.keyword("mask", both), *(kw for kw in node.keywords if kw.arg != "mask")]
            return node

    lines += [ast.unparse(Rename().visit(copy.deepcopy(s))) for s in prod.stmts]
    cast = f"({ast.unparse(Rename().visit(copy.deepcopy(prod.value)))}).to({plan.dtype})"
    value = cast
    if mask is not None and load.other is not None:
        value = f"tl.where({ast.unparse(mask)}, {cast}, tl.cast({ast.unparse(load.other)}, {plan.dtype}))"
    start = mod.line_of(load.stmt)[0]
    return [Edit(start, start, "".join(f"{ind}{ln}\n" for ln in lines)), Edit(*mod.span(load.call), value)]


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
        "an elementwise producer kernel writing a torch.empty temporary that one later kernel only loads: the "
        "producer's expression moves into those loads; its launch and the temporary go"
    )

    def applies(self, mod: SourceModule) -> bool:
        return isinstance(_Planner(mod).plan(), _Plan)

    def why_not(self, mod: SourceModule) -> str | None:
        plan = _Planner(mod).plan()
        return None if isinstance(plan, _Plan) else f"{self.name}: {plan}"

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        plan = _Planner(mod).plan()
        if not isinstance(plan, _Plan):
            return []
        kc = mod.kernels[plan.consumer.kernel]
        edits = [
            e
            for j, ld in enumerate(plan.loads)
            for e in _fused_load(mod, plan, ld, "_f_" if len(plan.loads) == 1 else f"_f{j}_")
        ]
        params = kc.fn.args.args
        edits.append(
            _replace_item(mod, params, kc.params.index(plan.t_param), ", ".join(name for name, _ in plan.new_params))
        )
        call = plan.consumer.call
        items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
        values = [n.value if isinstance(n, ast.keyword) else n for n in items]
        pos = next(i for i, v in enumerate(values) if isinstance(v, ast.Name) and v.id == plan.temp)
        if isinstance(items[pos], ast.keyword):
            text = ", ".join(f"{name}={arg}" for name, arg in plan.new_params)
        else:
            text = ", ".join(arg for _, arg in plan.new_params)
        edits.append(_replace_item(mod, items, pos, text))
        edits.append(Edit(*mod.line_of(plan.alloc), ""))
        edits.append(Edit(*mod.line_of(plan.p_stmt), ""))
        producer_fn = mod.kernels[plan.producer.kernel].fn
        refs = [n for n in ast.walk(mod.tree) if isinstance(n, ast.Name) and n.id == producer_fn.name]
        if len(refs) == 1:  # the deleted launch was its only use
            edits.append(Edit(*_function_lines(mod, producer_fn), ""))
        try:
            source = mod.apply(edits)
        except EditError:
            return []
        lines = ", ".join(str(ld.call.lineno) for ld in plan.loads)
        desc = (
            f"fused {plan.producer.kernel} into {plan.consumer.kernel}: its stored value replaces the load(s) of "
            f"`{plan.t_param}` (line(s) {lines}); launch (line {plan.p_stmt.lineno}) and temporary `{plan.temp}` "
            f"(line {plan.alloc.lineno}) removed"
        )
        params_out = {"producer": plan.producer.kernel, "consumer": plan.consumer.kernel, "temporary": plan.temp}
        return [Candidate(self.name, self.card, desc, source, params_out)]
