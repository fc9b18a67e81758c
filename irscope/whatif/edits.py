"""The edits a what-if compile applies: an argument attribute, a compile option, a constexpr, a dot's input
precision.

Each is written as on the command line (`lda:divisibility=16`, `num_stages=4`, `BLOCK_M=64`, `tf32`), parses into a
frozen value, and prints back the same way, so an error or a record names the edit exactly as it was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irscope.capture.specialize import SpecError, parse_value

# Kernel-argument attributes Triton's AxisInfo analysis reads from the function signature
# (AxisInfo::getPessimisticValueState → initPessimisticStateFromFunc): the facts the JIT derives from values.
ARG_ATTRS = ("divisibility", "contiguity", "constancy")
# tt.dot's InputPrecision enum (TritonAttrDefs.td), as its assembly format prints it; which of them a target
# accepts is the backend's allowed_dot_input_precisions, checked where the backend is known (whatif.run).
DOT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")


class WhatIfError(ValueError):
    """An edit the compile cannot honour, or a trajectory it cannot start from; the message names the edit."""


@dataclass(frozen=True)
class ArgAttr:
    """`tt.<attr> = value` on the kernel argument `name`."""

    name: str
    attr: str
    value: int

    @classmethod
    def parse(cls, text: str) -> ArgAttr:
        name, sep, rest = text.partition(":")
        attr, eq, value = rest.partition("=")
        attr = attr.strip().removeprefix("tt.")
        if not sep or not eq or not name.strip():
            raise WhatIfError(f"--arg-attr {text!r}: expected NAME:ATTR=VALUE, e.g. lda:divisibility=16")
        if attr not in ARG_ATTRS:
            raise WhatIfError(f"--arg-attr {text!r}: unknown attribute {attr!r}; Triton reads {', '.join(ARG_ATTRS)}")
        try:
            n = int(value.strip(), 0)
        except ValueError:
            raise WhatIfError(f"--arg-attr {text!r}: {value.strip()!r} is not an integer") from None
        if n < 1 or n & (n - 1):
            raise WhatIfError(f"--arg-attr {text!r}: {attr} must be a positive power of two, got {n}")
        return cls(name.strip(), attr, n)

    @property
    def attribute(self) -> str:
        return f"tt.{self.attr}"

    def __str__(self) -> str:
        return f"{self.name}:{self.attr}={self.value}"


@dataclass(frozen=True)
class OptionEdit:
    """A compile option (num_warps, num_stages, maxnreg, …) set to `value`."""

    name: str
    value: Any

    @classmethod
    def parse(cls, text: str) -> OptionEdit:
        name, value = _pair(text, "--option", "num_stages=4")
        return cls(name, value)

    def __str__(self) -> str:
        return f"{self.name}={_show(self.value)}"


@dataclass(frozen=True)
class ConstexprEdit:
    """A tl.constexpr parameter re-specialized to `value` (a recompile from the kernel's source)."""

    name: str
    value: Any

    @classmethod
    def parse(cls, text: str) -> ConstexprEdit:
        name, value = _pair(text, "--constexpr", "BLOCK_M=64")
        return cls(name, value)

    def __str__(self) -> str:
        return f"{self.name}={_show(self.value)}"


@dataclass(frozen=True)
class DotPrecision:
    """`inputPrecision = value` on every tt.dot of the kernel (how fp32 operands may use the tensor cores)."""

    value: str

    @classmethod
    def parse(cls, text: str) -> DotPrecision:
        value = text.strip().lower()
        if value not in DOT_PRECISIONS:
            raise WhatIfError(
                f"--dot-precision {text!r}: not an input precision of tt.dot; one of {', '.join(DOT_PRECISIONS)}"
            )
        return cls(value)

    def __str__(self) -> str:
        return f"dot-precision={self.value}"


Edit = ArgAttr | OptionEdit | ConstexprEdit | DotPrecision
KINDS: dict[type, str] = {
    ArgAttr: "arg-attr",
    OptionEdit: "option",
    ConstexprEdit: "constexpr",
    DotPrecision: "dot-precision",
}


@dataclass(frozen=True)
class Applied:
    """One edit and exactly where it took effect: "tt.divisibility = 16 added to %lda (lda) in ttir line 12"."""

    edit: Edit
    where: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": KINDS[type(self.edit)], "edit": str(self.edit), "where": self.where}


def _pair(text: str, flag: str, example: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise WhatIfError(f"{flag} {text!r}: expected NAME=VALUE, e.g. {example}")
    try:
        return name.strip(), parse_value(value)
    except SpecError:
        return name.strip(), value.strip()  # a string option (an input precision, an arch)


def _show(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def parse_edits(
    arg_attrs: list[str | ArgAttr] | tuple[str | ArgAttr, ...] = (),
    options: list[str | OptionEdit] | tuple[str | OptionEdit, ...] = (),
    constexprs: list[str | ConstexprEdit] | tuple[str | ConstexprEdit, ...] = (),
    dot_precision: str | DotPrecision | None = None,
) -> list[Edit]:
    """Edits as given (strings or values), parsed, in the order arg attributes, options, constexprs, the dot
    precision."""
    out: list[Edit] = [a if isinstance(a, ArgAttr) else ArgAttr.parse(a) for a in arg_attrs]
    out += [o if isinstance(o, OptionEdit) else OptionEdit.parse(o) for o in options]
    out += [c if isinstance(c, ConstexprEdit) else ConstexprEdit.parse(c) for c in constexprs]
    if dot_precision is not None:
        out.append(dot_precision if isinstance(dot_precision, DotPrecision) else DotPrecision.parse(dot_precision))
    return out
