"""64-bit offsets: the program id becomes int64 where a pointer offset multiplies it by a run-time size.

`row = tl.program_id(0)` is int32, and so is `row * stride` when `stride` is an int32 argument: past 2^31 elements
the product wraps and the kernel reads and writes wrong addresses. Casting the program id where it is bound
(`row = tl.program_id(0).to(tl.int64)`) promotes every offset derived from it; tl.arange stays int32 and the
addition promotes. Below 2^31 the values are the same, so results do not change for any input the original
handled; only register use grows. Products by constexprs alone (`pid * BLOCK`) are left alone: the rewrite is for
offsets scaled by a size or stride the kernel receives at run time.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patterns.appliers.autotune import pointer_params
from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis
from patterns.features.reader import attr_path

ADDRESSED = ("load", "store")


@dataclass(frozen=True)
class _Site:
    kernel: str
    stmt: ast.Assign  # `row = tl.program_id(0)`
    name: str  # row
    product: ast.BinOp  # the first offset product it reaches, for the description


def _is_int64_cast(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
        and bool(node.args)
        and attr_path(node.args[0]).endswith("int64")
    )


def _computes_from(k: KernelAnalysis, expr: ast.AST, names: set[str]) -> bool:
    """Whether `expr` computes its value from `names` by arithmetic: a value loaded from memory at an address built
    from them (`tl.load(idx_ptr + row)`) has the tensor's own type, which the cast does not change."""
    if isinstance(expr, ast.Name):
        return expr.id in names
    if isinstance(expr, ast.Call) and ((name := k.mod.tl_call(expr)) == "load" or (name or "").startswith("atomic_")):
        return False
    return any(_computes_from(k, c, names) for c in ast.iter_child_nodes(expr))


def _derived(k: KernelAnalysis, root: str) -> set[str]:
    """`root` and the local names whose values are computed from it."""
    names = {root}
    changed = True
    while changed:
        changed = False
        for name, vals in k.defs.items():
            if name not in names and any(_computes_from(k, v, names) for v in vals):
                names.add(name)
                changed = True
    return names


def _address_products(k: KernelAnalysis) -> list[ast.BinOp]:
    """The multiplications inside the addresses of the kernel's loads, stores and atomics (through locals)."""
    out: list[ast.BinOp] = []
    for name, call in k.calls():
        if (name in ADDRESSED or name.startswith("atomic_")) and call.args:
            for e in k.expand(call.args[0], depth=6):
                out += [n for n in ast.walk(e) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)]
    return out


def _sizes(k: KernelAnalysis) -> set[str]:
    """The kernel's run-time integer arguments: neither constexprs nor pointers."""
    return set(k.params) - set(k.constexprs) - pointer_params(k)


def sites(mod: SourceModule) -> tuple[list[_Site], list[str]]:
    """The program-id bindings to widen, and why each kernel without one was left alone."""
    found: list[_Site] = []
    why: list[str] = []
    for kname, k in mod.kernels.items():
        pids = [
            (s, t.id)
            for s in ast.walk(k.fn)
            if isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(t := s.targets[0], ast.Name)
            and k.mod.tl_call(s.value) == "program_id"
            and len(k.defs.get(t.id, [])) == 1
        ]
        if not pids:
            wide = next((s for s in ast.walk(k.fn) if isinstance(s, ast.Assign) and _is_int64_cast(s.value)), None)
            if wide is not None and any(k.mod.tl_call(n) == "program_id" for n in ast.walk(wide.value)):
                why.append(f"{kname} already binds an int64 program id (line {wide.lineno})")
            else:
                why.append(f"{kname} binds no program id to a name of its own (`pid = tl.program_id(0)`)")
            continue
        sizes = _sizes(k)
        products = _address_products(k)
        mine = []
        for stmt, name in pids:
            tainted = _derived(k, name)
            for p in products:
                for side, other in ((p.left, p.right), (p.right, p.left)):
                    if (
                        _computes_from(k, side, tainted)
                        and not any(_is_int64_cast(n) for n in ast.walk(side))
                        and not k.mentions(other, tainted)
                        and any(k.mentions(e, sizes) for e in k.expand(other))
                    ):
                        mine.append(_Site(kname, stmt, name, p))
                        break
                else:
                    continue
                break
        if mine:
            found += mine
        else:
            ids = ", ".join(name for _, name in pids)
            why.append(
                f"no load/store address of {kname} multiplies its program id ({ids}) or a value derived from it by "
                "a run-time size argument (products by constexprs only, or already int64)"
            )
    return found, why


class Int64Indexing(Applier):
    name = "int64_indexing"
    card = "int64-indexing"
    summary = (
        "`pid = tl.program_id(a).to(tl.int64)` where a pointer offset multiplies the program id by a run-time size"
    )

    def applies(self, mod: SourceModule) -> bool:
        return "tl" in mod.names.tl_aliases and bool(sites(mod)[0])

    def why_not(self, mod: SourceModule) -> str | None:
        found, why = sites(mod)
        if found and "tl" in mod.names.tl_aliases:
            return None
        if found:
            return f"{self.name}: the module does not name triton.language `tl`"
        return f"{self.name}: " + ("; ".join(why) if why else "the module has no @triton.jit kernel")

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        found, _ = sites(mod)
        edits = []
        for s in found:
            end = mod.span(s.stmt.value)[1]
            edits.append(Edit(end, end, ".to(tl.int64)"))
        where = "; ".join(
            f"{s.name} of {s.kernel} (line {s.stmt.lineno}; offset product "
            f"`{ast.unparse(s.product)}` at line {s.product.lineno})"
            for s in found
        )
        desc = f"int64 program id: {where}"
        return [Candidate(self.name, self.card, desc, mod.apply(edits), {"int64_program_ids": len(found)})]
