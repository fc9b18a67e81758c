"""Tools over trajectories: capture a kernel (in a child), list them, summarize one, the stage-diff graph's
queries (`irscope query`), the diff of two (`irscope diff`) and one snapshot's IR, a page at a time."""

import difflib
import shutil
from collections import Counter
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from irscope.backends import adapter_for
from irscope.compare import compare
from irscope.report.model import remark_text
from irscope.store import JOURNAL, load, lock_file
from irscope.targets import DEFAULT_TARGET
from irscope.trajectory import Trajectory
from mcp_server.app import App
from mcp_server.bounds import MAX_LIMIT, Offset, PageInfo, clip, first_line, page, per_page, trim
from mcp_server.children import Specialization, failure, kernel_ref, run_module
from mcp_server.errors import guarded
from mcp_server.store import Loaded
from mcp_server.workspace import check_name

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
RUNS_CODE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

KernelArg = Annotated[str, Field(description="FILE.py:KERNEL, FILE relative to the workspace root")]
TrajectoryArg = Annotated[str, Field(description="a name from list_trajectories, or a workspace directory")]
ArgSpecs = Annotated[
    dict[str, str],
    Field(
        description="runtime arguments as `irscope dump --arg` spells them: 4096, 1e-5, true, *fp16 (16-byte "
        "aligned pointer), *fp16:4, fp32[1024,512] (tensor)"
    ),
]
Constexprs = Annotated[dict[str, str | int | float | bool], Field(description="tl.constexpr parameters' values")]
Target = Annotated[str, Field(description="cuda:90 (default), cuda:80, hip:gfx942, …")]
Warps = Annotated[int | None, Field(ge=1, le=64, description="warps per program (the JIT's default: 4)")]
Stages = Annotated[int | None, Field(ge=1, le=16, description="software-pipelining stages (default 3)")]
Ctas = Annotated[int | None, Field(ge=1, le=16, description="CTAs per cluster (Hopper)")]
MaxReg = Annotated[int | None, Field(ge=1, le=255, description="register cap per thread handed to ptxas")]
Timeout = Annotated[float | None, Field(gt=0, le=1800, description="seconds before the child is stopped")]


class CaptureResult(BaseModel):
    trajectory: str = Field(description="its name for the other tools")
    path: str = Field(description="its directory, relative to the workspace")
    kernel: str
    target: str
    snapshots: int
    changed_passes: int
    resources: dict[str, Any]
    compile_error: str | None = Field(
        description="the compiler's message when the compile failed (every pass up to it is kept)"
    )


class TrajectoryRow(BaseModel):
    name: str
    kernel: str
    target: str
    snapshots: int
    complete: bool
    failed: bool


class TrajectoryList(PageInfo):
    items: list[TrajectoryRow]


class StageRow(BaseModel):
    stage: str
    passes: int
    changed: int
    ms: float


class PassRow(BaseModel):
    snapshot: int
    label: str
    pass_name: str | None
    ops_added: dict[str, int]
    ops_removed: dict[str, int]
    counters: dict[str, int] = Field(description="counter deltas of this pass")


class Summary(BaseModel):
    trajectory: str
    kernel: str
    file: str
    target: str
    specialization: dict[str, Any]
    complete: bool
    compile_error: str | None
    stages: list[StageRow]
    changed_passes: list[PassRow] = Field(description="passes that changed the IR, in order (a page of them)")
    changed_passes_page: PageInfo
    key_counters: list[dict[str, Any]] = Field(description="{counter, values: {stage: value}} for nonzero ones")
    resources: dict[str, Any]
    remarks: list[str] = Field(description="the compiler's remarks and warnings (first few)")
    remarks_total: int
    hot_lines: list[dict[str, Any]] = Field(description="kernel lines with key counters (first few)")
    hot_lines_total: int


class QueryAnswer(PageInfo):
    what: str
    arg: str
    items: list[dict[str, Any]]
    context: dict[str, Any] = Field(default_factory=dict)


class DiffAnswer(PageInfo):
    a: str
    b: str
    counters: list[dict[str, Any]] = Field(description="counter deltas, largest first (focus stages unless all_stages)")
    counters_total: int
    lines: list[dict[str, Any]] = Field(description="a page of per-line counter changes (lines aligned by text)")
    passes: list[dict[str, Any]] = Field(description="where the MLIR pass sequences differ")
    changed_only_in_a: list[str]
    changed_only_in_b: list[str]


class SnapshotPage(PageInfo):
    trajectory: str
    snapshot: int
    label: str
    pass_name: str | None
    kind: str
    changed: bool
    view: str
    text: str = Field(description="lines offset … offset+limit of the IR (or of the diff to the previous IR)")


def _failed(traj: Trajectory) -> str | None:
    return clip(traj.error.message.strip(), 1500) if traj.error and traj.error.message else None


def capture_into(
    app: App, kernel: str, spec: Specialization, config: int, name: str | None, timeout_s: float | None
) -> CaptureResult:
    path, kernel_name = kernel_ref(app.ws, kernel)
    confinement = app.confinement()
    out = app.ws.fresh("trajectories", check_name(name or kernel_name))
    argv = ["dump", f"{path}:{kernel_name}", *spec.argv(), "--config", str(config), "--out", str(out)]
    lock = lock_file(out)  # irscope dump locks its output with a file beside it, which the child must write
    lock.touch()
    result = run_module(
        app.ws,
        confinement,
        "irscope.cli",
        argv,
        kernel=path,
        out=out,
        writable=[lock],
        timeout_s=timeout_s or app.timeout_s,
    )
    wrote = (out / "trajectory.json").exists() or (out / JOURNAL).exists()
    if result.returncode not in (0, 1) or not wrote:
        shutil.rmtree(out, ignore_errors=True)  # the server's own fresh directory: nothing was captured into it
        lock.unlink(missing_ok=True)
        raise failure(result, f"capturing {kernel}")
    traj = load(out)
    return CaptureResult(
        trajectory=out.name,
        path=app.ws.relative(out),
        kernel=traj.kernel.name,
        target=str(traj.target),
        snapshots=len(traj.snapshots),
        changed_passes=len(traj.changed_passes()),
        resources=trim(traj.resources),
        compile_error=_failed(traj),
    )


def summary(loaded: Loaded, offset: int, limit: int) -> Summary:
    traj = loaded.traj
    with loaded.lock:
        model = loaded.model
        edges = model.graph.edges()
        counters = [{"counter": name, "values": values} for name, values in model.counter_table()]
        hot = model.hot_lines(limit=10_000)
        remarks = model.remarks
    stages = []
    for stage in traj.stages:
        snaps = [s for s in traj.stage_snapshots(stage) if s.stage_index >= 0]
        ms = traj.times.get("stage_ms", {}).get(stage, sum(s.wall_ms for s in snaps))
        stages.append(StageRow(stage=stage, passes=len(snaps), changed=sum(s.changed for s in snaps), ms=round(ms, 2)))
    chunk, info = page(edges, offset, limit)
    return Summary(
        trajectory=loaded.name,
        kernel=traj.kernel.name,
        file=traj.kernel.source_file,
        target=str(traj.target),
        specialization=trim(
            {
                "signature": traj.specialization.signature,
                "constexprs": traj.specialization.constexprs,
                "options": {
                    k: v
                    for k, v in traj.specialization.options.items()
                    if k in ("num_warps", "num_stages", "num_ctas", "maxnreg", "arch")
                },
            },
            items=40,
        ),
        complete=traj.complete,
        compile_error=_failed(traj),
        stages=stages,
        changed_passes=[
            PassRow(
                snapshot=e.target,
                label=traj.snapshots[e.target].label,
                pass_name=e.pass_name,
                ops_added=_top(e.ops_added),
                ops_removed=_top(e.ops_removed),
                counters=_top(e.counter_deltas),
            )
            for e in chunk
        ],
        changed_passes_page=info,
        key_counters=counters[:30],
        resources=trim(traj.resources),
        remarks=[
            clip(
                f"#{r.snapshot} {r.stage} {r.pass_arg}: {r.severity} {remark_text(r)}"
                + (f" (line {r.line})" if r.line else ""),
                300,
            )
            for r in remarks[:5]
        ],
        remarks_total=len(remarks),
        hot_lines=[{"line": h.line, "text": clip(h.text, 160), "counters": h.counters} for h in hot[:8]],
        hot_lines_total=len(hot),
    )


def _top(d: dict[str, int], most: int = 8) -> dict[str, int]:
    """The largest entries of a delta map (by magnitude)."""
    return dict(sorted(d.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:most])


def query(loaded: Loaded, what: str, arg: str, offset: int, limit: int) -> QueryAnswer:
    traj = loaded.traj
    context: dict[str, Any] = {}
    rows: list[dict[str, Any]]
    with loaded.lock:
        g = loaded.model.graph
        if what in ("introduced-by", "removed-by"):
            changes = g.introduced_by(arg) if what == "introduced-by" else g.removed_by(arg)
            rows = [
                {
                    "snapshot": c.edge.target,
                    "stage": c.edge.stage,
                    "pass_arg": c.edge.pass_arg,
                    "pass_name": c.edge.pass_name,
                    "adder": c.edge.adder,
                    "before": c.before,
                    "after": c.after,
                }
                for c in changes
            ]
            if not rows:
                context["note"] = f"no pass {'raised' if what == 'introduced-by' else 'lowered'} {arg}"
        elif what == "timeline":
            rows = [{"snapshot": i, "label": label, "value": v} for i, label, v in g.timeline(arg)]
        elif what == "line":
            line = _line(arg)
            src = traj.kernel.source.splitlines()
            context["source"] = src[line - 1].strip() if 0 < line <= len(src) else None
            for stage in ("ttir", "ttgir", "ttadapter"):
                if stage in traj.stages:
                    ops = g.ops_by_line(traj.stage_output(stage).index).get(line, Counter())
                    context[f"{stage}_ops"] = _top(dict(ops), 20)
            rows = [
                {"snapshot": e.target, "stage": e.stage, "pass_arg": e.pass_arg, "delta": _top(delta, 12)}
                for e, delta in g.passes_touching_line(line)
            ]
        else:  # first
            snap = g.first_where(arg)
            rows = [] if snap is None else [{"snapshot": snap.index, "label": snap.label}]
            if snap is None:
                context["note"] = f"no snapshot satisfies {arg}"
    chunk, info = page(rows, offset, limit)
    return QueryAnswer(what=what, arg=arg, items=chunk, context=context, **info.model_dump())


def _line(arg: str) -> int:
    if not arg.strip().isdigit():
        raise ValueError(f"line {arg!r}: give the kernel file's line number, e.g. 17")
    return int(arg)


def diff(a: Loaded, b: Loaded, all_stages: bool, offset: int, limit: int) -> DiffAnswer:
    with a.lock:  # the store's one lock: b's is the same
        c = compare(a.traj, b.traj)
    focus = {*adapter_for(c.a.target).focus_stages, *adapter_for(c.b.target).focus_stages, "res"}
    counters = sorted(
        (d for d in c.counters if d.delta and (all_stages or d.name.split(".")[0] in focus)),
        key=lambda d: (-abs(d.delta), d.name),
    )
    lines = [
        {
            "line_a": ld.line_a,
            "line_b": ld.line_b,
            "stage": ld.stage,
            "source": clip(ld.text, 160),
            "changes": {k: list(v) for k, v in ld.counters.items()},
        }
        for ld in c.lines
        if all_stages or ld.stage in focus
    ]
    chunk, info = page(lines, offset, limit)
    passes = [{"op": p.op, "a": p.a, "b": p.b} for p in c.passes if p.op != "equal"]
    return DiffAnswer(
        a=a.name,
        b=b.name,
        counters=[{"counter": d.name, "a": d.a, "b": d.b, "delta": d.delta} for d in counters[:25]],
        counters_total=len(counters),
        lines=trim(chunk, items=12),
        passes=trim(passes, items=10),
        changed_only_in_a=trim(c.changed_only_in_a, items=15),
        changed_only_in_b=trim(c.changed_only_in_b, items=15),
        **info.model_dump(),
    )


def snapshot_page(loaded: Loaded, ref: str, view: str, offset: int, limit: int) -> SnapshotPage:
    traj = loaded.traj
    snap = traj.find(ref)
    if view == "diff":
        prev = next((s for s in reversed(traj.snapshots[: snap.index]) if s.kind == snap.kind), None)
        before = prev.text.splitlines() if prev else []
        text_lines = list(difflib.unified_diff(before, snap.text.splitlines(), "before", snap.label, n=2, lineterm=""))
    else:
        text_lines = snap.text.splitlines()
    chunk, info = page(text_lines, offset, limit)
    return SnapshotPage(
        trajectory=loaded.name,
        snapshot=snap.index,
        label=snap.label,
        pass_name=snap.pass_name,
        kind=snap.kind,
        changed=snap.changed,
        view=view,
        text="\n".join(clip(line, 400) for line in chunk),
        **info.model_dump(),
    )


def register(mcp: MCPServer, app: App) -> None:
    @mcp.tool(annotations=RUNS_CODE)
    @guarded
    def capture(
        kernel: KernelArg,
        args: ArgSpecs = {},  # noqa: B006 - pydantic copies defaults
        constexprs: Constexprs = {},  # noqa: B006
        target: Target = DEFAULT_TARGET,
        num_warps: Warps = None,
        num_stages: Stages = None,
        num_ctas: Ctas = None,
        maxnreg: MaxReg = None,
        config: Annotated[int, Field(ge=0, description="autotune config index")] = 0,
        name: Annotated[str | None, Field(description="the trajectory's name (default: the kernel's)")] = None,
        timeout_s: Timeout = None,
    ) -> CaptureResult:
        """Compile FILE.py:KERNEL for a target as the JIT would (no GPU needed) and record the IR after every
        pass into the workspace. The kernel's module is imported in a confined child: no network, no credentials,
        its own folder read-only, only its output writable. Returns the trajectory's name for trajectory_summary,
        query_trajectory, snapshot_ir."""
        options = {"num_warps": num_warps, "num_stages": num_stages, "num_ctas": num_ctas, "maxnreg": maxnreg}
        return capture_into(app, kernel, Specialization(args, constexprs, options, target), config, name, timeout_s)

    @mcp.tool(annotations=READ)
    @guarded
    def list_trajectories(offset: Offset = 0, limit: int = per_page(20)) -> TrajectoryList:
        """The trajectories captured into this workspace, oldest first, a page at a time."""
        dirs = app.store.names()
        chunk, info = page(dirs, offset, limit)
        rows = []
        for d in chunk:
            try:
                t = app.store.get(d.name).traj
            except (ValueError, OSError) as e:
                rows.append(
                    TrajectoryRow(
                        name=d.name,
                        kernel=f"(unreadable: {first_line(str(e), 120)})",
                        target="",
                        snapshots=0,
                        complete=False,
                        failed=True,
                    )
                )
                continue
            rows.append(
                TrajectoryRow(
                    name=d.name,
                    kernel=t.kernel.name,
                    target=str(t.target),
                    snapshots=len(t.snapshots),
                    complete=t.complete,
                    failed=t.error is not None,
                )
            )
        return TrajectoryList(items=rows, **info.model_dump())

    @mcp.tool(annotations=READ)
    @guarded
    def trajectory_summary(trajectory: TrajectoryArg, offset: Offset = 0, limit: int = per_page(20, 100)) -> Summary:
        """One trajectory at a glance: stages, the passes that changed the IR (ops added/removed, counter deltas;
        paged by offset/limit), key counters per stage, resources (registers, spills, shared memory), the
        compiler's remarks and the kernel lines the counters point at."""
        return summary(app.store.get(trajectory), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def query_trajectory(
        trajectory: TrajectoryArg,
        what: Annotated[
            Literal["introduced-by", "removed-by", "timeline", "line", "first"], Field(description="the query")
        ],
        arg: Annotated[
            str,
            Field(
                description="an op (ttg.convert_layout), a counter (sync.shuffle), a kernel line number (line), "
                "or a predicate 'NAME OP N' (first)"
            ),
        ],
        offset: Offset = 0,
        limit: int = per_page(30),
    ) -> QueryAnswer:
        """The stage-diff graph's queries: which passes introduced or removed an op or counter, its value after
        every pass (timeline), what the passes did to one kernel line, the first snapshot where a predicate holds."""
        return query(app.store.get(trajectory), what, arg, offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def diff_trajectories(
        a: TrajectoryArg,
        b: TrajectoryArg,
        all_stages: Annotated[bool, Field(description="every stage, not only the backend's main ones")] = False,
        offset: Offset = 0,
        limit: int = per_page(20),
    ) -> DiffAnswer:
        """Compare two trajectories (before/after a rewrite, or two configurations): counter deltas, per-line
        changes (paged), where the pass sequences differ and passes that changed the IR in only one of them."""
        return diff(app.store.get(a), app.store.get(b), all_stages, offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def snapshot_ir(
        trajectory: TrajectoryArg,
        snapshot: Annotated[str, Field(description="snapshot index, stage[i] (ttgir[3]) or a pass argument")],
        view: Annotated[
            Literal["ir", "diff"],
            Field(description="the IR, or its unified diff to the previous snapshot of the same kind"),
        ] = "ir",
        offset: Offset = 0,
        limit: int = per_page(120, MAX_LIMIT),
    ) -> SnapshotPage:
        """One snapshot's IR (or what its pass changed), a page of lines at a time."""
        return snapshot_page(app.store.get(trajectory), snapshot, view, offset, limit)
