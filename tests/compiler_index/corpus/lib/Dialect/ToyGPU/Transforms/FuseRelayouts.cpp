// Remove relayout chains that cancel out (test corpus for compiler_index).
#include "toy/Dialect/ToyGPU/IR/Dialect.h"
#include "toy/Dialect/ToyGPU/Transforms/Passes.h"

namespace toy::gpu {

#define GEN_PASS_DEF_TOYGPUFUSERELAYOUTS
#include "toy/Dialect/ToyGPU/Transforms/Passes.h.inc"

namespace {

// A helper with the same name as one in Utility.cpp: calls here mean this one.
static int pickVectorWidth(RelayoutOp op) { return 1; }

struct FuseRelayoutsPass
    : public impl::ToyGPUFuseRelayoutsBase<FuseRelayoutsPass> {
  using impl::ToyGPUFuseRelayoutsBase<FuseRelayoutsPass>::ToyGPUFuseRelayoutsBase;

  bool fuseOnce(mlir::ModuleOp m) {
    bool changed = false;
    for (auto cvt : llvm::make_early_inc_range(m.getOps<RelayoutOp>())) {
      auto inner = cvt.getSrc().getDefiningOp<RelayoutOp>();
      if (!inner || pickVectorWidth(inner) > 1)
        continue;
      if (inner.getSrc().getType() == cvt.getType()) {
        cvt.replaceAllUsesWith(inner.getSrc());
        cvt.erase();
        changed = true;
      }
    }
    return changed;
  }

  void runOnOperation() override {
    mlir::ModuleOp m = getOperation();
    if (maxRounds <= 0) {
      m.emitWarning("toygpu-fuse-relayouts: max-rounds must be positive");
      return;
    }
    for (int i = 0; i < maxRounds && fuseOnce(m); ++i)
      ;
    mlir::RewritePatternSet patterns(&getContext());
    RelayoutOp::getCanonicalizationPatterns(patterns, &getContext());
    (void)mlir::applyPatternsGreedily(m, std::move(patterns));
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createFuseRelayoutsPass() {
  return std::make_unique<FuseRelayoutsPass>();
}

} // namespace toy::gpu
