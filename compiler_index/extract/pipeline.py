"""The pass pipeline of a Triton backend (`backends/<name>/compiler.py`), read with Python's `ast`.

Which adder runs in which stage, in which order, with which arguments, under which conditions: every call whose
dotted name goes through a `passes` module (`passes.ttgpuir.add_coalesce(pm)`,
`nvidia.passes.ttnvgpuir.add_plan_cta(pm)`, `amd.passes.ttgpuir.insert_instruction_sched_hints(pm, hint)`) inside a
method, with the `if`/`elif`/`else`/`for` tests on the way to it. `add_stages` maps stage keys to methods
(`stages["ttgir"] = lambda src, metadata: self.make_ttgir(…)`), also under conditions.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from compiler_index.extract import backend_of
from compiler_index.model import FileFacts, PipelineStage, PipelineStep


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_adder(name: str) -> bool:
    parts = name.split(".")
    return "passes" in parts[:-1] and len(parts) >= 3


class _Walker:
    def __init__(self, backend: str, lines: list[str], facts: FileFacts):
        self.backend, self.lines, self.facts = backend, lines, facts

    def snippet(self, line: int) -> str:
        return self.lines[line - 1].strip()[:200] if 0 < line <= len(self.lines) else ""

    def method(self, fn: ast.FunctionDef) -> None:
        position = [0]
        self._body(fn.body, [], fn.name, position)

    def _body(self, body: list[ast.stmt], conds: list[str], method: str, position: list[int]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                test = ast.unparse(stmt.test)
                self._body(stmt.body, [*conds, test], method, position)
                self._body(stmt.orelse, [*conds, f"not ({test})"], method, position)
            elif isinstance(stmt, ast.For | ast.While):
                head = (
                    f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}"
                    if isinstance(stmt, ast.For)
                    else f"while {ast.unparse(stmt.test)}"
                )
                self._body(stmt.body, [*conds, head], method, position)
                self._body(stmt.orelse, conds, method, position)
            elif isinstance(stmt, ast.With | ast.Try):
                self._body(stmt.body, conds, method, position)
                if isinstance(stmt, ast.Try):
                    for h in stmt.handlers:
                        self._body(
                            h.body,
                            [*conds, f"except {ast.unparse(h.type) if h.type else ''}".strip()],
                            method,
                            position,
                        )
                    self._body(stmt.finalbody, conds, method, position)
            elif isinstance(stmt, ast.FunctionDef | ast.ClassDef):
                continue  # nested definitions run elsewhere, if at all
            else:
                self._calls(stmt, conds, method, position)

    def _calls(self, stmt: ast.stmt, conds: list[str], method: str, position: list[int]) -> None:
        calls = sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            name = _dotted(call.func)
            if name is None:
                continue
            if _is_adder(name):
                args = ", ".join(ast.unparse(a) for a in call.args[1:])
                args = ", ".join(filter(None, [args, *(ast.unparse(k) for k in call.keywords)]))
                self.facts.pipeline_steps.append(
                    PipelineStep(
                        backend=self.backend,
                        method=method,
                        position=position[0],
                        adder=name,
                        args=args,
                        condition=" and ".join(conds),
                        line=call.lineno,
                        snippet=self.snippet(call.lineno),
                    )
                )
                position[0] += 1

    def stages(self, fn: ast.FunctionDef) -> None:
        """`stages["ttgir"] = lambda src, metadata: self.make_ttgir(…)` under the conditions around it."""

        def visit(body: list[ast.stmt], conds: list[str]) -> None:
            for stmt in body:
                if isinstance(stmt, ast.If):
                    test = ast.unparse(stmt.test)
                    visit(stmt.body, [*conds, test])
                    visit(stmt.orelse, [*conds, f"not ({test})"])
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target = stmt.targets[0]
                    if not (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.slice, ast.Constant)
                        and isinstance(target.slice.value, str)
                    ):
                        continue
                    called = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Call)]
                    method = next((_dotted(c.func) for c in called if _dotted(c.func)), None)
                    if method:
                        self.facts.pipeline_stages.append(
                            PipelineStage(
                                backend=self.backend,
                                stage=target.slice.value,
                                method=method.split(".")[-1],
                                condition=" and ".join(conds),
                                line=stmt.lineno,
                            )
                        )

        visit(fn.body, [])


def extract(path: str, data: bytes) -> FileFacts:
    facts = FileFacts(lang="pipeline")
    text = data.decode("utf-8", "replace")
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        facts.parse_errors = 1
        facts.error = f"{path}:{e.lineno}: not valid Python ({e.msg}); its pipeline is not indexed"
        return facts
    walker = _Walker(backend_of(PurePosixPath(path)) or PurePosixPath(path).parent.name, text.splitlines(), facts)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            if node.name == "add_stages":
                walker.stages(node)
            else:
                walker.method(node)
    return facts
