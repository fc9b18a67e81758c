"""The TableGen extractor on the corpus: records, parents with arguments, lets (also from `let … in`), values."""

from __future__ import annotations

from compiler_index.extract.tablegen import extract
from compiler_index.model import TdRecord
from tests.compiler_index.conftest import CORPUS


def records(rel: str) -> dict[str, TdRecord]:
    facts = extract(rel, (CORPUS / rel).read_bytes())
    assert facts.parse_errors == 0
    return {r.name: r for r in facts.td_records}


def test_pass_record():
    p = records("include/toy/Dialect/ToyGPU/Transforms/Passes.td")["ToyGPUVectorizeLoads"]
    assert p.kind == "def" and p.line == 6
    assert p.parents == [{"name": "Pass", "args": ["toygpu-vectorize-loads", "mlir::ModuleOp"]}]
    assert p.lets["summary"] == "widen tile loads to vector loads"
    assert p.lets["description"].startswith("Rewrites `tgpu.tile_load` into wide loads")
    assert p.lets["dependentDialects"] == ["toy::gpu::ToyGPUDialect"]
    option, list_option = p.lets["options"]
    assert option == {
        "class": "Option",
        "args": ["computeCapability", "compute-capability", "int32_t", "80", "target compute capability"],
    }
    assert list_option["class"] == "ListOption"


def test_class_template_params_and_op_parents():
    recs = records("include/toy/Dialect/ToyGPU/IR/ToyGPUOps.td")
    cls = recs["TGPU_Op"]
    assert cls.kind == "class" and cls.params == ["mnemonic", "traits"]
    assert cls.parents[0]["name"] == "Op"
    assert cls.parents[0]["args"][:2] == [{"id": "ToyGPU_Dialect"}, {"id": "mnemonic"}]
    relayout = recs["TGPU_RelayoutOp"]
    assert relayout.parents[0]["name"] == "TGPU_Op"
    assert relayout.parents[0]["args"][0] == "relayout"
    assert relayout.lets["hasCanonicalizer"] == 1


def test_outer_let_block_applies_to_nested_defs():
    barrier = records("include/toy/Dialect/ToyGPU/IR/ToyGPUOps.td")["TGPU_BarrierOp"]
    assert barrier.lets["hasVerifier"] == 1 and barrier.lets["summary"] == "synchronize the lanes of a block"


def test_drr_pattern_dags():
    pat = records("lib/Dialect/ToyGPU/Transforms/Combine.td")["FoldDoubleRelayout"]
    src, result = pat.parents[0]["args"]
    assert pat.parents[0]["name"] == "Pat"
    assert src["dag"] == {"id": "TGPU_RelayoutOp"} and src["args"][0]["dag"] == {"id": "TGPU_RelayoutOp"}
    assert result == {"dag": {"id": "TGPU_RelayoutOp"}, "args": [{"var": "$x"}]}


def test_dialect_record():
    d = records("include/toy/Dialect/ToyGPU/IR/ToyGPUDialect.td")["ToyGPU_Dialect"]
    assert d.lets["name"] == "tgpu" and d.lets["cppNamespace"] == "::toy::gpu"
