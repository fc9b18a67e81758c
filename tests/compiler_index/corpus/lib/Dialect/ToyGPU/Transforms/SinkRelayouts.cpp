// Sink relayouts below shuffles (test corpus for compiler_index). Written the way only a compiler reads exactly:
// the ops and the pattern's base are named through `using` aliases, `laneCount` is overloaded in another file, a
// method is called on an `auto` receiver, a function template and a virtual method are called.
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "toy/Dialect/ToyGPU/IR/Dialect.h"
#include "toy/Dialect/ToyGPU/Lowering/TargetInfo.h"
#include "toy/Dialect/ToyGPU/Transforms/Passes.h"
#include "toy/Dialect/ToyGPU/Transforms/Utility.h"

namespace toy::gpu {

#define GEN_PASS_DEF_TOYGPUSINKRELAYOUTS
#include "toy/Dialect/ToyGPU/Transforms/Passes.h.inc"

namespace {

using Relayout = RelayoutOp;
using Shuffle = ShuffleOp;
using ShuffleRewrite = mlir::OpRewritePattern<Shuffle>;

template <typename OpT> bool hasOneUse(OpT op) { return op.getResult().hasOneUse(); }

// shuffle(relayout(x)) -> relayout(shuffle(x))
struct SinkRelayoutThroughShuffle : public ShuffleRewrite {
  SinkRelayoutThroughShuffle(mlir::MLIRContext *ctx, const TargetInfoBase &target)
      : ShuffleRewrite(ctx), target(target) {}

  mlir::LogicalResult matchAndRewrite(Shuffle op, mlir::PatternRewriter &rewriter) const override {
    auto src = op.getSrc().getDefiningOp<Relayout>();
    if (!src || !hasOneUse(src))
      return rewriter.notifyMatchFailure(op, "shuffle source is not a single-use relayout");
    if (laneCount(op) > target.laneWidth())
      return mlir::failure();
    auto model = relayoutCostModel();
    if (model.estimate(src) > 4)
      return rewriter.notifyMatchFailure(op, "relayout too expensive to sink");
    auto moved = Shuffle::create(rewriter, op.getLoc(), src.getSrc().getType(), src.getSrc(), op.getMask());
    rewriter.replaceOpWithNewOp<Relayout>(op, op.getType(), moved.getResult());
    rewriter.eraseOp(src);
    return mlir::success();
  }

  const TargetInfoBase &target;
};

} // namespace

struct SinkRelayoutsPass : public impl::ToyGPUSinkRelayoutsBase<SinkRelayoutsPass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<SinkRelayoutThroughShuffle>(&getContext(), ref::getTargetInfo());
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace toy::gpu
