// Stand-in for mlir/IR/PatternMatch.h (compiler_index test corpus): rewriters, rewrite patterns, pattern sets.
#ifndef MLIR_IR_PATTERNMATCH_H
#define MLIR_IR_PATTERNMATCH_H

#include "mlir/IR/Operation.h"

namespace mlir {

class RewriterBase : public OpBuilder {
public:
  void eraseOp(Operation *op);
  void replaceOp(Operation *op, Value newValue);
  template <typename OpTy, typename... Args> OpTy replaceOpWithNewOp(Operation *op, Args &&...args);
  template <typename ArgT> LogicalResult notifyMatchFailure(ArgT &&arg, const char *message);
};

class PatternRewriter : public RewriterBase {};

class PatternBenefit {
public:
  PatternBenefit(unsigned benefit = 1);
};

class RewritePattern {
public:
  virtual ~RewritePattern() = default;

protected:
  RewritePattern(MLIRContext *context, PatternBenefit benefit = 1);
};

namespace detail {
template <typename SourceOp> class OpOrInterfaceRewritePatternBase : public RewritePattern {
public:
  using RewritePattern::RewritePattern;
  virtual LogicalResult matchAndRewrite(SourceOp op, PatternRewriter &rewriter) const = 0;
};
} // namespace detail

template <typename SourceOp> struct OpRewritePattern : public detail::OpOrInterfaceRewritePatternBase<SourceOp> {
  OpRewritePattern(MLIRContext *context, PatternBenefit benefit = 1)
      : detail::OpOrInterfaceRewritePatternBase<SourceOp>(context, benefit) {}
};

class RewritePatternSet {
public:
  explicit RewritePatternSet(MLIRContext *context);
  MLIRContext *getContext() const;
  template <typename... Ts, typename ConstructorArg, typename... ConstructorArgs>
  RewritePatternSet &add(ConstructorArg &&arg, ConstructorArgs &&...args) {
    return *this;
  }
};

} // namespace mlir

#endif
