"""What the queries answer: dataclasses whose locations are file:line with the source line (`Loc`), and the
error for a name nothing in the index matches."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


class QueryError(LookupError):
    """Nothing in the index matches; the message says what was tried and what is close."""


@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    snippet: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class FunctionRef:
    name: str  # qualified: BlockedToMMA::matchAndRewrite
    loc: Loc  # the definition (snippet: its signature)
    end_line: int


@dataclass
class Adder:
    qualname: str  # passes.ttgpuir.add_remove_layout_conversions
    builder: str  # the C++ factory it calls
    match: str  # how the factory was tied to the pass: factory | constructor | wrapper | name | "" (none)
    loc: Loc


@dataclass
class PipelineUse:
    backend: str
    stage: str  # ttgir, … ("" when add_stages does not name the method)
    method: str  # make_ttgir
    position: int  # order among the adders the method calls
    adder: str
    args: str
    condition: str  # "" when unconditional
    loc: Loc


@dataclass
class PatternRef:
    name: str
    base: str  # OpRewritePattern, ConvertOpToLLVMPattern, …
    root_op: str | None  # ttg.convert_layout, or the C++ class when no TableGen op matches
    loc: Loc
    match_fn: FunctionRef | None  # matchAndRewrite (or rewrite/match)
    registered_at: Loc | None = None


@dataclass
class PassInfo:
    def_name: str | None
    argument: str | None
    summary: str = ""
    description: str = ""
    anchor: str | None = None
    options: list[dict[str, Any]] = field(default_factory=list)
    dependent_dialects: list[str] = field(default_factory=list)
    td: Loc | None = None
    gen_pass_def: list[Loc] = field(default_factory=list)
    classes: list[Loc] = field(default_factory=list)  # the C++ pass class (snippet: its head)
    methods: list[FunctionRef] = field(default_factory=list)
    adders: list[Adder] = field(default_factory=list)
    pipeline: list[PipelineUse] = field(default_factory=list)
    patterns: list[PatternRef] = field(default_factory=list)


@dataclass
class OpInfo:
    name: str  # as asked, or the mnemonic when resolved: ttg.convert_layout
    cpp_class: str
    cpp_namespace: str
    resolved_by: str  # tablegen | class-name | upstream-name (an MLIR dialect op, matched by its C++ class name)
    td: Loc | None = None
    summary: str = ""


@dataclass
class Hop:
    function: FunctionRef
    call: Loc | None  # where this function calls the next one on the path (None for the last)


@dataclass
class CallPath:
    hops: list[Hop]  # outermost caller first, ending at the function that holds the site
    passes: list[str]  # pass arguments owning a function on the path


@dataclass
class Site:
    action: str  # create | erase
    how: str  # X::create, create<X>, replaceOpWithNewOp<X>, eraseOp, replaceOp, erase, rauw, fold, drr
    loc: Loc
    function: FunctionRef | None
    pattern: str | None  # the pattern class the function belongs to
    target: str = ""  # erase sites: the expression erased
    ambiguous: bool = False  # unqualified class name that several dialects define
    passes: list[str] = field(default_factory=list)  # pass arguments that run this code (directly or via a path)
    direct_passes: list[str] = field(default_factory=list)  # … whose class/patterns hold `function` (or its file)
    paths: list[CallPath] = field(default_factory=list)  # how callers reach `function`
    paths_omitted: int = 0  # further call paths found beyond MAX_PATHS


@dataclass
class OpSites:
    op: OpInfo
    action: str
    sites: list[Site]


@dataclass
class GateInfo:
    kind: str  # failure | match-failure | remark | … | return-false | return-true | return-expr
    condition: str  # the innermost guard (guards[0]), "" when unguarded
    guards: list[str]  # every condition under which it is reached, innermost first (compiler_index.model.Gate)
    message: str
    loc: Loc
    function: FunctionRef | None
    via: str | None = None  # set for gates found in a callee: the target function that calls it
    expr: str = ""  # return-expr: the boolean expression the predicate returns
    applies: str = ""  # asked for a target (compiler_index.target): "yes" or "unknown"; "" when not asked


@dataclass
class Conditions:
    symbol: str
    targets: list[FunctionRef]
    gates: list[GateInfo]
    notes: list[str] = field(default_factory=list)  # what the symbol resolved to (pattern root op, passes)


@dataclass
class RemarkMatch:
    kind: str
    message: str
    condition: str
    loc: Loc
    function: FunctionRef | None
    score: float  # share of the message's literal text found in the query (1.0: all of it)
    passes: list[str] = field(default_factory=list)
    debug_type: str | None = None  # for `debug` messages: the -debug-only / TRITON_LLVM_DEBUG_ONLY name


@dataclass
class CallEdge:
    caller: FunctionRef
    callee: FunctionRef | None  # None: not an indexed function (MLIR/LLVM API, macro, …)
    callee_name: str
    call: Loc
    by_name: bool


@dataclass
class SearchHit:
    kind: str
    name: str
    loc: Loc
    snippet: str


def to_json(value: Any) -> Any:
    """Any result (dataclass, list of them) as JSON-ready data."""
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    return value
