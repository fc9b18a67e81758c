// Pass-adder macros of the Python bindings (test corpus for compiler_index), as Triton's python/src/passes.h.
#ifndef TOY_PYTHON_SRC_PASSES_H
#define TOY_PYTHON_SRC_PASSES_H

#include "mlir/Pass/Pass.h"

#define ADD_PASS_WRAPPER_0(name, builder) m.def(name, [](mlir::PassManager &pm) { pm.addPass(builder()); })

#define ADD_PASS_WRAPPER_1(name, builder, ty0)                                                                         \
  m.def(name, [](mlir::PassManager &pm, ty0 val0) { pm.addPass(builder(val0)); })

#define ADD_PASS_OPTION_WRAPPER_2(name, builder, ty0, ty1)                                                             \
  m.def(name, [](mlir::PassManager &pm, ty0 val0, ty1 val1) { pm.addPass(builder({val0, val1})); })

#endif
