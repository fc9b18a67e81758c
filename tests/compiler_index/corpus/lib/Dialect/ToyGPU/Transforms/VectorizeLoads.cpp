// Widen tgpu.tile_load into vector loads (test corpus for compiler_index).
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "toy/Dialect/ToyGPU/IR/Dialect.h"
#include "toy/Dialect/ToyGPU/Transforms/Passes.h"
#include "toy/Dialect/ToyGPU/Transforms/Utility.h"

#define DEBUG_TYPE "toygpu-vectorize-loads"
#define DBGS() (llvm::dbgs() << "[" DEBUG_TYPE "]: ")
#define LDBG(X) LLVM_DEBUG(DBGS() << X << "\n")

namespace tg = toy::gpu;

namespace toy {
namespace gpu {

#define GEN_PASS_DEF_TOYGPUVECTORIZELOADS
#include "toy/Dialect/ToyGPU/Transforms/Passes.h.inc"

namespace {

// A pointer tile is worth widening only when each lane reads a contiguous run.
static bool isContiguousEnough(TileLoadOp load, int minRun) {
  auto type = load.getPtr().getType();
  if (!type.hasRank())
    return false;
  int run = getContiguity(load.getPtr());
  if (run < minRun) {
    LDBG("run " << run << " is shorter than " << minRun);
    return false;
  }
  return true;
}

class WidenTileLoad : public mlir::OpRewritePattern<TileLoadOp> {
  int computeCapability;

public:
  WidenTileLoad(mlir::MLIRContext *ctx, int computeCapability)
      : OpRewritePattern<TileLoadOp>(ctx), computeCapability(computeCapability) {}

  mlir::LogicalResult
  matchAndRewrite(TileLoadOp op, mlir::PatternRewriter &rewriter) const override {
    if (computeCapability < 80)
      return failure();
    if (!isContiguousEnough(op, 2))
      return rewriter.notifyMatchFailure(op, "pointer tile is not contiguous");
    int vec = pickVectorWidth(op);
    assert(vec > 0 && "vector width must be positive");
    if (vec == 1 && op.getType().getNumElements() > 1) {
      op->emitRemark() << "Warning: tile load stays scalar vec = " << vec
                       << " elements = " << op.getType().getNumElements();
    } else {
      LDBG("widening " << op << " to " << vec);
    }
    auto wide = tg::RelayoutOp::create(rewriter, op.getLoc(), op.getType(),
                                       op.getPtr());
    rewriter.replaceOpWithNewOp<tg::ShuffleOp>(op, op.getType(), wide, vec);
    return success();
  }
};

} // namespace

class ToyGPUVectorizeLoadsPass
    : public impl::ToyGPUVectorizeLoadsBase<ToyGPUVectorizeLoadsPass> {
public:
  void runOnOperation() override {
    mlir::ModuleOp m = getOperation();
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<WidenTileLoad>(&getContext(), computeCapability);
    populateShuffleCleanupPatterns(patterns);
    if (failed(mlir::applyPatternsGreedily(m, std::move(patterns))))
      signalPassFailure();
    m.walk([&](TileLoadOp load) { relayoutOperands(load.getOperation()); });
  }
};

} // namespace gpu
} // namespace toy
