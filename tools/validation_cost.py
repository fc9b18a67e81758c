"""Where one evaluation's correctness work goes on the GPU, component by component, in one plain process.

    python -m tools.validation_cost [--ops new_gelu,softmax,…] [--seeds 3] [--cases c1,c2]

For each operator, every run the harness makes for one evaluation (per case: each input kind × seeds validation
runs, and the four re-check and timed-output runs as random-kind runs) is replayed here with the harness's own
functions, each component timed on its own (synchronized, so a component's figure is its wall time alone on an
otherwise idle GPU):

* runner side: `gen` (the operator's input generator), `forward` (`correctness.run_forward`: the pristine copies,
  the forward under poisoned allocation and the monitor, the input check), `bare` (the forward alone, once more on
  the same inputs: `forward` less this is what the checks around it cost), `put` (`SlotWriter.put` into
  page-locked shared memory);
* parent side: `take` (`Outputs.take` onto the GPU), `regen` (the inputs again), `judge` (`correctness.judge`: the
  oracle and the comparison), split into `oracle` and `compare` by timing the oracle alone once more.

`--device cpu` (with TRITON_INTERPRET=1, on the small cases) is a dry run of this script where no GPU is.

It prints per operator the median milliseconds per run of each component and the evaluation's total seconds (the
sum over its runs), then the totals over operators. The frozen initial kernel is the forward. No sandbox, no lock,
no other job: this is what one evaluation asks of the GPU, not what it waits for.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Iterator

import torch

from irscope.capture.loader import load_module
from ladder.harness.correctness import judge, run_forward, synchronize
from ladder.harness.transfer import Outputs, SlotWriter
from suite.operator import RANDOM, Case, Operator, all_operators, resolve_operator

COMPONENTS = ("gen", "forward", "bare", "put", "take", "regen", "oracle", "compare")
EXTRA_RUNS = 4  # per case: two re-check runs and two judged timed calls, all of the random kind


class Stopwatch:
    """Milliseconds per component, each lap synchronized at both ends."""

    def __init__(self, device: str):
        self.device = device
        self.spent: dict[str, list[float]] = {c: [] for c in COMPONENTS}

    @contextlib.contextmanager
    def lap(self, component: str) -> Iterator[None]:
        synchronize(self.device)
        t0 = time.perf_counter()
        yield
        synchronize(self.device)
        self.spent[component].append((time.perf_counter() - t0) * 1e3)


def selected_cases(op: Operator, device: str, case_names: list[str] | None) -> list[Case]:
    pool = op.cases if device == "cuda" else op.small_cases
    return [c for c in pool if case_names is None or c.name in case_names]


def measure(
    op: Operator, cases: list[Case], device: str, seeds: int, outputs: Outputs, writer: SlotWriter
) -> dict[str, list[float]]:
    forward = load_module(op.kernel_path, f"initial_{op.name}").forward
    clock = Stopwatch(device)
    for case in cases:
        runs = [(k, s) for k in op.input_kinds for s in range(seeds)]
        runs += [(RANDOM, 100 + i) for i in range(EXTRA_RUNS)]
        forward(*op.make_inputs(case, 0, device, RANDOM))  # compiled before anything is timed
        for kind, seed in runs:
            with clock.lap("gen"):
                inputs = op.make_inputs(case, seed, device, kind)
            with clock.lap("forward"):
                result, out = run_forward(op, forward, case, inputs, kind=kind, seed=seed, device=device)
            with clock.lap("bare"):
                forward(*inputs)
            with clock.lap("put"):
                description = writer.put(0, out)
            del inputs, out
            with clock.lap("take"):
                taken = outputs.take(description, device)
            with clock.lap("regen"):
                pristine = op.make_inputs(case, seed, device, kind)
            with clock.lap("compare"):
                verdict = judge(op, case, pristine, taken, device)
            with clock.lap("oracle"):
                op.oracle(*pristine)
            clock.spent["compare"][-1] = max(0.0, clock.spent["compare"][-1] - clock.spent["oracle"][-1])
            if not verdict.ok or result.problems:
                print(f"  {op.name} {case.name} {kind} {seed}: not ok: {(result.problems + verdict.problems)[:2]}")
            del pristine, taken
            if device == "cuda":
                torch.cuda.empty_cache()
    return clock.spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default=",".join(all_operators()))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cases", default=None, help="comma-separated case names (default: the five GPU cases)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a dry run (TRITON_INTERPRET=1)")
    args = ap.parse_args()
    totals = dict.fromkeys(COMPONENTS, 0.0)
    ops = [resolve_operator(name) for name in args.ops.split(",")]
    chosen = {op.name: selected_cases(op, args.device, args.cases.split(",") if args.cases else None) for op in ops}
    slot_bytes = max(op.bytes_moved(c) for op in ops for c in chosen[op.name])
    # one region for every operator, as a runner has one for its life: a mapping registered with CUDA and then
    # unmapped unregistered makes the next registration at that address fail, and CUDA keeps that error
    # outputs through a device slot on a GPU, as the harness moves them (host memory where it cannot be had)
    with Outputs(slots=1, slot_bytes=slot_bytes, device_bytes=slot_bytes if args.device == "cuda" else 0) as outputs:
        writer = SlotWriter(outputs.fd, outputs.region(), pin=args.device == "cuda")
        print(f"outputs through {writer.memory} memory {outputs.device_error or writer.device_error or ''}")
        print(f"{'operator':24s} {'runs':>4s} " + " ".join(f"{c:>8s}" for c in COMPONENTS) + "  eval s  (ms per run)")
        for op in ops:
            spent = measure(op, chosen[op.name], args.device, args.seeds, outputs, writer)
            runs = len(spent["gen"])
            medians = " ".join(f"{statistics.median(spent[c]):8.1f}" for c in COMPONENTS)
            total = sum(sum(v) for c, v in spent.items() if c != "bare") / 1e3
            for c in COMPONENTS:
                totals[c] += sum(spent[c]) / 1e3
            print(f"{op.name:24s} {runs:4d} {medians}  {total:6.2f}", flush=True)
    all_s = sum(v for c, v in totals.items() if c != "bare")
    print("total s  " + " ".join(f"{c}={totals[c]:.1f}" for c in COMPONENTS) + f"  all (without bare)={all_s:.1f}")


if __name__ == "__main__":
    main()
