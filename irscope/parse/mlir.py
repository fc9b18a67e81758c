"""MLIR text (as Triton prints it: pretty form, one op per line, `loc(...)` at line ends) → operations.

Our own line parser, chosen by measurement over tree-sitter-mlir and libtriton's API (docs/capture.md,
`tools/parser_choice.py`): it is the fastest of the three on 15 MB dumps, needs no grammar or MLIR
context, and unlike libtriton's API sees the location of result-less ops (`tt.store`, `scf.yield`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from irscope.parse.locations import UNKNOWN, Location, LocationTable

# results? then an op name (custom `dialect.op` or generic "dialect.op")
_OP = re.compile(r'^\s*(?:((?:%[\w$.#-]+(?::\d+)?)(?:\s*,\s*%[\w$.#-]+(?::\d+)?)*)\s*=\s*)?"?([a-z_][\w$]*\.[\w.$]+)"?')
_TRAILING_LOC = re.compile(r"\sloc\((.*)\)\s*$")
_CLOSE = re.compile(r"^\s*\}\)?")
_VALUE = re.compile(r"%[\w$.#-]+")
_ENCODING_ALIAS = re.compile(r"^(#[\w$.-]+) = (#[\w.]+<.*)$", re.M)


@dataclass
class Op:
    name: str  # dialect.op, e.g. ttg.convert_layout
    results: tuple[str, ...]
    line_no: int  # 1-based line in the IR text where the op starts
    depth: int  # region nesting depth
    text: str  # the op's first line, stripped
    loc_body: str | None = None  # text inside loc(...); for ops with regions, from the closing line
    location: Location = field(default=UNKNOWN)
    inferred: bool = False  # location taken from the op's users (its own was loc(unknown))
    tail: str = ""  # for ops with regions: the closing line (`}) : (types) -> types loc(...)`)
    parent: Op | None = field(default=None, repr=False, compare=False)  # the op whose region holds this one

    @property
    def operands(self) -> tuple[str, ...]:
        body = self.text.split("=", 1)[1] if self.results else self.text
        return tuple(_VALUE.findall(body.split(" loc(", 1)[0]))

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass
class ParsedModule:
    ops: list[Op]
    locations: LocationTable
    aliases: dict[str, str]  # attribute alias → its definition, e.g. #mma → #ttg.nvidia_mma<{versionMajor = 3, …}>

    def counts(self) -> Counter[str]:
        return Counter(op.name for op in self.ops)


_STRUCTURAL = {"builtin.module"}


def parse_mlir(text: str, resolve: bool = True) -> ParsedModule:
    """Parse a module; with `resolve`, each op's location is resolved through the alias table."""
    table = LocationTable(text)
    ops: list[Op] = []
    open_ops: list[Op | None] = []  # one entry per open region brace: the op owning it (None: not an op)
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.lstrip()
        if not s or s[0] == "#" or s.startswith("//"):
            continue
        if s[0] == "}":
            owner = open_ops.pop() if open_ops else None
            if owner is not None and (m := _TRAILING_LOC.search(line)):
                owner.loc_body = m.group(1)
                owner.tail = s[:400]
            # `} else {` / `}, {` continue the same op with another region
            if s.rstrip().endswith("{") and open_ops is not None:
                open_ops.append(owner)
            continue
        if s[0] == "^":  # block label
            continue
        m = _OP.match(line)
        opens = line.rstrip().endswith("{") or line.rstrip().endswith("({")
        if m is None:
            if s.startswith("module"):
                op = Op("builtin.module", (), i, len(open_ops), s[:200])
                ops.append(op)
                if opens:
                    open_ops.append(op)
            elif opens:
                open_ops.append(_continued_op(ops, s, len(open_ops)))
            continue
        results = tuple(r.strip() for r in m.group(1).split(",")) if m.group(1) else ()
        op = Op(
            m.group(2),
            results,
            i,
            len(open_ops),
            s if len(s) <= 400 else s[:400],
            parent=next((o for o in reversed(open_ops) if o is not None), None),
        )
        if not opens:
            lm = _TRAILING_LOC.search(line)
            op.loc_body = lm.group(1) if lm else None
        ops.append(op)
        if opens:
            open_ops.append(op)
    aliases = {m.group(1): m.group(2) for m in _ENCODING_ALIAS.finditer(text)}
    if resolve:
        for op in ops:
            op.location = table.resolve(op.loc_body)
        _infer_from_users(ops)
    return ParsedModule(ops, table, aliases)


def _continued_op(ops: list[Op], line: str, depth: int) -> Op | None:
    """The op whose header a region-opening line continues: custom printers such as `linalg.reduce` print
    `%r = linalg.reduce ins(…) outs(…) dimensions = [0]` and then the region's block arguments,
    `(%in: f32, %init: f32) {`, on a line of their own; the op's location follows the region's `}`."""
    prev = ops[-1] if ops else None
    if line.startswith("(") and prev is not None and prev.depth == depth and prev.loc_body is None:
        return prev
    return None


def _infer_from_users(ops: list[Op]) -> None:
    """Ops the compiler left at loc(unknown) — mostly constants that canonicalization hoisted — take the
    location of their users when all users agree on one source line (marked `inferred`)."""
    unknown = {r.split(":")[0]: op for op in ops if not op.location.known for r in op.results}
    if not unknown:
        return
    users: dict[str, set[Location]] = {}
    for op in ops:
        if not op.location.known:
            continue
        for v in op.operands:
            if v in unknown:
                users.setdefault(v, set()).add(op.location)
    for value, op in unknown.items():
        locs = users.get(value)
        if locs and len({(loc.frames[0].file, loc.frames[0].line) for loc in locs}) == 1:
            op.location = next(iter(locs))
            op.inferred = True


# Anchored on a literal newline rather than `^` with re.M: the engine then jumps from newline to newline instead
# of trying every character (5x faster on a 7.5 MB LLVM-dialect snapshot).
_OP_NAME_ONLY = re.compile(r'\n[ \t]*(?:%[^\n=]*?=[ \t]*)?"?([a-z_][\w$]*\.[\w.$]+)"?')


def op_sequence(text: str) -> list[str]:
    """Operation names in text order (what `op_counts` counts)."""
    return [name for name in _OP_NAME_ONLY.findall("\n" + text) if name != "builtin.module"]


def op_counts(text: str) -> Counter[str]:
    """Operation name → count, without building Op objects (fast path for diffs and joins)."""
    counts = Counter(_OP_NAME_ONLY.findall("\n" + text))
    counts.pop("builtin.module", None)
    return counts


def scan_ops(text: str, names: set[str]) -> list[Op]:
    """Only the ops named in `names`, found by one regex pass: the fast path for multi-megabyte LLVM-dialect
    snapshots where a full parse would build tens of thousands of uninteresting ops. Single-line ops only."""
    if not names:
        return []
    alternation = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    pattern = re.compile(rf'^[ \t]*(?:(%[^\n=]*?)[ \t]*=[ \t]*)?"?({alternation})"?(?=[ \t(<{{"]|$)', re.M)
    table = LocationTable(text)
    ops: list[Op] = []
    line_no, counted_to = 1, 0
    for m in pattern.finditer(text):
        end = text.find("\n", m.end())
        line = text[m.start() : end if end >= 0 else len(text)]
        results = tuple(r.strip() for r in m.group(1).split(",")) if m.group(1) else ()
        lm = _TRAILING_LOC.search(line)
        line_no += text.count("\n", counted_to, m.start())
        counted_to = m.start()
        op = Op(m.group(2), results, line_no, 0, line.strip()[:2000], lm.group(1) if lm else None)
        op.location = table.resolve(op.loc_body)
        ops.append(op)
    return ops
