// Stand-in for mlir/Pass/Pass.h and PassManager.h (compiler_index test corpus).
#ifndef MLIR_PASS_PASS_H
#define MLIR_PASS_PASS_H

#include "mlir/IR/Operation.h"

namespace mlir {

class Pass {
public:
  virtual ~Pass() = default;

protected:
  virtual void runOnOperation() = 0;
  void signalPassFailure();
  MLIRContext &getContext();
};

template <typename OpT> class OperationPass : public Pass {
protected:
  OpT getOperation();
};

class PassManager {
public:
  void addPass(std::unique_ptr<Pass> pass);
};

std::unique_ptr<Pass> createPrintIRPass(const std::string &label = "");

} // namespace mlir

#endif
