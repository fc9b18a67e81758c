// Stand-in for mlir/Conversion/LLVMCommon/Pattern.h, the dialect conversion driver and the LLVM dialect's
// llvm.inline_asm op (compiler_index test corpus).
#ifndef MLIR_CONVERSION_LLVMCOMMON_PATTERN_H
#define MLIR_CONVERSION_LLVMCOMMON_PATTERN_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {

class LLVMTypeConverter {
public:
  explicit LLVMTypeConverter(MLIRContext *context);
};

class ConversionPatternRewriter : public PatternRewriter {};

class ConversionTarget {
public:
  explicit ConversionTarget(MLIRContext &context);
};

LogicalResult applyPartialConversion(Operation *op, const ConversionTarget &target, RewritePatternSet &&patterns);

class ConvertToLLVMPattern : public RewritePattern {
protected:
  ConvertToLLVMPattern(MLIRContext *context, const LLVMTypeConverter &typeConverter);
};

template <typename SourceOp> class ConvertOpToLLVMPattern : public ConvertToLLVMPattern {
public:
  using OpAdaptor = typename SourceOp::Adaptor;
  explicit ConvertOpToLLVMPattern(const LLVMTypeConverter &typeConverter);
  virtual LogicalResult matchAndRewrite(SourceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const;
};

namespace LLVM {
class InlineAsmOp : public Op<InlineAsmOp> {
public:
  using Op::Op;
  static InlineAsmOp create(OpBuilder &builder, Location location, TypeRange resultTypes, ValueRange operands,
                            const char *asmString, const char *constraints, bool hasSideEffects, bool isAlignStack);
  Value getResult(unsigned index);
};
} // namespace LLVM

} // namespace mlir

#endif
