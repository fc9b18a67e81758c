"""MLIR type text → tensor shapes, element widths and encodings (for bytes moved and encodings in use)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_ENCODING = r"#[\w.$-]+(?:<[^<>]*(?:<[^<>]*>[^<>]*)*>)?"  # an alias or an inline attribute, one level of nesting
_TENSOR = re.compile(rf"tensor<([\dx]*?)x?(!tt\.ptr<[^>]+>|[a-z]+\d*)(?:,\s*({_ENCODING}))?>")
_BITS = re.compile(r"^[a-z]+(\d+)")


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    element: str  # f32, i1, !tt.ptr<f16>, …
    encoding: str | None  # alias (#blocked1) or inline attribute (#ttg.slice<…>)

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    @property
    def element_bits(self) -> int:
        if self.element.startswith("!tt.ptr"):
            return 64
        if self.element in ("f8E4M3FN", "f8E5M2") or self.element.startswith("f8"):
            return 8
        m = _BITS.match(self.element)
        return int(m.group(1)) if m else 32

    @property
    def bytes(self) -> int:
        return self.numel * max(self.element_bits, 8) // 8


def tensor_types(text: str) -> list[TensorType]:
    out = []
    for m in _TENSOR.finditer(text):
        dims = tuple(int(d) for d in m.group(1).split("x") if d)  # a 0-d tensor (`tensor<f32>`): ()
        out.append(TensorType(dims, m.group(2), m.group(3)))
    return out


def result_type(op_text: str) -> TensorType | None:
    """The last tensor type on an op line: the result type for `a : T1 -> T2`, the only type otherwise."""
    # equivalent mutants of the split: a location (`loc(#loc12)`, a variable's name) names no tensor type
    types = tensor_types(op_text.split(" loc(", 1)[0])  # pragma: no mutate (equivalent, see above)
    return types[-1] if types else None


def encoding_kind(encoding: str | None) -> str | None:
    """The kind of a tensor's encoding, named by its outermost attribute: #blocked3 → blocked, #mma → mma,
    #ttg.dot_op<…> → dot_op, #ttg.slice<{…, parent = #mma}> → slice (whatever its parent), #linear → linear; None for
    no encoding and for a kind no counter has.

    Triton names each alias after its kind (its dialect's getAlias: #blocked, #mma for NVIDIA's and AMD's MMA
    layouts alike, #linear, and #shared, which only a `!ttg.memdesc` carries) and prints the other kinds inline by
    name, so the name before the first `<` says the kind; an alias's definition adds nothing."""
    if encoding is None:
        return None
    outermost = encoding.partition("<")[0]
    return next((kind for kind in ("dot_op", "mma", "slice", "linear", "blocked") if kind in outermost), None)
