"""The predicate language of pattern cards: a small, safe expression language parsed here (never `eval`).

    ttir.compute.reduce_index >= 1 and (src.uses_argmax or ptx.sync.shuffle > 0)
    sass.mem.load_vec1 > 0 and sass.mem.load_vec4 == 0
    l2.bottleneck == "memory" and not l2.launch_bound

Grammar (lowest precedence first):

    expr    := or
    or      := and ("or" and)*
    and     := not ("and" not)*
    not     := "not" not | cmp
    cmp     := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
    sum     := term (("+" | "-") term)*
    term    := unary (("*" | "/") unary)*
    unary   := "-" unary | atom
    atom    := NUMBER | STRING | "true" | "false" | NAME | "(" expr ")"
    NAME    := IDENT ("." IDENT)*

Evaluation is three-valued (Kleene): a name missing from the evidence is *unknown*, and so is every comparison
or arithmetic that reads it; `false and unknown` is false, `true or unknown` is true, `not unknown` is unknown.
A predicate that evaluates to unknown is neither a match nor an anti-match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Value = bool | int | float | str | None  # None: unknown


class PredicateError(ValueError):
    """A predicate that does not parse; the message shows where."""

    def __init__(self, text: str, pos: int, what: str):
        caret = " " * pos + "^"
        super().__init__(f"{what} at column {pos + 1}:\n  {text}\n  {caret}")
        self.text, self.pos, self.what = text, pos, what


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)
      | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
      | (?P<op>==|!=|<=|>=|<|>|\+|-|\*|/|\(|\))
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "true", "false", "True", "False"}


@dataclass(frozen=True)
class Token:
    kind: str  # num | str | name | op | kw | end
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            start = len(text) - len(text[pos:].lstrip())
            raise PredicateError(text, start, f"unexpected character {text[start]!r}")
        kind = m.lastgroup or ""
        value = m.group(kind)
        start = m.start(kind)
        if kind == "name" and value in _KEYWORDS:
            kind = "kw"
        tokens.append(Token(kind, value, start))
        pos = m.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


# --- syntax tree ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    pos: int


@dataclass(frozen=True)
class Literal(Node):
    value: bool | int | float | str


@dataclass(frozen=True)
class Name(Node):
    name: str


@dataclass(frozen=True)
class Not(Node):
    operand: Node


@dataclass(frozen=True)
class BoolOp(Node):
    op: str  # and | or
    operands: tuple[Node, ...]


@dataclass(frozen=True)
class Compare(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Arith(Node):
    op: str  # + - * / or "neg" (right is unused)
    left: Node
    right: Node | None


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        t = self.tokens[self.i]
        self.i += 1
        return t

    def at(self, *texts: str) -> bool:
        return self.tok.kind in ("op", "kw") and self.tok.text in texts

    def parse(self) -> Node:
        if self.tok.kind == "end":
            raise PredicateError(self.text, 0, "empty predicate")
        node = self.or_()
        if self.tok.kind != "end":
            raise PredicateError(self.text, self.tok.pos, f"unexpected {self.tok.text!r}")
        return node

    def or_(self) -> Node:
        first = self.and_()
        items = [first]
        while self.at("or"):
            self.take()
            items.append(self.and_())
        return first if len(items) == 1 else BoolOp(first.pos, "or", tuple(items))

    def and_(self) -> Node:
        first = self.not_()
        items = [first]
        while self.at("and"):
            self.take()
            items.append(self.not_())
        return first if len(items) == 1 else BoolOp(first.pos, "and", tuple(items))

    def not_(self) -> Node:
        if self.at("not"):
            t = self.take()
            return Not(t.pos, self.not_())
        return self.cmp()

    def cmp(self) -> Node:
        left = self.sum()
        if self.at("==", "!=", "<", "<=", ">", ">="):
            op = self.take()
            right = self.sum()
            if self.at("==", "!=", "<", "<=", ">", ">="):
                raise PredicateError(self.text, self.tok.pos, "chained comparison; join the parts with `and`")
            return Compare(op.pos, op.text, left, right)
        return left

    def sum(self) -> Node:
        node = self.term()
        while self.at("+", "-"):
            op = self.take()
            node = Arith(op.pos, op.text, node, self.term())
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.at("*", "/"):
            op = self.take()
            node = Arith(op.pos, op.text, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.at("-"):
            t = self.take()
            return Arith(t.pos, "neg", self.unary(), None)
        return self.atom()

    def atom(self) -> Node:
        t = self.tok
        if t.kind == "num":
            self.take()
            v = float(t.text)
            return Literal(t.pos, int(v) if v.is_integer() and re.fullmatch(r"\d+", t.text) else v)
        if t.kind == "str":
            self.take()
            return Literal(t.pos, _unquote(t.text))
        if t.kind == "kw" and t.text in ("true", "True", "false", "False"):
            self.take()
            return Literal(t.pos, t.text.lower() == "true")
        if t.kind == "name":
            self.take()
            return Name(t.pos, t.text)
        if self.at("("):
            self.take()
            node = self.or_()
            if not self.at(")"):
                raise PredicateError(self.text, self.tok.pos, "expected ')'")
            self.take()
            return node
        what = "end of predicate" if t.kind == "end" else repr(t.text)
        raise PredicateError(self.text, t.pos, f"expected a number, string, name or '(' but found {what}")


def _unquote(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", lambda m: m.group(1), body)


# --- evaluation ----------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What a predicate said about some evidence: True, False or None (unknown), and what it read."""

    value: bool | None
    read: dict[str, Value] = field(default_factory=dict)  # every name the predicate read → its value (None: absent)
    notes: list[str] = field(default_factory=list)  # type mismatches, division by zero

    @property
    def missing(self) -> list[str]:
        return [k for k, v in self.read.items() if v is None]


def _truth(v: Value) -> bool | None:
    if v is None:
        return None
    if isinstance(v, str):
        return v != ""
    return bool(v)


_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}


def _is_num(v: Value) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


class _Evaluator:
    def __init__(self, lookup: Callable[[str], Value]):
        self.lookup = lookup
        self.out = Outcome(None)

    def value(self, node: Node) -> Value:
        match node:
            case Literal(value=v):
                return v
            case Name(name=n):
                got = self.lookup(n)
                self.out.read[n] = got
                return got
            case Not(operand=o):
                t = _truth(self.value(o))
                return None if t is None else not t
            case BoolOp(op="and", operands=ops):
                vals = [_truth(self.value(o)) for o in ops]  # evaluate all: every read name is reported
                return False if False in vals else (None if None in vals else True)
            case BoolOp(op="or", operands=ops):
                vals = [_truth(self.value(o)) for o in ops]
                return True if True in vals else (None if None in vals else False)
            case Compare(op=op, left=left, right=right):
                a, b = self.value(left), self.value(right)
                if a is None or b is None:
                    return None
                if isinstance(a, bool) or isinstance(b, bool):
                    a, b = (int(a) if isinstance(a, bool) else a), (int(b) if isinstance(b, bool) else b)
                if op not in ("==", "!=") and (isinstance(a, str) != isinstance(b, str)):
                    self.out.notes.append(f"cannot order {a!r} and {b!r} ({op}): unknown")
                    return None
                return _CMP[op](a, b)
            case Arith(op="neg", left=left):
                a = self.value(left)
                if isinstance(a, str):
                    return self._bad("-", a, None)
                return None if a is None else -a
            case Arith(op=op, left=left, right=Node() as right):
                a, b = self.value(left), self.value(right)
                if a is None or b is None:
                    return None
                if not ((_is_num(a) or isinstance(a, bool)) and (_is_num(b) or isinstance(b, bool))):
                    return self._bad(op, a, b)
                if op == "/" and b == 0:
                    self.out.notes.append("division by zero: unknown")
                    return None
                return _ARITH[op](a, b)
        raise TypeError(f"unknown node {node!r}")

    def _bad(self, op: str, a: Value, b: Value) -> Value:
        """Arithmetic on a non-number: noted, and the result is unknown (None)."""
        self.out.notes.append(f"arithmetic {op} on non-numbers {a!r}, {b!r}: unknown")
        return None


@dataclass(frozen=True)
class Predicate:
    """A parsed predicate. `Predicate.parse(text)` raises PredicateError with the column of the problem."""

    text: str
    tree: Node

    @classmethod
    def parse(cls, text: str) -> Predicate:
        if not isinstance(text, str):
            raise PredicateError(str(text), 0, f"a predicate must be a string, got {type(text).__name__}")
        return cls(text, _Parser(text).parse())

    def names(self) -> list[str]:
        found: list[str] = []

        def walk(n: Node | None) -> None:
            match n:
                case Name(name=name):
                    if name not in found:
                        found.append(name)
                case Not(operand=o):
                    walk(o)
                case BoolOp(operands=ops):
                    for o in ops:
                        walk(o)
                case Compare(left=a, right=b) | Arith(left=a, right=b):
                    walk(a)
                    walk(b)

        walk(self.tree)
        return found

    def evaluate(self, facts: Mapping[str, Value] | Callable[[str], Value]) -> Outcome:
        lookup = facts if callable(facts) else (lambda n: facts.get(n))
        ev = _Evaluator(lookup)
        ev.out.value = _truth(ev.value(self.tree))
        return ev.out

    def __str__(self) -> str:
        return self.text
