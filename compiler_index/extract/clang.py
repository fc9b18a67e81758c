"""C++ facts with libclang, for the files a compilation database lists: what a compiler resolves and tree-sitter
cannot.

The file is read by tree-sitter first (`extract.cpp`; gates, registrations, pass hooks and bindings stay its
reading), then parsed by libclang with the file's own compile command, and the compiler's answers replace the guesses
wherever both see the same thing:

* functions: namespace and class from the declaration's semantic parents, the USR (the same symbol has the same USR
  in every translation unit), the virtual methods each one overrides;
* classes: bases as the compiler sees them (`using Base = mlir::OpRewritePattern<X>` → `mlir::OpRewritePattern<ns::X>`)
  and every ancestor, through headers the index does not hold (MLIR's);
* calls: the declaration called (`cursor.referenced`): the right overload, the method of an `auto` receiver's class,
  the template a specialization comes from, and whether the call dispatches virtually;
* op sites: the op class of `create<X>`, `X::create`, `replaceOpWithNewOp<X>` behind aliases, and the type of what
  `eraseOp`, `erase` and `replaceAllUsesWith` remove.

A tree-sitter row and a libclang cursor are taken to be the same when they have the same name on the same line (the
n-th call of `f` on a line is the n-th); where that is not clear, or libclang resolved nothing (a dependent call in a
template, code behind a missing header), the row keeps tree-sitter's reading and is marked so. Only the file itself
is read here; the headers it includes are indexed as files of their own.
"""

from __future__ import annotations

import ctypes
import functools
import re
import shutil
import subprocess
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from compiler_index.compdb import CompileCommand
from compiler_index.extract import cpp
from compiler_index.model import Base, Call, ClassDef, FileFacts, Function, OpSite

K = ci.CursorKind
BACKEND = "libclang"
# CXTranslationUnit_KeepGoing (a missing header is an error, not the end of the parse) |
# CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles (no warnings from MLIR's headers)
PARSE_OPTIONS = 0x200 | 0x4000
MAX_ANCESTORS = 64
FIRST_ERRORS = 5  # error messages kept per file

_FUNCTIONS = frozenset(
    {K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR, K.CONVERSION_FUNCTION, K.FUNCTION_TEMPLATE}
)
_RECORDS = frozenset(
    {K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
)
_NOT_CALLEES = frozenset({K.CONSTRUCTOR, K.DESTRUCTOR, K.CONVERSION_FUNCTION})  # implicit calls tree-sitter never sees
_TEMPLATE_PARAMS = frozenset({K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER})
_MISSING_HEADER = re.compile(r"'([^']+)' file not found")
_TYPE_PARAMETER = re.compile(r"type-parameter-0-(\d+)")
_TEMPLATE_ARGS = re.compile(r"<.*>$")
# flags that shape what the parser sees; the rest may be dropped when libclang rejects another compiler's flags
_PORTABLE_WITH_VALUE = frozenset(
    {
        "-working-directory",
        "-I",
        "-isystem",
        "-iquote",
        "-idirafter",
        "-include",
        "-D",
        "-U",
        "-x",
        "-resource-dir",
        "-target",
        "-isysroot",
        "--sysroot",
    }
)
_PORTABLE_JOINED = (
    "-I",
    "-D",
    "-U",
    "-x",
    "-std=",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-resource-dir=",
    "--target=",
    "--sysroot=",
    "--gcc-toolchain=",
    "-nostdinc",
    "-fno-exceptions",
    "-fno-rtti",
    "-fexceptions",
    "-frtti",
    "-ferror-limit=",
)


def unavailable() -> str | None:
    """Why libclang cannot run here, or None when it can."""
    try:
        _index()
    except Exception as e:  # the shared library is missing or does not load: any error means the same
        return f"libclang cannot be loaded ({type(e).__name__}: {e}); install the `index` extra (libclang==18.1.1)"
    return None


@functools.cache
def _index() -> ci.Index:
    return ci.Index.create()


@functools.cache
def _native() -> ctypes.CDLL:
    """The few libclang functions the Python bindings do not wrap."""
    lib = ci.conf.lib
    lib.clang_getOverriddenCursors.argtypes = [
        ci.Cursor,
        ctypes.POINTER(ctypes.POINTER(ci.Cursor)),
        ctypes.POINTER(ctypes.c_uint),
    ]
    lib.clang_getOverriddenCursors.restype = None
    lib.clang_disposeOverriddenCursors.argtypes = [ctypes.POINTER(ci.Cursor)]
    lib.clang_disposeOverriddenCursors.restype = None
    return lib


# ---- parsing ---------------------------------------------------------------------------------------------------
@functools.cache
def builtin_include_args() -> tuple[str, ...]:
    """Flags giving libclang the compiler's own headers (`stddef.h`, …), which the libclang wheel does not ship:
    none when they are found, else an installed clang's resource directory, else GCC's."""
    probe = "#include <stddef.h>\n"
    if _parses(probe, ()):
        return ()
    for args in _builtin_candidates():
        if _parses(probe, args):
            return args
    return ()


def _builtin_candidates() -> Iterator[tuple[str, ...]]:
    for exe, flag, option in (
        ("clang", "-print-resource-dir", "-resource-dir"),
        ("gcc", "-print-file-name=include", "-isystem"),
    ):
        path = shutil.which(exe)
        if path is None:
            continue
        try:
            out = subprocess.run([path, flag], capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if out and Path(out).is_dir():
            yield option, out


def _parses(source: str, args: tuple[str, ...]) -> bool:
    tu = _index().parse(
        "probe.cpp", args=["-xc++", *args], unsaved_files=[("probe.cpp", source)], options=PARSE_OPTIONS
    )
    return not any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics)


def parse(path: str, data: bytes, command: CompileCommand) -> tuple[ci.TranslationUnit, list[str]]:
    """The translation unit of `path` with its content `data`, under its compile command, and the flags dropped to
    get it: when libclang rejects the command outright (a precompiled header of another compiler, `-march=` values
    it does not know), only the flags that shape what the parser sees are kept."""
    args = list(command.arguments)
    if not any(a.startswith("-resource-dir") for a in args):
        args += builtin_include_args()
    if not any(a.startswith("-ferror-limit") for a in args):
        args.append("-ferror-limit=0")  # past clang's 20 errors (a missing header) the parse would stop
    try:
        return _index().parse(path, args=args, unsaved_files=[(path, data)], options=PARSE_OPTIONS), []
    except ci.TranslationUnitLoadError:
        kept = _portable(args)
        tu = _index().parse(path, args=kept, unsaved_files=[(path, data)], options=PARSE_OPTIONS)
        return tu, [a for a in args if a not in kept]


def _portable(args: list[str]) -> list[str]:
    out: list[str] = []
    keep_next = False
    for a in args:
        if keep_next:
            out.append(a)
            keep_next = False
        elif a in _PORTABLE_WITH_VALUE:
            out.append(a)
            keep_next = True
        elif a.startswith(_PORTABLE_JOINED):
            out.append(a)
    return out


def diagnostics(tu: ci.TranslationUnit) -> dict:
    """Error and warning counts, the headers that were not found, the first error messages."""
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    missing = sorted({m.group(1) for d in errors if (m := _MISSING_HEADER.search(d.spelling))})
    first = [
        f"{Path(d.location.file.name).name if d.location.file else '?'}:{d.location.line}: {d.spelling}"
        for d in errors[:FIRST_ERRORS]
    ]
    warnings = sum(d.severity == ci.Diagnostic.Warning for d in tu.diagnostics)
    return {"errors": len(errors), "warnings": warnings, "missing_headers": missing, "first_errors": first}


def includes(tu: ci.TranslationUnit, directory: str) -> list[str]:
    """Absolute paths of the headers read (found through a relative -I, they are relative to the build directory)."""
    return sorted(
        {str((Path(directory) / i.include.name).resolve()) for i in tu.get_includes() if i.include is not None}
    )


# ---- names -----------------------------------------------------------------------------------------------------
def _bare(name: str) -> str:
    """`OpRewritePattern<SourceOp>` → `OpRewritePattern`."""
    return _TEMPLATE_ARGS.sub("", name)


def owner(cursor: ci.Cursor) -> tuple[str, str | None]:
    """(namespaces, innermost class) of a declaration, as the index records them: anonymous namespaces add
    nothing, and a nested class's method belongs to the nested class."""
    namespaces: list[str] = []
    cls = None
    p = cursor.semantic_parent
    while p is not None and p.kind != K.TRANSLATION_UNIT:
        if p.kind == K.NAMESPACE and p.spelling and not p.is_anonymous():
            namespaces.append(p.spelling)
        elif p.kind in _RECORDS and cls is None:
            cls = _bare(p.spelling)
        p = p.semantic_parent
    return "::".join(reversed(namespaces)), cls


def qualified(cursor: ci.Cursor) -> str:
    ns, cls = owner(cursor)
    return "::".join(p for p in (ns, cls, _bare(cursor.spelling)) if p)


def _primary(cursor: ci.Cursor) -> ci.Cursor:
    """A template specialization's template (a call of `f<int>` is a call of `f`), else the cursor itself."""
    template = ci.conf.lib.clang_getSpecializedCursorTemplate(cursor)
    return template if template is not None else cursor


def _overridden(cursor: ci.Cursor) -> list[ci.Cursor]:
    lib = _native()
    arr = ctypes.POINTER(ci.Cursor)()
    n = ctypes.c_uint()
    lib.clang_getOverriddenCursors(cursor, ctypes.byref(arr), ctypes.byref(n))
    out = []
    for i in range(n.value):
        c = ci.Cursor.from_buffer_copy(arr[i])
        c._tu = cursor._tu  # the bindings keep the translation unit alive through this attribute
        out.append(c)
    if n.value:
        lib.clang_disposeOverriddenCursors(arr)
    return out


def overrides(cursor: ci.Cursor) -> list[str]:
    """USRs of every virtual method `cursor` overrides, transitively (of the templates, for template members)."""
    out: list[str] = []
    todo = _overridden(cursor)
    while todo:
        c = todo.pop(0)
        usr = _primary(c).get_usr()
        if usr not in out:
            out.append(usr)
            todo.extend(_overridden(c))
    return out


# ---- classes ---------------------------------------------------------------------------------------------------
def _template_params(cursor: ci.Cursor) -> list[str]:
    return [c.spelling for c in cursor.get_children() if c.kind in _TEMPLATE_PARAMS]


def _spell(t: ci.Type, args: list[str]) -> str | None:
    """A template argument: fully qualified, the enclosing template's parameters replaced by `args` where bound;
    None for a non-type argument (the bindings cannot spell those)."""
    if t.kind == ci.TypeKind.INVALID:
        return None
    canonical = t.get_canonical().spelling
    spelled = _TYPE_PARAMETER.sub(
        lambda m: args[int(m.group(1))] if int(m.group(1)) < len(args) else m.group(0), canonical
    )
    return t.spelling if "type-parameter-" in spelled else spelled


def bases(cursor: ci.Cursor, args: list[str]) -> list[tuple[Base | None, ci.Cursor | None]]:
    """Direct bases of a class (of a class template: its parameters bound to `args`), each with the class or class
    template to go on from; (None, None) for a base libclang could not resolve (a missing header)."""
    out: list[tuple[Base | None, ci.Cursor | None]] = []
    for spec in cursor.get_children():
        if spec.kind != K.CXX_BASE_SPECIFIER:
            continue
        written = spec.type
        canonical = written.get_canonical()
        if canonical.kind == ci.TypeKind.RECORD:
            t, decl = canonical, canonical.get_declaration()
            template = _primary(decl)
        else:  # dependent on the enclosing template's parameters: `OpOrInterfaceRewritePatternBase<SourceOp>`
            t, decl = written, written.get_declaration()
            template = decl
        if decl is None or decl.kind not in _RECORDS:
            out.append((None, None))
            continue
        n = t.get_num_template_arguments()
        targs = [_spell(t.get_template_argument_type(i), args) for i in range(max(n, 0))]
        name = qualified(decl)
        text = f"{name}<{', '.join(a or '…' for a in targs)}>" if n > 0 else name
        out.append(
            (
                Base(text=text, name=_bare(decl.spelling), targs=[a for a in targs if a is not None]),
                template.get_definition() or template,
            )
        )
    return out


def ancestors(cursor: ci.Cursor) -> list[Base]:
    """Every base class, breadth first (nearest first), template arguments carried through the template chain."""
    out: list[Base] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    todo: deque[tuple[ci.Cursor, list[str]]] = deque([(cursor, _template_params(cursor))])
    while todo and len(out) < MAX_ANCESTORS:
        cur, args = todo.popleft()
        for base, nxt in bases(cur, args):
            if base is None or nxt is None:
                continue
            out.append(base)
            key = (nxt.get_usr(), tuple(base.targs))
            if key not in seen:
                seen.add(key)
                todo.append((nxt, base.targs))
    return out[:MAX_ANCESTORS]


# ---- op sites --------------------------------------------------------------------------------------------------
def _underlying(expr: ci.Cursor) -> ci.Cursor:
    """The expression under implicit conversions and accessors: `eraseOp(op)` erases `op`'s op, not an `Operation *`;
    `op->erase()` and `op.getOperation()->erase()` erase `op`."""
    for _ in range(8):
        kids = list(expr.get_children())
        if expr.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and len(kids) == 1:
            expr = kids[0]
            continue
        if expr.kind == K.CALL_EXPR and kids and kids[0].kind == K.MEMBER_REF_EXPR:
            ref = expr.referenced
            if ref is not None and (
                ref.kind == K.CONVERSION_FUNCTION or ref.spelling in ("operator->", "getOperation")
            ):
                receiver = _receiver(expr)
                if receiver is not None:
                    expr = receiver
                    continue
        break
    return expr


def _receiver(call: ci.Cursor) -> ci.Cursor | None:
    """`x` of `x.f(…)` / `x->f(…)`; None for an implicit `this`."""
    kids = list(call.get_children())
    if not kids or kids[0].kind != K.MEMBER_REF_EXPR:
        return None
    inner = list(kids[0].get_children())
    return inner[0] if inner and inner[0].kind != K.TYPE_REF else None


def _record_of(t: ci.Type) -> ci.Cursor | None:
    t = t.get_canonical()
    while t.kind in (ci.TypeKind.POINTER, ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
        t = t.get_pointee().get_canonical()
    decl = t.get_declaration()
    return decl if decl is not None and decl.kind in _RECORDS else None


_IS_OP: dict[str, bool] = {}  # class USR → is it an op class (the same in every translation unit)


def _op_class(decl: ci.Cursor | None) -> tuple[bool, str | None, str]:
    """(is it an op or an Operation, the op class or None for `Operation`, its namespace). An op class derives from
    mlir::Op (OpState); by name (`…Op`) when its bases are out of sight, as tree-sitter decides."""
    if decl is None:
        return False, None, ""
    name = _bare(decl.spelling)
    usr = decl.get_usr()
    if usr not in _IS_OP:
        _IS_OP[usr] = (
            name in ("Operation", "OpState")
            or name.endswith("Op")
            or any(b.name in ("OpState", "Op") for b in ancestors(decl.get_definition() or decl))
        )
    return _IS_OP[usr], (None if name == "Operation" else name), owner(decl)[0]


def _explicit_type_arg(call: ci.Cursor) -> ci.Cursor | None:
    """The first explicit template argument of a call (`create<X>`): a TYPE_REF under the callee expression after
    the callee's name (those before it qualify the name: `X::create`)."""
    kids = list(call.get_children())
    if not kids:
        return None
    callee = kids[0]
    for _ in range(3):  # the callee may sit under implicit casts
        if callee.kind in (K.MEMBER_REF_EXPR, K.DECL_REF_EXPR):
            break
        inner = list(callee.get_children())
        if not inner:
            return None
        callee = inner[0]
    at = (callee.location.line, callee.location.column)
    return next(
        (c for c in callee.get_children() if c.kind == K.TYPE_REF and (c.location.line, c.location.column) > at), None
    )


def op_sites(call: ci.Cursor, ref: ci.Cursor, line: int) -> list[OpSite]:
    """The creation/erase sites of one resolved call (fn and snippet are filled in by the caller)."""
    name = ref.spelling
    out: list[OpSite] = []
    kids = list(call.get_children())
    member = bool(kids) and kids[0].kind == K.MEMBER_REF_EXPR
    if name in cpp._TEMPLATE_CREATORS:
        if name == "create" and ref.is_static_method():  # X::create(builder, …) returns an X
            decl, how = _record_of(call.type), "X::create"
        else:
            targ = _explicit_type_arg(call)
            decl, how = (_record_of(targ.type) if targ is not None else None), cpp._TEMPLATE_CREATORS[name]
        if decl is not None:
            ns, _ = owner(decl)
            out.append(OpSite(None, "create", how, _bare(decl.spelling), ns, "", line, "", BACKEND))
    target: ci.Cursor | None = None
    how = ""
    args = list(call.get_arguments())
    if name in cpp._ERASE_BY_ARG and member and args:
        target, how = args[0], cpp._ERASE_BY_ARG[name]
    elif name == "erase" and member and not args:
        target, how = _receiver(call), "erase"
    elif name == "replaceAllUsesWith" and member:
        target, how = _receiver(call), "rauw"
    if target is None:
        return out
    expr = _underlying(target)
    is_op, op_class, ns = _op_class(_record_of(expr.type))
    if how in ("rauw", "erase") and not (is_op and (op_class or how == "erase")):
        return out  # Value::replaceAllUsesWith, a container's erase(): no op goes away
    text = cpp._squeeze(" ".join(t.spelling for t in target.get_tokens()), 80)
    out.append(
        OpSite(
            None, "erase", how, op_class if is_op else None, ns if is_op and op_class else "", text, line, "", BACKEND
        )
    )
    return out


# ---- the translation unit ---------------------------------------------------------------------------------------
@dataclass
class _ClangCall:
    line: int
    column: int
    name: str
    target_usr: str
    target: str
    virtual: bool


@dataclass
class _Unit:
    functions: list[tuple[ci.Cursor, int]]  # (definition, line of its name)
    classes: list[tuple[ci.Cursor, int]]
    calls: dict[tuple[int, str], list[_ClangCall]]  # by (line, callee name), in column order
    op_sites: list[OpSite]
    resolved_names: set[tuple[int, str]]  # (line, name) of every call libclang resolved to a function


def _in_file(cursor: ci.Cursor, path: str) -> bool:
    """Written in `path`, or made there by a macro (`PYBIND11_MODULE(…) {…}` defines a function)."""
    f = cursor.location.file
    return f is not None and f.name == path


def _walk(tu: ci.TranslationUnit, path: str) -> _Unit:
    unit = _Unit([], [], {}, [], set())
    stack = [c for c in tu.cursor.get_children() if _in_file(c, path)]
    while stack:
        c = stack.pop()
        kind = c.kind
        if kind in _FUNCTIONS and c.is_definition():
            unit.functions.append((c, c.location.line))
        elif kind in _RECORDS and c.is_definition():
            unit.classes.append((c, c.location.line))
        elif kind == K.CALL_EXPR:
            _call(c, unit)
        # declarations an #include brings into a namespace of this file belong to that header; implicit
        # expressions (conversions) have no location of their own but may hold explicit calls
        stack.extend(ch for ch in c.get_children() if not ch.kind.is_declaration() or _in_file(ch, path))
    for calls in unit.calls.values():
        calls.sort(key=lambda x: x.column)
    return unit


def _call(c: ci.Cursor, unit: _Unit) -> None:
    ref = c.referenced
    if ref is None or ref.kind not in _FUNCTIONS or ref.kind in _NOT_CALLEES or ref.spelling.startswith("operator"):
        return
    line = c.location.line
    name = _bare(ref.spelling)
    unit.resolved_names.add((line, name))
    kids = list(c.get_children())
    virtual = ref.is_virtual_method() and bool(kids) and kids[0].kind == K.MEMBER_REF_EXPR
    target = _primary(ref)
    unit.calls.setdefault((line, name), []).append(
        _ClangCall(line, c.location.column, name, target.get_usr(), qualified(target), virtual)
    )
    unit.op_sites.extend(op_sites(c, ref, line))


# ---- joining the two readings ------------------------------------------------------------------------------------
def _innermost(spans: list[tuple[int, int, int]], line: int) -> int | None:
    """Index of the narrowest (start, end, index) span holding `line`."""
    best = None
    for start, end, i in spans:
        if start <= line <= end and (best is None or end - start < best[1] - best[0]):
            best = (start, end, i)
    return best[2] if best else None


def _functions(facts: FileFacts, unit: _Unit) -> None:
    by_name: dict[str, list[tuple[int, int, int]]] = {}
    for i, f in enumerate(facts.functions):
        by_name.setdefault(f.name, []).append((f.line, f.end_line, i))
    taken: set[int] = set()
    unmatched: list[tuple[ci.Cursor, int]] = []
    for cursor, line in unit.functions:
        hit = _innermost([s for s in by_name.get(_bare(cursor.spelling), []) if s[2] not in taken], line)
        if hit is None:
            unmatched.append((cursor, line))
            continue
        taken.add(hit)
        _resolve_function(facts.functions[hit], cursor)
    for cursor, line in unmatched:  # made by a macro, which tree-sitter reads as the function's name
        same_line = [i for i, f in enumerate(facts.functions) if f.line == line and i not in taken]
        if len(same_line) == 1:
            taken.add(same_line[0])
            _resolve_function(facts.functions[same_line[0]], cursor)


def _resolve_function(f: Function, cursor: ci.Cursor) -> None:
    f.ns, f.cls = owner(cursor)
    f.usr, f.overrides, f.backend = cursor.get_usr(), overrides(cursor), BACKEND


def _classes(facts: FileFacts, unit: _Unit) -> None:
    by_name: dict[str, list[tuple[int, int, int]]] = {}
    for i, c in enumerate(facts.classes):
        by_name.setdefault(c.name, []).append((c.line, c.end_line, i))
    for cursor, line in unit.classes:
        hit = _innermost(by_name.get(_bare(cursor.spelling), []), line)
        if hit is None:
            continue
        cls: ClassDef = facts.classes[hit]
        resolved = bases(cursor, _template_params(cursor))
        if len(resolved) == len(cls.bases):  # tree-sitter's where libclang could not resolve one
            cls.bases = [b if b is not None else ts for (b, _), ts in zip(resolved, cls.bases)]
        cls.ancestors, cls.backend = ancestors(cursor), BACKEND


def _calls(facts: FileFacts, unit: _Unit) -> None:
    groups: dict[tuple[int, str], list[Call]] = {}
    for c in facts.calls:
        groups.setdefault((c.line, c.callee), []).append(c)
    for key, ts_calls in groups.items():
        clang_calls = unit.calls.get(key, [])
        if not clang_calls:
            continue
        if len(clang_calls) == len(ts_calls):
            pairs = list(zip(ts_calls, clang_calls))
        elif len({(c.target_usr, c.virtual) for c in clang_calls}) == 1:  # a macro repeats it: one meaning anyway
            pairs = [(t, clang_calls[0]) for t in ts_calls]
        else:
            continue  # cannot tell which is which: tree-sitter's reading stays
        for ts, cl in pairs:
            ts.target_usr, ts.target, ts.virtual, ts.backend = cl.target_usr, cl.target, cl.virtual, BACKEND


_API_OF_HOW = {
    "X::create": ("create",),
    "create<X>": ("create", "create_op"),
    "createOrFold<X>": ("createOrFold",),
    "replaceOpWithNewOp<X>": ("replaceOpWithNewOp",),
    "eraseOp": ("eraseOp",),
    "replaceOp": ("replaceOp", "replaceOpWithMultiple"),
    "replaceOpWithNewOp": ("replaceOpWithNewOp",),
    "erase": ("erase",),
    "rauw": ("replaceAllUsesWith",),
}


def _op_sites(facts: FileFacts, unit: _Unit, fn_spans: list[tuple[int, int, int]], lines: list[bytes]) -> None:
    clang_sites: dict[tuple[int, str, str], list[OpSite]] = {}
    for s in unit.op_sites:
        clang_sites.setdefault((s.line, s.action, s.how), []).append(s)
    kept: list[OpSite] = []
    for s in facts.op_sites:
        matches = clang_sites.get((s.line, s.action, s.how), [])
        if matches:
            m = matches.pop(0)
            s.op_class, s.op_scope, s.target, s.backend = m.op_class, m.op_scope, m.target or s.target, BACKEND
            kept.append(s)
        elif not any((s.line, api) in unit.resolved_names for api in _API_OF_HOW.get(s.how, ())):
            kept.append(s)  # libclang did not resolve this call: tree-sitter's reading stays
        # else: libclang resolved the call and it removes or creates no op (a container's erase(), Value RAUW)
    for rest in clang_sites.values():  # sites tree-sitter does not see (inside macro arguments)
        for s in rest:
            s.fn = _innermost(fn_spans, s.line)
            s.snippet = cpp._squeeze(lines[s.line - 1].decode("utf-8", "replace"), 200) if s.line <= len(lines) else ""
            kept.append(s)
    facts.op_sites = kept


def extract(rel_path: str, data: bytes, command: CompileCommand) -> FileFacts:
    facts = cpp.extract(rel_path, data)
    try:
        tu, dropped = parse(command.file, data, command)
    except ci.TranslationUnitLoadError as e:
        facts.diagnostics = {
            "errors": 1,
            "warnings": 0,
            "missing_headers": [],
            "first_errors": [f"libclang could not parse it ({e}): tree-sitter's reading only"],
        }
        return facts
    unit = _walk(tu, command.file)
    _functions(facts, unit)
    _classes(facts, unit)
    _calls(facts, unit)
    _op_sites(facts, unit, [(f.line, f.end_line, i) for i, f in enumerate(facts.functions)], data.split(b"\n"))
    facts.deps = includes(tu, command.directory)
    facts.diagnostics = diagnostics(tu) | ({"dropped_flags": dropped} if dropped else {})
    return facts
