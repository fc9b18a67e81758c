// Lower tgpu.barrier to inline assembly (test corpus for compiler_index).
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "toy/Dialect/ToyGPU/IR/Dialect.h"
#include "toy/Dialect/ToyGPU/Lowering/TargetInfo.h"

using namespace toy::gpu::ref;

namespace toy::gpu {

#define GEN_PASS_DEF_TOYGPULOWERBARRIERS
#include "toy/Dialect/ToyGPU/Transforms/Passes.h.inc"

namespace {

struct BarrierOpConversion : public mlir::ConvertOpToLLVMPattern<BarrierOp> {
  BarrierOpConversion(mlir::LLVMTypeConverter &converter, int cc)
      : ConvertOpToLLVMPattern<BarrierOp>(converter), computeCapability(cc) {}

  mlir::LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    const char *asmText = nullptr;
    switch (computeCapability / 10) {
    case 8:
    case 9:
      asmText = "bar.sync 0;";
      break;
    default:
      llvm::report_fatal_error("toygpu: no barrier lowering for this target");
    }
    mlir::LLVM::InlineAsmOp::create(rewriter, op.getLoc(), mlir::TypeRange{},
                                    mlir::ValueRange{}, asmText, "", true, false);
    const ref::TargetInfo &targetInfo = getTargetInfo();
    targetInfo.emitBarrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return mlir::success();
  }

  int computeCapability;
};

struct ToyGPULowerBarriersPass
    : public impl::ToyGPULowerBarriersBase<ToyGPULowerBarriersPass> {
  using impl::ToyGPULowerBarriersBase<ToyGPULowerBarriersPass>::ToyGPULowerBarriersBase;

  void runOnOperation() override {
    mlir::LLVMTypeConverter converter(&getContext());
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<BarrierOpConversion>(converter, computeCapability);
    populateBarrierLowering(patterns);
    mlir::ConversionTarget target(getContext());
    if (mlir::failed(mlir::applyPartialConversion(getOperation(), target,
                                                  std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace toy::gpu
