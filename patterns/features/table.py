"""The source features cards read as `src.<name>`: one entry per feature (name, meaning, detector).

A detector asks the reader (reader.py) about a kernel module and answers a `Finding`: a bool or an int with the
source lines that show it, or no value when the source does not decide it (a BLOCK size known neither from the
specialization nor from a literal launch argument). The table's order is the documentation's order; the card
validator, the synthesis deltas and docs/patterns.md all iterate it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from patterns.features.reader import (
    KernelAnalysis,
    KernelModule,
    attr_path,
    int_value,
    is_constexpr,
    keyword_arg,
    tile_rank_of,
)


@dataclass(frozen=True)
class Finding:
    value: bool | int | None  # None: not decided by the source (the feature stays absent)
    lines: tuple[int, ...] = ()  # 1-based lines in the module source, each once, in the order found


@dataclass(frozen=True)
class Feature:
    name: str
    description: str
    detect: Callable[[KernelModule], Finding]


Sites = Callable[[KernelModule], Iterable[ast.AST]]


def _lines(nodes: Iterable[ast.AST]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(n.lineno for n in nodes))  # type: ignore[attr-defined]


def flag(sites: Sites) -> Callable[[KernelModule], Finding]:
    """True when the source has at least one site."""

    def detect(m: KernelModule) -> Finding:
        nodes = list(sites(m))
        return Finding(bool(nodes), _lines(nodes))

    return detect


def count(sites: Sites) -> Callable[[KernelModule], Finding]:
    """The number of sites."""

    def detect(m: KernelModule) -> Finding:
        nodes = list(sites(m))
        return Finding(len(nodes), _lines(nodes))

    return detect


def calls_where(test: Callable[[KernelAnalysis, str, ast.Call], bool]) -> Sites:
    """The tl calls of every kernel that pass `test(kernel, tl function, call)`."""
    return lambda m: [call for k in m.kernels for name, call in k.calls() if test(k, name, call)]


def calls_named(*names: str) -> Sites:
    return calls_where(lambda _k, name, _call: name in names)


def loads_where(test: Callable[[KernelAnalysis, ast.Call, ast.expr], bool]) -> Sites:
    """tl.load calls that name a pointer and pass `test(kernel, call, pointer)`."""
    return calls_where(lambda k, name, call: name == "load" and bool(call.args) and test(k, call, call.args[0]))


# ---- host code -----------------------------------------------------------------------------------------------------
_ALLOC = {"empty", "empty_like", "zeros", "zeros_like", "full", "full_like", "ones", "ones_like", "empty_strided"}
_NEW_ALLOC = {"new_empty", "new_zeros", "new_full", "new_ones"}


def _host_calls(m: KernelModule) -> Iterator[ast.Call]:
    for fn in m.host_functions:
        yield from (node for node in ast.walk(fn) if isinstance(node, ast.Call))


def _allocations(m: KernelModule) -> Iterator[ast.Call]:
    for call in _host_calls(m):
        path = attr_path(call.func)
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if (path.startswith("torch.") and path.rpartition(".")[2] in _ALLOC) or method in _NEW_ALLOC:
            yield call


def _num_kernels(m: KernelModule) -> Finding:
    return Finding(len({lc.kernel for lc in m.launches}) or len(m.jits))


def _decorators(name: str) -> Sites:
    return lambda m: [d for f, names in m.jits for d, n in zip(f.decorator_list, names) if n == name]


def _block_literals(m: KernelModule) -> Iterator[ast.expr]:
    for lc, kw, _ in m.literal_keywords():
        if kw.arg in m.constexpr_params(lc.kernel) and "BLOCK" in kw.arg.upper():
            yield kw.value


def _largest_literal(option: str) -> Callable[[KernelModule], Finding]:
    """The largest literal given for a launch option (num_warps); no value when no launch gives one."""

    def detect(m: KernelModule) -> Finding:
        given = [
            (value, kw.value)
            for lc, kw, value in m.literal_keywords()
            if kw.arg == option and option not in m.constexpr_params(lc.kernel)
        ]
        return Finding(max(v for v, _ in given) if given else None, _lines(node for _, node in given))

    return detect


def _one_program_grids(m: KernelModule) -> Iterator[ast.Call]:
    for lc in m.launches:
        grid = lc.grid
        if isinstance(grid, ast.Tuple) and len(grid.elts) == 1 and int_value(grid.elts[0], lc.env) == 1:
            yield lc.call


# ---- reductions and index values -------------------------------------------------------------------------------
_REDUCE = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum"}


def _index_reductions(*names: str) -> Sites:
    """Index-producing reductions, tl calls and `x.argmax()` methods (only those named, when names are given)."""

    def sites(m: KernelModule) -> Iterator[ast.AST]:
        for k in m.kernels:
            yield from (c for name, c in k.calls() if k.is_index_reduction(c) and (not names or name in names))
            for node in ast.walk(k.fn):
                method = m.names.method_call(node)
                if method in ("argmax", "argmin") and m.names.tl_call(node) is None and (not names or method in names):
                    yield node

    return sites


def _where_compares(m: KernelModule) -> Iterator[tuple[KernelAnalysis, ast.Compare]]:
    """The equality comparisons a tl.where condition is made of."""
    for k in m.kernels:
        for name, call in k.calls():
            if name == "where" and call.args:
                yield from ((k, cmp) for cmp in k.mask_compares(call.args[0]))


def _compares_index(k: KernelAnalysis, cmp: ast.Compare) -> bool:
    return any(k.value_mentions(side, k.argidx) for side in [cmp.left, *cmp.comparators])


def _compares_extreme(k: KernelAnalysis, cmp: ast.Compare) -> bool:
    """A side is a max/min value, or its broadcast back over the reduced axis (`m[:, None]` on a 2-D tile)."""
    sides = [cmp.left, *cmp.comparators]
    return any(isinstance(s, ast.Name) and s.id in k.extreme for s in (_unbroadcast(s) for s in sides))


def _unbroadcast(expr: ast.expr) -> ast.expr:
    """`m[:, None]` → `m`: a subscript of only full slices and None adds axes and selects nothing."""
    if isinstance(expr, ast.Subscript):
        elts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        full = [isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None for e in elts]
        if all(f or (isinstance(e, ast.Constant) and e.value is None) for e, f in zip(elts, full, strict=True)):
            return expr.value
    return expr


def _masks_from_index(m: KernelModule) -> Iterator[ast.Compare]:
    return (cmp for k, cmp in _where_compares(m) if _compares_index(k, cmp))


def _value_equality_masks(m: KernelModule) -> Iterator[ast.Compare]:
    return (cmp for k, cmp in _where_compares(m) if not _compares_index(k, cmp) and _compares_extreme(k, cmp))


def _stores_index(k: KernelAnalysis, name: str, call: ast.Call) -> bool:
    value = call.args[1] if len(call.args) > 1 else keyword_arg(call, "value")
    return name == "store" and value is not None and k.value_mentions(value, k.argidx)


def _counted_maxima(m: KernelModule) -> Iterator[ast.Compare]:
    for k in m.kernels:
        for name, call in k.calls():
            if name == "sum" and call.args:
                yield from (cmp for cmp in k.mask_compares(call.args[0]) if _compares_extreme(k, cmp))


# ---- scans ---------------------------------------------------------------------------------------------------------
_SCAN = {"cumsum", "cumprod", "associative_scan"}


def _is_true(expr: ast.expr | None) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True


# ---- loops ---------------------------------------------------------------------------------------------------------
def _loops(m: KernelModule) -> list[ast.AST]:
    return [lp for k in m.kernels for lp in k.loops]


def _constexpr_trip_loops(m: KernelModule) -> Iterator[ast.For]:
    for k in m.kernels:
        for lp in k.loops:
            if (
                isinstance(lp, ast.For)
                and isinstance(lp.iter, ast.Call)
                and attr_path(lp.iter.func) == "range"
                and lp.iter.args
                and all(
                    (isinstance(a, ast.Name) and a.id in k.constexprs) or int_value(a, {}) is not None
                    for a in lp.iter.args
                )
            ):
                yield lp


# ---- tiles and the grid --------------------------------------------------------------------------------------------
def _arange_extents(m: KernelModule) -> list[int | None]:
    """Every tl.arange's extent (None: a bound not known statically)."""
    out: list[int | None] = []
    for k in m.kernels:
        for name, call in k.calls():
            if name == "arange":
                hi = call.args[1] if len(call.args) > 1 else keyword_arg(call, "end")
                lo = call.args[0] if call.args else keyword_arg(call, "start")
                a, b = int_value(lo, m.constexpr_values), int_value(hi, m.constexpr_values)
                out.append(b - a if a is not None and b is not None else None)
    return out


def _tile_rank(m: KernelModule) -> int:
    ranks = [r for k in m.kernels if (r := tile_rank_of(k.fn)) > 1]
    return max([*ranks, 1 if _arange_extents(m) else 0])


def _tile_elements(m: KernelModule) -> Finding:
    extents = _arange_extents(m)
    known = sorted((e for e in extents if e is not None), reverse=True)
    if not extents or len(known) < len(extents):
        return Finding(None)
    prod = 1
    for e in known[: _tile_rank(m)]:
        prod *= e
    return Finding(prod)


def _program_id_axes(m: KernelModule) -> Finding:
    """Distinct axes (an axis not known statically counts as one more), lines in axis order."""
    by_axis: dict[str, list[ast.Call]] = {}
    for k in m.kernels:
        for name, call in k.calls():
            if name == "program_id":
                axis = call.args[0] if call.args else keyword_arg(call, "axis")
                by_axis.setdefault(str(int_value(axis, {}) if axis is not None else 0), []).append(call)
    return Finding(len(by_axis), _lines(c for a in sorted(by_axis) for c in by_axis[a]))


def _grouped_order(m: KernelModule) -> Iterator[ast.AST]:
    for k in m.kernels:
        yield from (a for a in k.fn.args.args if "GROUP" in a.arg.upper() and is_constexpr(a))
        yield from (n for n in ast.walk(k.fn) if isinstance(n, ast.Name) and n.id.endswith(("group_id", "first_pid_m")))


def _int64_casts(m: KernelModule) -> Iterator[ast.Call]:
    for k in m.kernels:
        for node in ast.walk(k.fn):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "to"
                and node.args
                and attr_path(node.args[0]).endswith("int64")
                and (k.mentions(node.func.value, k.pid) or m.names.tl_call(node.func.value) == "program_id")
            ):
                yield node


# ---- memory access -------------------------------------------------------------------------------------------------
def _is_scalar_load(k: KernelAnalysis, ptr: ast.expr) -> bool:
    """The pointer does not vary across lanes (a block pointer does, without tl.arange)."""
    is_block_ptr = k.mod.tl_call(ptr) in ("make_block_ptr", "advance") or k.mentions(ptr, k.block_pointers)
    return not k.is_vector(ptr) and not is_block_ptr


def _input_passes(m: KernelModule) -> Finding:
    """Per pointer, the outermost loops (or the straight-line body) that load from it; the most over pointers."""
    passes = 0
    for k in m.kernels:
        reads: dict[str, set[int]] = {}
        for name, call in k.calls():
            if name == "load" and call.args and (root := k.pointer_root(call.args[0])):
                outermost = k.enclosing_loops(call)[:1]
                reads.setdefault(root, set()).add(id(outermost[0]) if outermost else 0)
        passes = max([passes] + [len(loops) for loops in reads.values()])
    return Finding(passes)


def _tensor_descriptors(m: KernelModule) -> list[ast.AST]:
    host = [
        c
        for c in _host_calls(m)
        if attr_path(c.func).rpartition(".")[2] == "TensorDescriptor"
        or attr_path(c.func).endswith("TensorDescriptor.from_tensor")
    ]
    return [*host, *calls_named("make_tensor_descriptor")(m)]


def _memory_option(option: str) -> Sites:
    return calls_where(lambda _k, name, call: name in ("load", "store") and keyword_arg(call, option) is not None)


# ---- the table -----------------------------------------------------------------------------------------------------
TABLE: tuple[Feature, ...] = (
    Feature(
        "num_kernels",
        "distinct @triton.jit kernels launched by the host code (all jit functions if none are launched)",
        _num_kernels,
    ),
    Feature(
        "num_launches",
        "kernel launch sites (`kernel[grid](...)`) in the host code",
        count(lambda m: [lc.call for lc in m.launches]),
    ),
    Feature(
        "host_allocations",
        "torch.empty*/zeros*/full* allocations in the host code (outputs and intermediates)",
        count(_allocations),
    ),
    Feature("has_autotune", "a kernel is decorated with @triton.autotune", flag(_decorators("autotune"))),
    Feature("has_heuristics", "a kernel is decorated with @triton.heuristics", flag(_decorators("heuristics"))),
    Feature(
        "host_block_literal",
        "a BLOCK-like constexpr is passed at launch from an integer literal (a tunable constant)",
        flag(_block_literals),
    ),
    Feature("launch_num_warps", "num_warps given at a launch (largest literal)", _largest_literal("num_warps")),
    Feature("launch_num_stages", "num_stages given at a launch (largest literal)", _largest_literal("num_stages")),
    Feature(
        "launch_grid_one",
        "a launch with a one-program grid `(1,)` (a serial final reduction)",
        flag(_one_program_grids),
    ),
    Feature("uses_argmax", "tl.argmax (or x.argmax) in a kernel", flag(_index_reductions("argmax"))),
    Feature("uses_argmin", "tl.argmin (or x.argmin) in a kernel", flag(_index_reductions("argmin"))),
    Feature(
        "index_reductions",
        "index-producing reductions (argmax/argmin, max/min with return_indices=True)",
        count(_index_reductions()),
    ),
    Feature(
        "mask_from_index",
        "a value compared for equality with an argmax/argmin result (argmax-and-mask)",
        flag(_masks_from_index),
    ),
    Feature(
        "stores_index",
        "an argmax/argmin result (or a value derived from it) is stored: the index is an output",
        flag(calls_where(_stores_index)),
    ),
    Feature(
        "value_equality_mask",
        "tl.where masks by equality with a max/min value (drops every tied copy)",
        flag(_value_equality_masks),
    ),
    Feature(
        "counts_maxima",
        "counts elements equal to a max/min value (the tie-correct second-max form)",
        flag(_counted_maxima),
    ),
    Feature("has_reduce", "any tl.sum/max/min/reduce/argmax/argmin/xor_sum in a kernel", flag(calls_named(*_REDUCE))),
    Feature("reductions", "number of reduction call sites", count(calls_named(*_REDUCE))),
    Feature("has_scan", "tl.cumsum/cumprod/associative_scan in a kernel", flag(calls_named(*_SCAN))),
    Feature("uses_associative_scan", "tl.associative_scan in a kernel", flag(calls_named("associative_scan"))),
    Feature(
        "scan_reverse",
        "a scan with reverse=True",
        flag(calls_where(lambda _k, name, call: name in _SCAN and _is_true(keyword_arg(call, "reverse")))),
    ),
    Feature(
        "scan_in_loop",
        "a scan inside a loop (chunked scan with a carried prefix)",
        flag(calls_where(lambda k, name, call: name in _SCAN and bool(k.enclosing_loops(call)))),
    ),
    Feature(
        "uses_exp",
        "tl.exp/exp2 in a kernel (softmax, log-sum-exp, sigmoid-like math)",
        flag(calls_named("exp", "exp2")),
    ),
    Feature("uses_sqrt", "tl.sqrt/rsqrt in a kernel (norms, variances)", flag(calls_named("sqrt", "rsqrt", "sqrt_rn"))),
    Feature("has_dot", "tl.dot in a kernel", flag(calls_named("dot"))),
    Feature("dots", "number of tl.dot call sites", count(calls_named("dot"))),
    Feature(
        "dot_precision_explicit",
        "tl.dot with an explicit input_precision or allow_tf32",
        flag(
            calls_where(
                lambda _k, name, call: (
                    name == "dot"
                    and (
                        keyword_arg(call, "input_precision") is not None or keyword_arg(call, "allow_tf32") is not None
                    )
                )
            )
        ),
    ),
    Feature(
        "has_atomic",
        "tl.atomic_* in a kernel",
        flag(calls_where(lambda _k, name, _call: name.startswith("atomic_"))),
    ),
    Feature("has_loop", "a for/while loop in a kernel", flag(_loops)),
    Feature("loops", "number of loops in kernels", count(_loops)),
    Feature("uses_static_range", "tl.static_range loops", flag(calls_named("static_range"))),
    Feature(
        "constexpr_trip_loop",
        "a `for … in range(C)` whose bounds are all constexprs or literals (unrollable)",
        flag(_constexpr_trip_loops),
    ),
    Feature(
        "tile_rank",
        "largest rank of the index tiles built from tl.arange (1: vectors; 2: [:, None] tiles)",
        lambda m: Finding(_tile_rank(m)),
    ),
    Feature(
        "tile_elements",
        "elements in the largest tile (product of the arange extents; needs constexpr values)",
        _tile_elements,
    ),
    Feature("program_id_axes", "distinct grid axes read with tl.program_id", _program_id_axes),
    Feature(
        "uses_num_programs",
        "tl.num_programs in a kernel (grid-stride or persistent loops)",
        flag(calls_named("num_programs")),
    ),
    Feature(
        "has_grouped_order",
        "grouped program order for L2 reuse (a GROUP constexpr or group_id arithmetic)",
        flag(_grouped_order),
    ),
    Feature("int64_offsets", "program ids or offsets cast to int64 in a kernel", flag(_int64_casts)),
    Feature("loads", "tl.load call sites", count(calls_named("load"))),
    Feature("stores", "tl.store call sites", count(calls_named("store"))),
    Feature(
        "masked_loads",
        "tl.load call sites with a mask",
        count(loads_where(lambda _k, call, _ptr: keyword_arg(call, "mask") is not None or len(call.args) > 1)),
    ),
    Feature(
        "scalar_loads",
        "tl.load sites whose pointer does not depend on tl.arange (one element per program)",
        count(loads_where(lambda k, _call, ptr: _is_scalar_load(k, ptr))),
    ),
    Feature(
        "scalar_loads_in_loop",
        "scalar loads inside a loop (strided one-element-at-a-time access)",
        flag(loads_where(lambda k, call, ptr: _is_scalar_load(k, ptr) and bool(k.enclosing_loops(call)))),
    ),
    Feature(
        "strided_loads",
        "tl.load sites whose every tl.arange term is scaled by a run-time stride (lanes not contiguous)",
        count(loads_where(lambda k, _call, ptr: k.strided_address(ptr))),
    ),
    Feature(
        "input_passes",
        "passes over one input: outermost loops (and the straight-line body) loading the same pointer",
        _input_passes,
    ),
    Feature(
        "has_hints",
        "tl.multiple_of / tl.max_contiguous / tl.assume hints",
        flag(calls_named("multiple_of", "max_contiguous", "assume")),
    ),
    Feature("uses_eviction_policy", "eviction_policy= on a load or store", flag(_memory_option("eviction_policy"))),
    Feature("uses_cache_modifier", "cache_modifier= on a load or store", flag(_memory_option("cache_modifier"))),
    Feature("uses_block_ptr", "tl.make_block_ptr / tl.advance", flag(calls_named("make_block_ptr", "advance"))),
    Feature(
        "uses_tensor_descriptor",
        "tl.make_tensor_descriptor or a host TensorDescriptor",
        flag(_tensor_descriptors),
    ),
)

# name → meaning, in table order (what card validation and the docs check read)
FEATURES: dict[str, str] = {f.name: f.description for f in TABLE}


@dataclass
class SourceFeatures:
    values: dict[str, bool | int] = field(default_factory=dict)  # only the features the source decides
    lines: dict[str, list[int]] = field(default_factory=dict)  # feature → 1-based lines in the module source
    kernels: list[str] = field(default_factory=list)  # @triton.jit function names, in source order


def extract(
    source: str, constexprs: dict[str, int] | None = None, filename: str = "<kernel>", kernel: str | None = None
) -> SourceFeatures:
    """Features of a kernel module, or with `kernel` of that kernel and the jit helpers it calls (a module of
    examples holds unrelated kernels). `constexprs`: values the kernel was specialized with (from a trajectory)."""
    m = KernelModule(source, filename=filename, kernel=kernel, constexprs=constexprs)
    out = SourceFeatures(kernels=[f.name for f, _ in m.jits])
    for feature in TABLE:
        found = feature.detect(m)
        if found.value is not None:
            out.values[feature.name] = found.value
        if found.lines:
            out.lines[feature.name] = list(found.lines)
    return out
