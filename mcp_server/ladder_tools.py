"""Tools over the ladder: diagnose a kernel (`ladder diagnose FILE.py:KERNEL --json`, in a child: it imports the
kernel's module) and validate a candidate kernel module against a suite operator through the harness, whose
worker runs the candidate in its sandbox. Timing needs a GPU; on a CPU the harness checks the small cases under
Triton's interpreter and keeps no times."""

import contextlib
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server import MCPServer
from pydantic import BaseModel, Field

from irscope.targets import DEFAULT_TARGET
from mcp_server.app import App
from mcp_server.bounds import clip, first_line, trim
from mcp_server.children import ChildError, Specialization, failure, kernel_ref, run_module
from mcp_server.errors import guarded
from mcp_server.trajectories import (
    RUNS_CODE,
    ArgSpecs,
    Constexprs,
    Ctas,
    KernelArg,
    MaxReg,
    Stages,
    Target,
    Timeout,
    Warps,
)
from suite.operator import get_operator

if TYPE_CHECKING:
    from ladder.validators.harness import HarnessValidator

EVIDENCE = 5  # evidence claims kept per level


class LevelRow(BaseModel):
    level: str
    status: str
    reason: str
    evidence: list[str] = Field(description="the level's claims, first few")
    evidence_total: int
    hypotheses: list[str]
    families: list[str]
    notes: list[str]


class DiagnosisAnswer(BaseModel):
    kernel: str
    target: str
    specialization: str
    outcome: str = Field(description="actionable | at-target | inconclusive")
    level: str | None = Field(description="the level that stopped the ladder")
    reached: str | None
    hypothesis: str | None
    family: str | None = Field(description="the rewrite family it forces, when actionable")
    escalations: list[str] = Field(description="why each level below did not stop")
    levels: list[LevelRow]
    report: str = Field(description="the full diagnosis JSON, relative to the workspace")


class CaseRow(BaseModel):
    case: str
    ok: bool
    detail: str
    ms: float | None
    sol_ms: float | None
    eager_ms: float | None


class ValidationAnswer(BaseModel):
    op: str
    candidate: str
    device: str
    correct: bool
    timed: bool
    detail: str
    cases: list[CaseRow]
    cases_total: int
    note: str
    report: str = Field(description="the harness's full record, relative to the workspace")


def level_row(r: dict[str, Any]) -> LevelRow:
    evidence = [clip(e["claim"], 300) for e in r.get("evidence", [])]
    return LevelRow(
        level=r["level"],
        status=r["status"],
        reason=clip(r.get("reason", ""), 300),
        evidence=evidence[:EVIDENCE],
        evidence_total=len(evidence),
        hypotheses=[f"{h['bottleneck']} at {h['hotspot']}" for h in r.get("hypotheses", [])][:EVIDENCE],
        families=[clip(f"{f['name']}: {f['description']}", 300) for f in r.get("families", [])][:EVIDENCE],
        notes=trim([clip(n, 300) for n in r.get("notes", [])]),
    )


@contextlib.contextmanager
def readable_index(db: Path, folder: Path, *, confined: bool) -> Iterator[Path]:
    """The compiler index as the child opens it. SQLite reads an index in WAL mode only where it can create the
    -shm file beside it, which a confined child cannot beside the server's: it reads a copy in `folder` (its
    writable output directory), removed afterwards."""
    if not confined or not db.is_file():
        yield db
        return
    copy = folder / ".compiler-index.db"
    try:
        for suffix in ("", "-wal"):
            if Path(f"{db}{suffix}").is_file():
                shutil.copyfile(f"{db}{suffix}", f"{copy}{suffix}")
        yield copy
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)


def diagnose_kernel(
    app: App, kernel: str, spec: Specialization, through: str, timeout_s: float | None
) -> DiagnosisAnswer:
    path, name = kernel_ref(app.ws, kernel)
    confinement = app.confinement()
    out = app.ws.fresh("diagnose", name)
    with readable_index(app.db, out, confined=confinement is not None) as index:
        argv = ["diagnose", f"{path}:{name}", *spec.argv(), "--json", "--through", through, "--out", str(out)]
        argv += ["--index", str(index)]
        result = run_module(
            app.ws, confinement, "ladder.cli", argv, kernel=path, out=out, timeout_s=timeout_s or app.timeout_s
        )
    if result.returncode != 0:
        raise failure(result, f"diagnosing {kernel}")
    stdout = result.stdout.replace(json.dumps(str(index))[1:-1], json.dumps(str(app.db))[1:-1])  # its notes name it
    start = stdout.find("{")
    try:
        doc = json.loads(stdout[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        raise ChildError(f"diagnosing {kernel}: no diagnosis in the output ({first_line(result.stderr) or 'empty'})")
    report = out / "diagnosis.json"
    report.write_text(json.dumps(doc, indent=1))
    hyp, fam = doc.get("hypothesis"), doc.get("family")
    return DiagnosisAnswer(
        kernel=doc["kernel"],
        target=doc["target"],
        specialization=clip(doc["specialization"], 400),
        outcome=doc["outcome"],
        level=doc.get("level"),
        reached=doc.get("reached"),
        hypothesis=f"{hyp['bottleneck']} at {hyp['hotspot']}" if hyp else None,
        family=clip(f"{fam['name']}: {fam['description']}", 400) if fam else None,
        escalations=[clip(f"{e['level']}: {e['why']}", 300) for e in doc.get("escalations", [])],
        levels=[level_row(r) for r in [*doc.get("results", []), *doc.get("beyond", [])]],
        report=app.ws.relative(report),
    )


class Validating:
    """One harness validator for the session: on a GPU it measures speed-of-light ceilings once."""

    def __init__(self, app: App):
        self.app = app
        self._validator: HarnessValidator | None = None
        self._lock = threading.Lock()

    def validator(self) -> "HarnessValidator":
        with self._lock:
            if self._validator is None:
                # imported on first use: the harness brings torch, which a session without validation never needs
                from ladder.validators.harness import HarnessValidator

                confinement = self.app.confinement()  # refused here when none works, before torch is imported
                self._validator = HarnessValidator(timeout_s=self.app.timeout_s, confinement=confinement)
            return self._validator

    def run(self, op_name: str, candidate: str) -> ValidationAnswer:
        op = get_operator(op_name)
        path: Path = self.app.ws.path(candidate, kind="file")
        v = self.validator()
        workdir = self.app.ws.fresh("validate", op.name)
        result = v.validate(op, path, workdir)
        gpu = v.device == "cuda"
        note = (
            "timed on the GPU against eager, with speed of light"
            if gpu
            else "timing needs a GPU: this machine has none, so the harness checked correctness only, on the "
            "operator's small cases under Triton's interpreter (no times)"
        )
        rows = [
            CaseRow(case=c.case, ok=c.ok, detail=clip(c.detail, 300), ms=c.ms, sol_ms=c.sol_ms, eager_ms=c.eager_ms)
            for c in result.cases
        ]
        return ValidationAnswer(
            op=op.name,
            candidate=self.app.ws.relative(path),
            device=result.device,
            correct=result.correct,
            timed=result.timed,
            detail=clip(result.detail, 400),
            cases=rows[:20],
            cases_total=len(rows),
            note=note,
            report=self.app.ws.relative(workdir / "harness.json"),
        )


def register(mcp: MCPServer, app: App) -> None:
    validating = Validating(app)

    @mcp.tool(annotations=RUNS_CODE)
    @guarded
    def diagnose(
        kernel: KernelArg,
        args: ArgSpecs = {},  # noqa: B006 - pydantic copies defaults
        constexprs: Constexprs = {},  # noqa: B006
        target: Target = DEFAULT_TARGET,
        num_warps: Warps = None,
        num_stages: Stages = None,
        num_ctas: Ctas = None,
        maxnreg: MaxReg = None,
        through: Annotated[
            Literal["L1", "L2", "L3", "L4"], Field(description="also run the levels above the stop, up to this")
        ] = "L4",
        timeout_s: Timeout = None,
    ) -> DiagnosisAnswer:
        """One pass up the diagnosis ladder on FILE.py:KERNEL (L1 pattern cards, L2 profile, L3 IR attribution,
        L4 compiler source): the outcome, the level that stopped and why the others did not, each level's top
        evidence. No GPU needed (L2 then says it has no timings). Runs in a confined child, as capture."""
        options = {"num_warps": num_warps, "num_stages": num_stages, "num_ctas": num_ctas, "maxnreg": maxnreg}
        return diagnose_kernel(app, kernel, Specialization(args, constexprs, options, target), through, timeout_s)

    @mcp.tool(annotations=RUNS_CODE)
    @guarded
    def validate_candidate(
        op: Annotated[str, Field(description="a suite operator (ladder diagnose OP names them), e.g. new_gelu")],
        candidate: Annotated[str, Field(description="the candidate kernel module, a .py file in the workspace")],
    ) -> ValidationAnswer:
        """Check a candidate kernel module against a suite operator's oracle on fresh and adversarial inputs,
        with the anti-cheat monitor, in the harness's sandbox; on a GPU also time it against eager. On a CPU it
        says timing needs a GPU and runs the CPU validation (small cases, Triton's interpreter)."""
        return validating.run(op, candidate)
