"""CPU validation: the candidate's `forward` on the operator's small cases under TRITON_INTERPRET=1, judged by the
operator's correctness rule (suite.compare.verify, as every interpreter check is), correctness only: interpreter
times say nothing about a GPU, so none are kept.

The candidate runs in the confined runner (ladder.confine; a plain child process only under --unsafe-no-sandbox)
on inputs from seeds drawn here at run time, and saves its outputs; this process reads them back, regenerates the
inputs and judges. It is a smoke check, not the anti-cheat harness: no static check, no monitor of what the
forward computes with.
"""

from __future__ import annotations

import secrets
import traceback
from pathlib import Path

from ladder.confine import Confinement
from ladder.harness.transfer import OutputError, Outputs
from ladder.sandbox import run_sandboxed
from ladder.validation import CaseResult, Validation
from suite.operator import Operator

DEVICE = "cpu (TRITON_INTERPRET=1)"


class InterpretValidator:
    name = "interpret"

    def __init__(self, seeds: int = 2, timeout_s: float = 300, confinement: Confinement | None = None):
        self.seeds, self.timeout_s, self.confinement = seeds, timeout_s, confinement

    def close(self) -> None:
        """Nothing outlives a round here."""

    def validate(self, op: Operator, candidate: Path, workdir: Path, with_compile: bool = False) -> Validation:
        seed_base = secrets.randbelow(1 << 31)  # drawn now: the candidate cannot know its inputs in advance
        seeds = list(range(seed_base, seed_base + self.seeds))
        verdicts: dict[str, str] = {}  # case → "" (correct so far) or the first failure
        seen: dict[str, set[tuple[str, int]]] = {}  # case → its (kind, seed) runs judged
        wanted = len(op.input_kinds) * len(seeds)
        # one slot per run: the small cases' outputs are small, and the runner never waits for one to be freed
        slot_bytes = max(1 << 16, *(op.bytes_moved(c) for c in op.small_cases))
        with Outputs(slots=len(op.small_cases) * wanted, slot_bytes=slot_bytes) as outputs:

            def judge(msg: dict) -> None:
                try:
                    run = (str(msg["kind"]), int(msg["seed"]))
                    case, detail = _judge(op, outputs, msg, seeds)
                    if run in seen.setdefault(case, set()):  # a forked copy of the runner, or a forger
                        detail = f"{run[0]} seed {run[1]} reported twice"
                    seen[case].add(run)
                except Exception as e:  # the runner's message: its fault, and never this process's end
                    case, detail = "", f"a message from the runner that makes no sense ({type(e).__name__})"
                verdicts[case] = verdicts.get(case) or detail

            run = run_sandboxed(
                "ladder.validators.interpret:run",
                {
                    "candidate_source": candidate.read_text(),
                    "op": op.ref,
                    "seeds": seeds,
                    "outputs": {"fd": outputs.fd, **outputs.region()},
                },
                timeout_s=self.timeout_s,
                extra_env={"TRITON_INTERPRET": "1"},
                on_message=judge,
                # the interpreter never touches a GPU: its address space can be bounded too
                confinement=self.confinement.without_gpu() if self.confinement else None,
                read_only=[Path(op.origin), op.kernel_path] if op.origin else [],
                pass_fds=[outputs.fd],
            )
        if run.status == "timeout":
            return Validation(self.name, DEVICE, False, f"timed out after {self.timeout_s:g} s")
        if not run.ok:
            return Validation(self.name, DEVICE, False, f"{run.summary()}: {run.stderr_tail[-3000:]}")
        for c in op.small_cases:  # silence is no evidence: every run of every case must have been judged
            if not verdicts.get(c.name) and len(seen.get(c.name, ())) != wanted:
                verdicts[c.name] = f"{len(seen.get(c.name, ()))} of {wanted} runs reported"
        cases = [CaseResult(c.name, not verdicts[c.name], verdicts[c.name]) for c in op.small_cases]
        bad = [c for c in cases if not c.ok]
        if verdicts.get(""):
            return Validation(self.name, DEVICE, False, verdicts[""], tuple(cases))
        detail = f"{bad[0].case}: {bad[0].detail}" if bad else f"{len(cases)} small cases correct"
        return Validation(self.name, DEVICE, not bad and bool(cases), detail, tuple(cases))


def _judge(op: Operator, outputs: Outputs, msg: dict, seeds: list[int]) -> tuple[str, str]:
    """(case, "" when the run is correct else why): the run's outputs read back and checked here."""
    from suite.compare import verify

    case = next(c for c in op.small_cases if c.name == msg["case"])
    kind, seed = str(msg["kind"]), int(msg["seed"])
    if kind not in op.input_kinds or seed not in seeds:
        return case.name, f"the runner reported a run nobody asked for ({kind} seed {seed})"
    where = f"{kind} seed {seed}"
    if msg.get("error"):
        return case.name, f"{where}: {str(msg['error'])[:3000]}"
    try:
        out = outputs.take(msg["output"], "cpu")
    except OutputError as e:
        return case.name, f"{where}: the outputs could not be read back ({e})"
    verdict = verify(op, op.make_inputs(case, seed, "cpu", kind), out)
    return case.name, "" if verdict.ok else f"{where}: {verdict.detail}"


def run(payload: dict, emit) -> None:
    """The runner (inside the sandbox): every small case × input kind × seed, outputs copied into their own
    shared-memory slot, one message each; a case stops at its first failing run, as the parent stops reading
    there."""
    import torch

    from irscope.capture.loader import load_module
    from ladder.harness.transfer import SlotWriter
    from suite.operator import resolve_operator

    op = resolve_operator(payload["op"])
    writer = SlotWriter(int(payload["outputs"]["fd"]), payload["outputs"])
    path = Path("candidate.py").resolve()
    path.write_text(payload["candidate_source"])
    forward = load_module(path, "candidate").forward
    n = 0
    for case in op.small_cases:
        for kind in op.input_kinds:
            for seed in payload["seeds"]:
                inputs = op.make_inputs(case, seed, "cpu", kind)
                before = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
                msg = {"case": case.name, "kind": kind, "seed": seed}
                try:
                    out = forward(*inputs)
                    if any(isinstance(a, torch.Tensor) and not a.equal(b) for a, b in zip(inputs, before)):
                        raise ValueError("forward modified an input")
                    msg["output"] = writer.put(n, out)
                    n += 1
                except Exception:
                    msg["error"] = traceback.format_exc(limit=4)
                emit(msg)
