"""A new backend is one adapter and one entry in irscope.backends.ADAPTERS: a stub one here, `toy:N` for the test
corpus's toyhw backend, shows every place that reads a backend asking its adapter (target spelling, machine,
counter rules, the compiler index's folders and gates, its own capture path). Nothing else is edited."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

import irscope
from compiler_index import queries as q
from compiler_index.build import build, resolve_roots
from compiler_index.sources import source_root
from compiler_index.target import file_applies
from irscope import signatures
from irscope.backends import ADAPTERS, BackendAdapter
from irscope.examples import EXAMPLES
from irscope.hazards import cost
from irscope.signatures.rules import OpRule
from irscope.targets import DEFAULT_TARGET, Machine, Target, TargetError, parse_target
from irscope.trajectory import Trajectory


class ToyAdapter(BackendAdapter):
    def read_target(self, text: str) -> Target | None:
        m = re.fullmatch(r"toy:(\d+)", text)
        return Target("toy", int(m.group(1)), 16) if m else None

    def check_buildable(self, target: Target, text: str) -> None:
        if target.arch != 1:
            raise TargetError(f"target {text!r}: toyhw has one part, toy:1")

    def machine(self, target: Target) -> Machine:
        return Machine(
            "ToyHW", sm_count=4, registers_per_sm=8192, shared_bytes_per_sm=16384, max_warps_per_sm=8, max_ctas_per_sm=4
        )

    def counter_rules(self) -> tuple[list[OpRule], list]:
        return [OpRule("toy.reductions", ("tt.reduce",), stages=("ttir",))], []

    def capture(
        self, kernel: Any, args: dict[str, Any], options: dict[str, Any], target: Target, out_dir: Any, config: int
    ) -> Trajectory:
        # Its own capture path: Triton's real frontend makes the TTIR (the stage every backend starts from), which
        # is all a toy part has to show.
        traj = irscope.capture(kernel, target=DEFAULT_TARGET, kernel_kwargs={**args, **options})
        return dataclasses.replace(traj, target=target, snapshots=traj.stage_snapshots("ttir"), artifacts={})


CORPUS = Path(__file__).resolve().parents[1] / "compiler_index" / "corpus"

TOY = ToyAdapter(
    name="toyhw",
    triton_backend="toy",
    stages=("ttir",),
    target_forms="toy:N",
    source_dirs=("third_party/toyhw",),
    own_sources=("third_party/toyhw/",),
    own_capture=True,
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Target:
    monkeypatch.setitem(ADAPTERS, "toy", TOY)  # the one table entry
    return parse_target("toy:1")


def test_its_targets_are_read_checked_and_carry_its_machine(toy):
    assert toy == Target("toy", 1, 16) and str(toy) == "toy:1"
    assert toy.machine.part == "ToyHW" and toy.machine.sm_count == 4
    with pytest.raises(TargetError, match="toyhw has one part"):
        parse_target("toy:2")
    with pytest.raises(TargetError, match=r"expected cuda:CC .*toy:N"):
        parse_target("tpu:1")
    # the cost model's occupancy on its machine: 8 warps per SM bind before its 4 CTAs or its 8192 registers
    assert cost.resident_warps(32, 0, 4, toy) == (8, "warps per SM")


def test_the_compiler_index_reads_its_folders_and_scopes_its_code(toy, tmp_path):
    checkout = tmp_path / "triton"
    for d in ("include/triton", "lib", "third_party/nvidia", "third_party/toyhw"):
        (checkout / d).mkdir(parents=True)
    assert source_root(checkout).subdirs == ("lib", "include", "third_party/nvidia", "third_party/toyhw")
    db = tmp_path / "corpus.db"
    build(db, resolve_roots([CORPUS], None))
    # toyhw's own barrier eraser concerns a toy target only; the reference lowering's applies to every backend
    sites = {s.loc.file for s in q.erasers(db, "tgpu.barrier").sites}
    assert "third_party/toyhw/HwLowering.cpp" in sites
    assert {f for f in sites if file_applies(f, toy)} == sites
    assert {f for f in sites if not file_applies(f, parse_target(DEFAULT_TARGET))} == {
        "third_party/toyhw/HwLowering.cpp"
    }


def test_capture_takes_its_own_path_and_counts_with_its_rules(toy):
    ex = EXAMPLES["top2_argmax"]
    traj = irscope.capture(ex.kernel, target="toy:1", kernel_kwargs=ex.args, **ex.options)
    assert traj.target == toy and {s.stage for s in traj.snapshots} == {"ttir"}
    assert "toy.reductions" in signatures.counter_names("toy")
    assert signatures.summary(traj)["ttir.toy.reductions"] >= 2  # the argmax and the second max
