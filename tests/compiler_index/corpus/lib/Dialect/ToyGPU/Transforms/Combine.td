#ifndef TOYGPU_COMBINE
#define TOYGPU_COMBINE

include "mlir/IR/PatternBase.td"
include "toy/Dialect/ToyGPU/IR/ToyGPUOps.td"

// relayout(relayout(x)) -> relayout(x)
def FoldDoubleRelayout : Pat<(TGPU_RelayoutOp (TGPU_RelayoutOp $x)),
                             (TGPU_RelayoutOp $x)>;

#endif
