"""The harness's engine on the CPU (issue: a suite run that never hangs, takes minutes, and cannot be fooled):
no cycle between a runner, its judge and a measurement waiting for the GPU; bounded waits that name who holds
the GPU; a parent that survives any message, any flood, any file trick; outputs through bounded shared memory;
the timing checks decided here (speed of light, timed calls, the clock's window). The GPU half of the timing path
is tests/gpu/test_hostile_timing.py."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from ladder import confine, sandbox, status
from ladder.harness import evaluate
from ladder.harness.ceilings import Ceilings
from ladder.harness.evaluate import _Evaluation, _judged, evaluate_candidate, watch_problems
from ladder.harness.gpu_lock import GpuLock, GpuWaitTimeout, held
from ladder.harness.transfer import OutputError, Outputs, SlotWriter
from ladder.harness.worker import Slots
from ladder.sandbox import run_sandboxed
from suite.operator import get_operator
from tests import sandbox_required

E = "tests.harness.sandbox_entries"
HONEST = Path(__file__).parents[1] / "gpu" / "hostile" / "honest.py"


def test_two_jobs_beside_a_measurement_finish_without_a_cycle(tmp_path):
    """Two evaluations share the GPU lock while a stand-in for timing takes it alone again and again. Before, a
    runner held the lock shared while it waited for its judge, the judge waited at the turnstile behind the
    measurement, and the measurement waited for the runner: every job stalled. Now the parent holds the lock for
    its runner and judges under that hold, so nothing waits in a circle."""
    lock, stop = str(tmp_path / "gpu.lock"), threading.Event()

    def measurement() -> None:
        while not stop.is_set():
            with GpuLock(lock).exclusive():
                time.sleep(0.1)
            time.sleep(0.005)

    timer = threading.Thread(target=measurement, daemon=True)
    timer.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            jobs = [
                pool.submit(evaluate_candidate, "new_gelu", candidate=HONEST, device="cpu", seeds=3, gpu_lock=lock)
                for _ in range(2)
            ]
            results = [job.result(timeout=180) for job in jobs]
    finally:
        stop.set()
        timer.join()
    for r in results:
        assert r.accepted, r.reasons()
        assert r.phase_seconds["wait_shared"] >= 0 and r.phase_seconds["validate"] > 0


def test_a_measurement_waits_for_the_runs_in_flight_not_for_a_whole_case(tmp_path):
    """Ten validation runs of one case, each RUN_S of input making in the runner and again in the judge. A
    measurement that asks for the GPU as soon as the evaluation holds it shared gets it after the runs in flight
    (at most two, then the judging of the last), not after all ten: the evaluation gives way between runs.
    Before, a case's validation was one command under one hold, and the measurement waited for all of it."""
    from tests.harness.slow_ops import RUN_S

    lock, waits, over = str(tmp_path / "gpu.lock"), [], threading.Event()

    def measurement() -> None:
        while not held(lock):
            if over.wait(0.01):
                return
        t0 = time.monotonic()
        with GpuLock(lock).exclusive():
            waits.append(time.monotonic() - t0)

    timer = threading.Thread(target=measurement, daemon=True)
    timer.start()
    try:
        result = evaluate_candidate(
            "tests.harness.slow_ops:OPERATOR", cases=["s1"], device="cpu", seeds=10, gpu_lock=lock
        )
    finally:
        over.set()
        timer.join()
    assert result.accepted, result.reasons()
    assert result.phase_seconds["validate"] >= 10 * RUN_S  # the whole validation is long
    # the case's record counts every validation command the runner answered, not the last one only
    assert result.cases[0]["phase_seconds"]["validate"] >= 10 * RUN_S
    assert len(waits) == 1 and waits[0] < 6 * RUN_S, (waits, result.phase_seconds)


def test_a_command_sent_ahead_while_the_runner_waits_for_a_slot_is_answered(monkeypatch):
    """One output slot, as a device slot is: while the runner waits for the parent to free it, the parent has
    already sent the next command (two are in flight). The runner keeps that command for its loop. Before, it
    read and dropped it, and the parent waited for its answer holding the GPU: on an H100 every job stalled
    behind it (docs/results/engine-h200/README.md, session 6). Here the silence bound would end that runner."""
    monkeypatch.setattr(evaluate, "HOST_SLOTS", 1)
    result = evaluate_candidate(
        "new_gelu", candidate=HONEST, cases=["s1"], device="cpu", seeds=3, silence_s=20, timeout_s=120
    )
    assert result.accepted, result.reasons()
    assert not result.sandbox_failures


def test_a_wait_past_its_bound_names_the_holder_and_gives_up(tmp_path):
    lock = tmp_path / "gpu.lock"
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with GpuLock(lock, who="softmax round 2: time c3").exclusive():
            held.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    heard: list[str] = []
    try:
        with pytest.raises(GpuWaitTimeout) as e, GpuLock(lock, heard.append, who="gemv round 1", wait_s=0.3).shared():
            pass
    finally:
        release.set()
        t.join()
    assert "gemv round 1 waited" in str(e.value) and "softmax round 2: time c3 (alone" in str(e.value)


def test_an_evaluation_that_cannot_get_the_gpu_says_so_and_skips_the_rest(tmp_path):
    lock = tmp_path / "gpu.lock"
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with GpuLock(lock, who="a holder that never lets go").exclusive():
            held.set()
            release.wait(60)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    try:
        r = evaluate_candidate("new_gelu", candidate=HONEST, device="cpu", seeds=1, gpu_lock=str(lock), gpu_wait_s=0.5)
    finally:
        release.set()
        t.join()
    assert not r.accepted and r.cases[0]["case"] == "s1" and r.skipped_cases == ["s2"]
    assert "a holder that never lets go (alone" in r.cases[0]["errors"][0]


def test_a_message_nested_too_deep_to_parse_is_the_runners_fault_not_the_parents():
    r = run_sandboxed(f"{E}:deep_nesting", {}, timeout_s=60)
    assert r.ok and r.value == "done"
    assert sandbox.UNPARSABLE in r.messages[0] and r.messages[0][sandbox.UNPARSABLE].startswith("[[[")
    assert r.messages[1] == {"after": True}


def test_a_flood_of_small_messages_is_cut_and_not_kept():
    r = run_sandboxed(f"{E}:many_messages", {"n": 300_000}, timeout_s=120, max_messages=100_000)
    assert r.status == sandbox.FLOOD and "more than 100000 messages" in r.detail
    assert len(r.messages) <= sandbox.KEPT_MESSAGES


@pytest.mark.skipif(sandbox_required.may_skip(), reason="no sandbox here")
def test_the_scratch_directory_is_bounded_and_on_no_disk(tmp_path):
    base = confine.available()
    small = replace(base, limits=replace(base.limits, scratch_bytes=64 << 20))
    r = run_sandboxed(f"{E}:fill_scratch", {"bytes": 256 << 20}, timeout_s=120, confinement=small, scratch=tmp_path)
    assert r.ok and r.value["error"] == "No space left on device" and r.value["written"] <= 64 << 20
    assert list(tmp_path.iterdir()) == []  # the host's directory saw nothing: the scratch was a tmpfs over it


def test_a_runner_waits_for_a_slot_until_the_parent_frees_it():
    with Outputs(slots=2, slot_bytes=1 << 16) as outputs:
        read_fd, write_fd = os.pipe()
        slots = Slots(SlotWriter(outputs.fd, outputs.region()), sandbox.Commands(read_fd))
        first, second = slots.put(torch.ones(4)), slots.put(torch.full((3,), 2.0))
        assert (first["slot"], second["slot"]) == (0, 1)
        freed = threading.Timer(0.3, lambda: os.write(write_fd, b'{"free": 0}\n'))
        started = time.monotonic()
        freed.start()
        third = slots.put(torch.arange(5.0))
        assert third["slot"] == 0 and 0.25 < time.monotonic() - started < 5
        assert torch.equal(outputs.take(third, "cpu"), torch.arange(5.0))
        assert torch.equal(outputs.take(second, "cpu"), torch.full((3,), 2.0))
        os.close(read_fd)
        os.close(write_fd)


@pytest.mark.parametrize(
    "description, problem",
    [
        ({"slot": 5, "tensors": []}, "is not one of the 2 slots"),
        ({"slot": 0, "tensors": [{"dtype": "object", "shape": [1], "offset": 0}]}, "is not one an output may have"),
        ({"slot": 0, "tensors": [{"dtype": "float32", "shape": [1 << 20], "offset": 0}]}, "does not fit a slot"),
        ({"slot": 1, "tensors": [{"dtype": "float32", "shape": [4], "offset": 3}]}, "not an aligned position"),
        ({"slot": 0, "tensors": [{"dtype": "float32", "shape": [-1], "offset": 0}]}, "is not a list of at most"),
        ("slot 0", "is not an object"),
    ],
)
def test_an_output_description_that_does_not_hold_is_refused(description, problem):
    with Outputs(slots=2, slot_bytes=1024) as outputs, pytest.raises(OutputError, match=problem):
        outputs.take(description, "cpu")


def test_outputs_keep_their_dtypes_shapes_and_values_through_shared_memory():
    with Outputs(slots=1, slot_bytes=1 << 16) as outputs:
        writer = SlotWriter(outputs.fd, outputs.region())
        sent = (torch.randn(3, 5).to(torch.bfloat16), torch.arange(7), torch.tensor(2.5), torch.randn(4, 6).t())
        back = outputs.take(writer.put(0, sent), "cpu")
        assert all(torch.equal(a, b) and a.dtype == b.dtype for a, b in zip(sent, back))
        with pytest.raises(OutputError, match="more than the 1024 bytes"):
            SlotWriter(outputs.fd, {"slots": 1, "slot_bytes": 1024}).put(0, torch.zeros(1024))


def test_without_a_device_slot_outputs_go_through_host_memory_and_say_why():
    """A device slot asked for where none can be made (here: no CUDA driver) leaves the host slots serving and says
    why; a runner offered a device slot it cannot map writes to the host slots and says why; a description that
    claims the device slot where there is none is refused, not read."""
    with Outputs(slots=1, slot_bytes=1 << 16, device_bytes=1 << 20) as outputs:
        assert outputs.device is None and outputs.device_error
        assert "device" not in outputs.region() and outputs.fds() == [outputs.fd]
        offered = {**outputs.region(), "device": {"fd": outputs.fd, "bytes": 1 << 20}}
        writer = SlotWriter(outputs.fd, offered, pin=True)
        assert writer.memory == "host" and writer.device_error
        sent = torch.randn(3, 5)
        description = writer.put(0, sent)
        assert description["memory"] == "host"
        assert torch.equal(outputs.take(description, "cpu"), sent)
        with pytest.raises(OutputError, match="device slot, and there is none"):
            outputs.take({**description, "memory": "device"}, "cpu")


def _evaluation(timed: bool = True) -> _Evaluation:
    from ladder.harness.evaluate import Settings

    op = get_operator("new_gelu")
    settings = Settings(timing={} if timed else None, ceilings=Ceilings(4300.0, 790.0, 1 << 30, 8192))
    return _Evaluation(op, "new_gelu", ["c1"], 0, settings)


def test_running_out_of_memory_while_judging_fails_the_case_for_memory_not_the_runner(monkeypatch):
    """This process's judge allocating on a full GPU is no fault of the runner's message: the case fails with the
    allocation's error (and is evaluated again alone), and the runner is not blamed; any other failure is."""
    import torch

    ev = _evaluation()

    def full(msg: dict) -> None:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 3.91 GiB")

    monkeypatch.setattr(ev, "_handle", full)
    ev._receive({"type": "run", "case": "c1"})
    assert ev.case_errors == {
        "c1": ["judging a run here: OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB"]
    }
    assert ev.result.runner_errors == []
    ev._receive({"type": "run", "case": "no such case"})  # a case it was not asked: the runner's message is wrong
    assert ev.result.runner_errors == [
        "a message that makes no sense (OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB)"
    ]


def test_a_timing_window_starts_when_the_block_was_sent_not_when_a_busy_parent_read_it():
    """The parent's wall-clock bound on a runner's device time: a block that really lasted 50 ms, whose start
    message a busy parent read 40 ms late, is a 50 ms window (from the start's SENT_AFTER to the end's receipt), so
    45 ms of claimed device time is believable; a forged edge field changes nothing (edges alternate by arrival)."""
    ev = _evaluation()
    sent = time.monotonic()
    time.sleep(0.04)  # the block runs while the parent is busy elsewhere
    ev._receive({"type": "timing_block", "case": "c1", "impl": "eager", "edge": "end", sandbox.SENT_AFTER: sent})
    time.sleep(0.01)
    ev._receive({"type": "timing_block", "case": "c1", "impl": "eager", "edge": "start", sandbox.SENT_AFTER: sent})
    start, end = ev.windows["c1"]["eager"]
    assert start == sent and end - start >= 0.05
    errors: list[str] = []
    ev._timing(ev.cases["c1"], {"eager": {"ms": 0.5, "busy_ms": 45.0}}, errors)
    assert errors == []
    ev._timing(ev.cases["c1"], {"eager": {"ms": 0.5, "busy_ms": 500.0}}, errors)
    assert errors and "not believable" in errors[0]


def test_a_time_below_speed_of_light_is_not_believed():
    ev = _evaluation()
    case = ev.cases["c1"]  # 4096×4096 fp32 in and out: 134 MB, 0.031 ms at 4.3 TB/s
    sol = ev.settings.ceilings.sol_ms(ev.op.bytes_moved(case), 0, "fp32")
    errors: list[str] = []
    ev._timing(case, {"candidate": {"ms": 0.9 * sol, "busy_ms": 0.0}}, errors)
    assert errors == []  # within the slack: a read-mostly kernel may beat the measured copy bandwidth a little
    ev._timing(case, {"candidate": {"ms": 0.0007, "busy_ms": 0.0}}, errors)
    assert errors and "speed of light" in errors[0] and "impossible" in errors[0]
    errors = []  # graph replays without an L2 flush: only data that cannot stay in the L2 bounds the time
    ev._timing(case, {"candidate": {"ms": 0.0007, "busy_ms": 0.0, "timer": "cudagraph"}}, errors)
    assert errors and "speed of light" in errors[0]


def test_timed_calls_without_a_launch_or_with_other_outputs_are_rejected():
    same = [1.0, 4.0, 0.0]
    assert watch_problems({"launches": [1, 1, 1], "checksums": [[same, same]], "judged_index": [0]}) == []
    assert "1 of 3 timed calls launched no Triton kernel" in watch_problems({"launches": [1, 0, 1]})[0]
    stale = [7.0, 4.0, 0.0]  # same magnitude, other values: another input's result
    off = watch_problems({"launches": [1], "checksums": [[same, stale, same]], "judged_index": [0]})
    assert off and "1 of 3 timed calls on input set 0 returned other outputs" in off[0]
    assert "launched 3 Triton kernels in all" in watch_problems({"launches": [], "graph": [3, 10]})[0]
    rounding = [1.0 + 1e-5, 4.0, 0.0]  # a nondeterministic kernel's last bits
    assert watch_problems({"launches": [1], "checksums": [[same, rounding]], "judged_index": [0]}) == []


@pytest.mark.parametrize(
    "timed",
    [
        # an index into checksums never sent: a block that raised after its judged call (seen on an H100)
        {
            "timing": {"candidate": {"ms": 1.0, "busy_ms": 1.0}},
            "watch": {"checksums": [[[1.0, 4.0, 0.0]]], "judged_index": [3]},
        },
        {"timing": {"candidate": {"ms": 1.0, "busy_ms": 1.0}}, "watch": {"launches": ["many"]}},
        {"timing": {"candidate": {"ms": -1.0, "busy_ms": 1.0}}},
        {"timing": ["not", "a", "mapping"]},
    ],
)
def test_a_report_that_cannot_be_judged_fails_its_case_not_the_run(timed):
    ev = _evaluation()
    ev.done[("c1", "time")] = timed
    with pytest.raises((IndexError, TypeError, ValueError)):
        ev.record("c1")  # the record's parsing trusts nothing: it raises on what does not hold ...
    record = _judged(ev, "c1")  # ... and the evaluation turns that into the case's failure
    assert record["correct"] is False and "the runner's report could not be judged" in record["errors"][0]


def test_status_lines_say_what_each_job_waits_for():
    def job() -> None:
        status.doing("softmax round 3: validate")
        status.waiting("the GPU (alone); held by: gemv round 1 (shared, 4 s)")
        time.sleep(0.2)
        status.done()

    t = threading.Thread(target=job, name="ladder-7")
    t.start()
    time.sleep(0.1)
    lines = status.lines()
    t.join()
    assert any(
        line.startswith("ladder-7: softmax round 3: validate (")
        and "for the GPU (alone); held by: gemv round 1" in line
        for line in lines
    ), lines


FIFO_CANDIDATE = '''import json, os, sys
import torch


def forward(x):
    """Makes FIFOs where a runner's output files once lay and reports runs that name them."""
    payload = json.load(open(sys.argv[3]))
    for n in range(4):
        os.mkfifo(f"out-{n}.pt")
    for seed in payload["seeds"]:
        msg = {"case": "s1", "kind": "random", "seed": seed, "file": "out-0.pt"}
        for fd in range(3, 64):
            try:
                os.write(fd, (json.dumps(msg) + "\\n").encode())
            except OSError:
                pass
    return x
'''


def test_a_runner_that_names_a_fifo_as_its_output_cannot_block_the_parent(tmp_path):
    """The parent once opened the output file a run message named, blocking: a FIFO there hung it for good (its
    supervision loop with it, so no timeout could fire). Outputs now come only through shared memory."""
    from ladder.validators.interpret import InterpretValidator

    path = tmp_path / "candidate.py"
    path.write_text(FIFO_CANDIDATE)
    with ThreadPoolExecutor(1) as pool:
        job = pool.submit(InterpretValidator(seeds=1, timeout_s=60).validate, get_operator("new_gelu"), path, tmp_path)
        v = job.result(timeout=120)
    assert not v.correct and "makes no sense" in v.detail, v.detail
