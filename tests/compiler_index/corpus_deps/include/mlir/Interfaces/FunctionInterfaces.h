// Stand-in for mlir/Interfaces/FunctionInterfaces.h (compiler_index test corpus).
#ifndef MLIR_INTERFACES_FUNCTIONINTERFACES_H
#define MLIR_INTERFACES_FUNCTIONINTERFACES_H

#include "mlir/IR/Operation.h"

namespace mlir {
class FunctionOpInterface : public OpState {
public:
  FunctionOpInterface(Operation *op = nullptr) : OpState(op) {}
};
} // namespace mlir

#endif
