// toyhw's own barrier helpers: same names as the reference ones, another namespace (test corpus).
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "toy/Dialect/ToyGPU/IR/Dialect.h"

namespace toy::hw {

mlir::Value TargetInfo::emitBarrier(mlir::RewriterBase &rewriter, mlir::Location loc) const {
  auto op = mlir::LLVM::InlineAsmOp::create(rewriter, loc, mlir::TypeRange{}, mlir::ValueRange{},
                                            "s_barrier", "", true, false);
  return op.getResult(0);
}

namespace {
struct HwBarrierCleanup : public mlir::OpRewritePattern<toy::gpu::BarrierOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(toy::gpu::BarrierOp op,
                                      mlir::PatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return mlir::success();
  }
};
} // namespace

void populateBarrierLowering(mlir::RewritePatternSet &patterns) {
  patterns.add<HwBarrierCleanup>(patterns.getContext());
}

int TargetInfo::laneWidth() const { return 64; }

} // namespace toy::hw
