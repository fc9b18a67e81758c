"""Does a gate apply to a compile target (irscope.targets.Target)? Its guards, evaluated on what the target fixes.

A gate quoted for sm_90 is misleading when it sits in a `version == 5` branch (Blackwell's tensor cores), behind
`computeCapability >= 100`, `isCDNA(…)`, or in an AMD-only file. The guards a gate records
(`compiler_index.model.Gate.guards`: enclosing branches and earlier exits) are C++ expressions; this module
evaluates the simple ones in three-valued logic:

* the compute capability (`computeCapability`, `capability`) of a CUDA target;
* the NVIDIA MMA version (`version`, `versionMajor`, `mmaVersion`, `….getVersionMajor()`, `isHopper()`,
  `isAmpere()`, `isVolta()`), which a capability does not fix but bounds: sm_90 tries v3 and falls back to v2
  (AccelerateMatmul.cpp, getMMAVersionSafe), so `version == 5` is false there and `version == 3` may hold;
* the AMD ISA family (`getISAFamily()`, `deduceISAFamily(arch)`, `ISAFamily::CDNA3`, `isCDNA(…)`, `isRDNA(…)`);
* integer literals, `true`/`false`, `! && || == != < <= > >= + - * / %` and parentheses.

Anything else (a type test, a tensor shape) is unknown, and so is a guard that uses it. `gate_applies` says
"no" only when some guard is false for every MMA version the target may use, "yes" when all are true, else
"unknown". Files of one backend (third_party/amd/, third_party/nvidia/, the TritonNVIDIAGPU dialect: the folders
its adapter names) apply to that backend only. The capability, MMA versions and ISA family are the target's own
(its machine, irscope.backends); this module keeps no table of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from irscope.backends import ADAPTERS
from irscope.targets import Target

if TYPE_CHECKING:
    from compiler_index.queries import GateInfo

YES, NO, UNKNOWN = "yes", "no", "unknown"


def file_applies(path: str, target: Target) -> bool:
    """False for a file only another backend's compiles run (third_party/amd/ for a CUDA target, …): the folders
    each backend's adapter names as its own (irscope.backends)."""
    return all(
        backend == target.backend
        for backend, adapter in ADAPTERS.items()
        if any(path.startswith(prefix) for prefix in adapter.own_sources)
    )


def gate_applies(gate: GateInfo, target: Target) -> str:
    """YES, NO or UNKNOWN: can a compile for `target` reach this gate?"""
    if not file_applies(gate.loc.file, target):
        return NO
    return guards_hold(gate.guards, target)


def for_target(gates: list[GateInfo], target: Target) -> tuple[list[GateInfo], int]:
    """The gates a compile for `target` may reach, each with `applies` set (YES or UNKNOWN), and how many were
    left out because their guards contradict the target."""
    kept = [replace(g, applies=a) for g in gates if (a := gate_applies(g, target)) != NO]
    return kept, len(gates) - len(kept)


def guards_hold(guards: list[str], target: Target) -> str:
    """All of `guards` together, for every MMA version the target may use: YES, NO or UNKNOWN."""
    outcomes = set()
    for mma in target.mma_versions or (None,):
        facts = _Facts(target, mma)
        value: bool | None = True
        for g in guards:
            value = _and(value, _evaluate(g, facts))
            if value is False:
                break
        outcomes.add(value)
    if outcomes == {True}:
        return YES
    if outcomes == {False}:
        return NO
    return UNKNOWN


# ---- evaluation ----------------------------------------------------------------------------------------------------
Value = bool | int | str | None  # None: unknown


@dataclass(frozen=True)
class _Facts:
    target: Target
    mma: int | None  # the MMA version assumed for this evaluation (CUDA)

    def name(self, chain: str) -> Value:
        """What a name, member chain or call means on the target (None: nothing known)."""
        last = re.sub(r"[(<\[].*$", "", re.split(r"::|\.|->", _outside_brackets(chain))[-1])
        cuda = self.target.backend == "cuda"
        family = self.target.isa_family
        if chain in ("true", "false"):
            return chain == "true"
        if last in ("computeCapability", "capability", "getComputeCapability"):
            return self.target.capability if cuda else None
        if last in ("version", "versionMajor", "mmaVersion", "getVersionMajor"):
            return self.mma if cuda else None
        if last in ("isVolta", "isAmpere", "isHopper") and chain.endswith(")"):
            return (self.mma == {"isVolta": 1, "isAmpere": 2, "isHopper": 3}[last]) if cuda else False
        if "ISAFamily::" in chain:
            return chain.rsplit("::", 1)[1]
        if last in ("getISAFamily", "deduceISAFamily", "isaFamily"):
            return family
        if last in ("isCDNA", "isRDNA") and chain.endswith(")"):
            return family is not None and family.startswith(last[2:]) if not cuda else False
        return None


def _outside_brackets(chain: str) -> str:
    """`isCDNA(t.getISAFamily())` → `isCDNA()`: what is inside call, template and index brackets dropped."""
    out, depth = [], 0
    for ch in chain.replace("->", "."):
        if ch in ")>]":
            depth -= 1
        if depth == 0:
            out.append(ch)
        if ch in "(<[":
            depth += 1
    return "".join(out)


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+)[uUlL]*|(?P<op>\|\||&&|==|!=|<=|>=|[!<>+\-*/%()])|(?P<name>[A-Za-z_][\w]*(?:(?:::|\.|->)[A-Za-z_][\w]*)*))"
)


_MEMBER = re.compile(r"(?:::|\.|->)[A-Za-z_]\w*")


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    """(kind, text): num, op, name; a name takes its call arguments, indices, template arguments and the members
    after them along (`x.getType().getRank()` is one name)."""
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None or m.end() == i:
            if text[i:].strip():
                raise _Unparsable(text[i:])
            return
        i = m.end()
        if m.group("num"):
            yield "num", m.group("num")
        elif m.group("op"):
            yield "op", m.group("op")
        else:
            name = m.group("name")
            while i < len(text):
                end = _closing(text, i) if text[i] in "(<[" else None
                member = _MEMBER.match(text, i) if end is None else None
                if end is not None:
                    name, i = name + text[i : end + 1], end + 1
                elif member is not None:
                    name, i = name + member.group(0), member.end()
                else:
                    break
            yield "name", name


def _closing(text: str, start: int) -> int | None:
    """Index of the bracket closing text[start] (`(`, `[` or a template `<`), None when it is not one."""
    pairs = {"(": ")", "[": "]", "<": ">"}
    opening, closing = text[start], pairs[text[start]]
    depth = 0
    for j in range(start, len(text)):
        ch = text[j]
        if opening == "<" and ch in "()|&;=":
            return None  # a comparison, not a template argument list
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                if opening == "<" and not re.match(r"\s*(?:\(|::)", text[j + 1 :]):
                    return None
                return j
    return None


class _Unparsable(ValueError):
    pass


class _Parser:
    """Recursive descent over C++'s precedence: || < && < ! < comparison < + - < * / %."""

    def __init__(self, text: str, facts: _Facts):
        self.toks = list(_tokens(text))
        self.i = 0
        self.facts = facts

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) and self.toks[self.i][0] == "op" else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise _Unparsable("end of expression")
        self.i += 1
        return self.toks[self.i - 1]

    def parse(self) -> Value:
        v = self.disjunction()
        if self.i != len(self.toks):
            raise _Unparsable(self.toks[self.i][1])
        return v

    def disjunction(self) -> Value:
        v = self.conjunction()
        while self.peek() == "||":
            self.take()
            v = _or(_truth(v), _truth(self.conjunction()))
        return v

    def conjunction(self) -> Value:
        v = self.negation()
        while self.peek() == "&&":
            self.take()
            v = _and(_truth(v), _truth(self.negation()))
        return v

    def negation(self) -> Value:
        if self.peek() == "!":
            self.take()
            t = _truth(self.negation())
            return None if t is None else not t
        return self.comparison()

    def comparison(self) -> Value:
        v = self.additive()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            v = _compare(op, v, self.additive())
        return v

    def additive(self) -> Value:
        v = self.multiplicative()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            v = _arith(op, v, self.multiplicative())
        return v

    def multiplicative(self) -> Value:
        v = self.primary()
        while self.peek() in ("*", "/", "%"):
            op = self.take()[1]
            v = _arith(op, v, self.primary())
        return v

    def primary(self) -> Value:
        kind, text = self.take()
        if kind == "num":
            return int(text)
        if kind == "name":
            return self.facts.name(text)
        if text == "(":
            v = self.disjunction()
            if self.take()[1] != ")":
                raise _Unparsable("(")
            return v
        if text == "-":
            v = self.primary()
            return -v if isinstance(v, int) and not isinstance(v, bool) else None
        raise _Unparsable(text)


@lru_cache(maxsize=8192)  # the same guard text recurs across gates and queries (explain: one per changed op)
def _evaluate(text: str, facts: _Facts) -> bool | None:
    try:
        return _truth(_Parser(text, facts).parse())
    except _Unparsable:
        return None


def _truth(v: Value) -> bool | None:
    if v is None or isinstance(v, str):
        return None
    return bool(v)


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def _compare(op: str, a: Value, b: Value) -> bool | None:
    if a is None or b is None or isinstance(a, str) != isinstance(b, str):
        return None
    if isinstance(a, str) and op not in ("==", "!="):
        return None
    return {
        "==": a == b,
        "!=": a != b,
        "<": a < b,  # type: ignore[operator]
        "<=": a <= b,  # type: ignore[operator]
        ">": a > b,  # type: ignore[operator]
        ">=": a >= b,  # type: ignore[operator]
    }[op]


def _arith(op: str, a: Value, b: Value) -> int | None:
    if not (isinstance(a, int) and isinstance(b, int)) or isinstance(a, bool) or isinstance(b, bool):
        return None
    if op in "/%" and b == 0:
        return None
    return {"+": a + b, "-": a - b, "*": a * b, "/": int(a / b), "%": a % b}[op]
