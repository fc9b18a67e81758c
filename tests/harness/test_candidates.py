"""Adversarial candidate modules (tests/harness/candidates/) through the real harness: each in its own sandboxed
subprocess under TRITON_INTERPRET=1 on small shapes. The harness must reject every cheat for the right reason
and accept the honest kernels."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ladder.harness.evaluate import evaluate_candidate

CANDIDATES = Path(__file__).parent / "candidates"
HOSTILE = Path(__file__).parents[1] / "gpu" / "hostile"  # shared with the GPU tests of the timing path
TOY_ARGMAX = "tests.harness.toy_ops:ROW_ARGMAX"
# candidate → operator; new_gelu's s1 case (3×300) and the toy argmax's s1 (6×13) keep the interpreter fast.
RUNS = {
    "caches_by_data_ptr": "new_gelu",
    "returns_reference": "new_gelu",
    "never_launches": "new_gelu",
    "mutates_input": "new_gelu",
    "skips_tail": "new_gelu",
    "lazy_subclass": "new_gelu",
    "exits": "new_gelu",
    "out_of_bounds": "new_gelu",
    "hangs": "new_gelu",
    "patches_timer": "new_gelu",
    "device_fault": "new_gelu",
    "out_of_memory": "new_gelu",
    "argmax_first_index": TOY_ARGMAX,
    "argmax_wrong_on_ties": TOY_ARGMAX,
    "thread_at_import": "new_gelu",
    "thread_on_first_call": "new_gelu",
    "patches_monitor": "new_gelu",
}


# The static check rejects these unrun; evaluated without it, they show the runtime layer behind it holds too.
BEHIND_STATIC = {
    "never_launches",
    "lazy_subclass",
    "patches_timer",
    "thread_at_import",
    "thread_on_first_call",
    "patches_monitor",
}


def _evaluate(name: str):
    cases = ["s1", "s2"] if name == "device_fault" else ["s1"]
    return name, evaluate_candidate(
        RUNS[name],
        candidate=_path(name),
        cases=cases,
        device="cpu",
        seeds=2,
        timeout_s=120,
        silence_s=20,
        static=name not in BEHIND_STATIC,
    )


def _path(name: str) -> Path:
    return next(p for p in (CANDIDATES / f"{name}.py", HOSTILE / f"{name}.py") if p.exists())


@pytest.mark.parametrize("name", sorted(BEHIND_STATIC))
def test_the_static_check_rejects_them_first(name):
    r = evaluate_candidate(RUNS[name], candidate=_path(name), device="cpu")
    assert r.static_violations and not r.cases and "not imported: the static check failed" in reasons(r)


@pytest.fixture(scope="module")
def results():
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(_evaluate, RUNS))


def reasons(result) -> str:
    return "\n".join(result.reasons())


def test_honest_kernels_are_accepted(results):
    r = results["argmax_first_index"]
    assert r.accepted, reasons(r)
    case = r.cases[0]
    assert case["validation"]["kinds"] == ["random", "ties"] and case["validation"]["runs"] == 4
    assert case["recheck"]["kinds"] == ["random/new-buffers", "random/same-buffers"]


def test_result_cache_keyed_on_data_ptr_is_caught_by_the_recheck(results):
    r = results["caches_by_data_ptr"]
    assert not r.accepted
    case = r.cases[0]
    assert case["validation"]["ok"], "fresh buffers per seed: the cache misses during validation"
    failed = {f["kind"] for f in case["recheck"]["failures"]}
    assert "random/same-buffers" in failed and "wrong output" in reasons(r)


def test_torch_arithmetic_behind_a_token_launch(results):
    r = results["returns_reference"]
    assert not r.accepted and not r.static_violations
    assert "torch compute in the forward path: add, mul, pow" in reasons(r)


def test_defined_but_never_launched(results):
    r = results["never_launches"]
    assert not r.accepted
    assert "no Triton kernel was launched" in reasons(r)


def test_wrong_on_ties(results):
    r = results["argmax_wrong_on_ties"]
    assert not r.accepted
    failures = r.cases[0]["validation"]["failures"]
    assert failures and {f["kind"] for f in failures} == {"ties"}, "right on random inputs, wrong on ties"
    assert "index mismatches" in reasons(r)


def test_input_mutation(results):
    r = results["mutates_input"]
    assert not r.accepted
    assert "input 0 was modified" in reasons(r) and "aliases an input" in reasons(r)


def test_unwritten_output_is_poisoned(results):
    r = results["skips_tail"]
    assert not r.accepted and "NaN at 132 positions" in reasons(r)  # 900 elements, 3 full blocks of 256


def test_tensor_subclass_output(results):
    assert "output 0 is Deferred, not exactly torch.Tensor" in reasons(results["lazy_subclass"])


def test_sys_exit_in_forward_fails_the_run_not_the_harness(results):
    r = results["exits"]
    assert not r.accepted and not r.sandbox_failures
    assert r.cases[0]["validation"]["runs"] == 2 and "forward raised SystemExit" in reasons(r)


def test_crash_ends_the_candidate_only(results):
    r = results["out_of_bounds"]
    assert not r.accepted
    assert r.sandbox_failures and r.sandbox_failures[0]["status"] == "crashed"
    assert r.sandbox_failures[0]["signal"] == "SIGSEGV"


def test_hang_is_killed(results):
    r = results["hangs"]
    assert not r.accepted
    assert r.sandbox_failures[0]["status"] == "silent" and r.sandbox_failures[0]["cases"] == ["s1"]


def test_timer_patching_is_seen_at_runtime_too(results):
    r = results["patches_timer"]
    assert not r.accepted and "triton.testing.do_bench" in r.tampered


def test_fatal_device_error_ends_the_worker_and_the_rest_runs_in_a_fresh_one(results):
    r = results["device_fault"]
    assert [c["case"] for c in r.cases] == ["s1", "s2"]
    for case in r.cases:
        assert not case["correct"] and "fatal device error" in case["errors"][0]
    assert [f["status"] for f in r.sandbox_failures] == ["exception", "exception"]  # one worker per case


def test_a_case_that_runs_out_of_memory_is_evaluated_again_alone_and_fails_if_it_does_again(results):
    r = results["out_of_memory"]
    assert r.memory_retried == ["s1"] and [c["case"] for c in r.cases] == ["s1"]  # the second record replaces it
    assert not r.accepted and "forward raised OutOfMemoryError: CUDA out of memory" in reasons(r)


def test_a_thread_started_at_import_is_counted_from_outside_the_sandbox(results):
    """The thread computes with torch, where the runner's per-thread monitor cannot see; this process counts the
    runner's threads in /proc before and after the import."""
    r = results["thread_at_import"]
    assert not r.accepted
    assert any("importing the candidate started 1 thread(s) (counted from outside" in p for p in r.process), r.process


def test_a_thread_started_by_the_first_call_is_seen_in_the_compile_only_call(results):
    """The runner's first call of the forward is the compile-only one, before any validation run: a thread it
    leaves running would be old news to every validation run's monitor."""
    r = results["thread_on_first_call"]
    assert not r.accepted
    assert r.process == ["s1: the forward's compile-only call left 1 thread(s) running"], r.process
    assert r.cases[0]["validation"]["ok"], "the kernel itself is honest"


def test_a_patched_monitor_summary_does_not_hide_the_raw_facts(results):
    """The candidate empties the runner's summary of problems; the rules are applied here to the counts."""
    r = results["patches_monitor"]
    text = reasons(r)
    assert not r.accepted
    assert "no Triton kernel was launched (the runner's launch count)" in text
    assert "torch compute in the forward path: gelu (the runner's aten record)" in text
