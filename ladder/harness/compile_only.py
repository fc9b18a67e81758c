"""A candidate's kernels compiled before the GPU is held (the runner's `compile` command).

A runner's first call of the forward on a case's shapes compiles its kernels: seconds of CPU (Triton's passes,
ptxas, the launcher) that used to pass with the GPU lock held shared, while every measurement queued behind it
waited (docs/results/engine-h200). The `compile` command calls the forward once per case before any hold:

* on placeholder inputs (`Operator.placeholder_inputs`): each input tensor uninitialized with the shape, strides,
  storage offset and dtype the case's inputs have, no input generated. Triton specializes on exactly these (dtypes,
  16-byte alignment, integer arguments equal to 1 or divisible by 16), so the validation's calls find every
  kernel compiled;
* with every Triton launch turned into a compile (`JITFunction.run` with `warmup=True`), the binary loaded into
  the CUDA context and its launcher built; an autotuner compiles each of its configs and caches no choice, since
  nothing was timed. The autotuners that will benchmark on their first real call are counted
  (`Compiled.autotuned`): the parent then has them choose with the GPU held alone (ladder.harness.autotune).

No Triton kernel runs and no input is generated; the forward's own allocations, views, fills and copies run on the
placeholders (sub-millisecond work, at most once per case, which the medians of another job's timing absorb; a
candidate could do as much at import, outside any hold, too). Nothing this call returns is judged: the validation
that follows calls the forward again under the monitor and the poisoned allocator, and a failure here is a note.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class Compiled:
    autotuned: int = 0  # autotuner calls with more than one config: each benchmarks on its first real call


@contextmanager
def compile_only() -> Iterator[Compiled]:
    """Inside the block, Triton launches compile (and load) their kernel without running it."""
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    saved: list[tuple[Any, Callable]] = [(cls, cls.run) for cls in (JITFunction, InterpretedFunction, Autotuner)]
    JITFunction.run = _compiling(JITFunction.run)
    InterpretedFunction.run = _compiling(InterpretedFunction.run)
    compiled = Compiled()
    Autotuner.run = _every_config(compiled)
    try:
        yield compiled
    finally:
        for cls, run in saved:
            cls.run = run


def _compiling(run: Callable) -> Callable:
    def compile_instead(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        kernel = run(self, *args, grid=grid, warmup=True, **kwargs)
        load = getattr(kernel, "_init_handles", None)
        if load is not None:  # the binary into the context and its launcher built: the first launch's own costs
            load()
        return kernel

    return compile_instead


def _every_config(compiled: Compiled) -> Callable:
    def every_config(self: Any, *args: Any, **kwargs: Any) -> None:
        """Autotuner.run, compiling every config it would time (its own warmup's loop, through `run` so that the
        grid and warmup arguments a launch passes are accepted) and leaving its cache empty."""
        if len(self.configs) > 1:
            compiled.autotuned += 1
        self.nargs = dict(zip(self.arg_names, args))
        try:
            for config in self.prune_configs(kwargs):
                self.fn.run(*args, **kwargs, **config.all_kwargs())
        finally:
            self.nargs = None

    return every_config
