"""What a kernel module's Python source says, read with `ast` (never imported or run).

A module holds @triton.jit kernels (and device helpers) plus host code that launches them (`forward`). The reader
resolves names (`tl`, `triton` aliases), follows a kernel's local definitions (taint from tl.arange, program ids,
index reductions), finds its calls, loads and loops, and reads the host's launches with their literal arguments.
The feature table (table.py) and the mechanical appliers ask it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property


def attr_path(node: ast.AST) -> str:
    """`triton.language.max` → "triton.language.max"; "" for anything that is not a dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


class ModuleNames:
    """Name resolution shared by the kernel and host analyses."""

    def __init__(self, tree: ast.Module):
        self.tl_aliases = {"tl"}
        self.triton_aliases = {"triton"}
        self.tl_names: dict[str, str] = {}  # `from triton.language import max as tmax` → tmax: max
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "triton.language":
                        self.tl_aliases.add(a.asname or "triton.language")
                    elif a.name == "triton":
                        self.triton_aliases.add(a.asname or "triton")
            elif isinstance(node, ast.ImportFrom) and node.module == "triton.language":
                for a in node.names:
                    self.tl_names[a.asname or a.name] = a.name
            elif isinstance(node, ast.ImportFrom) and node.module == "triton":
                for a in node.names:
                    if a.name == "language":
                        self.tl_aliases.add(a.asname or "language")

    def tl_call(self, node: ast.AST) -> str | None:
        """The tl function a call invokes (`tl.max(...)` → "max"), else None."""
        if not isinstance(node, ast.Call):
            return None
        path = attr_path(node.func)
        if not path:
            return None
        head, _, last = path.rpartition(".")
        if head in self.tl_aliases or head == "triton.language":
            return last
        if not head and path in self.tl_names:
            return self.tl_names[path]
        return None

    def method_call(self, node: ast.AST) -> str | None:
        """`x.argmax(0)` → "argmax" for a method on a non-module object."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = attr_path(node.func.value)
            if base not in self.tl_aliases and base not in self.triton_aliases:
                return node.func.attr
        return None

    def decorator_name(self, dec: ast.AST) -> str:
        target = dec.func if isinstance(dec, ast.Call) else dec
        return attr_path(target).rpartition(".")[2]


def keyword_arg(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def is_constexpr(arg: ast.arg) -> bool:
    return arg.annotation is not None and attr_path(arg.annotation).endswith("constexpr")


class KernelAnalysis:
    """One @triton.jit function: its definitions, taint, tl calls and loops."""

    def __init__(self, fn: ast.FunctionDef, mod: ModuleNames):
        self.fn, self.mod = fn, mod
        self.params = [a.arg for a in fn.args.args]
        self.constexprs = [a.arg for a in fn.args.args if is_constexpr(a)]
        self.defs: dict[str, list[ast.expr]] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self._bind(t, node.value)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
                self._bind(node.target, node.value)
            elif isinstance(node, ast.For):
                self._bind(node.target, node.iter)
        self.loops = [n for n in ast.walk(fn) if isinstance(n, ast.For | ast.While)]
        self.vector = self._taint(lambda c: mod.tl_call(c) == "arange")
        self.argidx = self._value_taint()
        self.pid = self._taint(lambda c: mod.tl_call(c) == "program_id")
        # values straight from tl.max/tl.min (no propagation: x - m is not a max value)
        self.extreme = {
            n
            for n, vals in self.defs.items()
            if any(
                isinstance(v, ast.Call) and mod.tl_call(v) in ("max", "min") and not keyword_arg(v, "return_indices")
                for v in vals
            )
        }

    def _bind(self, target: ast.AST, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.defs.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Tuple | ast.List):
            for i, elt in enumerate(target.elts):
                part = value.elts[i] if isinstance(value, ast.Tuple | ast.List) and i < len(value.elts) else value
                self._bind(elt, part)

    @cached_property
    def block_pointers(self) -> set[str]:
        """Local names bound to a tl.make_block_ptr / tl.advance result."""
        return {
            n
            for n, vals in self.defs.items()
            if any(self.mod.tl_call(x) in ("make_block_ptr", "advance") for x in vals)
        }

    def is_index_reduction(self, c: ast.AST) -> bool:
        name = self.mod.tl_call(c) or self.mod.method_call(c)
        if name in ("argmax", "argmin"):
            return True
        ret = keyword_arg(c, "return_indices") if isinstance(c, ast.Call) else None
        return name in ("max", "min") and isinstance(ret, ast.Constant) and ret.value is True

    def _value_taint(self) -> set[str]:
        """Names holding an index produced by an index reduction (see value_mentions)."""
        tainted: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, vals in self.defs.items():
                if name not in tainted and any(self.value_mentions(v, tainted) for v in vals):
                    tainted.add(name)
                    changed = True
        return tainted

    def _taint(self, is_source) -> set[str]:
        tainted: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, vals in self.defs.items():
                if name not in tainted and any(self._reaches(v, is_source, tainted) for v in vals):
                    tainted.add(name)
                    changed = True
        return tainted

    @staticmethod
    def _reaches(expr: ast.AST, is_source, tainted: set[str]) -> bool:
        return any(is_source(n) or (isinstance(n, ast.Name) and n.id in tainted) for n in ast.walk(expr))

    def calls(self) -> list[tuple[str, ast.Call]]:
        """(tl function, call) for every tl call in the kernel, in walk order."""
        return self._calls

    @cached_property
    def _calls(self) -> list[tuple[str, ast.Call]]:  # the feature table asks for them once per feature
        return [(name, n) for n in ast.walk(self.fn) if isinstance(n, ast.Call) and (name := self.mod.tl_call(n))]

    def expand(self, expr: ast.expr, depth: int = 3) -> list[ast.expr]:
        """`expr` plus the definitions of the local names it reads, `depth` levels deep."""
        out, seen, frontier = [expr], set(), [expr]
        for _ in range(depth):
            nxt = []
            for e in frontier:
                for n in ast.walk(e):
                    if isinstance(n, ast.Name) and n.id in self.defs and n.id not in seen:
                        seen.add(n.id)
                        nxt.extend(self.defs[n.id])
            out.extend(nxt)
            frontier = nxt
        return out

    def mask_compares(self, expr: ast.expr, depth: int = 4) -> list[ast.Compare]:
        """Equality comparisons a mask is made of: `a == b`, `m1 & m2`, `(a == b).to(...)`, or a name bound to one
        (not through other calls: `n = tl.sum(x == m)` is a count, not a mask)."""
        if depth == 0:
            return []
        if isinstance(expr, ast.Compare):
            return [expr] if any(isinstance(o, ast.Eq | ast.NotEq) for o in expr.ops) else []
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd | ast.BitOr | ast.BitXor):
            return self.mask_compares(expr.left, depth - 1) + self.mask_compares(expr.right, depth - 1)
        if isinstance(expr, ast.BoolOp):
            return [c for v in expr.values for c in self.mask_compares(v, depth - 1)]
        if isinstance(expr, ast.UnaryOp):
            return self.mask_compares(expr.operand, depth - 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
            return self.mask_compares(expr.func.value, depth - 1)
        if isinstance(expr, ast.Name):
            return [c for v in self.defs.get(expr.id, []) for c in self.mask_compares(v, depth - 1)]
        return []

    def value_mentions(self, expr: ast.AST, names: set[str]) -> bool:
        """Whether `expr`'s value derives from `names`; comparisons and tl.where conditions only select, so the
        walk skips them (`tl.where(offs == i, -inf, x)` is not an index value)."""
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.Compare):
            return False
        if isinstance(expr, ast.Call) and self.mod.tl_call(expr) == "where":
            return any(self.value_mentions(a, names) for a in expr.args[1:])
        if isinstance(expr, ast.Call) and self.is_index_reduction(expr):
            return True
        return any(self.value_mentions(c, names) for c in ast.iter_child_nodes(expr))

    def mentions(self, expr: ast.AST, names: set[str]) -> bool:
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expr))

    def pointer_root(self, expr: ast.AST, depth: int = 6) -> str | None:
        """The pointer parameter an address expression starts from (`x_ptr + offs` → "x_ptr")."""
        if depth == 0:
            return None
        if isinstance(expr, ast.Name):
            if expr.id in self.params:
                return expr.id
            for v in self.defs.get(expr.id, []):
                r = self.pointer_root(v, depth - 1)
                if r:
                    return r
            return None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
            return self.pointer_root(expr.left, depth - 1) or self.pointer_root(expr.right, depth - 1)
        if (
            isinstance(expr, ast.Call)
            and self.mod.tl_call(expr) in ("advance", "make_block_ptr", "multiple_of", "max_contiguous")
            and expr.args
        ):
            return self.pointer_root(expr.args[0], depth - 1)
        if isinstance(expr, ast.Call) and keyword_arg(expr, "base") is not None:
            return self.pointer_root(keyword_arg(expr, "base"), depth - 1)  # type: ignore[arg-type]
        return None

    def additive_terms(self, expr: ast.expr, depth: int = 3) -> list[ast.expr]:
        """`a + b * s - c` → [a, b * s, c], looking through local names bound once."""
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
            return self.additive_terms(expr.left, depth) + self.additive_terms(expr.right, depth)
        if (
            isinstance(expr, ast.Name)
            and depth > 0
            and len(self.defs.get(expr.id, [])) == 1
            and expr.id not in self.params
        ):
            return self.additive_terms(self.defs[expr.id][0], depth - 1)
        return [expr]

    def is_vector(self, expr: ast.AST) -> bool:
        return self.mentions(expr, self.vector) or any(self.mod.tl_call(n) == "arange" for n in ast.walk(expr))

    def strided_address(self, ptr: ast.expr) -> bool:
        """Every term of the address that varies across lanes is multiplied by a run-time value (a stride):
        neighbouring lanes read addresses a stride apart. Compile-time factors (constexpr pooling strides) are
        small and keep sectors mostly shared, so they do not count."""
        vec_terms = [t for t in self.additive_terms(ptr) if self.is_vector(t)]
        if not vec_terms:
            return False
        for t in vec_terms:
            if not (isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult)):
                return False
            scale = t.right if self.is_vector(t.left) else t.left
            if (
                self.is_vector(scale)
                or isinstance(scale, ast.Constant)
                or (isinstance(scale, ast.Name) and scale.id in self.constexprs)
            ):
                return False
        return True

    def enclosing_loops(self, node: ast.AST) -> list[ast.For | ast.While]:
        return [lp for lp in self.loops if any(n is node for n in ast.walk(lp))]


def tile_rank_of(fn: ast.AST) -> int:
    """Largest rank of the `x[:, None]`-style broadcast subscripts in a kernel (1 when there are none)."""
    rank = 1
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Tuple)
            and any(isinstance(e, ast.Constant) and e.value is None for e in node.slice.elts)
        ):
            rank = max(rank, len(node.slice.elts))
    return rank


def int_value(expr: ast.expr | None, env: dict[str, int]) -> int | None:
    """An integer literal's value, or a name's value in `env`; None when not statically known."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.Name):
        return env.get(expr.id)
    return None


def _literal_env(fn: ast.FunctionDef) -> dict[str, int]:
    """Local names a host function binds exactly once, to an integer literal (`BLOCK = 256`)."""
    counts: dict[str, int] = {}
    values: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        counts[n.id] = counts.get(n.id, 0) + 1
                        if (
                            isinstance(node, ast.Assign)
                            and isinstance(node.value, ast.Constant)
                            and isinstance(node.value.value, int)
                        ):
                            values[n.id] = node.value.value
    return {k: v for k, v in values.items() if counts.get(k) == 1}


@dataclass
class Launch:
    """`kernel[grid](args, **kwargs)` in a host function."""

    kernel: str
    call: ast.Call
    grid: ast.expr
    host: ast.FunctionDef | None
    env: dict[str, int]  # literal-valued locals of the host function


def find_launches(tree: ast.Module, kernel_names: set[str]) -> list[Launch]:
    launches: list[Launch] = []
    for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)] + [None]:
        body = fn if fn is not None else ast.Module([n for n in tree.body if not isinstance(n, ast.FunctionDef)], [])
        env = _literal_env(fn) if fn is not None else {}
        for node in ast.walk(body):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in kernel_names
            ):
                launches.append(Launch(node.func.value.id, node, node.func.slice, fn, env))
    return launches


def jit_functions(tree: ast.Module, mod: ModuleNames) -> list[tuple[ast.FunctionDef, list[str]]]:
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            decs = [mod.decorator_name(d) for d in node.decorator_list]
            if "jit" in decs:
                out.append((node, decs))
    return out


def _callees(root: ast.FunctionDef, by_name: dict[str, ast.FunctionDef]) -> list[str]:
    """`root` and the jit helpers it calls, transitively."""
    order, todo = [root.name], [root]
    while todo:
        fn = todo.pop()
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in by_name
                and node.func.id not in order
            ):
                order.append(node.func.id)
                todo.append(by_name[node.func.id])
    return order


class KernelModule:
    """A parsed kernel module, narrowed with `kernel` to that kernel and the jit helpers it calls (a module of
    examples holds unrelated kernels). `constexprs`: values a kernel was specialized with (from a trajectory);
    they override the literal launch arguments."""

    def __init__(
        self,
        source: str,
        filename: str = "<kernel>",
        kernel: str | None = None,
        constexprs: dict[str, int] | None = None,
    ):
        try:
            self.tree = ast.parse(source, filename=filename)
        except SyntaxError as e:
            raise ValueError(f"{filename}:{e.lineno}: cannot parse the kernel source: {e.msg}") from e
        self.names = ModuleNames(self.tree)
        jits = jit_functions(self.tree, self.names)
        if kernel is not None:
            by_name = {f.name: f for f, _ in jits}
            if kernel not in by_name:
                found = ", ".join(by_name) or "none"
                raise ValueError(f"{filename}: no @triton.jit function {kernel!r}; found: {found}")
            keep = _callees(by_name[kernel], by_name)
            jits = [(f, d) for f, d in jits if f.name in keep]
        self.jits = jits
        self.kernels = [KernelAnalysis(f, self.names) for f, _ in jits]
        jit_names = {f.name for f, _ in jits}
        launches = find_launches(self.tree, jit_names)
        self.launches = [lc for lc in launches if lc.kernel == kernel] if kernel is not None else launches
        # functions that are not (selected) jit kernels: the host code, and the unrelated kernels of a narrowed read
        self.host_functions = [f for f in self.tree.body if isinstance(f, ast.FunctionDef) and f.name not in jit_names]
        self._specialization = {
            k: int(x) for k, x in (constexprs or {}).items() if isinstance(x, int) and not isinstance(x, bool)
        }

    def constexpr_params(self, kernel: str) -> set[str]:
        return next((set(k.constexprs) for k in self.kernels if k.fn.name == kernel), set())

    def literal_keywords(self) -> Iterator[tuple[Launch, ast.keyword, int]]:
        """Launch keywords whose value is an integer literal (or a host name bound once to one), in launch order."""
        for lc in self.launches:
            for kw in lc.call.keywords:
                value = int_value(kw.value, lc.env)
                if value is not None:
                    yield lc, kw, value

    @cached_property
    def constexpr_values(self) -> dict[str, int]:
        """constexpr → its value: the specialization's, else the largest literal passed for it at a launch."""
        values: dict[str, int] = {}
        for lc, kw, value in self.literal_keywords():
            if kw.arg in self.constexpr_params(lc.kernel):
                values[kw.arg] = max(values.get(kw.arg, 0), value)
        return values | self._specialization
