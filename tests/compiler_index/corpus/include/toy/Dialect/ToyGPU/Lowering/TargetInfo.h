// What lowering asks of a target, and the reference target (test corpus for compiler_index).
#ifndef TOY_DIALECT_TOYGPU_LOWERING_TARGETINFO_H
#define TOY_DIALECT_TOYGPU_LOWERING_TARGETINFO_H

#include "mlir/IR/PatternMatch.h"

namespace toy::gpu {

class TargetInfoBase {
public:
  virtual mlir::Value emitBarrier(mlir::RewriterBase &rewriter, mlir::Location loc) const = 0;
  virtual int laneWidth() const = 0;
};

namespace ref {
class TargetInfo : public TargetInfoBase {
public:
  mlir::Value emitBarrier(mlir::RewriterBase &rewriter, mlir::Location loc) const override;
  int laneWidth() const override;
};

const TargetInfo &getTargetInfo();
void populateBarrierLowering(mlir::RewritePatternSet &patterns);
} // namespace ref

} // namespace toy::gpu

#endif
