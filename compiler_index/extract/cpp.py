"""C++ facts with tree-sitter-cpp: functions, classes, calls, op creation/erase sites, gates, pattern registrations,
pass hooks (GEN_PASS_DEF, impl::*Base) and pybind pass adders.

One tree-sitter query (run in C) finds the candidate nodes; Python only looks at those. Types of local variables are
resolved from the enclosing function's declarations (parameters, `auto x = dyn_cast<T>(…)`, `T::create(…)`, range
loops over `getOps<T>()`), which is what tells an `eraseOp(cvt)` on a `ConvertLayoutOp` from one on an `Operation *`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cache

import tree_sitter
import tree_sitter_cpp
from tree_sitter import Node, Query, QueryCursor

from compiler_index.model import (
    Base,
    Call,
    ClassDef,
    FileFacts,
    Function,
    Gate,
    OpSite,
    PassImpl,
    PyAdder,
    PySubmodule,
    Registration,
)

_QUERY = """
(function_definition) @fn
(class_specifier name: (_) body: (_)) @cls
(struct_specifier name: (_) body: (_)) @cls
(call_expression function: (_)) @call
(return_statement) @ret
(declaration) @decl
(parameter_declaration) @param
(field_declaration type: (_)) @field
(for_range_loop) @range
(preproc_def name: (_)) @macro
(namespace_alias_definition) @alias
(namespace_definition) @namespace
(using_declaration) @using
(ERROR) @error
"""

# Calls that build an op when given a template argument: builder.create<X>(…), rewriter.replaceOpWithNewOp<X>(…)
_TEMPLATE_CREATORS = {
    "create": "create<X>",
    "createOrFold": "createOrFold<X>",
    "replaceOpWithNewOp": "replaceOpWithNewOp<X>",
    "create_op": "create<X>",
}
# Calls whose first argument is the erased op
_ERASE_BY_ARG = {
    "eraseOp": "eraseOp",
    "replaceOp": "replaceOp",
    "replaceOpWithNewOp": "replaceOpWithNewOp",
    "replaceOpWithMultiple": "replaceOp",
}
_CASTS = {
    "dyn_cast",
    "cast",
    "dyn_cast_or_null",
    "cast_or_null",
    "dyn_cast_if_present",
    "cast_if_present",
    "getDefiningOp",
    "getParentOfType",
    "create",
    "createOrFold",
    "replaceOpWithNewOp",
    "getOps",
}
_DIAG = {"emitRemark": "remark", "emitWarning": "warning", "emitError": "error", "emitOpError": "error"}
_DEBUG_MACROS = {"LDBG", "LLVM_DEBUG", "DEBUG_WITH_TYPE"}
_FATAL = {"llvm_unreachable", "report_fatal_error"}
_NOT_CALLS = _DEBUG_MACROS | {"DBGS", "assert", "static_assert", "sizeof", "decltype"}
_PASS_WRAPPER = re.compile(r"ADD_PASS(?:_OPTION)?_WRAPPER_\d+$")
_ROOT_HINT = re.compile(r"([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)::getOperationName\(\)")
_SPACE = re.compile(r"\s+")
# Idioms tree-sitter cannot parse, each of which would swallow the code after it into ERROR nodes:
# type arguments of the pybind adder macros (`ADD_PASS_OPTION_WRAPPER_2("add_x", createX, int, bool);`) and
# preprocessor lines inside a template argument list (`addOperations<\n#define GET_OP_LIST\n#include "…"\n>()`).
_MACRO_TYPE_ARGS = re.compile(rb'(ADD_PASS(?:_OPTION)?_WRAPPER_\d+\s*\(\s*"[^"]*"\s*,\s*[\w:]+\s*)(,[^;]*?)(\)\s*;)')
_PP_IN_TEMPLATE = re.compile(rb"(\w<)(\s*(?:#[^\n]*\n\s*)+)(>)")


@cache
def _language() -> tuple[tree_sitter.Parser, Query]:
    lang = tree_sitter.Language(tree_sitter_cpp.language())
    return tree_sitter.Parser(lang), Query(lang, _QUERY)


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _squeeze(text: str, limit: int = 300) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _last_name(node: Node) -> tuple[str, list[str], str]:
    """(name, template args, scope) of an identifier, qualified identifier or template type/function/method."""
    scope: list[str] = []
    while node.type == "qualified_identifier":
        s = node.child_by_field_name("scope")
        if s is not None:
            scope.append(_text(s))
        nxt = node.child_by_field_name("name")
        if nxt is None:
            break
        node = nxt
    targs: list[str] = []
    if node.type in ("template_type", "template_function", "template_method"):
        args = node.child_by_field_name("arguments")
        if args is not None:
            targs = [_squeeze(_text(a), 200) for a in args.named_children]
        node = node.child_by_field_name("name") or node
    return _text(node), targs, "::".join(scope)


def split_type(text: str) -> tuple[str, str]:
    """`const triton::gpu::ConvertLayoutOp &` → ("triton::gpu", "ConvertLayoutOp"); template arguments dropped."""
    text = re.sub(r"<.*>", "", text)
    text = re.sub(r"\b(const|volatile|struct|class|typename|mutable)\b|[&*]", " ", text).strip()
    text = text.split()[-1] if text.split() else ""
    scope, _, name = text.rpartition("::")
    return scope.lstrip(":"), name


def _string_literals(node: Node) -> list[str]:
    """Literal string pieces under `node`, in source order."""
    out: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "string_literal":
            out.append(_literal(n))
        elif n.type == "raw_string_literal":
            out.append(_text(n))
        else:
            stack.extend(reversed(n.children))
    return out


def _literal(node: Node) -> str:
    parts = []
    for c in node.children:
        if c.type == "string_content":
            parts.append(_text(c))
        elif c.type == "escape_sequence":
            parts.append({"\\n": " ", "\\t": " ", '\\"': '"', "\\\\": "\\"}.get(_text(c), ""))
    return "".join(parts)


def _stream_operands(node: Node) -> list[Node]:
    """Operands of a `a << b << c` chain, left to right."""
    if node.type == "binary_expression" and _text(node.child_by_field_name("operator")) == "<<":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return _stream_operands(left) + _stream_operands(right) if left and right else [node]
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _stream_operands(node.named_children[0])
    return [node]


def _render_message(operands: list[Node]) -> str:
    pieces = []
    for op in operands:
        if op.type in ("string_literal", "concatenated_string", "raw_string_literal"):
            pieces.append("".join(_string_literals(op)))
        elif op.type == "call_expression" and _text(op.child_by_field_name("function")).endswith(
            ("emitRemark", "emitWarning", "emitError", "emitOpError", "DBGS", "notifyMatchFailure")
        ):
            args = op.child_by_field_name("arguments")
            lits = [_literal(a) for a in args.named_children if a.type == "string_literal"] if args else []
            pieces.append("".join(lits))
        else:
            pieces.append("{" + _squeeze(_text(op), 40) + "}")
    return _squeeze("".join(pieces), 500)


@dataclass
class _Scope:
    """Declarations of one function, by name, in source order: (byte offset, type as written)."""

    decls: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    def add(self, name: str, pos: int, type_text: str) -> None:
        if name and type_text:
            self.decls.setdefault(name, []).append((pos, type_text))

    def type_of(self, name: str, pos: int) -> str | None:
        best = None
        for p, t in self.decls.get(name, ()):
            if p <= pos:
                best = t
        return best


class _File:
    def __init__(self, path: str, data: bytes):
        self.path, self.data = path, data
        self.lines = data.split(b"\n")
        parser, query = _language()
        self.tree = parser.parse(data)
        self.caps = QueryCursor(query).captures(self.tree.root_node)
        self.facts = FileFacts(lang="cpp", parse_errors=len(self.caps.get("error", [])))
        self._fn_starts: list[int] = []
        self._fn_ends: list[int] = []
        self._fn_parent: list[int] = []
        self._scopes: dict[int, _Scope] = {}
        self._fields: dict[str, dict[str, str]] = {}  # class → data member → type as written

    def snippet(self, line: int) -> str:
        raw = self.lines[line - 1] if 0 < line <= len(self.lines) else b""
        return _squeeze(raw.decode("utf-8", "replace"), 200)

    # ---- functions -------------------------------------------------------------------------------------------
    def functions(self) -> None:
        nodes = sorted(self.caps.get("fn", []), key=lambda n: n.start_byte)
        stack: list[int] = []
        for node in nodes:
            fn = self._function(node)
            if fn is None:
                continue
            idx = len(self.facts.functions)
            self.facts.functions.append(fn)
            while stack and self._fn_ends[stack[-1]] < node.start_byte:
                stack.pop()
            self._fn_parent.append(stack[-1] if stack else -1)
            self._fn_starts.append(node.start_byte)
            self._fn_ends.append(node.end_byte)
            stack.append(idx)

    def _function(self, node: Node) -> Function | None:
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        if decl is None:
            return None
        name_node = decl.child_by_field_name("declarator")
        if name_node is None:
            return None
        name, _, scope = _last_name(name_node)
        qualifier = split_type(scope)[1] if scope else ""
        # `void Cls::f()` names a class; `void ns::f()` a namespace (lower case by convention)
        cls = (qualifier if qualifier[:1].isupper() else None) if scope else self._enclosing_class(node)
        line, end = node.start_point.row + 1, node.end_point.row + 1
        body = node.child_by_field_name("body")
        head = self.data[node.start_byte : body.start_byte if body is not None else node.end_byte]
        return Function(
            name=name,
            cls=cls or None,
            returns=_squeeze(_text(node.child_by_field_name("type")), 80),
            line=line,
            end_line=end,
            signature=_squeeze(head.decode("utf-8", "replace"), 240),
            body=_text(node)[:20000],
            ns=_enclosing_namespace(node),
            qual=scope,
        )

    @staticmethod
    def _enclosing_class(node: Node) -> str | None:
        p = node.parent
        while p is not None:
            if p.type in ("class_specifier", "struct_specifier"):
                return _text(p.child_by_field_name("name")) or None
            if p.type == "function_definition":
                return None
            p = p.parent
        return None

    def fn_at(self, pos: int) -> int | None:
        j = bisect.bisect_right(self._fn_starts, pos) - 1
        while j >= 0 and self._fn_ends[j] < pos:
            j = self._fn_parent[j]
        return j if j >= 0 else None

    # ---- local types -----------------------------------------------------------------------------------------
    def scopes(self) -> None:
        for node in self.caps.get("param", []):
            name, type_text = self._declarator_name(node.child_by_field_name("declarator")), self._type(node)
            self._scope(node.start_byte).add(name, node.start_byte, type_text)
        for node in self.caps.get("decl", []):
            type_node = node.child_by_field_name("type")
            for d in node.children_by_field_name("declarator"):
                value = d.child_by_field_name("value") if d.type == "init_declarator" else None
                if value is None and d.type == "identifier":  # `if (auto x = …)`: value hangs off the declaration
                    value = node.child_by_field_name("value")
                target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                type_text = self._infer(type_node, value, target)
                self._scope(node.start_byte).add(self._declarator_name(target), node.start_byte, type_text)
        for node in self.caps.get("field", []):  # data members, for calls on them from the class's methods
            cls = self._enclosing_class(node)
            type_text = _text(node.child_by_field_name("type"))
            for d in node.children_by_field_name("declarator"):
                name = self._declarator_name(d, ("field_identifier",))
                if cls and name and d.type != "function_declarator":
                    self._fields.setdefault(cls, {})[name] = type_text
        for node in self.caps.get("range", []):
            target = node.child_by_field_name("declarator")
            type_text = self._infer(node.child_by_field_name("type"), node.child_by_field_name("right"), target)
            self._scope(node.start_byte).add(self._declarator_name(target), node.start_byte, type_text)

    def _scope(self, pos: int) -> _Scope:
        fn = self.fn_at(pos)
        key = -1 if fn is None else fn
        if key not in self._scopes:
            self._scopes[key] = _Scope()
        return self._scopes[key]

    @staticmethod
    def _declarator_name(node: Node | None, kinds: tuple[str, ...] = ("identifier",)) -> str:
        while node is not None and node.type in (
            "reference_declarator",
            "pointer_declarator",
            "init_declarator",
            "array_declarator",
        ):
            inner = node.child_by_field_name("declarator")
            if inner is None:  # reference_declarator has no field name for its child
                inner = next((c for c in node.named_children if c.type.endswith(("identifier", "declarator"))), None)
            node = inner
        return _text(node) if node is not None and node.type in kinds else ""

    @staticmethod
    def _type(node: Node) -> str:
        type_text = _text(node.child_by_field_name("type"))
        decl = _text(node.child_by_field_name("declarator"))
        return type_text + (" *" if decl.lstrip().startswith("*") else "")

    def _infer(self, type_node: Node | None, value: Node | None, target: Node | None) -> str:
        type_text = _text(type_node)
        if type_node is not None and type_node.type != "placeholder_type_specifier":
            return type_text + (" *" if target is not None and target.type == "pointer_declarator" else "")
        return _initializer_type(value) if value is not None else ""

    def local_type(self, expr: Node, pos: int) -> str | None:
        node = expr
        while node.type in ("pointer_expression", "parenthesized_expression") and node.named_child_count:
            node = node.named_children[-1]
        if node.type == "call_expression":  # x.getOperation() / x->getOperation()
            fn = node.child_by_field_name("function")
            if (
                fn is not None
                and fn.type == "field_expression"
                and _text(fn.child_by_field_name("field")) in ("getOperation", "getDefiningOp")
            ):
                node = fn.child_by_field_name("argument") or node
        if node.type == "field_expression" and _text(node.child_by_field_name("argument")) == "this":
            node = node.child_by_field_name("field") or node  # this->member
        if node.type not in ("identifier", "field_identifier"):
            return None
        fn_idx = self.fn_at(pos)
        scope = self._scopes.get(-1 if fn_idx is None else fn_idx)
        found = scope.type_of(_text(node), pos) if scope else None
        if found is None and fn_idx is not None:  # a data member of the method's class
            found = self._fields.get(self.facts.functions[fn_idx].cls or "", {}).get(_text(node))
        return found

    # ---- classes ---------------------------------------------------------------------------------------------
    def classes(self) -> None:
        for node in self.caps.get("cls", []):
            name = _text(node.child_by_field_name("name"))
            bases: list[Base] = []
            clause = next((c for c in node.children if c.type == "base_class_clause"), None)
            if clause is not None:
                for c in clause.named_children:
                    if c.type in ("type_identifier", "qualified_identifier", "template_type"):
                        base_name, targs, _ = _last_name(c)
                        bases.append(Base(text=_squeeze(_text(c), 200), name=base_name, targs=targs))
            body = _text(node.child_by_field_name("body"))
            hint = _ROOT_HINT.search(body) if "getOperationName" in body else None
            cls = ClassDef(
                name=name,
                kind="struct" if node.type == "struct_specifier" else "class",
                bases=bases,
                line=node.start_point.row + 1,
                end_line=node.end_point.row + 1,
                root_hint=hint.group(1) if hint else None,
                tparams=_template_params(node),
            )
            self.facts.classes.append(cls)
            for b in bases:
                if b.name.endswith("Base") and ("impl::" in b.text or b.targs == [name]):
                    self.facts.pass_impls.append(PassImpl("impl-base", b.name[: -len("Base")], name, cls.line))

    # ---- preprocessor, aliases -------------------------------------------------------------------------------
    def macros(self) -> None:
        for node in self.caps.get("macro", []):
            name = _text(node.child_by_field_name("name"))
            if name.startswith("GEN_PASS_DEF_"):
                self.facts.pass_impls.append(
                    PassImpl("gen-pass-def", name[len("GEN_PASS_DEF_") :], None, node.start_point.row + 1)
                )
            elif name == "DEBUG_TYPE":
                value = _text(node.child_by_field_name("value")).strip().strip('"')
                self.facts.debug_type = value or None
        for node in self.caps.get("namespace", []):
            name = _text(node.child_by_field_name("name"))
            if name and name not in self.facts.namespaces:
                self.facts.namespaces.append(name)
        for node in self.caps.get("using", []):
            if any(c.type == "namespace" for c in node.children) and node.named_child_count:
                self.facts.usings.append(_text(node.named_children[-1]).lstrip(":"))
        for node in self.caps.get("alias", []):
            named = node.named_children
            if len(named) >= 2:
                self.facts.aliases.append((_text(named[0]), _text(named[-1]).lstrip(":")))

    # ---- calls and everything derived from them --------------------------------------------------------------
    def calls(self) -> None:
        submodule_vars: dict[tuple[int | None, str], str] = {}
        for node in self.caps.get("decl", []):  # auto passes = m.def_submodule("passes");
            for d in node.children_by_field_name("declarator"):
                value = d.child_by_field_name("value") if d.type == "init_declarator" else None
                sub = _def_submodule(value) if value is not None else None
                if sub is not None:
                    fn = self.fn_at(node.start_byte)
                    receiver, name = sub
                    parent = submodule_vars.get((fn, receiver), "")
                    submodule_vars[(fn, self._declarator_name(d))] = f"{parent}.{name}".lstrip(".")
        for node in self.caps.get("call", []):
            self._call(node, submodule_vars)

    def _call(self, node: Node, submodule_vars: dict[tuple[int | None, str], str]) -> None:
        fn_node = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn_node is None:
            return
        pos, line = node.start_byte, node.start_point.row + 1
        caller = self.fn_at(pos)
        if fn_node.type == "field_expression":
            field_node = fn_node.child_by_field_name("field")
            if field_node is None:
                return
            name, targs, _ = _last_name(field_node)
            receiver = fn_node.child_by_field_name("argument")
            rtype = self.local_type(receiver, pos) if receiver is not None else None
            scope, form = ("::".join(p for p in split_type(rtype) if p) if rtype else ""), "member"
        elif fn_node.type in ("identifier", "qualified_identifier", "template_function"):
            name, targs, scope = _last_name(fn_node)
            form = "qualified" if fn_node.type == "qualified_identifier" else "plain"
            receiver = None
        else:
            return
        if not name or not (name[0].isalpha() or name[0] == "_"):
            return
        arg_nodes = args.named_children if args is not None else []
        snippet = self.snippet(line)
        if name not in _NOT_CALLS and not _PASS_WRAPPER.match(name):
            self.facts.calls.append(Call(caller, name, scope, form, line, snippet))
        self._op_sites(node, caller, name, targs, scope, form, receiver, arg_nodes, pos, line, snippet)
        self._gates(node, caller, name, form, arg_nodes, line, snippet)
        if name in ("add", "insert", "addWithLabel") and form == "member" and targs:
            for t in targs:
                self.facts.registrations.append(Registration(caller, split_type(t)[1], line))
        self._bindings(node, caller, name, form, receiver, arg_nodes, line, snippet, submodule_vars)

    def _op_sites(
        self,
        node: Node,
        caller: int | None,
        name: str,
        targs: list[str],
        scope: str,
        form: str,
        receiver: Node | None,
        args: list[Node],
        pos: int,
        line: int,
        snippet: str,
    ) -> None:
        if name == "create" and form == "qualified" and scope:
            op_scope, op_class = split_type(scope)
            if op_class[:1].isupper():
                self.facts.op_sites.append(OpSite(caller, "create", "X::create", op_class, op_scope, "", line, snippet))
        elif name in _TEMPLATE_CREATORS and targs:
            op_scope, op_class = split_type(targs[0])
            if op_class[:1].isupper():
                how = _TEMPLATE_CREATORS[name]
                self.facts.op_sites.append(OpSite(caller, "create", how, op_class, op_scope, "", line, snippet))
        target: Node | None = None
        how = ""
        if name in _ERASE_BY_ARG and form == "member" and args:
            target, how = args[0], _ERASE_BY_ARG[name]
        elif name == "erase" and form == "member" and not args and receiver is not None:
            target, how = receiver, "erase"
        elif name == "replaceAllUsesWith" and form == "member" and receiver is not None:
            target, how = receiver, "rauw"
        if target is None:
            return
        type_text = self.local_type(target, pos)
        op_scope, op_class = split_type(type_text) if type_text else ("", "")
        is_op = op_class.endswith("Op") or op_class == "Operation"
        if how == "rauw" and (not is_op or op_class == "Operation"):
            return  # Value::replaceAllUsesWith: no op goes away
        if how == "erase" and type_text is not None and not is_op:
            return  # a container's erase()
        known = op_class if is_op and op_class != "Operation" else None
        self.facts.op_sites.append(
            OpSite(caller, "erase", how, known, op_scope if known else "", _squeeze(_text(target), 80), line, snippet)
        )

    def _gates(
        self, node: Node, caller: int | None, name: str, form: str, args: list[Node], line: int, snippet: str
    ) -> None:
        kind, message = None, ""
        parent = node.parent
        if name == "failure" and parent is not None and parent.type == "return_statement" and not args:
            kind = "failure"
        elif name == "notifyMatchFailure":
            kind, message = "match-failure", _render_message(args[1:])
        elif name in _DIAG:
            top = node
            while (
                top.parent is not None
                and top.parent.type in ("binary_expression", "parenthesized_expression")
                and _text(top.parent.child_by_field_name("operator")) in ("<<", "")
            ):
                top = top.parent
            operands = _stream_operands(top)
            literal_args = [a for a in args if a.type in ("string_literal", "concatenated_string")]
            rest = [o for o in operands if o != node]  # the call's own literals are its arguments
            kind, message = _DIAG[name], _render_message(literal_args + rest)
        elif name in _DEBUG_MACROS and form == "plain":
            streamed = args[-1] if args and args[-1].type != "compound_statement" else None
            message = (
                _render_message(_stream_operands(streamed))
                if streamed is not None
                else _squeeze(" ".join(_string_literals(node)), 500)
            )  # LLVM_DEBUG({ … }): its literals
            kind = "debug"
        elif name == "assert" and form == "plain" and args:
            lits = _string_literals(args[0])
            # the message: one literal, or several that the compiler joins (`"a " "b"`)
            cond = re.sub(r'&&\s*(?:"(?:[^"\\]|\\.)*"\s*)+$', "", _text(args[0])).strip()
            self.facts.gates.append(
                Gate(caller, "assert", _squeeze(cond), self.guards(node), _squeeze(" ".join(lits)), line, snippet)
            )
            return
        elif name in _FATAL:
            kind, message = "fatal", _squeeze(" ".join(_string_literals(node)))
        elif name == "signalPassFailure":
            kind = "pass-failure"
        if kind is None:
            return
        guards = self.guards(node)
        self.facts.gates.append(Gate(caller, kind, guards[0] if guards else "", guards, message, line, snippet))

    def returns(self) -> None:
        """Returns in bool predicates: early `return false` / `return true` under a branch (the gates that are not
        `failure()`), and `return <expr>`, whose expression is the predicate's condition (`return width >= 32;`)."""
        for node in self.caps.get("ret", []):
            # `return /*RAW*/ a || b;` (Membar.h): the value is the first child that is not a comment
            value = next((c for c in node.named_children if c.type != "comment"), None)
            if value is None:
                continue
            fn = self.fn_at(node.start_byte)
            if fn is None or not self.facts.functions[fn].returns.endswith("bool") or self._in_lambda(node):
                continue
            chain = self.guard_chain(node)
            guards = [g for g, _ in chain]
            line = node.start_point.row + 1
            if value.type in ("true", "false"):
                if any(branch for _, branch in chain):  # the final `return true` of a predicate is no gate
                    self.facts.gates.append(
                        Gate(fn, f"return-{value.type}", guards[0], guards, "", line, self.snippet(line))
                    )
            else:
                expr = _squeeze(_text(value))
                self.facts.gates.append(
                    Gate(fn, "return-expr", guards[0] if guards else "", guards, "", line, self.snippet(line), expr)
                )

    @staticmethod
    def _in_lambda(node: Node) -> bool:
        p = node.parent
        while p is not None and p.type != "function_definition":
            if p.type == "lambda_expression":
                return True
            p = p.parent
        return False

    @classmethod
    def guards(cls, node: Node) -> list[str]:
        """The conditions under which `node` runs, innermost first (see `guard_chain`)."""
        return [g for g, _ in cls.guard_chain(node)]

    @staticmethod
    def guard_chain(node: Node) -> list[tuple[str, bool]]:
        """(condition, from a branch) pairs, innermost first: the `if` branches that enclose `node` (negated as
        `!(…)` in an else branch, so an else-if chain gives its own condition and every earlier one negated), and
        the early exits before it in each enclosing block (`if (c) return …;` → `!(c)`; also `break`/`continue`
        and fatal calls), nearest first (False: an early exit, not a branch)."""
        out: list[tuple[str, bool]] = []
        child, p = node, node.parent
        while p is not None and p.type != "function_definition":
            if p.type == "if_statement":
                cond_node = p.child_by_field_name("condition")
                cond = _condition(p)
                alt = p.child_by_field_name("alternative")
                if alt is not None and alt.start_byte <= child.start_byte and child.end_byte <= alt.end_byte:
                    out.append((_negate(cond), True))
                elif cond_node is None or not (cond_node.start_byte <= child.start_byte < cond_node.end_byte):
                    out.append((cond, True))
            elif p.type == "compound_statement":
                earlier = [c for c in p.named_children if c.end_byte <= child.start_byte]
                for sibling in reversed(earlier):
                    if (
                        sibling.type == "if_statement"
                        and sibling.child_by_field_name("alternative") is None
                        and any(_exits(c) for c in sibling.children_by_field_name("consequence"))
                    ):
                        out.append((_negate(_condition(sibling)), False))
            child, p = p, p.parent
        return out

    def _bindings(
        self,
        node: Node,
        caller: int | None,
        name: str,
        form: str,
        receiver: Node | None,
        args: list[Node],
        line: int,
        snippet: str,
        submodule_vars: dict[tuple[int | None, str], str],
    ) -> None:
        if _PASS_WRAPPER.match(name) and len(args) >= 2 and args[0].type == "string_literal":
            builder = _last_name(args[1])[0] if args[1].type in ("identifier", "qualified_identifier") else ""
            self.facts.py_adders.append(PyAdder(caller, _literal(args[0]), builder, name, line, snippet))
        elif name == "def" and form == "member" and len(args) >= 2 and args[0].type == "string_literal":
            adder = _literal(args[0])
            params = args[1].child_by_field_name("declarator") if args[1].type == "lambda_expression" else None
            if "PassManager" not in _text(params):  # a pass adder's lambda takes the pass manager
                return
            for builder in _factory_calls(args[1]):
                self.facts.py_adders.append(PyAdder(caller, adder, builder, "m.def", line, snippet))
        elif form == "plain" and len(args) == 1:
            sub = _def_submodule(args[0])
            if sub is not None:
                receiver_var, sub_name = sub
                parent = submodule_vars.get((caller, receiver_var), "")
                self.facts.py_submodules.append(PySubmodule(caller, name, f"{parent}.{sub_name}".lstrip("."), line))


def _condition(if_node: Node) -> str:
    """An `if`'s condition as written, without its parentheses (`if (auto x = …)`: the declaration)."""
    for cond_node in if_node.children_by_field_name("condition"):
        return _squeeze(_text(cond_node.child_by_field_name("value")))
    return ""  # pragma: no mutate: unreachable, tree-sitter-cpp gives every `if` a condition (MISSING if unwritten)


_EXIT_STATEMENTS = ("return_statement", "break_statement", "continue_statement", "throw_statement")


def _exits(stmt: Node) -> bool:
    """Control never falls through `stmt`: a return/break/continue, a fatal call, or a block ending in one."""
    if stmt.type in _EXIT_STATEMENTS:
        return True
    if stmt.type == "compound_statement":
        body = [c for c in stmt.named_children if c.type != "comment"]
        return bool(body) and _exits(body[-1])
    if stmt.type == "expression_statement" and stmt.named_child_count:
        call = stmt.named_children[0]
        fn = call.child_by_field_name("function")  # only a call_expression has one
        return fn is not None and _last_name(fn)[0] in _FATAL
    return False


# what `->` and `::` become before operators are looked for: any text without an operator character
_JOINER = "."


def _top_level_operator(expr: str) -> bool:
    """Whether `expr` has an operator outside parentheses/brackets (`a && b`, `x == 1`), i.e. is not one operand."""
    depth = 0
    text = expr.replace("->", _JOINER).replace("::", _JOINER)
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch in " &|=!<>+-*/%^?:,":  # `<`: a comparison or a template, either way not plain
            return True
    return False


def _negate(cond: str) -> str:
    """`!(cond)`, written plainly where that is exact: `!x` → `x`, `!(a && b)` → `a && b`."""
    if cond.startswith("!"):
        rest = cond[1:].strip()
        if rest.startswith("(") and rest.endswith(")") and _balanced(rest[1:-1]):
            return rest[1:-1].strip()
        if not _top_level_operator(rest):
            return rest
    return f"!({cond})"


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _enclosing_namespace(node: Node) -> str:
    """`namespace mlir::triton { namespace gpu { … } }` → "mlir::triton::gpu" (anonymous namespaces add nothing)."""
    parts: list[str] = []
    p = node.parent
    while p is not None:
        if p.type == "namespace_definition":
            name = _text(p.child_by_field_name("name"))
            if name:
                parts.append(name)
        p = p.parent
    return "::".join(reversed(parts))


def _template_params(node: Node) -> list[str]:
    parent = node.parent
    if parent is None or parent.type != "template_declaration":
        return []
    plist = parent.child_by_field_name("parameters")
    names = []
    for p in plist.named_children if plist is not None else []:
        ident = [c for c in p.named_children if c.type in ("type_identifier", "identifier")]
        if ident:
            names.append(_text(ident[-1]))
        elif p.type == "optional_type_parameter_declaration" and p.child_by_field_name("name") is not None:
            names.append(_text(p.child_by_field_name("name")))
    return names


def _initializer_type(node: Node) -> str:
    """The type an `auto` takes from its initializer: dyn_cast<T>(…), x.getDefiningOp<T>(), T::create(…),
    builder.create<T>(…), make_early_inc_range(m.getOps<T>()), T(…) (LLVM style: functions are lowerCamel)."""
    for _ in range(4):
        if node.type != "call_expression":
            return ""
        fn = node.child_by_field_name("function")
        if fn is None:
            return ""
        callee = fn.child_by_field_name("field") if fn.type == "field_expression" else fn
        if callee is None:
            return ""
        name, targs, scope = _last_name(callee)
        if name in _CASTS and targs:
            return targs[0]
        if name in ("create", "createOrFold") and fn.type == "qualified_identifier" and scope:
            return scope
        if fn.type in ("identifier", "qualified_identifier") and name[:1].isupper():
            return f"{scope}::{name}" if scope else name  # `auto b = TritonLLVMOpBuilder(loc, rewriter)`: a ctor
        if name not in ("make_early_inc_range", "reverse", "make_range"):
            return ""
        args = node.child_by_field_name("arguments")
        if args is None or not args.named_child_count:
            return ""
        node = args.named_children[0]
    return ""


def _def_submodule(node: Node) -> tuple[str, str] | None:
    """`m.def_submodule("x")` → ("m", "x")."""
    if node.type != "call_expression":
        return None
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or fn.type != "field_expression" or _text(fn.child_by_field_name("field")) != "def_submodule":
        return None
    lits = [a for a in (args.named_children if args else []) if a.type == "string_literal"]
    return (_text(fn.child_by_field_name("argument")), _literal(lits[0])) if lits else None


def _factory_calls(node: Node) -> list[str]:
    """Pass factories called in a hand-written adder's lambda: pm.addPass(createX(…)) → createX."""
    out: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type in ("identifier", "qualified_identifier"):
                name = _last_name(fn)[0]
                if name.startswith("create") and name not in out:
                    out.append(name)
        stack.extend(reversed(n.children))
    return out


def _blank(m: re.Match[bytes]) -> bytes:
    """Keep groups 1 and 3, replace group 2 by spaces: byte offsets, lines and columns stay where they were."""
    return m.group(1) + re.sub(rb"[^\n]", b" ", m.group(2)) + m.group(3)


def sanitize(data: bytes) -> bytes:
    return _PP_IN_TEMPLATE.sub(_blank, _MACRO_TYPE_ARGS.sub(_blank, data))


def extract(path: str, data: bytes) -> FileFacts:
    f = _File(path, sanitize(data))
    f.functions()
    f.scopes()
    f.classes()
    f.macros()
    f.calls()
    f.returns()
    return f.facts
