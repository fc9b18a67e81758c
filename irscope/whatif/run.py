"""Compile a captured kernel again with edits, and compare: is the compiler's decision the one the condition
predicts?

Argument attributes and options edit the captured output of one stage (`ttir`, the default, or `ttgir`), which
Triton then compiles through the remaining stages; a dot's input precision is set on every tt.dot of the TTIR
(the TTGIR's dots already have the layout it decided); a constexpr cannot be changed in IR (its value is folded
everywhere), so constexpr edits re-specialize the kernel from its source with the recorded arguments.
Both run the same per-pass capture as `irscope dump`; the result is an ordinary trajectory whose `derivation`
records the base and every edit with where it was applied.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from triton._C.libtriton import ir
from triton.compiler import ASTSource, make_backend

from irscope.capture.api import CompileError, capture_request
from irscope.capture.fdcapture import FdCapture
from irscope.capture.from_ir import capture_ir
from irscope.capture.loader import KernelLoadError, load_kernel
from irscope.capture.specialize import CompileRequest, unwrap_kernel
from irscope.compare import Comparison, compare
from irscope.store import save
from irscope.trajectory import MLIR, Specialization, Trajectory
from irscope.whatif.dot import apply_dot_precision
from irscope.whatif.edits import (
    Applied,
    ArgAttr,
    ConstexprEdit,
    DotPrecision,
    Edit,
    OptionEdit,
    WhatIfError,
    parse_edits,
)
from irscope.whatif.signature import apply_arg_attrs

STARTS = ("ttir", "ttgir")  # stages whose captured output can be edited and compiled on
SOURCE = "source"
# Options consumed by a stage's own passes: a compile that starts after that stage cannot honour them.
OPTION_STAGE = {"num_warps": "ttgir", "num_ctas": "ttgir", "num_stages": "ttgir"}


@dataclass
class WhatIf:
    """The base trajectory, the one compiled with the edits, and where each edit took effect."""

    base: Trajectory
    trajectory: Trajectory
    applied: list[Applied]
    start: str  # ttir | ttgir (the edited stage output) | source (re-specialized)

    @cached_property
    def comparison(self) -> Comparison:
        return compare(self.base, self.trajectory)

    def describe(self) -> list[str]:
        return [a.where for a in self.applied]

    def change(self, counter: str) -> tuple[float, float]:
        """(base, what-if) value of a summary counter such as ptx.mem.cp_async."""
        d = next((c for c in self.comparison.counters if c.name == counter), None)
        return (d.a, d.b) if d else (0.0, 0.0)


def whatif(
    traj: Trajectory,
    arg_attrs: list[str | ArgAttr] | tuple[str | ArgAttr, ...] = (),
    options: list[str | OptionEdit] | tuple[str | OptionEdit, ...] = (),
    constexprs: list[str | ConstexprEdit] | tuple[str | ConstexprEdit, ...] = (),
    dot_precision: str | DotPrecision | None = None,
    start: str = "ttir",
    out_dir: str | Path | None = None,
    disassemble: bool = True,
) -> WhatIf:
    """Recompile `traj`'s kernel with the edits applied (see the module docstring) and capture every pass.

    Edits are strings as on the command line (`lda:divisibility=16`, `num_stages=4`, `BLOCK_M=64`, `tf32`) or
    their values. With `out_dir` the new trajectory (and the edited IR file it was compiled from) is written there.
    Raises WhatIfError naming the edit when it cannot be honoured.
    """
    edits = parse_edits(arg_attrs, options, constexprs, dot_precision)
    if not edits:
        raise WhatIfError(
            "no edit given: pass an argument attribute, an option, a constexpr or a dot precision to change"
        )
    if start not in (*STARTS, SOURCE):
        raise WhatIfError(f"cannot start from {start!r}: choose one of {', '.join((*STARTS, SOURCE))}")
    if traj.error is not None or not traj.complete:
        why = traj.error.message.splitlines()[0] if traj.error and traj.error.message else "incomplete capture"
        raise WhatIfError(f"the base trajectory did not compile to the end ({why}); what-if needs a complete one")
    precision = next((e for e in edits if isinstance(e, DotPrecision)), None)
    if any(isinstance(e, ConstexprEdit) for e in edits):
        if precision is not None:
            raise WhatIfError(
                f"--dot-precision {precision.value}: a constexpr edit recompiles from the source, where the precision "
                "is the tl.dot call's input_precision; change one of them per what-if"
            )
        start = SOURCE
    if precision is not None and start != STARTS[0]:
        raise WhatIfError(
            f"--dot-precision {precision.value}: the {start} output's dots already have the layout their precision "
            "decided (tritongpu-accelerate-matmul runs in the ttgir stage); start from ttir instead (--from ttir)"
        )
    # the edited IR is written beside the new trajectory only once that is saved: the output directory must hold
    # nothing but a trajectory until then (irscope.store refuses to replace anything else)
    workdir = Path(tempfile.mkdtemp(prefix="irscope-whatif-"))
    backend = make_backend(traj.target.to_gpu_target())
    base_options = {k: tuple(v) if isinstance(v, list) else v for k, v in traj.specialization.options.items()}
    new_options = _options(backend, base_options, [e for e in edits if isinstance(e, OptionEdit)], start)
    if precision is not None:
        allowed = backend.parse_options(new_options).allowed_dot_input_precisions
        if precision.value not in allowed:
            raise WhatIfError(
                f"--dot-precision {precision.value}: {traj.target} does not take it; its dots allow "
                + ", ".join(allowed)
            )
    described = _options_applied([e for e in edits if isinstance(e, OptionEdit)], base_options, start)
    spec_data = json.loads(traj.specialization.triton)
    if start == SOURCE:
        new, applied = _from_source(traj, edits, spec_data, new_options, disassemble)
    else:
        new, applied = _from_ir(traj, edits, spec_data, new_options, start, workdir, backend, disassemble)
    applied = applied + described
    new.derivation = {
        "base": str(traj.root) if traj.root else "",
        "from": start,
        "edits": [a.to_json() for a in applied],
    }
    if out_dir is not None:
        save(new, out_dir)
        if (workdir / "input").is_dir():
            shutil.copytree(workdir / "input", Path(out_dir) / "input", dirs_exist_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)
    return WhatIf(traj, new, applied, start)


def _options(backend: Any, base: dict[str, Any], edits: list[OptionEdit], start: str) -> dict[str, Any]:
    known = {f.name for f in fields(type(backend.parse_options({})))}
    out = dict(base)
    for e in edits:
        if e.name not in known:
            raise WhatIfError(
                f"--option {e}: {backend.target.backend} has no option {e.name!r}; options: " + ", ".join(sorted(known))
            )
        if start in STARTS and e.name in OPTION_STAGE and STARTS.index(start) >= STARTS.index(OPTION_STAGE[e.name]):
            raise WhatIfError(
                f"--option {e}: {e.name} acts in the {OPTION_STAGE[e.name]} stage, which a compile from the {start} "
                f"output skips (the IR already carries its effect); start from ttir instead (--from ttir)"
            )
        try:
            parsed = backend.parse_options({**out, e.name: e.value})
        except Exception as exc:  # the backend's option checks (AssertionError, ValueError, …)
            raise WhatIfError(f"--option {e}: the {backend.target.backend} backend rejects it: {exc}") from None
        out[e.name] = getattr(parsed, e.name)
    return out


def _options_applied(edits: list[OptionEdit], base: dict[str, Any], start: str) -> list[Applied]:
    where = "the compile options" if start == SOURCE else f"the compile options of the stages after {start}"
    return [Applied(e, f"{e.name} = {e.value} (was {base.get(e.name)}) in {where}") for e in edits]


def _runtime_params(spec_data: dict[str, Any]) -> list[str]:
    return [n for n, t in spec_data["signature"].items() if t != "constexpr"]


def _specialization(
    traj: Trajectory, spec_data: dict[str, Any], options: dict[str, Any], attr_edits: list[ArgAttr], consts: dict
) -> Specialization:
    """The base specialization with the edits, in irscope's form and in Triton's own (the `preload` JSON)."""
    names = list(spec_data["signature"])
    data = json.loads(json.dumps(spec_data))
    for e in attr_edits:
        _put(data["attrs_keys"], data["attrs_vals"], names.index(e.name), None, e)
    for name, value in consts.items():
        _put(data["constant_keys"], data["constant_vals"], names.index(name), value, None)
    data["options"] = options
    old = traj.specialization
    return Specialization(
        signature=dict(old.signature),
        constexprs={**old.constexprs, **consts},
        attrs=_attrs_with(old.attrs, attr_edits),
        options={k: list(v) if isinstance(v, tuple) else v for k, v in options.items()},
        triton=json.dumps(data, default=str),
    )


def _put(keys: list[list[int]], vals: list[Any], index: int, value: Any, attr: ArgAttr | None) -> None:
    """Set the value at path [index] of Triton's key/value lists (an attribute edit merges into the list)."""
    if [index] not in keys:
        keys.append([index])
        vals.append([] if attr is not None else value)
    i = keys.index([index])
    if attr is None:
        vals[i] = value
    else:
        vals[i] = [*(a for a in vals[i] if a[0] != attr.attribute), [attr.attribute, attr.value]]


def _attrs_with(old: dict[str, list], edits: list[ArgAttr]) -> dict[str, list]:
    attrs = {k: [list(a) for a in v] for k, v in old.items()}
    for e in edits:
        kept = [a for a in attrs.get(e.name, []) if a[0] != e.attribute]
        attrs[e.name] = [*kept, [e.attribute, e.value]]
    return attrs


def _from_ir(
    traj: Trajectory,
    edits: list[Edit],
    spec_data: dict[str, Any],
    options: dict[str, Any],
    start: str,
    workdir: Path,
    backend: Any,
    disassemble: bool,
) -> tuple[Trajectory, list[Applied]]:
    try:
        snap = traj.stage_output(start)
    except KeyError:
        raise WhatIfError(
            f"the trajectory has no {start} stage to start from (stages: {', '.join(traj.stages)})"
        ) from None
    if snap.kind != MLIR:
        raise WhatIfError(f"the {start} output is not MLIR; start from ttir or ttgir")
    attr_edits = [e for e in edits if isinstance(e, ArgAttr)]
    text, where = apply_arg_attrs(snap.text, attr_edits, _runtime_params(spec_data), start)
    applied = [Applied(e, w) for e, w in zip(attr_edits, where)]
    for e in edits:
        if isinstance(e, DotPrecision):
            text, at = apply_dot_precision(text, e, start, traj.kernel.source_file)
            applied += [Applied(e, w) for w in at]
    path = workdir / "input" / f"{traj.kernel.name}.{start}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    label = ", ".join(map(str, edits))
    _verify(path, backend, f"the {start} IR with {label}")
    spec = _specialization(traj, spec_data, options, attr_edits, {})
    try:
        new = capture_ir(path, traj.target, options, traj.kernel, spec, disassemble)
    except CompileError as e:
        raise WhatIfError(f"with {label}, {e}") from None
    return new, applied


def _verify(path: Path, backend: Any, what: str) -> None:
    """Parse (which verifies) the edited file in a fresh context; a failure names the edits."""
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    err = FdCapture(2)
    try:
        with err.redirect():
            try:
                ir.parse_mlir_module(str(path), context)
                failed = False
            except RuntimeError:
                failed = True
        said = err.take().strip()
    finally:
        err.close()
    if failed:
        raise WhatIfError(f"{what} does not parse or verify ({path}): {said or 'no diagnostic printed'}")


def _from_source(
    traj: Trajectory, edits: list[Edit], spec_data: dict[str, Any], options: dict[str, Any], disassemble: bool
) -> tuple[Trajectory, list[Applied]]:
    fn = _kernel(traj)
    names = [p.name for p in fn.params]
    consts = {tuple(k): v for k, v in zip(spec_data["constant_keys"], spec_data["constant_vals"])}
    attrs = {tuple(k): v for k, v in zip(spec_data["attrs_keys"], spec_data["attrs_vals"])}
    applied: list[Applied] = []
    new_consts: dict[str, Any] = {}
    for e in edits:
        if isinstance(e, ArgAttr | ConstexprEdit) and e.name not in names:
            raise WhatIfError(
                f"{_flag(e)} {e}: {traj.kernel.name} has no parameter {e.name!r}; parameters: " + ", ".join(names)
            )
        if isinstance(e, ConstexprEdit):
            key = (names.index(e.name),)
            if key not in consts:
                known = ", ".join(n for n, t in spec_data["signature"].items() if t == "constexpr")
                raise WhatIfError(
                    f"--constexpr {e}: {e.name} is not a constexpr of this specialization (it is a runtime "
                    f"argument; constexprs: {known})"
                )
            applied.append(
                Applied(
                    e,
                    f"{e.name} = {e.value} (was {consts[key]}) in the specialization, "
                    f"recompiled from {Path(traj.kernel.source_file).name}",
                )
            )
            consts[key] = e.value
            new_consts[e.name] = e.value
        elif isinstance(e, ArgAttr):
            key = (names.index(e.name),)
            if key not in attrs:
                raise WhatIfError(f"--arg-attr {e}: {e.name} is not a runtime argument of this specialization")
            attrs[key] = [*(a for a in attrs[key] if a[0] != e.attribute), [e.attribute, e.value]]
            applied.append(
                Applied(
                    e,
                    f"{e.attribute} = {e.value} set on {e.name} (argument {key[0]}) in the "
                    "specialization, recompiled from source",
                )
            )
    signature = {k: tuple(v) if isinstance(v, list) else v for k, v in spec_data["signature"].items()}
    src = ASTSource(fn, signature, consts, attrs)
    spec = _specialization(traj, spec_data, options, [e for e in edits if isinstance(e, ArgAttr)], new_consts)
    req = CompileRequest(fn, traj.target, src, options, spec)
    try:
        return capture_request(req, disassemble=disassemble), applied
    except CompileError as e:
        raise WhatIfError(f"with {', '.join(map(str, edits))}, {e}") from None


def _flag(e: Edit) -> str:
    return "--arg-attr" if isinstance(e, ArgAttr) else "--constexpr" if isinstance(e, ConstexprEdit) else "--option"


def _kernel(traj: Trajectory) -> Any:
    """The kernel's JITFunction from the file it was captured from; the copy in the trajectory when that file
    has changed since (or is gone)."""
    src = Path(traj.kernel.source_file)
    copy = traj.root / "source" / src.name if traj.root else None
    if not (src.exists() and src.read_text() == traj.kernel.source) and copy is not None and copy.exists():
        src = copy
    try:
        return unwrap_kernel(load_kernel(f"{src}:{traj.kernel.name}"))[0]
    except KernelLoadError as e:
        raise WhatIfError(f"a constexpr edit recompiles from the kernel's source, which does not load: {e}") from None
