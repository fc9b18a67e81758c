// Stand-in for mlir/Transforms/GreedyPatternRewriteDriver.h (compiler_index test corpus).
#ifndef MLIR_TRANSFORMS_GREEDYPATTERNREWRITEDRIVER_H
#define MLIR_TRANSFORMS_GREEDYPATTERNREWRITEDRIVER_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
LogicalResult applyPatternsGreedily(Operation *op, RewritePatternSet &&patterns);
} // namespace mlir

#endif
