#include "toy/Dialect/ToyGPU/Lowering/TargetInfo.h" // reference-target barrier helpers (test corpus); toyhw has same-named ones
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "toy/Dialect/ToyGPU/IR/Dialect.h"

namespace toy::gpu::ref {

mlir::Value TargetInfo::emitBarrier(mlir::RewriterBase &rewriter, mlir::Location loc) const {
  auto op = mlir::LLVM::InlineAsmOp::create(rewriter, loc, mlir::TypeRange{}, mlir::ValueRange{},
                                            "bar.sync 0;", "", true, false);
  return op.getResult(0);
}

namespace {
struct RefBarrierCleanup : public mlir::OpRewritePattern<BarrierOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(BarrierOp op, mlir::PatternRewriter &rewriter) const override {
    if (!op->getNextNode() || !mlir::isa<BarrierOp>(op->getNextNode()))
      return mlir::failure();
    rewriter.eraseOp(op);
    return mlir::success();
  }
};
} // namespace

void populateBarrierLowering(mlir::RewritePatternSet &patterns) {
  patterns.add<RefBarrierCleanup>(patterns.getContext());
}

int TargetInfo::laneWidth() const { return 32; }

} // namespace toy::gpu::ref
