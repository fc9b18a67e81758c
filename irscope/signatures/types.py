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
        dims = tuple(int(d) for d in m.group(1).split("x") if d) if m.group(1) else ()
        out.append(TensorType(dims, m.group(2), m.group(3)))
    return out


def result_type(op_text: str) -> TensorType | None:
    """The last tensor type on an op line: the result type for `a : T1 -> T2`, the only type otherwise."""
    # equivalent mutants of the split: a location (`loc(#loc12)`, a variable's name) names no tensor type
    types = tensor_types(op_text.split(" loc(", 1)[0])  # pragma: no mutate (equivalent, see above)
    return types[-1] if types else None


def encoding_kind(encoding: str | None, aliases: dict[str, str]) -> str | None:
    """#blocked3 → blocked, #ttg.nvidia_mma<…> → mma, #ttg.dot_op<…> → dot_op, … (None for no encoding)."""
    if encoding is None:
        return None
    # equivalent mutants of the split: an alias (#blocked3) has no `<`, and the name before the `<` of an attribute
    # printed inline (#ttg.slice) is no alias: either way the lookup gives the same name
    alias = encoding.split("<", 1)[0]  # pragma: no mutate (equivalent, see above)
    name = aliases.get(alias, encoding)
    for key, kind in (
        ("dot_op", "dot_op"),
        ("mma", "mma"),
        ("mfma", "mma"),  # AMD's WMMA (#ttg.amd_wmma) is an "mma" above
        ("slice", "slice"),
        ("linear", "linear"),
        ("shared", "shared"),
        ("blocked", "blocked"),
    ):
        if key in name:
            return kind
    return "other"
