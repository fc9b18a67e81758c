// Helpers shared by ToyGPU passes (test corpus for compiler_index).
#ifndef TOY_DIALECT_TOYGPU_TRANSFORMS_UTILITY_H
#define TOY_DIALECT_TOYGPU_TRANSFORMS_UTILITY_H

#include "toy/Dialect/ToyGPU/IR/Dialect.h"

namespace toy::gpu {

int getContiguity(mlir::Value ptr);
int pickVectorWidth(TileLoadOp op);
mlir::Operation *relayoutOperands(mlir::Operation *op);
void populateShuffleCleanupPatterns(mlir::RewritePatternSet &patterns);

// Lanes a tile spreads over: one overload per op.
int laneCount(RelayoutOp op);
int laneCount(ShuffleOp op);

// Cost models: one method name, two classes.
struct RelayoutCost {
  int estimate(RelayoutOp op) const;
};
struct ShuffleCost {
  int estimate(ShuffleOp op) const;
};
RelayoutCost relayoutCostModel();

} // namespace toy::gpu

#endif
