"""One measured compile in a fresh process, for tools/capture_overhead.py.

    python tools/capture_bench_child.py VARIANT KERNEL_FILE KERNEL_NAME SPEC_JSON OUT_DIR

VARIANT is `plain` or `dump` (Triton only: `triton.compile` of the specialization in SPEC_JSON, which holds
Triton's own serialization plus the target; `dump` differs only by the environment the parent sets), `ir` or
`sass` (`irscope.capture` to OUT_DIR, without or with SASS). Prints one JSON line: the in-process seconds of
the compile call and the process's peak resident memory. Imports stay inside the variants so a plain compile
never pays for irscope.
"""

from __future__ import annotations

import importlib.util
import json
import resource
import sys
import time
from typing import Any


def _load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location("bench_kernel_module", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_kernel_module"] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _plain(kernel: Any, spec: dict) -> float:
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    data = json.loads(spec["triton"])
    constexprs = {
        tuple(k): tl.constexpr(v["constexpr"]) if isinstance(v, dict) and "constexpr" in v else v
        for k, v in zip(data["constant_keys"], data["constant_vals"])
    }
    attrs = {tuple(k): v for k, v in zip(data["attrs_keys"], data["attrs_vals"])}
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in data["options"].items()}
    backend, arch, warp = spec["target"]
    src = ASTSource(kernel, data["signature"], constexprs, attrs)
    t0 = time.perf_counter()
    triton.compile(src, target=GPUTarget(backend, arch, warp), options=options)
    return time.perf_counter() - t0


def _capture(kernel: Any, spec: dict, out_dir: str, sass: bool) -> float:
    import irscope

    t0 = time.perf_counter()
    irscope.capture(
        kernel,
        target=spec["target_name"],
        out_dir=out_dir,
        disassemble=sass,
        kernel_kwargs=spec["args"],
        **spec["options"],
    )
    return time.perf_counter() - t0


def main() -> None:
    variant, path, name, spec_json, out_dir = sys.argv[1:6]
    spec = json.loads(spec_json)
    kernel = _load(path, name)
    if variant in ("plain", "dump"):
        seconds = _plain(kernel, spec)
    elif variant in ("ir", "sass"):
        seconds = _capture(kernel, spec, out_dir, variant == "sass")
    else:
        raise SystemExit(f"unknown variant {variant!r}: plain, dump, ir or sass")
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"compile_s": seconds, "peak_mb": peak_kb / 1024, "torch": "torch" in sys.modules}))


if __name__ == "__main__":
    main()
