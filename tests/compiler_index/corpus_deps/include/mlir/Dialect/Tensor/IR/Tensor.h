// Stand-in for mlir/Dialect/Tensor/IR/Tensor.h: tensor.splat (compiler_index test corpus).
#ifndef MLIR_DIALECT_TENSOR_IR_TENSOR_H
#define MLIR_DIALECT_TENSOR_IR_TENSOR_H

#include "mlir/IR/Operation.h"

namespace mlir::tensor {
class SplatOp : public Op<SplatOp> {
public:
  using Op::Op;
  Value getInput();
};
} // namespace mlir::tensor

#endif
