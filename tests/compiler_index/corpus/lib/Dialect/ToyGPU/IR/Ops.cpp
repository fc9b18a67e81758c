// ToyGPU op methods (test corpus for compiler_index).
#include "toy/Dialect/ToyGPU/IR/Dialect.h"

namespace toy::gpu {

mlir::OpFoldResult ShuffleOp::fold(FoldAdaptor adaptor) {
  if (getMask() == 0)
    return getSrc();
  return {};
}

namespace {
struct RelayoutOfSplat : public mlir::OpRewritePattern<RelayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(RelayoutOp op,
                                      mlir::PatternRewriter &rewriter) const override {
    auto splat = op.getSrc().getDefiningOp<mlir::tensor::SplatOp>();
    if (!splat)
      return mlir::failure();
    rewriter.replaceOpWithNewOp<mlir::tensor::SplatOp>(op, op.getType(),
                                                       splat.getInput());
    return mlir::success();
  }
};
} // namespace

void RelayoutOp::getCanonicalizationPatterns(mlir::RewritePatternSet &results,
                                             mlir::MLIRContext *context) {
  results.add<RelayoutOfSplat>(context);
}

mlir::LogicalResult BarrierOp::verify() {
  if (!(*this)->getParentOfType<mlir::FunctionOpInterface>())
    return emitOpError("barrier must be inside a function");
  return mlir::success();
}

} // namespace toy::gpu
