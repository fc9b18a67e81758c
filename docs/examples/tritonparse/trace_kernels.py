"""Record a tritonparse trace of real Triton compiles on a machine without a GPU.

    python docs/examples/tritonparse/trace_kernels.py OUT_DIR [--kernels top2_argmax,top2_value]
        [--compression none|gzip] [--full-source]

tritonparse's structured logging (`tritonparse.structured_logging.init`) installs itself as Triton's compilation
listener and writes one NDJSON record per compile into OUT_DIR, as it does in a traced program on a GPU machine.
Here the bundled example kernels (irscope.examples) compile through the JIT's own path (`kernel.warmup`) for
cuda:90, under irscope's CPU stand-in driver, with an empty Triton cache so that every kernel compiles. The trace
is tritonparse's own output, written by tritonparse: `irscope import` reads it, and the tests use it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="the folder tritonparse writes its trace into")
    p.add_argument("--kernels", default="top2_argmax,top2_value", help="bundled examples (irscope.examples)")
    p.add_argument("--compression", choices=["none", "gzip"], default="none", help="tritonparse's trace compression")
    p.add_argument("--full-source", action="store_true", help="record the kernel's whole file, not its function")
    p.add_argument("--target", default="cuda:90", help="what the CPU stand-in driver answers (default cuda:90)")
    a = p.parse_args(argv)
    # An empty cache: a kernel found in Triton's cache is not compiled, and tritonparse records no compilation.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="trace-kernels-cache-")

    import tritonparse.structured_logging as tritonparse_logging

    from irscope.capture import cpu_driver
    from irscope.capture.specialize import parse_value
    from irscope.examples import get_example

    tritonparse_logging.init(str(a.out), compression=a.compression, enable_full_python_source=a.full_source)
    with cpu_driver(a.target):
        for name in a.kernels.split(","):
            ex = get_example(name)
            args = {k: parse_value(v) if isinstance(v, str) else v for k, v in ex.args.items()}
            ex.kernel.warmup(**args, **ex.options, grid=(1,))
    tritonparse_logging.clear_logging_config()  # closes the trace file
    for trace in sorted(a.out.iterdir()):
        print(trace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
