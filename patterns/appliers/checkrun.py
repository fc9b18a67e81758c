"""Subprocess side of the candidate check (run by patterns.appliers.check, never imported by it).

    python -m patterns.appliers.checkrun interpret REQUEST.json RESULT.json
    python -m patterns.appliers.checkrun compile REQUEST.json RESULT.json
    python -m patterns.appliers.checkrun record REQUEST.json RESULT.json

`interpret`: for each candidate module run `forward` under Triton's interpreter on the operator's small cases
(every autotune config in turn), judge each call as every interpreter check does (suite.interp_check: the
operator's correctness rule) and record every kernel launch with its
arguments as specs (dtype, shape, address alignment). `compile`: compile each distinct launch configuration for
the target with Triton's real compiler. Two processes, because the interpreter patches triton.language globally
and a compile in the same process would see the patched functions. `record` (compile only, no correctness):
run `forward` on the first small case under irscope's dry-run driver with launches recorded but not executed
(an autotuner tries every config, all equally fast), then compile them, in one process.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

# triton.jit reads TRITON_INTERPRET when it decorates, and triton.language decorates its own jit helpers
# (tl.sigmoid, tl.cdiv, …) on import: the mode must be fixed before triton is imported.
os.environ["TRITON_INTERPRET"] = "1" if sys.argv[1:2] == ["interpret"] else "0"

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction

from irscope.capture.loader import load_module

_launches: list[dict] = []
_original_run = InterpretedFunction.run


def _spec(v: Any) -> Any:
    """A launch argument as JSON: tensors by dtype, shape and address alignment (what specialization sees)."""
    if hasattr(v, "data_ptr") and hasattr(v, "dtype"):
        ptr = v.data_ptr()
        align = 16 if ptr % 16 == 0 else ptr & -ptr
        return {"tensor": str(v.dtype).removeprefix("torch."), "shape": list(v.shape), "align": align}
    if v is None or isinstance(v, bool | int | float | str):
        return v
    raise TypeError(f"cannot record launch argument of type {type(v).__name__}")


def _record(name: str, args: tuple, kwargs: dict) -> None:
    _launches.append(
        {"kernel": name, "args": [_spec(a) for a in args], "kwargs": {k: _spec(v) for k, v in kwargs.items()}}
    )


def _recording_run(self: InterpretedFunction, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
    _record(self.fn.__name__, args, kwargs)
    return _original_run(self, *args, grid=grid, warmup=warmup, **kwargs)


def _record_only(self: JITFunction, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
    _record(self.fn.__name__, args, kwargs)  # nothing runs: there is no GPU, only the launch's arguments matter


def _autotuners(mod: ModuleType) -> list[Autotuner]:
    return [v for v in vars(mod).values() if isinstance(v, Autotuner)]


def _correctness(mod: ModuleType, op: Any, kinds: list[str]) -> list[dict]:
    """suite.interp_check on seed 0 of every small case and input kind, once per autotune config."""
    from suite.interp_check import check_forward

    tuners = _autotuners(mod)
    all_configs = [list(t.configs) for t in tuners]
    rounds = max((len(c) for c in all_configs), default=1)
    runs = []
    try:
        for r in range(rounds):
            for t, cfgs in zip(tuners, all_configs):  # one config at a time: no benchmarker on the interpreter
                t.configs = [cfgs[r % len(cfgs)]]
                t.cache.clear()
            for run in check_forward(op, mod.forward, seeds=1, kinds=kinds):
                runs.append(
                    {
                        "case": run.case.label(),
                        "kind": run.kind,
                        "config": r,
                        "ok": run.ok,
                        "detail": run.detail,
                        "seconds": run.seconds,
                    }
                )
    finally:
        for t, cfgs in zip(tuners, all_configs):
            t.configs = cfgs
    return runs


def _unwrap(obj: Any) -> Any:
    while isinstance(obj, Autotuner | Heuristics):
        obj = obj.fn
    return obj


def _arg(v: Any) -> Any:
    from irscope.capture import TensorSpec

    if isinstance(v, dict) and "tensor" in v:
        return TensorSpec(v["tensor"], tuple(v["shape"]), v["align"])
    return v


def _compile_launches(mod: ModuleType, launches: list[dict], target: str) -> list[dict]:
    """Compile each distinct (kernel, constexprs, options) once: shapes only change integer specializations."""
    import triton

    from irscope.capture import build_request

    seen: set[str] = set()
    results = []
    for launch in launches:
        kname = launch["kernel"]
        kernel = _unwrap(getattr(mod, kname, None))
        if not isinstance(kernel, JITFunction):
            results.append({"kernel": kname, "ok": False, "error": f"no @triton.jit {kname} at module level"})
            continue
        opts = {k: _arg(v) for k, v in launch["kwargs"].items() if v is not None}
        try:
            req = build_request(kernel, [_arg(a) for a in launch["args"]], opts, target)
        except Exception as e:
            results.append({"kernel": kname, "ok": False, "error": f"specialization: {e}"})
            continue
        key = json.dumps(
            [kname, req.specialization.constexprs, req.specialization.options], sort_keys=True, default=str
        )
        if key in seen:
            continue
        seen.add(key)
        t0 = time.perf_counter()
        entry = {
            "kernel": kname,
            "arguments": req.arguments,
            "constexprs": req.specialization.constexprs,
            "num_warps": req.options.get("num_warps"),
            "num_stages": req.options.get("num_stages"),
        }
        try:
            compiled = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
            entry.update(ok=True, stages=[k for k in compiled.asm if k != "source"])
        except Exception as e:
            entry.update(ok=False, error=f"{type(e).__name__}: {str(e)[-2000:]}")
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        results.append(entry)
    return results


def interpret_one(item: dict, op: Any) -> dict:
    _launches.clear()
    out: dict[str, Any] = {"id": item["id"]}
    try:
        mod = load_module(item["path"], _module_name(item))
        runs = _correctness(mod, op, list(dict.fromkeys(["random", *op.input_kinds])))
        out.update(runs=runs, correct=all(r["ok"] for r in runs) and bool(runs), launches=list(_launches))
    except Exception:
        out.update(correct=False, launches=list(_launches), error=traceback.format_exc(limit=5))
    return out


def _module_name(item: dict) -> str:
    return f"candidate_{item['id']}".replace("-", "_").replace(".", "_")


def compile_one(item: dict, target: str) -> dict:
    try:
        compiled = _compile_launches(load_module(item["path"], _module_name(item)), item["launches"], target)
        return {"id": item["id"], "compiled": compiled, "compiles": bool(compiled) and all(c["ok"] for c in compiled)}
    except Exception:
        return {"id": item["id"], "compiled": [], "compiles": False, "error": traceback.format_exc(limit=5)}


def record_one(item: dict, op: Any, target: str) -> dict:
    _launches.clear()
    out: dict[str, Any] = {"id": item["id"], "correct": None, "runs": [], "compiled": [], "compiles": False}
    try:
        mod = load_module(item["path"], _module_name(item))
        mod.forward(*op.make_inputs(op.small_cases[0], 0, "cpu", "random"))
        out["launches"] = list(_launches)
        out["compiled"] = _compile_launches(mod, out["launches"], target)
        out["compiles"] = bool(out["compiled"]) and all(c["ok"] for c in out["compiled"])
    except Exception:
        out.update(launches=list(_launches), error=traceback.format_exc(limit=5))
    return out


def main(argv: list[str]) -> int:
    mode, request_path, result_path = argv
    request = json.loads(Path(request_path).read_text())
    if mode == "interpret":
        InterpretedFunction.run = _recording_run  # record what forward launches; the interpreter still runs it
        from suite.operator import resolve_operator

        results = [interpret_one(item, resolve_operator(item["op"])) for item in request["candidates"]]
    elif mode == "compile":
        results = [compile_one(item, request["target"]) for item in request["candidates"]]
    elif mode == "record":
        from irscope.capture import dry_run_driver
        from suite.operator import resolve_operator

        JITFunction.run = _record_only  # compiled afterwards launch by launch: one failing compile ends no other
        with dry_run_driver(request["target"]):  # autotuners try each config once, equally fast; nothing launches
            results = [
                record_one(item, resolve_operator(item["op"]), request["target"]) for item in request["candidates"]
            ]
    else:
        raise SystemExit(f"unknown mode {mode!r}: interpret, compile or record")
    Path(result_path).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
