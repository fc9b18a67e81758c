"""Triton's AxisInfo analysis, mirrored over captured TTIR/TTGIR text.

Whether a global access is vectorized is decided by three numbers per tensor dimension that Triton's
AxisInfo analysis (lib/Analysis/AxisInfo.cpp) propagates along def-use chains from `tt.make_range`,
constants and the `tt.divisibility` argument attributes the JIT specializes:

* contiguity: the length of runs of consecutive values (`arange` gives its length, `offs * stride` gives 1);
* divisibility: the largest power of two dividing the first value of every run (for pointers: in bytes);
* constancy: the length of runs of equal values (`splat` gives the whole dimension; masks use it).

Coalesce picks the layout from contiguity and alignment, and the load/store lowering picks the vector width
from the same numbers, so explaining a narrow access means recomputing them. Reading them back out of
Triton would need its C++ API on the captured module; this module recomputes them from the text with the
same transfer rules (one function per op, registered in `RULES`), following values into and out of
scf.for, scf.while and scf.if to the fixpoint MLIR's solver reaches. Ops without a rule get Triton's
pessimistic state (1, 1, 1), as they do in Triton.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from irscope.parse.mlir import Op, ParsedModule, parse_mlir

MAX_DIVISOR = 1 << 62  # Triton's highestPowOf2Divisor(0): "divisible by anything"
MAX_SWEEPS = 16  # loop-carried values converge in two or three sweeps; a bound keeps bad input finite


def pow2_divisor(n: int) -> int:
    """The highest power of two dividing n (MAX_DIVISOR for 0)."""
    return MAX_DIVISOR if n == 0 else min(n & -n, MAX_DIVISOR)


def gcd(*values: int) -> int:
    return math.gcd(*values)


def _mul_divisor(a: int, b: int) -> int:
    return MAX_DIVISOR if a > MAX_DIVISOR // b else a * b


@dataclass(frozen=True)
class AxisInfo:
    """Per-dimension contiguity, divisibility and constancy, and the value where it is a known constant."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @classmethod
    def pessimistic(cls, rank: int) -> AxisInfo:
        return cls((1,) * rank, (1,) * rank, (1,) * rank)

    @classmethod
    def unknown(cls, rank: int) -> AxisInfo:
        """Anything at all: the state control flow starts from before values flow in (joins only lower it)."""
        return cls((MAX_DIVISOR,) * rank, (MAX_DIVISOR,) * rank, (MAX_DIVISOR,) * rank)

    def join(self, other: AxisInfo) -> AxisInfo:
        """What holds for a value that is either self or other (AxisInfo::join)."""
        if self.rank != other.rank:
            return AxisInfo.pessimistic(max(self.rank, other.rank))
        div = tuple(_join_divisibility(self, other, d) for d in range(self.rank))
        return AxisInfo(
            tuple(gcd(a, b) for a, b in zip(self.contiguity, other.contiguity)),
            div,
            tuple(gcd(a, b) for a, b in zip(self.constancy, other.constancy)),
            self.constant if self.constant is not None and self.constant == other.constant else None,
        )


def _join_divisibility(a: AxisInfo, b: AxisInfo, d: int) -> int:
    """getDivisibilityFromContiguity: when the runs change length, their starts move, so they bound it too."""
    ca, cb = a.contiguity[d], b.contiguity[d]
    if ca == cb or MAX_DIVISOR in (ca, cb):
        return gcd(a.divisibility[d], b.divisibility[d])
    return gcd(a.divisibility[d], b.divisibility[d], ca, cb)


@dataclass(frozen=True)
class Fact:
    """What the analysis knows about one SSA value: its AxisInfo and tensor shape (() for a scalar)."""

    info: AxisInfo
    shape: tuple[int, ...]
    pointer: bool = False  # a pointer (divisibility in bytes) rather than an integer (in units)


# ---------------------------------------------------------------------------------------------- op text


_TENSOR = re.compile(r"tensor<((?:\d+x)*)(!tt\.ptr<[^>]+>|\w+)(?:,\s*(#[\w.$-]+(?:<(?:[^<>]|<[^<>]*>)*>)?))?>")


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    element: str  # f32, i1, f8E4M3FN, !tt.ptr<f16>
    encoding: str | None  # an alias (#blocked1) or an inline attribute (#ttg.slice<{…}>)


def tensor_types(text: str) -> list[TensorType]:
    return [
        TensorType(tuple(int(d) for d in m.group(1).split("x") if d), m.group(2), m.group(3))
        for m in _TENSOR.finditer(text)
    ]


_HINT_ATTR = re.compile(r"tt\.(contiguity|divisibility|constancy) = (?:dense<(\[[^\]]*\]|-?\d+)>|(-?\d+))[^,}]*")
_VALUE = re.compile(r"%[\w$.#-]+")
_PTR = re.compile(r"!tt\.ptr<([^>]+)>")
_INT_ATTR = re.compile(r"\b(\w+) = (-?\d+) : i\d+")
_BITS = re.compile(r"^[a-z]+?(\d+)")


def element_bits(element: str) -> int:
    """Bits of a scalar type name: f32 → 32, bf16 → 16, f8E4M3FN → 8, i1 → 1."""
    m = _BITS.match(element)
    return int(m.group(1)) if m else 32


def pointee_bits(type_text: str) -> int | None:
    """Bits of the pointee of the first `!tt.ptr<T>` in a type text (None when there is none)."""
    m = _PTR.search(type_text)
    return element_bits(m.group(1).split(",")[0].strip()) if m else None


def _signature(body: str) -> str:
    """The text after the last ` : ` outside brackets (`->` is no bracket)."""
    depth, cut = 0, -1
    for i, c in enumerate(body):
        if c in "{<([":
            depth += 1
        elif c in "}>)]" and not (c == ">" and body[i - 1] == "-"):
            depth -= 1
        elif depth == 0 and body.startswith(" : ", i):
            cut = i + 3
    return body[cut:] if cut >= 0 else ""


@dataclass
class OpView:
    """One op's full text line, split into what the rules read: operands, attributes, result shape.

    Values are named by unique keys (`%x_12@57`: name and defining line): the printer reuses names in
    sibling regions, so `%x_12` may be an address in one loop body and a loaded value in the next."""

    op: Op
    line: str  # the op's whole first line (Op.text is truncated for long lines)
    scope: dict[str, str] = field(default_factory=dict)  # names the line uses → keys visible here
    defined: dict[str, str] = field(default_factory=dict)  # names the op defines (results, block args) → keys

    @property
    def name(self) -> str:
        return self.op.name

    def key(self, name: str) -> str:
        """The key a name on this op's line refers to (the name itself when nothing defined it)."""
        return self.defined.get(name) or self.scope.get(name) or name

    @cached_property
    def results(self) -> list[str]:
        return [self.defined[n] for n in _result_names(self.op)]

    @cached_property
    def body(self) -> str:
        """The line without its location, with hint attributes removed (their `tensor<1xi32>` is no type)."""
        return _HINT_ATTR.sub("", self.line.split(" loc(", 1)[0])

    @cached_property
    def operands(self) -> list[str]:
        text = self.body
        text = text.split("=", 1)[1] if self.op.results else text
        text = text.split(self.op.name, 1)[-1]
        return [self.key(v) for v in _VALUE.findall(text.split(" : ", 1)[0] if " : " in text else text)]

    @cached_property
    def types(self) -> str:
        """The text after the op's last top-level ` : ` (its type signature). Generic-form ops with regions
        (`"tt.scan"(%x) ({ … }) : (T) -> T`) print it on their closing line."""
        found = _signature(self.body)
        tail = self.op.tail.split(" loc(", 1)[0]
        if not found and " : " in tail:
            found = _HINT_ATTR.sub("", tail.split(" : ", 1)[1])
        return found

    @cached_property
    def result_shape(self) -> tuple[int, ...]:
        types = self.types
        result = types.rsplit("->", 1)[-1] if "->" in types else types.rsplit(" to ", 1)[-1]
        found = tensor_types(result)
        return found[-1].shape if found else ()

    @cached_property
    def result_is_pointer(self) -> bool:
        types = self.types
        if self.name == "tt.load":  # printed with its pointer type: the result is the pointee
            return "!tt.ptr<!tt.ptr" in types
        result = types.rsplit("->", 1)[-1] if "->" in types else types.split(", ")[0]
        return "!tt.ptr" in result

    def int_attr(self, name: str) -> int | None:
        for m in _INT_ATTR.finditer(self.body):
            if m.group(1) == name:
                return int(m.group(2))
        return None

    @cached_property
    def hints(self) -> dict[str, tuple[int, ...]]:
        """tl.multiple_of / max_contiguous / max_constancy: `tt.divisibility = dense<16> : tensor<1xi32>`."""
        out = {}
        for m in _HINT_ATTR.finditer(self.line.split(" loc(", 1)[0]):
            raw = m.group(2) or m.group(3)
            out[m.group(1)] = tuple(int(v) for v in raw.strip("[]").split(",") if v.strip())
        return out


# ---------------------------------------------------------------------------------------------- rules


@dataclass
class RuleInput:
    view: OpView
    args: list[Fact]  # operand facts, in operand order
    shape: tuple[int, ...]  # result shape

    @property
    def rank(self) -> int:
        return max(len(self.shape), 1)

    def size(self, d: int) -> int:
        return self.shape[d] if d < len(self.shape) else 1

    def constancy_of_constant(self) -> tuple[int, ...]:
        return tuple(self.size(d) for d in range(self.rank)) if self.shape else (1,)


Rule = Callable[[RuleInput], AxisInfo | None]  # None: Triton has no answer → the pessimistic state
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn

    return register


@rule(
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "ttg.convert_layout",
    "tt.bitcast",
    "builtin.unrealized_conversion_cast",
)
def _cast(x: RuleInput) -> AxisInfo | None:
    src = x.args[0].info if x.args else None
    return src if src is not None and src.rank == x.rank else None


@rule("tt.make_range")
def _make_range(x: RuleInput) -> AxisInfo:
    start, end = x.view.int_attr("start") or 0, x.view.int_attr("end") or 0
    return AxisInfo((end - start,), (pow2_divisor(start),), (1,))


@rule("ub.poison")
def _poison(x: RuleInput) -> AxisInfo:
    return AxisInfo.unknown(x.rank)  # never read: any value is as good as another


_SPLAT_INT = re.compile(r"arith\.constant (?:dense<(-?\d+|true|false)>|(-?\d+|true|false))(?: : (i\d+|index))?")


@rule("arith.constant")
def _constant(x: RuleInput) -> AxisInfo | None:
    m = _SPLAT_INT.search(x.view.body)
    types = x.view.types
    if m is None or re.search(r"\bf(16|32|64)\b|bf16|f8", types):
        return None  # floats and non-splat dense constants: Triton gives up too
    raw = m.group(1) or m.group(2)
    value = {"true": 1, "false": 0}.get(raw)
    value = int(raw) if value is None else value
    if value < 0:  # APInt::getZExtValue of a negative integer: its two's-complement bit pattern
        widths = re.findall(r"\bi(\d+)\b", types)
        value &= (1 << (int(widths[-1]) if widths else 64)) - 1
    return AxisInfo((1,) * x.rank, (pow2_divisor(value),) * x.rank, x.constancy_of_constant(), value)


def _binary(
    x: RuleInput,
    contiguity: Callable[[AxisInfo, AxisInfo, int], int],
    divisibility: Callable[[AxisInfo, AxisInfo, int], int],
    constant: Callable[[AxisInfo, AxisInfo], int | None],
    constancy: Callable[[AxisInfo, AxisInfo, int], int] | None = None,
) -> AxisInfo | None:
    """BinaryOpVisitorImpl: a known constant result wins; otherwise each dimension by the op's rules."""
    if len(x.args) < 2:
        return None
    a, b = x.args[0].info, x.args[1].info
    if a.rank != b.rank:
        return None
    value = constant(a, b)
    if value is not None:
        return AxisInfo((1,) * a.rank, (pow2_divisor(value),) * a.rank, x.constancy_of_constant(), value)
    cons = constancy or (lambda a, b, d: gcd(a.constancy[d], b.constancy[d]))
    return AxisInfo(
        tuple(contiguity(a, b, d) for d in range(a.rank)),
        tuple(divisibility(a, b, d) for d in range(a.rank)),
        tuple(cons(a, b, d) for d in range(a.rank)),
    )


def _both(a: AxisInfo, b: AxisInfo) -> tuple[int, int] | None:
    """Both operands' constant values, when both are known."""
    return (a.constant, b.constant) if a.constant is not None and b.constant is not None else None


@rule("arith.addi", "arith.subi", "tt.addptr")
def _add_sub(x: RuleInput) -> AxisInfo | None:
    sub = x.view.name == "arith.subi"
    elem = 1
    if x.view.name == "tt.addptr":  # the offset is in elements, the pointer's divisibility in bytes
        elem = max(1, (pointee_bits(x.view.types) or 8) // 8)

    def contiguity(a: AxisInfo, b: AxisInfo, d: int) -> int:
        if sub:  # contiguity means increasing: subtracting a range does not give one
            return gcd(a.contiguity[d], b.constancy[d])
        return max(gcd(a.constancy[d], b.contiguity[d]), gcd(a.contiguity[d], b.constancy[d]))

    def divisibility(a: AxisInfo, b: AxisInfo, d: int) -> int:
        return gcd(a.divisibility[d], _mul_divisor(b.divisibility[d], elem))

    def constant(a: AxisInfo, b: AxisInfo) -> int | None:
        if (c := _both(a, b)) is None:
            return None
        return c[0] - c[1] if sub else c[0] + c[1] * elem

    return _binary(x, contiguity, divisibility, constant)


@rule("arith.muli")
def _mul(x: RuleInput) -> AxisInfo | None:
    def contiguity(a: AxisInfo, b: AxisInfo, d: int) -> int:
        # only a factor of exactly 1 keeps a range a range: any other factor, or a runtime stride, breaks it
        return max(a.contiguity[d] if b.constant == 1 else 1, b.contiguity[d] if a.constant == 1 else 1)

    def divisibility(a: AxisInfo, b: AxisInfo, d: int) -> int:
        da = 1 if a.contiguity[d] > 1 and b.constant != 1 else a.divisibility[d]
        db = 1 if b.contiguity[d] > 1 and a.constant != 1 else b.divisibility[d]
        return _mul_divisor(da, db)

    def constant(a: AxisInfo, b: AxisInfo) -> int | None:
        if (c := _both(a, b)) is not None:
            return c[0] * c[1]
        return 0 if 0 in (a.constant, b.constant) else None

    return _binary(x, contiguity, divisibility, constant)


def _contiguous_dim(x: RuleInput, info: AxisInfo, d: int) -> bool:
    return info.contiguity[d] == x.size(d)


def _constant_dim(x: RuleInput, info: AxisInfo, d: int) -> bool:
    return info.constancy[d] == x.size(d)


@rule("arith.divsi", "arith.divui")
def _div(x: RuleInput) -> AxisInfo | None:
    def contiguity(a: AxisInfo, b: AxisInfo, d: int) -> int:
        return a.contiguity[d] if b.constant == 1 else 1

    def constancy(a: AxisInfo, b: AxisInfo, d: int) -> int:
        c = gcd(a.constancy[d], b.constancy[d])
        if x.shape and _contiguous_dim(x, a, d) and _constant_dim(x, b, d):
            c = max(c, gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d]))
        return c

    def divisibility(a: AxisInfo, b: AxisInfo, d: int) -> int:
        if a.constant == 0 or b.constant == 1:
            return a.divisibility[d]
        if b.constant is not None and b.constant != 0 and _is_pow2(abs(b.constant)) and a.contiguity[d] == 1:
            return max(1, a.divisibility[d] // abs(b.constant))
        return 1

    def constant(a: AxisInfo, b: AxisInfo) -> int | None:
        c = _both(a, b)
        return _trunc_div(*c) if c is not None and c[1] else None

    return _binary(x, contiguity, divisibility, constant, constancy)


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as arith.divsi (and C++) do."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@rule("arith.remsi", "arith.remui")
def _rem(x: RuleInput) -> AxisInfo | None:
    def contiguity(a: AxisInfo, b: AxisInfo, d: int) -> int:
        if x.shape and _contiguous_dim(x, a, d) and _constant_dim(x, b, d):
            return gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d])
        return 1

    def divisibility(a: AxisInfo, b: AxisInfo, d: int) -> int:
        return gcd(a.divisibility[d], b.divisibility[d]) if b.constancy[d] > 1 else 1

    def constancy(a: AxisInfo, b: AxisInfo, d: int) -> int:
        if x.shape and b.constant == 1:
            return x.size(d)
        return gcd(a.constancy[d], b.constancy[d])

    def constant(a: AxisInfo, b: AxisInfo) -> int | None:
        if (c := _both(a, b)) is not None and c[1]:
            return c[0] - c[1] * _trunc_div(*c)
        return 0 if b.constant == 1 else None

    return _binary(x, contiguity, divisibility, constant, constancy)


@rule("tt.splat")
def _splat(x: RuleInput) -> AxisInfo | None:
    src = x.args[0].info if x.args else AxisInfo.pessimistic(1)
    return AxisInfo((1,) * x.rank, (src.divisibility[0],) * x.rank, x.constancy_of_constant(), src.constant)


@rule("tt.expand_dims")
def _expand_dims(x: RuleInput) -> AxisInfo | None:
    if not x.args:
        return None
    src, axis = x.args[0].info, x.view.int_attr("axis") or 0
    if src.constant is not None:
        new_div = pow2_divisor(src.constant)
    else:  # a range [2^n, 2^n+1, …] counts as divisibility 1 across the new axis
        new_div = gcd(*(1 if src.contiguity[d] > 1 else src.divisibility[d] for d in range(src.rank)))

    def insert(t: tuple[int, ...], v: int) -> tuple[int, ...]:
        return (*t[:axis], v, *t[axis:])

    return AxisInfo(
        insert(src.contiguity, 1), insert(src.divisibility, new_div), insert(src.constancy, 1), src.constant
    )


@rule("tt.broadcast")
def _broadcast(x: RuleInput) -> AxisInfo | None:
    if not x.args:
        return None
    src, shape = x.args[0].info, x.args[0].shape
    if src.rank != x.rank:
        return None
    grown = [d < len(shape) and shape[d] == 1 for d in range(x.rank)]
    return AxisInfo(
        tuple(1 if grown[d] else src.contiguity[d] for d in range(x.rank)),
        src.divisibility,
        tuple(x.size(d) if grown[d] else src.constancy[d] for d in range(x.rank)),
        src.constant,
    )


_PREDICATE = re.compile(r"arith\.cmpi (\w+),")
_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b,
    "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b,
    "uge": lambda a, b: a >= b,
}


@rule("arith.cmpi")
def _cmpi(x: RuleInput) -> AxisInfo | None:
    """A mask's constancy is what caps the vector width of a masked access (getMaskAlignment)."""
    if not x.shape or len(x.args) < 2:
        return None  # a scalar comparison: Triton does not track it
    m = _PREDICATE.search(x.view.body)
    pred = m.group(1) if m else "eq"
    a, b = x.args[0].info, x.args[1].info
    if a.rank != b.rank:
        return None
    constancy, value = [], None
    for d in range(x.rank):
        if (c := _both(a, b)) is not None:
            hint = x.size(d)
            value = int(_COMPARE.get(pred, _COMPARE["eq"])(*c))
        else:
            hint = gcd(a.constancy[d], b.constancy[d])
            if pred[1:] in ("gt", "le") and _constant_dim(x, a, d):  # splat ⋚ range: one switch per run
                hint = max(hint, gcd(b.contiguity[d], a.divisibility[d], b.divisibility[d]))
            elif pred[1:] in ("lt", "ge") and _constant_dim(x, b, d):  # range ⋚ splat, as in `offs < n`
                hint = max(hint, gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d]))
        constancy.append(hint)
    return AxisInfo((1,) * x.rank, (1,) * x.rank, tuple(constancy), value)


@rule("arith.andi", "arith.ori", "arith.xori")
def _logical(x: RuleInput) -> AxisInfo | None:
    ops = {"arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b}
    fn = ops[x.view.name]
    return _binary(
        x,
        lambda a, b, d: 1,
        lambda a, b, d: 1,
        lambda a, b: fn(*c) if (c := _both(a, b)) is not None else None,
    )


@rule("arith.select")
def _select(x: RuleInput) -> AxisInfo | None:
    if len(x.args) < 3:
        return None
    cond, a, b = x.args[0], x.args[1].info, x.args[2].info
    if a.rank != b.rank:
        return None
    if cond.info.constant is not None:
        return b if cond.info.constant == 0 else a
    scalar_cond = not cond.shape
    rank = a.rank
    cons = tuple(
        gcd(a.constancy[d], b.constancy[d], *(() if scalar_cond else (cond.info.constancy[d],))) for d in range(rank)
    )
    cont = tuple(
        gcd(a.contiguity[d], b.contiguity[d], *(() if scalar_cond else (cond.info.constancy[d],))) for d in range(rank)
    )
    div = tuple(_join_divisibility(a, b, d) for d in range(rank))
    value = a.constant if a.constant is not None and a.constant == b.constant else None
    if value is not None:
        cons = x.constancy_of_constant()
    return AxisInfo(cont, div, cons, value)


@rule("arith.shli")
def _shl(x: RuleInput) -> AxisInfo | None:
    def divisibility(a: AxisInfo, b: AxisInfo, d: int) -> int:
        shift = b.constant or 0
        da = 1 if a.contiguity[d] > 1 and shift else a.divisibility[d]
        return _mul_divisor(da, 1 << min(shift, 62))

    return _binary(
        x,
        lambda a, b, d: a.contiguity[d] if b.constant == 0 else 1,
        divisibility,
        lambda a, b: c[0] << c[1] if (c := _both(a, b)) is not None and c[1] >= 0 else None,
    )


@rule("arith.shrui", "arith.shrsi")
def _shr(x: RuleInput) -> AxisInfo | None:
    def divisibility(a: AxisInfo, b: AxisInfo, d: int) -> int:
        if b.constant is None:
            return 1
        da = 1 if a.contiguity[d] > 1 and b.constant else a.divisibility[d]
        return max(1, da >> min(b.constant, 62))

    return _binary(
        x,
        lambda a, b, d: a.contiguity[d] if b.constant == 0 else 1,
        divisibility,
        lambda a, b: c[0] >> c[1] if (c := _both(a, b)) is not None and c[1] >= 0 else None,
    )


@rule("arith.maxsi", "arith.maxui", "arith.minsi", "arith.minui")
def _max_min(x: RuleInput) -> AxisInfo | None:
    if len(x.args) < 2:
        return None
    a, b = x.args[0].info, x.args[1].info
    if a.rank != b.rank:
        return None
    if (c := _both(a, b)) is not None:
        value = max(c) if "max" in x.view.name else min(c)
        return AxisInfo((1,) * a.rank, (pow2_divisor(value),) * a.rank, x.constancy_of_constant(), value)
    return AxisInfo(
        tuple(gcd(a.contiguity[d], b.contiguity[d]) for d in range(a.rank)),
        tuple(_join_divisibility(a, b, d) for d in range(a.rank)),
        tuple(gcd(a.constancy[d], b.constancy[d]) for d in range(a.rank)),
    )


@rule("tt.load")
def _load(x: RuleInput) -> AxisInfo | None:
    """Loaded values are data: only runs of equal pointers (and mask bits) carry over as runs of equal values."""
    if not x.args:
        return None
    ptr = x.args[0].info
    mask = x.args[1].info if len(x.args) > 1 and x.args[1].info.rank == ptr.rank else None
    return AxisInfo(
        (1,) * ptr.rank,
        (1,) * ptr.rank,
        tuple(gcd(ptr.constancy[d], mask.constancy[d] if mask else 0) for d in range(ptr.rank)),
    )


_ORDER = re.compile(r"order = array<i32: ([\d, ]+)>")


@rule("tt.trans")
def _trans(x: RuleInput) -> AxisInfo | None:
    m = _ORDER.search(x.view.body)
    if not x.args or m is None:
        return None
    src, order = x.args[0].info, [int(v) for v in m.group(1).split(",")]
    if len(order) != src.rank:
        return None
    return AxisInfo(
        tuple(src.contiguity[o] for o in order),
        tuple(src.divisibility[o] for o in order),
        tuple(src.constancy[o] for o in order),
        src.constant,
    )


def _with_hints(info: AxisInfo, hints: dict[str, tuple[int, ...]]) -> AxisInfo:
    """tt.contiguity / tt.divisibility / tt.constancy on an op override what the rules derived."""
    if not hints:
        return info

    def pick(key: str, current: tuple[int, ...]) -> tuple[int, ...]:
        v = hints.get(key)
        if v is None:
            return current
        return v if len(v) == len(current) else (v[0],) * len(current)

    return AxisInfo(
        pick("contiguity", info.contiguity),
        pick("divisibility", info.divisibility),
        pick("constancy", info.constancy),
        info.constant,
    )


# ---------------------------------------------------------------------------------------------- analysis

_FUNC_ARG = re.compile(r"%([\w$.-]+): ")
_FOR = re.compile(r"scf\.for (%[\w$.-]+) = (%[\w$.#-]+) to (%[\w$.#-]+) step (%[\w$.#-]+)")
_ASSIGNED = re.compile(r"(%[\w$.-]+) = (%[\w$.#-]+)")
_BLOCK_ARG = re.compile(r"(%[\w$.-]+):")
_REGION_OPS = {"scf.for", "scf.while", "scf.if", "scf.execute_region", "scf.index_switch"}


@dataclass
class Analysis:
    """AxisInfo of every SSA value of a module's functions (by key, see OpView), and each value's op."""

    module: ParsedModule
    views: list[OpView]
    facts: dict[str, Fact] = field(default_factory=dict)
    defs: dict[str, OpView] = field(default_factory=dict)  # key → defining op
    args: dict[str, OpView] = field(default_factory=dict)  # function argument key → the tt.func op
    # a region's block argument or result → the values that flow into it (initial values, yields, the
    # values scf.condition forwards): it holds what holds for all of them
    flows: dict[str, list[str]] = field(default_factory=dict)
    entries: dict[int, list[str]] = field(default_factory=dict)  # op line → the flow targets it sets

    def fact(self, key: str) -> Fact:
        """A value's fact; values the analysis never derived (unmodelled block arguments) are pessimistic."""
        return self.facts.get(key) or Fact(AxisInfo.pessimistic(1), ())


def name_of(key: str) -> str:
    """`%n_cols@3` → n_cols: a value as the kernel's author named it."""
    return key.split("@", 1)[0].lstrip("%")


def _result_names(op: Op) -> list[str]:
    """`%r` → [%r]; `%r:3` → [%r#0, %r#1, %r#2]."""
    out = []
    for r in op.results:
        name, _, count = r.partition(":")
        out.extend([f"{name}#{i}" for i in range(int(count))] if count else [name])
    return out


def _bind(module: ParsedModule, lines: list[str]) -> tuple[list[OpView], dict[int, list[list[str]]]]:
    """Views of every op with each name resolved to the definition visible there. In text order the latest
    definition of a name is the visible one: the printer never lets a region shadow a name it can see.
    Also: each region op's labelled blocks (`^bb0(%a: …)`, as in scf.while's `do` region) → argument keys."""
    ops = {op.line_no: op for op in module.ops}
    current: dict[str, str] = {}
    views: list[OpView] = []
    labels: dict[int, list[list[str]]] = {}
    pending: list[str] | None = None  # a label's arguments, waiting for the op that shows whose region it is
    for i, raw in enumerate(lines, start=1):
        text = raw.strip()
        if text.startswith("^"):  # a block label binds its arguments
            pending = [f"{n}@{i}" for n in _BLOCK_ARG.findall(text)]
            current.update({k.split("@")[0]: k for k in pending})
            continue
        op = ops.get(i)
        if op is None:
            continue
        if pending is not None and op.parent is not None:
            labels.setdefault(op.parent.line_no, []).append(pending)
        pending = None
        used = _VALUE.findall(text.split(" loc(", 1)[0])
        view = OpView(op, text, {n: current[n] for n in used if n in current})
        names = _result_names(op)
        if op.name == "tt.func":
            names += [f"%{n}" for n in _FUNC_ARG.findall(text.split(") attributes", 1)[0])]
        elif op.name == "scf.for" and (m := _FOR.search(text)):
            names += [m.group(1), *(arg for arg, _ in _iter_args(text))]
        elif op.name == "scf.while":
            names += [arg for arg, _ in _while_args(text)]
        view.defined = {n: f"{n}@{i}" for n in names}
        current.update(view.defined)
        views.append(view)
    return views, labels


def _iter_args(line: str) -> list[tuple[str, str]]:
    """scf.for's `iter_args(%acc = %init, …)` as (block argument, initial value) name pairs."""
    if "iter_args(" not in line:
        return []
    return _ASSIGNED.findall(line.split("iter_args(", 1)[1].split(") ->", 1)[0])


def _while_args(line: str) -> list[tuple[str, str]]:
    """scf.while's `(%arg = %init, …)` as (before-region argument, initial value) name pairs."""
    head = line.split("scf.while", 1)[1]
    return _ASSIGNED.findall(head.split(")", 1)[0]) if "(" in head.split(":", 1)[0] else []


def _region_flows(a: Analysis, labels: dict[int, list[list[str]]]) -> None:
    """RegionBranchOpInterface, as MLIR's solver follows it: what flows into each block argument and result,
    and where in the text each is set: a region's arguments at its op (loop-carried values join what the
    previous sweep yielded), the results at the terminator that last yields them, as the solver sets them when
    it visits the terminators; scf.while's `do` arguments and results at the scf.condition forwarding them."""

    def flow(at: OpView, key: str, sources: list[str]) -> None:
        a.flows[key] = sources
        a.entries.setdefault(at.op.line_no, []).append(key)

    terminators: dict[int, list[OpView]] = {}  # region op's line → its scf.yield / scf.condition ops
    for view in a.views:
        if view.name in ("scf.yield", "scf.condition") and view.op.parent is not None:
            terminators.setdefault(view.op.parent.line_no, []).append(view)
    for view in a.views:
        if view.name not in _REGION_OPS:
            continue
        ends = terminators.get(view.op.line_no, [])
        yields = [t.operands for t in ends if t.name == "scf.yield"]
        results = view.results
        if view.name == "scf.for":
            for i, (arg, init) in enumerate(_iter_args(view.line)):
                sources = [view.key(init), *(y[i] for y in yields if i < len(y))]
                flow(view, view.key(arg), sources)
                if i < len(results):
                    flow(ends[-1] if ends else view, results[i], sources)
        elif view.name == "scf.while":
            for i, (arg, init) in enumerate(_while_args(view.line)):
                flow(view, view.key(arg), [view.key(init), *(y[i] for y in yields if i < len(y))])
            after = labels.get(view.op.line_no, [[]])[-1]
            for condition in (t for t in ends if t.name == "scf.condition"):
                for i, value in enumerate(condition.operands[1:]):
                    for targets in (after, results):
                        if i < len(targets):
                            flow(condition, targets[i], [value])
        else:
            for i, key in enumerate(results):
                flow(ends[-1] if ends else view, key, [y[i] for y in yields if i < len(y)])


def analyze(text: str) -> Analysis:
    """Run the analysis over a TTIR or TTGIR module's text."""
    module = parse_mlir(text)
    views, labels = _bind(module, text.splitlines())
    a = Analysis(module, views)
    for view in a.views:
        if view.name == "tt.func":
            _function_args(a, view)
        a.defs.update({key: view for key in view.results})
    _region_flows(a, labels)
    for _ in range(MAX_SWEEPS):
        before = dict(a.facts)
        _sweep(a)
        if a.facts == before:
            break
    return a


def _function_args(a: Analysis, view: OpView) -> None:
    """Arguments start from their attributes: `tt.divisibility = 16` is what the JIT specialized."""
    header = view.line.split(") attributes", 1)[0]
    starts = list(_FUNC_ARG.finditer(header))
    for i, m in enumerate(starts):
        chunk = header[m.end() : starts[i + 1].start() if i + 1 < len(starts) else len(header)]
        hints: dict[str, tuple[int, ...]] = {}
        for key in ("contiguity", "divisibility", "constancy"):
            if h := re.search(rf"tt\.{key} = (\d+)", chunk):
                hints[key] = (int(h.group(1)),)
        type_text = chunk.split(" {", 1)[0].split(" loc(", 1)[0]
        found = tensor_types(type_text) if type_text.startswith("tensor<") else []
        shape = found[0].shape if found else ()
        info = _with_hints(AxisInfo.pessimistic(max(len(shape), 1)), hints)
        key = view.key(f"%{m.group(1)}")
        a.facts[key] = Fact(info, shape, "!tt.ptr" in type_text)
        a.args[key] = view


def _sweep(a: Analysis) -> None:
    """One pass over every op in text order. A region's block arguments and results take the join of what
    flows into them so far (values defined later in the text, as yields are, from the previous sweep), so
    repeating sweeps until nothing changes reaches the fixpoint MLIR's solver reaches."""
    for view in a.views:
        op = view.op
        _flow_into(a, view)
        if op.name in _REGION_OPS or not op.results:
            continue
        shape = view.result_shape
        fn = RULES.get(op.name)
        info = fn(RuleInput(view, [a.fact(v) for v in view.operands], shape)) if fn else None
        rank = max(len(shape), 1)
        if info is None or info.rank != rank:
            info = AxisInfo.pessimistic(rank)
        info = _with_hints(info, view.hints)
        for key in view.results:
            a.facts[key] = Fact(info, shape, view.result_is_pointer)


def _join(a: Fact | None, b: Fact | None) -> Fact | None:
    if a is None or b is None:
        return a or b
    return Fact(a.info.join(b.info), a.shape, a.pointer)


def _flow_into(a: Analysis, view: OpView) -> None:
    """The block arguments and results set at this op, each the join of what flows in so far; at scf.for,
    the induction variable, divisible by gcd(lower bound, step)."""
    if view.name == "scf.for" and (m := _FOR.search(view.line)):
        iv, lb, _, step = m.groups()
        div = gcd(a.fact(view.key(lb)).info.divisibility[0], a.fact(view.key(step)).info.divisibility[0])
        a.facts[view.key(iv)] = Fact(AxisInfo((1,), (div,), (1,)), ())
    for key in a.entries.get(view.op.line_no, []):
        joined: Fact | None = None
        for source in a.flows[key]:
            joined = _join(joined, a.facts.get(source))
        if joined is not None:
            a.facts[key] = joined
