"""What the extractors find in one source file, before it is stored.

Rows refer to the file's own functions by their position in `FileFacts.functions` (`fn`); the store turns those
positions into database ids. Lines are 1-based.

Rows name the backend that produced them (`tree-sitter`, or `libclang` where a compiler resolved them: see
`compiler_index.extract.clang`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Function:
    name: str  # unqualified: matchAndRewrite
    cls: str | None  # enclosing or qualifying class: BlockedToMMA (a guess for `X::f`; the link step corrects it
    #                  when X turns out to be a namespace, as in `mlir::triton::NVIDIA::populate…`)
    returns: str  # return type as written: LogicalResult, bool, void
    line: int
    end_line: int
    signature: str  # first line of the definition
    body: str  # the definition's text, for full-text search
    ns: str = ""  # enclosing named namespaces: mlir::triton::gpu
    qual: str = ""  # the declarator's qualifier as written: mlir::triton::NVIDIA, LayoutRematerialization
    usr: str | None = None  # libclang's unified symbol resolution: the same symbol has the same USR in every file
    overrides: list[str] = field(default_factory=list)  # USRs of the virtual methods it overrides, transitively
    backend: str = "tree-sitter"

    @property
    def qualname(self) -> str:
        return f"{self.cls}::{self.name}" if self.cls else self.name


@dataclass
class Base:
    text: str  # as written: mlir::OpRewritePattern<DotOp>
    name: str  # template name without scope or arguments: OpRewritePattern
    targs: list[str]  # template arguments as written: ["DotOp"]


@dataclass
class ClassDef:
    name: str
    kind: str  # class | struct
    bases: list[Base]
    line: int
    end_line: int
    root_hint: str | None  # `X::getOperationName()` in the body: the root op of a generic RewritePattern
    tparams: list[str]  # template parameters of a class template: ["SourceOp"]
    ancestors: list[Base] | None = None  # all base classes, nearest first, aliases and templates resolved (libclang)
    backend: str = "tree-sitter"


@dataclass
class Call:
    fn: int | None  # caller (index into FileFacts.functions)
    callee: str  # unqualified name
    scope: str  # qualified call: the scope (`triton::gpu::ConvertLayoutOp`); member call: the receiver's type
    form: str  # plain | qualified | member
    line: int
    snippet: str
    target_usr: str | None = None  # the callee as the compiler resolved it (libclang; None: resolve by name)
    target: str = ""  # its qualified name: toy::gpu::laneCount, toy::gpu::TargetInfoBase::laneWidth
    virtual: bool = False  # a call of a virtual method through an object: overriding methods may run
    backend: str = "tree-sitter"


@dataclass
class OpSite:
    fn: int | None
    action: str  # create | erase
    how: str  # X::create, create<X>, createOrFold<X>, replaceOpWithNewOp<X>, eraseOp, replaceOp, erase, rauw, fold
    op_class: str | None  # C++ op class (unqualified) when known: ConvertLayoutOp
    op_scope: str  # its namespace qualifier as written, possibly empty: triton::gpu
    target: str  # erase sites: the expression whose op is erased
    line: int
    snippet: str
    backend: str = "tree-sitter"


@dataclass
class Gate:
    """A condition that stops or reports a transformation: failure(), notifyMatchFailure, remark, LDBG, assert, …,
    and what a bool predicate returns."""

    fn: int | None
    kind: str  # failure | match-failure | remark | warning | error | debug | assert | fatal | pass-failure |
    #            return-false | return-true | return-expr (a predicate returns `expr`)
    condition: str  # innermost guarding condition, guards[0] ("" when unguarded); assert: the asserted condition
    guards: list[str]  # every condition under which the gate is reached, innermost first: enclosing branches
    #                    (negated as !(…) in else branches) and earlier exits (`if (c) return …;` → !(c))
    message: str  # literal text; non-literal operands of a `<<` chain appear as {expr}
    line: int
    snippet: str
    expr: str = ""  # return-expr: the returned boolean expression (`width >= 32`)


@dataclass
class Registration:
    fn: int | None  # the function that adds the pattern
    pattern: str  # pattern class, unqualified
    line: int


@dataclass
class PassImpl:
    """A C++ hook of a TableGen pass: `#define GEN_PASS_DEF_X` or a class deriving `impl::XBase<…>`."""

    how: str  # gen-pass-def | impl-base
    key: str  # GEN_PASS_DEF suffix (upper case) or the def name from impl::{def}Base
    class_name: str | None
    line: int


@dataclass
class PyAdder:
    """A Python-visible pass adder defined in a pybind module: ADD_PASS_WRAPPER_*, ADD_PASS_OPTION_WRAPPER_*, m.def."""

    fn: int | None  # the init function that defines it
    name: str  # add_remove_layout_conversions
    builder: str  # the pass factory it calls, unqualified: createTritonGPURemoveLayoutConversions
    macro: str  # ADD_PASS_WRAPPER_0 | … | m.def
    line: int
    snippet: str


@dataclass
class PySubmodule:
    """`init_x(m.def_submodule("name"))`: the callee defines its functions inside submodule `rel_path`."""

    fn: int | None
    callee: str
    rel_path: str  # relative to the caller's module: "passes", "passes.ttgpuir"
    line: int


@dataclass
class TdRecord:
    kind: str  # def | class | defm
    name: str
    parents: list[dict[str, Any]]  # [{"name": "TTG_Op", "args": [...]}]
    params: list[str]  # class template parameters
    lets: dict[str, Any]  # let fields, including enclosing `let … in` blocks
    line: int
    end_line: int
    text: str


@dataclass
class PipelineStage:
    backend: str
    stage: str  # ttir, ttgir, llir, …
    method: str  # make_ttgir
    condition: str
    line: int


@dataclass
class PipelineStep:
    backend: str
    method: str  # make_ttgir
    position: int  # order within the method
    adder: str  # as the backends call it: passes.ttgpuir.add_coalesce, nvidia.passes.ttnvgpuir.add_plan_cta
    args: str
    condition: str  # conditions on the way to the call, outermost first, joined with " and "
    line: int
    snippet: str


@dataclass
class FileFacts:
    lang: str
    parse_errors: int = 0
    error: str | None = None  # why the file could not be read at all; reported by the build
    debug_type: str | None = None  # `#define DEBUG_TYPE "…"`: the name `-debug-only` / TRITON_LLVM_DEBUG_ONLY takes
    functions: list[Function] = field(default_factory=list)
    classes: list[ClassDef] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    op_sites: list[OpSite] = field(default_factory=list)
    gates: list[Gate] = field(default_factory=list)
    registrations: list[Registration] = field(default_factory=list)
    pass_impls: list[PassImpl] = field(default_factory=list)
    py_adders: list[PyAdder] = field(default_factory=list)
    py_submodules: list[PySubmodule] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)  # namespace alias → target
    namespaces: list[str] = field(default_factory=list)  # namespaces the file opens: mlir::triton::AMD
    usings: list[str] = field(default_factory=list)  # `using namespace X;` targets
    td_records: list[TdRecord] = field(default_factory=list)
    pipeline_stages: list[PipelineStage] = field(default_factory=list)
    pipeline_steps: list[PipelineStep] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)  # absolute paths of the headers a translation unit included
    diagnostics: dict[str, Any] = field(default_factory=dict)  # libclang: counts, missing headers, first errors
