"""The C++ extractor on the corpus: functions, classes, calls, op sites, gates, registrations, pass hooks, bindings."""

from __future__ import annotations

from compiler_index.extract.cpp import extract, sanitize, split_type
from compiler_index.model import FileFacts
from tests.compiler_index.conftest import CORPUS


def facts(rel: str) -> FileFacts:
    return extract(rel, (CORPUS / rel).read_bytes())


VECTORIZE = "lib/Dialect/ToyGPU/Transforms/VectorizeLoads.cpp"


def fn_name(f: FileFacts, i: int | None) -> str | None:
    return f.functions[i].qualname if i is not None else None


def test_functions_with_classes_and_spans():
    f = facts(VECTORIZE)
    by_name = {fn.qualname: fn for fn in f.functions}
    assert set(by_name) == {
        "isContiguousEnough",
        "WidenTileLoad::WidenTileLoad",
        "WidenTileLoad::matchAndRewrite",
        "ToyGPUVectorizeLoadsPass::runOnOperation",
    }
    m = by_name["WidenTileLoad::matchAndRewrite"]
    assert (m.line, m.end_line) == (42, 60)
    assert m.returns == "mlir::LogicalResult"
    assert by_name["isContiguousEnough"].returns == "bool"
    assert f.debug_type == "toygpu-vectorize-loads"
    assert f.parse_errors == 0
    # out-of-line definitions take their class from the qualifier
    ops = facts("lib/Dialect/ToyGPU/IR/Ops.cpp")
    assert {"ShuffleOp::fold", "RelayoutOp::getCanonicalizationPatterns", "BarrierOp::verify"} <= {
        fn.qualname for fn in ops.functions
    }


def test_classes_bases_and_pass_hooks():
    f = facts(VECTORIZE)
    classes = {c.name: c for c in f.classes}
    widen = classes["WidenTileLoad"]
    assert [(b.name, b.targs) for b in widen.bases] == [("OpRewritePattern", ["TileLoadOp"])]
    pass_cls = classes["ToyGPUVectorizeLoadsPass"]
    assert pass_cls.bases[0].name == "ToyGPUVectorizeLoadsBase"
    hooks = {(p.how, p.key, p.class_name) for p in f.pass_impls}
    assert hooks == {
        ("gen-pass-def", "TOYGPUVECTORIZELOADS", None),
        ("impl-base", "ToyGPUVectorizeLoads", "ToyGPUVectorizeLoadsPass"),
    }
    assert ("tg", "toy::gpu") in f.aliases


def test_op_creation_sites_resolve_class_and_scope():
    f = facts(VECTORIZE)
    creates = {(s.how, s.op_scope, s.op_class, s.line, fn_name(f, s.fn)) for s in f.op_sites if s.action == "create"}
    assert creates == {
        ("X::create", "tg", "RelayoutOp", 56, "WidenTileLoad::matchAndRewrite"),
        ("replaceOpWithNewOp<X>", "tg", "ShuffleOp", 58, "WidenTileLoad::matchAndRewrite"),
    }


def test_erase_sites_take_the_type_of_the_erased_value():
    f = facts(VECTORIZE)
    erases = [(s.how, s.op_class, s.target) for s in f.op_sites if s.action == "erase"]
    assert erases == [("replaceOpWithNewOp", "TileLoadOp", "op")]  # the root op, typed by the parameter
    fuse = facts("lib/Dialect/ToyGPU/Transforms/FuseRelayouts.cpp")
    # `for (auto cvt : make_early_inc_range(m.getOps<RelayoutOp>()))` types cvt
    assert {(s.how, s.op_class, s.target) for s in fuse.op_sites if s.action == "erase"} == {
        ("rauw", "RelayoutOp", "cvt"),
        ("erase", "RelayoutOp", "cvt"),
    }
    barrier = facts("lib/Conversion/ToyGPUToLLVM/BarrierOpToLLVM.cpp")
    assert [(s.how, s.op_class) for s in barrier.op_sites if s.action == "erase"] == [("eraseOp", "BarrierOp")]
    assert [(s.op_scope, s.op_class) for s in barrier.op_sites if s.action == "create"] == [
        ("mlir::LLVM", "InlineAsmOp")
    ]


def test_untyped_operand_updates_are_not_erasures():
    # Utility.cpp sets operands and RAUWs nothing: no erase site, and `operand.set` is not an op
    f = facts("lib/Dialect/ToyGPU/Transforms/Utility.cpp")
    assert [(s.how, s.op_class) for s in f.op_sites if s.action == "erase"] == [("replaceOp", "ShuffleOp")]


def test_gates_with_guards_and_messages():
    f = facts(VECTORIZE)
    gates = {(g.kind, g.condition, g.message, fn_name(f, g.fn)) for g in f.gates}
    assert ("failure", "computeCapability < 80", "", "WidenTileLoad::matchAndRewrite") in gates
    assert (
        "match-failure",
        "!isContiguousEnough(op, 2)",
        "pointer tile is not contiguous",
        "WidenTileLoad::matchAndRewrite",
    ) in gates
    assert (
        "remark",
        "vec == 1 && op.getType().getNumElements() > 1",
        "Warning: tile load stays scalar vec = {vec} elements = {op.getType().getNumElements()}",
        "WidenTileLoad::matchAndRewrite",
    ) in gates
    # the else branch of that `if` guards the LDBG: negated
    assert (
        "debug",
        "!(vec == 1 && op.getType().getNumElements() > 1)",
        "widening {op} to {vec}",
        "WidenTileLoad::matchAndRewrite",
    ) in gates
    assert ("assert", "vec > 0", "vector width must be positive", "WidenTileLoad::matchAndRewrite") in gates
    # early returns in a bool predicate, each with its guard; the final unguarded `return true` is not a gate
    assert {
        (g.kind, g.condition)
        for g in f.gates
        if g.fn is not None and f.functions[g.fn].name == "isContiguousEnough" and g.kind.startswith("return")
    } == {("return-false", "!type.hasRank()"), ("return-false", "run < minRun")}
    assert (
        "pass-failure",
        "failed(mlir::applyPatternsGreedily(m, std::move(patterns)))",
        "",
        "ToyGPUVectorizeLoadsPass::runOnOperation",
    ) in gates


def test_fatal_warning_and_op_error_messages():
    barrier = facts("lib/Conversion/ToyGPUToLLVM/BarrierOpToLLVM.cpp")
    assert [(g.kind, g.message) for g in barrier.gates if g.kind == "fatal"] == [
        ("fatal", "toygpu: no barrier lowering for this target")
    ]
    fuse = facts("lib/Dialect/ToyGPU/Transforms/FuseRelayouts.cpp")
    assert [(g.kind, g.condition, g.message) for g in fuse.gates if g.kind == "warning"] == [
        ("warning", "maxRounds <= 0", "toygpu-fuse-relayouts: max-rounds must be positive")
    ]
    ops = facts("lib/Dialect/ToyGPU/IR/Ops.cpp")
    assert ("error", "barrier must be inside a function") in {(g.kind, g.message) for g in ops.gates}


def test_registrations_and_calls():
    f = facts(VECTORIZE)
    assert [(r.pattern, fn_name(f, r.fn)) for r in f.registrations] == [
        ("WidenTileLoad", "ToyGPUVectorizeLoadsPass::runOnOperation")
    ]
    calls = {(c.callee, c.form, fn_name(f, c.fn)) for c in f.calls}
    assert ("relayoutOperands", "plain", "ToyGPUVectorizeLoadsPass::runOnOperation") in calls  # inside a lambda
    assert ("populateShuffleCleanupPatterns", "plain", "ToyGPUVectorizeLoadsPass::runOnOperation") in calls
    assert ("isContiguousEnough", "plain", "WidenTileLoad::matchAndRewrite") in calls
    assert not any(c.callee in ("LDBG", "assert") for c in f.calls)  # macros are gates, not calls
    ops = facts("lib/Dialect/ToyGPU/IR/Ops.cpp")
    assert [(r.pattern, fn_name(ops, r.fn)) for r in ops.registrations] == [
        ("RelayoutOfSplat", "RelayoutOp::getCanonicalizationPatterns")
    ]


def test_pybind_adders_and_submodules():
    f = facts("python/src/passes.cc")
    adders = {(a.name, a.builder, a.macro) for a in f.py_adders}
    assert adders == {
        ("add_vectorize_loads", "createToyGPUVectorizeLoads", "ADD_PASS_WRAPPER_0"),
        ("add_fuse_relayouts", "createFuseRelayoutsPass", "ADD_PASS_OPTION_WRAPPER_2"),
        ("add_print_ir", "createPrintIRPass", "m.def"),
    }  # dialect_names takes no pass manager
    assert {(s.callee, s.rel_path) for s in f.py_submodules} == {
        ("init_toy_passes_tgpu", "tgpu"),
        ("init_toy_passes", "passes"),
    }
    hw = facts("third_party/toyhw/toyhw.cc")
    assert {(s.callee, s.rel_path) for s in hw.py_submodules} == {("init_triton_toyhw_passes", "passes.hw")}


def test_sanitize_blanks_macro_type_arguments_in_place():
    src = b'ADD_PASS_OPTION_WRAPPER_2("add_x", createX,\n    int, bool);\nvoid f() {}\n'
    out = sanitize(src)
    assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n")
    assert b"int" not in out and out.startswith(b'ADD_PASS_OPTION_WRAPPER_2("add_x", createX')
    # without sanitizing, the type arguments put the rest of passes.cc into ERROR nodes
    assert facts("python/src/passes.cc").parse_errors == 0


def test_split_type():
    assert split_type("const triton::gpu::ConvertLayoutOp &") == ("triton::gpu", "ConvertLayoutOp")
    assert split_type("Operation *") == ("", "Operation")
    assert split_type("SmallVector<Value>") == ("", "SmallVector")


MMA = "lib/Dialect/ToyGPU/Transforms/MmaSupport.cpp"


def gates_of(f: FileFacts, fn: str) -> dict[int, tuple[str, str, list[str], str]]:
    return {g.line: (g.kind, g.condition, g.guards, g.expr) for g in f.gates if fn_name(f, g.fn) == fn}


def test_predicates_record_returned_expressions():
    f = facts(MMA)
    # `return width >= 32;`: the predicate's whole answer, unguarded
    assert gates_of(f, "isWideEnough") == {11: ("return-expr", "", [], "width >= 32")}
    mma = gates_of(f, "supportMMA")
    # the fp32 case: its expression, under its branch and the early return of the version 5 block
    assert mma[29] == ("return-expr", "bits == 32", ["bits == 32", "!(version == 5)"], "allowTf32 && version >= 2")
    assert mma[31] == ("return-expr", "!(bits == 32)", ["!(bits == 32)", "!(version == 5)"], "bits == 16")


def test_guards_are_innermost_first_through_nesting_else_if_and_early_exits():
    mma = gates_of(facts(MMA), "supportMMA")
    # nested: the deciding condition first, the version branch after it
    assert mma[18] == ("return-false", "bits == 64", ["bits == 64", "version == 5"], "")
    # an early return before the gate in the same block guards it, negated
    assert mma[20] == ("return-false", "bits < 8", ["bits < 8", "!(bits == 64)", "version == 5"], "")
    assert mma[22] == ("return-expr", "!(bits < 8)", ["!(bits < 8)", "!(bits == 64)", "version == 5"], "bits <= 32")
    # a branch that does not always return guards nothing after it; the version 5 block does
    assert mma[26] == ("return-false", "bits == 64", ["bits == 64", "version == 3", "!(version == 5)"], "")
    check = gates_of(facts(MMA), "checkTarget")
    assert check[36] == ("failure", "computeCapability < 80", ["computeCapability < 80"], "")
    # else-if chains: the branch's own condition, then every earlier one negated
    assert check[39][2] == ["versionMajor != 5", "computeCapability >= 100", "!(computeCapability < 80)"]
    assert check[41][:3] == (
        "remark",
        "versionMajor == 5",
        ["versionMajor == 5", "!(computeCapability >= 100)", "!(computeCapability < 80)"],
    )
    # `continue` exits like a return inside its loop; the final else negates the whole chain
    assert check[47][2] == [
        "stage > 2",
        "!(stage == versionMajor)",
        "!(versionMajor == 5)",
        "!(computeCapability >= 100)",
        "!(computeCapability < 80)",
    ]


def test_a_deeply_nested_gate_is_conditioned_on_its_innermost_branch():
    """A gate under three branches: its condition is the branch that decides it (the innermost), its guards go
    outward from there; taking the outermost (`numWarps >= 4`) would name a check every gate of the function
    shares."""
    pick = gates_of(facts(MMA), "pickTile")
    assert pick[58] == (
        "match-failure",
        "op.getType().getNumElements() < 64",
        ["op.getType().getNumElements() < 64", "bits <= 16", "numWarps >= 4"],
        "",
    )
    # an else-if branch: its own condition, the earlier branch negated, then the enclosing one
    assert pick[60] == ("warning", "bits == 32", ["bits == 32", "!(bits <= 16)", "numWarps >= 4"], "")


# Gate extraction corner by corner, on C++ written here: a lambda's returns, an else branch's polarity, blocks
# ending in a comment or a fatal call, a declaration as condition, early exits that are not branches.
CORNERS = b"""\
#include "x.h"
bool corners(int a, int b, Op op) {
  auto pick = [&](int v) {
    if (v > 3)
      return false;
    return true;
  };
  if (a == 1) {
    return false;
    // a comment after the exit
  }
  if (b == 2) {
    llvm_unreachable("no b == 2");
  }
  if (a > b) {
    foo(a);
  } else {
    return true;
  }
  if (auto c = op.getDefiningOp()) {
    return c.isValid();
  }
  if (a < 0) {
    return false;
  }
  while (a) {
    if (b)
      continue;
    return false;
  }
  return false;
}

bool plain(int a) {
  if (a)
    return a > 1;
  return true;
}
"""


def test_gate_extraction_corners():
    f = extract("lib/Corners.cpp", CORNERS)
    g = gates_of(f, "corners")
    # nothing from the lambda (its returns answer the lambda, not the predicate)
    assert not any(line in g for line in (5, 6))
    assert g[9] == ("return-false", "a == 1", ["a == 1"], "")
    # the early exits (a block ending in a comment, one ending in a fatal call) guard what follows, negated
    assert g[13] == ("fatal", "b == 2", ["b == 2", "!(a == 1)"], "")
    assert g[18] == ("return-true", "!(a > b)", ["!(a > b)", "!(b == 2)", "!(a == 1)"], "")
    # a declaration as condition, as written
    decl = "auto c = op.getDefiningOp()"
    assert g[21] == ("return-expr", decl, [decl, "!(b == 2)", "!(a == 1)"], "c.isValid()")
    assert g[24] == ("return-false", "a < 0", ["a < 0", f"!({decl})", "!(b == 2)", "!(a == 1)"], "")
    # returns under early exits only (`continue` in the loop, the branches above) are no gate: no branch encloses
    assert set(g) == {9, 13, 18, 21, 24}
    # a bool function whose return is under a branch: `return a > 1` under `a`
    assert gates_of(f, "plain") == {36: ("return-expr", "a", ["a"], "a > 1")}


def test_a_negated_guard_is_written_plainly_where_that_is_exact():
    from compiler_index.extract.cpp import _balanced, _negate, _top_level_operator

    plain = {
        "!x": "x",
        "!(a && b)": "a && b",
        "! (a || b)": "a || b",
        "!foo(x)": "foo(x)",
        "!a->b": "a->b",
        "!ns::f(x)": "ns::f(x)",
        "!a[i]": "a[i]",
        "!maskX": "maskX",  # a capital X is a letter like any other
    }
    wrapped = [
        "!(a) && (b)",
        "!a < b",
        "a == b",
        "x",
        "f(a, b)",
        "!dimX || y",
    ]  # the `!` or the parentheses cover a part only
    assert {c: _negate(c) for c in plain} == plain
    assert [_negate(c) for c in wrapped] == [f"!({c})" for c in wrapped]
    # one operand (calls, members, subscripts, scopes, braces) or an operator outside every bracket
    operand = ["f(a, b)", "a::b", "p->q", "a.b[c + d]", "x{1, 2}", "(a || b)", "a[i][j]", "ns::f(a, b)->g(c)", "((a))"]
    operated = ["a + b", "a<b", "(a)+(b)", "f(g(x)) && y", "f(x)[y] == z", "x?y:z"]
    assert [_top_level_operator(e) for e in operand] == [False] * len(operand)
    assert [_top_level_operator(e) for e in operated] == [True] * len(operated)
    assert [_balanced(t) for t in ("(a)(b)", "a)(b", "((a)", "a", "")] == [True, False, False, True, True]


MESSAGES = b"""\
#include "x.h"
LogicalResult check(Op op, PatternRewriter &rewriter, int n) {
  assert(n > 0 && "n must be " "positive");
  if (n > 8)
    llvm_unreachable("too " "many");
  if (n == 3)
    return rewriter.notifyMatchFailure(op);
  return failure();
}
"""


def test_a_gates_message_location_and_snippet():
    """An assert's condition without its message, and its message whole; a fatal call's message from all its
    literal pieces; a match failure with no message; the unguarded failure; each with its line and source."""
    f = extract("lib/Messages.cpp", MESSAGES)
    got = sorted((g.line, g.kind, g.condition, g.guards, g.message, g.snippet.strip()) for g in f.gates)
    assert got == [
        (3, "assert", "n > 0", [], "n must be positive", 'assert(n > 0 && "n must be " "positive");'),
        (5, "fatal", "n > 8", ["n > 8"], "too many", 'llvm_unreachable("too " "many");'),
        (7, "match-failure", "n == 3", ["n == 3", "!(n > 8)"], "", "return rewriter.notifyMatchFailure(op);"),
        (8, "failure", "!(n == 3)", ["!(n == 3)", "!(n > 8)"], "", "return failure();"),
    ]


# More corners, each a mistake that would change which conditions the index extracts: an empty or a plain branch
# before a gate (neither exits), negations whose parentheses nest, code written without spaces, gates inside an
# `if`'s condition (no guard of their own), `failure()` that is not returned and `return success()`, diagnostics in
# parentheses, under `&&` and with a concatenated literal, `LLVM_DEBUG({ … })`, a method of a class local to a
# lambda, a comment before a returned value (Triton's Membar.h), and a void `return;` before every predicate.
MORE_CORNERS = b"""\
#include "x.h"
void reset(Op op) {
  if (!op)
    return;
  op.clear();
}

bool intersects(const Info &a, const Info &b) {
  return /*RAW*/ overlap(a.writes, b.reads) ||
         /*WAR*/ overlap(a.reads, b.writes);
}

bool admits(int n, int m) {
  if (m > 2)
    ;
  if (m == 1)
    bar(m);
  if (!((n & 1) || isOdd(m)))
    return false;
  if (!(n > 0 || f(m)))
    return false;
  if (n == 7)return false;if (n == 9)return true;
  return n < m;
}

LogicalResult lower(Op op, int n) {
  LogicalResult result = failure();
  if (n == 0)
    return success();
  if (llvm::all_of(op->getUsers(), [&](Operation *user) {
        LDBG("user " << *user);
        return isa<LoadOp>(user);
      }))
    n = 1;
  if (n > 4 && op.emitWarning("too many operands"))
    n = 4;
  (op.emitRemark() << "lowering ") << n;
  op.emitError("expected " "one result");
  LLVM_DEBUG({
    llvm::dbgs() << "lowered ";
    llvm::dbgs() << "op";
  });
  return result;
}

void outer(bool c) {
  auto visit = [&](Op op) {
    if (c) {
      struct Check {
        bool ok(int x) {
          if (x > 2)
            return false;
          return true;
        }
      };
    }
  };
}

void runOnOperation() {
  signalPassFailure();
}
"""


def test_more_gate_extraction_corners():
    f = extract("lib/MoreCorners.cpp", MORE_CORNERS)
    got = sorted(
        (g.line, fn_name(f, g.fn), g.kind, g.condition, g.guards, g.message, g.expr, g.snippet.strip()) for g in f.gates
    )
    odd = "(n & 1) || isOdd(m)"  # `!(…)` negated plainly: its parentheses cover all of it, nested ones too
    big = "n > 0 || f(m)"
    one_line = "if (n == 7)return false;if (n == 9)return true;"
    lowered = ["!(n == 0)"]  # inside an `if`'s condition a gate has no guard of that `if`: only the early return
    assert got == [
        # a comment before the returned value is no value; the void `return;` above stops no later return
        (
            9,
            "intersects",
            "return-expr",
            "",
            [],
            "",
            "overlap(a.writes, b.reads) || /*WAR*/ overlap(a.reads, b.writes)",
            "return /*RAW*/ overlap(a.writes, b.reads) ||",
        ),
        # an empty branch and one that only calls something guard nothing after them
        (19, "admits", "return-false", f"!({odd})", [f"!({odd})"], "", "", "return false;"),
        (21, "admits", "return-false", f"!({big})", [f"!({big})", odd], "", "", "return false;"),
        # written without spaces: a branch that starts where its condition ends, an exit ending where the next starts
        (22, "admits", "return-false", "n == 7", ["n == 7", big, odd], "", "", one_line),
        (22, "admits", "return-true", "n == 9", ["n == 9", "!(n == 7)", big, odd], "", "", one_line),
        (23, "admits", "return-expr", "!(n == 9)", ["!(n == 9)", "!(n == 7)", big, odd], "", "n < m", "return n < m;"),
        # `failure()` not returned and `return success()` are no gates
        (31, "lower", "debug", lowered[0], lowered, "user {*user}", "", 'LDBG("user " << *user);'),
        # a diagnostic under `&&` is not streamed into; one in parentheses is streamed out of them
        (
            35,
            "lower",
            "warning",
            lowered[0],
            lowered,
            "too many operands",
            "",
            'if (n > 4 && op.emitWarning("too many operands"))',
        ),
        (37, "lower", "remark", lowered[0], lowered, "lowering {n}", "", '(op.emitRemark() << "lowering ") << n;'),
        (
            38,
            "lower",
            "error",
            lowered[0],
            lowered,
            "expected one result",
            "",
            'op.emitError("expected " "one result");',
        ),
        # LLVM_DEBUG with a block: its literals, in order
        (39, "lower", "debug", lowered[0], lowered, "lowered op", "", "LLVM_DEBUG({"),
        # a method of a class local to a lambda: a predicate of its own, guarded by its own branches only
        (52, "Check::ok", "return-false", "x > 2", ["x > 2"], "", "", "return false;"),
        (61, "runOnOperation", "pass-failure", "", [], "", "", "signalPassFailure();"),
    ]


def test_a_debug_blocks_message_is_its_literals_up_to_500_characters():
    words = " ".join(f"w{i:03}" for i in range(150))  # 749 characters
    src = b'void f() {\n  LLVM_DEBUG({\n    llvm::dbgs() << "' + words.encode() + b'";\n  });\n}\n'
    (gate,) = extract("lib/Long.cpp", src).gates
    assert gate.kind == "debug" and gate.message == words[:499] + "…"
