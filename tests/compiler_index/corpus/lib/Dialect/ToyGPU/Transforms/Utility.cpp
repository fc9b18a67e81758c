// Helpers shared by ToyGPU passes (test corpus for compiler_index).
#include "toy/Dialect/ToyGPU/Transforms/Utility.h"

namespace toy {
namespace gpu {

int pickVectorWidth(TileLoadOp op) {
  int bits = op.getType().getElementTypeBitWidth();
  return std::max(1, 128 / bits);
}

// Put every tensor operand of `op` through a relayout to the op's own layout.
mlir::Operation *relayoutOperands(mlir::Operation *op) {
  mlir::OpBuilder builder(op);
  for (mlir::OpOperand &operand : op->getOpOperands()) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(operand.get().getType());
    if (!type)
      continue;
    auto cvt = toy::gpu::RelayoutOp::create(builder, op->getLoc(), type,
                                            operand.get());
    operand.set(cvt.getResult());
  }
  return op;
}

namespace {
struct DropTrivialShuffle : public mlir::OpRewritePattern<ShuffleOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(ShuffleOp op,
                                      mlir::PatternRewriter &rewriter) const override {
    if (op.getMask() != 0)
      return rewriter.notifyMatchFailure(op, "shuffle moves data");
    rewriter.replaceOp(op, op.getSrc());
    return mlir::success();
  }
};
} // namespace

void populateShuffleCleanupPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<DropTrivialShuffle>(patterns.getContext());
}

int laneCount(RelayoutOp op) { return op.getType().getNumElements() / 4; }
int laneCount(ShuffleOp op) { return op.getType().getNumElements(); }

RelayoutCost relayoutCostModel() { return RelayoutCost(); }

int RelayoutCost::estimate(RelayoutOp op) const {
  assert(op && "a relayout to estimate");
  return laneCount(op) > 32 ? 8 : 2;
}

int ShuffleCost::estimate(ShuffleOp op) const { return op.getMask() == 0 ? 0 : 1; }

} // namespace gpu
} // namespace toy
