"""Features of a kernel module's Python source, read with `ast` (never imported or run).

A module holds @triton.jit kernels (and device helpers) plus host code that launches them (`forward`). Each
feature is a bool or an int with the source lines that show it; cards read them as `src.<name>`. Constexpr
values (BLOCK sizes) come from the compile's specialization when known, else from literal launch arguments.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

# name → meaning. The extractor fills every feature whose value it can decide; the rest stay absent (unknown).
FEATURES: dict[str, str] = {
    "num_kernels": "distinct @triton.jit kernels launched by the host code (all jit functions if none are launched)",
    "num_launches": "kernel launch sites (`kernel[grid](...)`) in the host code",
    "host_allocations": "torch.empty*/zeros*/full* allocations in the host code (outputs and intermediates)",
    "has_autotune": "a kernel is decorated with @triton.autotune",
    "has_heuristics": "a kernel is decorated with @triton.heuristics",
    "host_block_literal": "a BLOCK-like constexpr is passed at launch from an integer literal (a tunable constant)",
    "launch_num_warps": "num_warps given at a launch (largest literal)",
    "launch_num_stages": "num_stages given at a launch (largest literal)",
    "launch_grid_one": "a launch with a one-program grid `(1,)` (a serial final reduction)",
    "uses_argmax": "tl.argmax (or x.argmax) in a kernel",
    "uses_argmin": "tl.argmin (or x.argmin) in a kernel",
    "index_reductions": "index-producing reductions (argmax/argmin, max/min with return_indices=True)",
    "mask_from_index": "a value compared for equality with an argmax/argmin result (argmax-and-mask)",
    "stores_index": "an argmax/argmin result (or a value derived from it) is stored: the index is an output",
    "value_equality_mask": "tl.where masks by equality with a max/min value (drops every tied copy)",
    "counts_maxima": "counts elements equal to a max/min value (the tie-correct second-max form)",
    "has_reduce": "any tl.sum/max/min/reduce/argmax/argmin/xor_sum in a kernel",
    "reductions": "number of reduction call sites",
    "has_scan": "tl.cumsum/cumprod/associative_scan in a kernel",
    "uses_associative_scan": "tl.associative_scan in a kernel",
    "scan_reverse": "a scan with reverse=True",
    "scan_in_loop": "a scan inside a loop (chunked scan with a carried prefix)",
    "uses_exp": "tl.exp/exp2 in a kernel (softmax, log-sum-exp, sigmoid-like math)",
    "uses_sqrt": "tl.sqrt/rsqrt in a kernel (norms, variances)",
    "has_dot": "tl.dot in a kernel",
    "dots": "number of tl.dot call sites",
    "dot_precision_explicit": "tl.dot with an explicit input_precision or allow_tf32",
    "has_atomic": "tl.atomic_* in a kernel",
    "has_loop": "a for/while loop in a kernel",
    "loops": "number of loops in kernels",
    "uses_static_range": "tl.static_range loops",
    "constexpr_trip_loop": "a `for … in range(C)` whose bounds are all constexprs or literals (unrollable)",
    "tile_rank": "largest rank of the index tiles built from tl.arange (1: vectors; 2: [:, None] tiles)",
    "tile_elements": "elements in the largest tile (product of the arange extents; needs constexpr values)",
    "program_id_axes": "distinct grid axes read with tl.program_id",
    "uses_num_programs": "tl.num_programs in a kernel (grid-stride or persistent loops)",
    "has_grouped_order": "grouped program order for L2 reuse (a GROUP constexpr or group_id arithmetic)",
    "int64_offsets": "program ids or offsets cast to int64 in a kernel",
    "loads": "tl.load call sites",
    "stores": "tl.store call sites",
    "masked_loads": "tl.load call sites with a mask",
    "scalar_loads": "tl.load sites whose pointer does not depend on tl.arange (one element per program)",
    "scalar_loads_in_loop": "scalar loads inside a loop (strided one-element-at-a-time access)",
    "strided_loads": "tl.load sites whose every tl.arange term is scaled by a run-time stride (lanes not contiguous)",
    "input_passes": "passes over one input: outermost loops (and the straight-line body) loading the same pointer",
    "has_hints": "tl.multiple_of / tl.max_contiguous / tl.assume hints",
    "uses_eviction_policy": "eviction_policy= on a load or store",
    "uses_cache_modifier": "cache_modifier= on a load or store",
    "uses_block_ptr": "tl.make_block_ptr / tl.advance",
    "uses_tensor_descriptor": "tl.make_tensor_descriptor or a host TensorDescriptor",
}

_REDUCE = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum"}
_SCAN = {"cumsum", "cumprod", "associative_scan"}
_NEW_ALLOC = {"new_empty", "new_zeros", "new_full", "new_ones"}
_ALLOC = {"empty", "empty_like", "zeros", "zeros_like", "full", "full_like", "ones", "ones_like", "empty_strided"}


@dataclass
class SourceFeatures:
    values: dict[str, bool | int] = field(default_factory=dict)
    lines: dict[str, list[int]] = field(default_factory=dict)  # feature → 1-based lines in the module source
    kernels: list[str] = field(default_factory=list)  # @triton.jit function names, in source order

    def note(self, name: str, line: int | None) -> None:
        if line is not None and line not in self.lines.setdefault(name, []):
            self.lines[name].append(line)


def _attr_path(node: ast.AST) -> str:
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
        path = _attr_path(node.func)
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
            base = _attr_path(node.func.value)
            if base not in self.tl_aliases and base not in self.triton_aliases:
                return node.func.attr
        return None

    def decorator_name(self, dec: ast.AST) -> str:
        target = dec.func if isinstance(dec, ast.Call) else dec
        return _attr_path(target).rpartition(".")[2]


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_constexpr(arg: ast.arg) -> bool:
    return arg.annotation is not None and _attr_path(arg.annotation).endswith("constexpr")


class KernelAnalysis:
    """One @triton.jit function: definitions, taint and the features it shows."""

    def __init__(self, fn: ast.FunctionDef, mod: ModuleNames):
        self.fn, self.mod = fn, mod
        self.params = [a.arg for a in fn.args.args]
        self.constexprs = [a.arg for a in fn.args.args if _is_constexpr(a)]
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
                isinstance(v, ast.Call) and mod.tl_call(v) in ("max", "min") and not _kw(v, "return_indices")
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

    def is_index_reduction(self, c: ast.AST) -> bool:
        name = self.mod.tl_call(c) or self.mod.method_call(c)
        if name in ("argmax", "argmin"):
            return True
        ret = _kw(c, "return_indices") if isinstance(c, ast.Call) else None
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

    def calls(self) -> Iterator[tuple[str, ast.Call]]:
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Call):
                name = self.mod.tl_call(node)
                if name:
                    yield name, node

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
        if isinstance(expr, ast.Call) and (base := _kw(expr, "base")) is not None:
            return self.pointer_root(base, depth - 1)
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


def _int_value(expr: ast.expr | None, env: dict[str, int]) -> int | None:
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


def extract(
    source: str, constexprs: dict[str, int] | None = None, filename: str = "<kernel>", kernel: str | None = None
) -> SourceFeatures:
    """Features of a kernel module, or with `kernel` of that kernel and the jit helpers it calls (a module of
    examples holds unrelated kernels). `constexprs`: values the kernel was specialized with (from a trajectory)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        raise ValueError(f"{filename}:{e.lineno}: cannot parse the kernel source: {e.msg}") from e
    mod = ModuleNames(tree)
    jits = jit_functions(tree, mod)
    if kernel is not None:
        by_name = {f.name: f for f, _ in jits}
        if kernel not in by_name:
            raise ValueError(f"{filename}: no @triton.jit function {kernel!r}; found: {', '.join(by_name) or 'none'}")
        keep = _callees(by_name[kernel], by_name)
        jits = [(f, d) for f, d in jits if f.name in keep]
    out = SourceFeatures(kernels=[f.name for f, _ in jits])
    v = out.values
    kernels = [KernelAnalysis(f, mod) for f, _ in jits]
    names = {f.name for f, _ in jits}
    launches = find_launches(tree, names)
    if kernel is not None:
        launches = [lc for lc in launches if lc.kernel == kernel]

    # host code
    launched = {lc.kernel for lc in launches}
    v["num_kernels"] = len(launched) if launched else len(jits)
    v["num_launches"] = len(launches)
    for lc in launches:
        out.note("num_launches", lc.call.lineno)
    allocs = 0
    host_fns = [fn for fn in tree.body if isinstance(fn, ast.FunctionDef) and fn.name not in names]
    for fn in host_fns:
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            path = _attr_path(node.func)
            method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if (path.startswith("torch.") and path.rpartition(".")[2] in _ALLOC) or method in _NEW_ALLOC:
                allocs += 1
                out.note("host_allocations", node.lineno)
            if path.rpartition(".")[2] == "TensorDescriptor" or path.endswith("TensorDescriptor.from_tensor"):
                out.note("uses_tensor_descriptor", node.lineno)
    v["host_allocations"] = allocs
    v["has_autotune"] = any("autotune" in decs for _, decs in jits)
    v["has_heuristics"] = any("heuristics" in decs for _, decs in jits)
    for f, decs in jits:
        for d, name in zip(f.decorator_list, decs):
            if name in ("autotune", "heuristics"):
                out.note(f"has_{name}", d.lineno)

    consts_by_kernel = {k.fn.name: set(k.constexprs) for k in kernels}
    values: dict[str, int] = {}  # constexpr → largest value seen at a launch
    v["host_block_literal"] = False
    warps: list[int] = []
    stages: list[int] = []
    v["launch_grid_one"] = False
    for lc in launches:
        for kw in lc.call.keywords:
            val = _int_value(kw.value, lc.env)
            if kw.arg in consts_by_kernel.get(lc.kernel, set()) and val is not None:
                values[kw.arg] = max(values.get(kw.arg, 0), val)
                if "BLOCK" in kw.arg.upper():
                    v["host_block_literal"] = True
                    out.note("host_block_literal", kw.value.lineno)
            elif kw.arg == "num_warps" and val is not None:
                warps.append(val)
                out.note("launch_num_warps", kw.value.lineno)
            elif kw.arg == "num_stages" and val is not None:
                stages.append(val)
                out.note("launch_num_stages", kw.value.lineno)
        grid = lc.grid
        if isinstance(grid, ast.Tuple) and len(grid.elts) == 1 and _int_value(grid.elts[0], lc.env) == 1:
            v["launch_grid_one"] = True
            out.note("launch_grid_one", lc.call.lineno)
    if warps:
        v["launch_num_warps"] = max(warps)
    if stages:
        v["launch_num_stages"] = max(stages)
    values.update({k: int(x) for k, x in (constexprs or {}).items() if isinstance(x, int) and not isinstance(x, bool)})

    _kernel_features(kernels, mod, values, out)
    return out


def _flag(out: SourceFeatures, name: str, nodes: list[ast.AST]) -> None:
    out.values[name] = bool(nodes)
    for n in nodes:
        out.note(name, getattr(n, "lineno", None))


def _count(out: SourceFeatures, name: str, nodes: list[ast.AST]) -> None:
    out.values[name] = len(nodes)
    for n in nodes:
        out.note(name, getattr(n, "lineno", None))


def _kernel_features(
    kernels: list[KernelAnalysis], mod: ModuleNames, consts: dict[str, int], out: SourceFeatures
) -> None:
    by: dict[str, list[ast.AST]] = {}

    def add(name: str, node: ast.AST) -> None:
        by.setdefault(name, []).append(node)

    extents: list[int | None] = []  # every tl.arange's extent (None: a bound not known statically)
    max_rank = 0
    passes = 0
    for k in kernels:
        reads: dict[str, set[int]] = {}  # pointer root → loops (by id) that load from it
        block_ptrs = {
            n for n, vals in k.defs.items() if any(mod.tl_call(x) in ("make_block_ptr", "advance") for x in vals)
        }
        for name, call in k.calls():
            if name in ("argmax", "argmin") or k.is_index_reduction(call):
                add("index_reductions", call)
                if name in ("argmax", "argmin"):
                    add(f"uses_{name}", call)
            if name in _REDUCE:
                add("reductions", call)
            if name in _SCAN:
                add("has_scan", call)
                if name == "associative_scan":
                    add("uses_associative_scan", call)
                rev = _kw(call, "reverse")
                if isinstance(rev, ast.Constant) and rev.value is True:
                    add("scan_reverse", call)
                if k.enclosing_loops(call):
                    add("scan_in_loop", call)
            if name in ("exp", "exp2"):
                add("uses_exp", call)
            if name in ("sqrt", "rsqrt", "sqrt_rn"):
                add("uses_sqrt", call)
            if name == "dot":
                add("dots", call)
                if _kw(call, "input_precision") is not None or _kw(call, "allow_tf32") is not None:
                    add("dot_precision_explicit", call)
            if name.startswith("atomic_"):
                add("has_atomic", call)
            if name == "static_range":
                add("uses_static_range", call)
            if name == "num_programs":
                add("uses_num_programs", call)
            if name in ("multiple_of", "max_contiguous", "assume"):
                add("has_hints", call)
            if name in ("make_block_ptr", "advance"):
                add("uses_block_ptr", call)
            if name == "make_tensor_descriptor":
                add("uses_tensor_descriptor", call)
            if name == "program_id":
                axis = call.args[0] if call.args else _kw(call, "axis")
                add(f"program_id_axis_{_int_value(axis, {}) if axis is not None else 0}", call)
            if name in ("load", "store"):
                add(f"{name}s", call)
                if _kw(call, "eviction_policy") is not None:
                    add("uses_eviction_policy", call)
                if _kw(call, "cache_modifier") is not None:
                    add("uses_cache_modifier", call)
            if name == "load" and call.args:
                ptr = call.args[0]
                if _kw(call, "mask") is not None or len(call.args) > 1:
                    add("masked_loads", call)
                is_block_ptr = mod.tl_call(ptr) in ("make_block_ptr", "advance") or k.mentions(ptr, block_ptrs)
                if not k.is_vector(ptr) and not is_block_ptr:
                    add("scalar_loads", call)
                    if k.enclosing_loops(call):
                        add("scalar_loads_in_loop", call)
                if k.strided_address(ptr):
                    add("strided_loads", call)
                root = k.pointer_root(ptr)
                if root:
                    loops = k.enclosing_loops(call)
                    reads.setdefault(root, set()).add(id(loops[0]) if loops else 0)
            value = call.args[1] if len(call.args) > 1 else _kw(call, "value")
            if name == "store" and value is not None and k.value_mentions(value, k.argidx):
                add("stores_index", call)
            if name == "where" and call.args:
                for cmp in k.mask_compares(call.args[0]):
                    sides = [cmp.left, *cmp.comparators]
                    if any(k.value_mentions(s, k.argidx) for s in sides):
                        add("mask_from_index", cmp)
                    elif any(isinstance(s, ast.Name) and s.id in k.extreme for s in sides):
                        add("value_equality_mask", cmp)
            if name == "sum" and call.args:
                for cmp in k.mask_compares(call.args[0]):
                    if any(isinstance(s, ast.Name) and s.id in k.extreme for s in [cmp.left, *cmp.comparators]):
                        add("counts_maxima", cmp)
            if name == "arange":
                hi = call.args[1] if len(call.args) > 1 else _kw(call, "end")
                lo = call.args[0] if call.args else _kw(call, "start")
                a, b = _int_value(lo, consts), _int_value(hi, consts)
                extents.append(b - a if a is not None and b is not None else None)
        if tile_rank_of(k.fn) > 1:
            max_rank = max(max_rank, tile_rank_of(k.fn))
        for node in ast.walk(k.fn):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "to"
                and node.args
                and _attr_path(node.args[0]).endswith("int64")
                and (k.mentions(node.func.value, k.pid) or mod.tl_call(node.func.value) == "program_id")
            ):
                add("int64_offsets", node)
            if (
                isinstance(node, ast.Call)
                and mod.method_call(node) in ("argmax", "argmin")
                and mod.tl_call(node) is None
            ):
                add("index_reductions", node)
                add(f"uses_{mod.method_call(node)}", node)
        for lp in k.loops:
            add("loops", lp)
            if (
                isinstance(lp, ast.For)
                and isinstance(lp.iter, ast.Call)
                and _attr_path(lp.iter.func) == "range"
                and lp.iter.args
                and all(
                    (isinstance(a, ast.Name) and a.id in k.constexprs) or _int_value(a, {}) is not None
                    for a in lp.iter.args
                )
            ):
                add("constexpr_trip_loop", lp)
        grouped: list[ast.arg | ast.Name] = [a for a in k.fn.args.args if "GROUP" in a.arg.upper() and _is_constexpr(a)]
        grouped += [n for n in ast.walk(k.fn) if isinstance(n, ast.Name) and n.id.endswith(("group_id", "first_pid_m"))]
        for g in grouped:
            add("has_grouped_order", g)
        passes = max([passes] + [len(loops) for loops in reads.values()])

    v = out.values
    for name in (
        "uses_argmax",
        "uses_argmin",
        "mask_from_index",
        "stores_index",
        "value_equality_mask",
        "counts_maxima",
        "has_scan",
        "uses_associative_scan",
        "scan_reverse",
        "scan_in_loop",
        "dot_precision_explicit",
        "has_atomic",
        "uses_static_range",
        "uses_num_programs",
        "has_hints",
        "uses_eviction_policy",
        "uses_cache_modifier",
        "uses_block_ptr",
        "constexpr_trip_loop",
        "has_grouped_order",
        "int64_offsets",
        "scalar_loads_in_loop",
        "uses_tensor_descriptor",
        "uses_exp",
        "uses_sqrt",
    ):
        _flag(out, name, by.get(name, []))
    for name in (
        "index_reductions",
        "reductions",
        "dots",
        "loops",
        "loads",
        "stores",
        "masked_loads",
        "scalar_loads",
        "strided_loads",
    ):
        _count(out, name, by.get(name, []))
    v["has_reduce"] = v["reductions"] > 0
    out.lines["has_reduce"] = list(out.lines.get("reductions", []))
    v["has_dot"] = v["dots"] > 0
    out.lines["has_dot"] = list(out.lines.get("dots", []))
    v["has_loop"] = v["loops"] > 0
    out.lines["has_loop"] = list(out.lines.get("loops", []))
    axes = sorted(k for k in by if k.startswith("program_id_axis_"))
    v["program_id_axes"] = len(axes)
    for axis_key in axes:
        for n in by[axis_key]:
            out.note("program_id_axes", getattr(n, "lineno", None))
    v["input_passes"] = passes
    v["tile_rank"] = max(max_rank, 1 if extents else 0)
    known = sorted((e for e in extents if e is not None), reverse=True)
    if extents and len(known) == len(extents):
        prod = 1
        for e in known[: v["tile_rank"]]:
            prod *= e
        v["tile_elements"] = prod
    v["uses_tensor_descriptor"] = bool(out.lines.get("uses_tensor_descriptor"))  # kernel or host (noted earlier)
