// The ToyGPU dialect's ops (test corpus for compiler_index): the op classes are generated from ToyGPUOps.td.
#ifndef TOY_DIALECT_TOYGPU_IR_DIALECT_H
#define TOY_DIALECT_TOYGPU_IR_DIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace toy::gpu {
using namespace mlir; // the dialect's code names MLIR's types and helpers unqualified
} // namespace toy::gpu

#define GET_OP_CLASSES
#include "toy/Dialect/ToyGPU/IR/Ops.h.inc"

#endif
