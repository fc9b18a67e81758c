"""TritonGPU tensor layouts as TTGIR prints them: the fields of a blocked layout (through slice layouts and the
module's `#alias = …` definitions), which decide how elements, threads and warps map onto a tensor."""

from __future__ import annotations

import re

_LIST = re.compile(r"(\w+) = \[([\d, ]*)\]")
_SLICE = re.compile(r"#ttg\.slice<\{dim = (\d+), parent = (#[\w.$-]+(?:<.*>)?)\}>")
_TENSOR = re.compile(r"tensor<([\dx]+)x[\w!.<>]+?(?:,\s*(#[\w.$-]+(?:<[^>]*>)?))?>")


def blocked(encoding: str, aliases: dict[str, str]) -> dict[str, list[int]] | None:
    """sizePerThread, threadsPerWarp, warpsPerCTA, order of a blocked layout (a slice of one drops its `dim`);
    None for other layouts (MMA, linear, shared)."""
    definition = aliases.get(encoding, encoding)
    if m := _SLICE.fullmatch(definition):
        parent = blocked(m.group(2), aliases)
        if parent is None:
            return None
        dim = int(m.group(1))
        out = {k: [x for i, x in enumerate(v) if i != dim] for k, v in parent.items() if k != "order"}
        out["order"] = [o - (o > dim) for o in parent["order"] if o != dim]
        return out
    if "blocked<" not in definition:
        return None
    return {k: [int(x) for x in v.split(",") if x.strip()] for k, v in _LIST.findall(definition)}


def tensor_encodings(text: str) -> list[tuple[tuple[int, ...], str | None]]:
    """(shape, encoding alias) of every ranked tensor type in `text`, in order."""
    return [(tuple(int(d) for d in m.group(1).split("x")), m.group(2)) for m in _TENSOR.finditer(text)]
