"""TableGen records with the `tablegen` grammar of tree-sitter-language-pack 0.13.0.

Every `def`, `defm` and `class` becomes a record: parents with their arguments, template parameters, `let` fields
(including those of enclosing `let … in { … }` blocks). What a record *is* (pass, op, dialect, DRR pattern) needs
records from other files (`TTG_Op` → `Op<TritonGPU_Dialect, …>`), so it is decided after all files are read, in
`compiler_index.link`.

Values become JSON: strings and code blocks → str, numbers → int, lists → list, anonymous records
(`Option<"a", …>`) → {"class": name, "args": [...]}, identifiers → {"id": name}, dags → {"dag": op, "args": [...]},
anything else → {"text": source}.
"""

from __future__ import annotations

import textwrap
from functools import cache
from typing import Any

import tree_sitter
from tree_sitter import Node

from compiler_index.model import FileFacts, TdRecord


@cache
def _parser() -> tree_sitter.Parser:
    # tree-sitter-language-pack 0.13.0 bundles the compiled grammar; newer releases download it (fails offline)
    from tree_sitter_language_pack import get_parser

    return get_parser("tablegen")


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def _string(node: Node) -> str:
    raw = _text(node)
    if node.type == "code_string":
        return textwrap.dedent(raw[2:-2]).strip()
    return raw[1:-1].replace('\\"', '"').replace("\\n", "\n")


def value(node: Node) -> Any:
    """JSON form of a `value` (or `dag_arg`) node."""
    if node.type == "dag_arg":
        inner = next((c for c in node.named_children if c.type == "value"), None)
        var = next((c for c in node.named_children if c.type == "var"), None)
        if inner is None:
            return {"var": _text(var)} if var is not None else {"text": _text(node)}
        v = value(inner)
        return {**v, "bind": _text(var)} if var is not None and isinstance(v, dict) else v
    kids = [c for c in node.children if c.type not in ("comment", "multiline_comment")]
    if not kids:
        return {"text": _text(node)}
    first = kids[0]
    if all(k.type in ("string_string", "code_string") for k in kids):
        return "".join(_string(k) for k in kids)
    if first.type == "number" and len(kids) == 1:
        try:
            return int(_text(first), 0)
        except ValueError:
            return {"text": _text(first)}
    if first.type == "[":
        return [value(k) for k in kids if k.type == "value"]
    if first.type == "(":
        args = [value(k) for k in kids if k.type == "dag_arg"]
        return {"dag": args[0], "args": args[1:]} if args else {"text": _text(node)}
    if first.type == "identifier":
        name = _text(first)
        if len(kids) > 1 and kids[1].type == "<":
            return {"class": name, "args": [value(k) for k in kids if k.type == "value"]}
        if len(kids) == 1:
            return {"id": name}
    if first.type == "value" and len(kids) == 1:
        return value(first)
    return {"text": " ".join(_text(node).split())}


def _parents(node: Node) -> list[dict[str, Any]]:
    plist = next((c for c in node.children if c.type == "parent_class_list"), None)
    if plist is None:
        return []
    out: list[dict[str, Any]] = []
    for c in plist.children:
        if c.type == "identifier":
            out.append({"name": _text(c), "args": []})
        elif c.type == "argument_list" and out:
            out[-1]["args"] = [value(a) for a in c.named_children if a.type == "value"]
    return out


def _lets(body: Node | None) -> dict[str, Any]:
    lets: dict[str, Any] = {}
    if body is None:
        return lets
    for item in body.named_children:
        inst = (
            next((c for c in item.named_children if c.type == "let_inst"), None) if item.type == "body_item" else None
        )
        if inst is None:
            continue
        ident = next((c for c in inst.named_children if c.type == "identifier"), None)
        val = next((c for c in inst.named_children if c.type == "value"), None)
        if ident is not None and val is not None:
            lets[_text(ident)] = value(val)
    return lets


def _params(node: Node) -> list[str]:
    targs = next((c for c in node.children if c.type == "template_args"), None)
    if targs is None:
        return []
    names = []
    for arg in targs.named_children:
        ident = next((c for c in arg.named_children if c.type == "identifier"), None)
        if ident is not None:
            names.append(_text(ident))
    return names


def _record(node: Node, outer: dict[str, Any]) -> TdRecord | None:
    kind = node.type
    if kind == "class":
        name_node = node.child_by_field_name("name")
    else:
        name_node = next((c for c in node.named_children if c.type == "value"), None)
    if name_node is None:
        return None
    lets = {**outer, **_lets(node.child_by_field_name("body"))}
    return TdRecord(
        kind=kind,
        name=_text(name_node),
        parents=_parents(node),
        params=_params(node),
        lets=lets,
        line=node.start_point.row + 1,
        end_line=node.end_point.row + 1,
        text=_text(node)[:20000],
    )


def _walk(node: Node, outer: dict[str, Any], out: FileFacts) -> None:
    for stmt in node.named_children:
        target = stmt.named_children[0] if stmt.type == "statement" and stmt.named_child_count else stmt
        if target.type in ("def", "defm", "class"):
            rec = _record(target, outer)
            if rec is not None:
                out.td_records.append(rec)
        elif target.type == "let":
            lets = dict(outer)
            for item in target.named_children:
                if item.type == "let_item":
                    ident = next((c for c in item.named_children if c.type == "identifier"), None)
                    val = next((c for c in item.named_children if c.type == "value"), None)
                    if ident is not None and val is not None:
                        lets[_text(ident)] = value(val)
            _walk(target, lets, out)


def _count_errors(node: Node) -> int:
    if not node.has_error:
        return 0
    return (1 if node.type == "ERROR" or node.is_missing else 0) + sum(_count_errors(c) for c in node.children)


def extract(path: str, data: bytes) -> FileFacts:
    tree = _parser().parse(data)
    facts = FileFacts(lang="tablegen", parse_errors=_count_errors(tree.root_node))
    _walk(tree.root_node, {}, facts)
    return facts
