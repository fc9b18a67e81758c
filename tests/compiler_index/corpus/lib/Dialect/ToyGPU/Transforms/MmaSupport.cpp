// Which tensor-core path a tile load can feed (test corpus for compiler_index): predicates that answer with a
// returned expression, branches per MMA version and capability, else-if chains and early returns.
#include "toy/Dialect/ToyGPU/IR/Dialect.h"

namespace toy {
namespace gpu {

// A load is worth pipelining only when it moves at least 32 bits.
bool isWideEnough(int vec, int bits) {
  int width = vec * bits;
  return width >= 32;
}

bool supportMMA(TileLoadOp op, int version, bool allowTf32) {
  int bits = op.getType().getElementTypeBitWidth();
  if (version == 5) {
    if (bits == 64)
      return false;
    if (bits < 8) {
      return false;
    }
    return bits <= 32;
  }
  if (version == 3) {
    if (bits == 64)
      return false;
  }
  if (bits == 32) {
    return allowTf32 && version >= 2;
  }
  return bits == 16;
}

mlir::LogicalResult checkTarget(TileLoadOp op, int computeCapability, int versionMajor) {
  if (computeCapability < 80) {
    return mlir::failure();
  } else if (computeCapability >= 100) {
    if (versionMajor != 5)
      return mlir::failure();
  } else if (versionMajor == 5) {
    op->emitRemark() << "tcgen05 needs sm_100";
  } else {
    for (int stage = 0; stage < 4; ++stage) {
      if (stage == versionMajor)
        continue;
      if (stage > 2)
        return mlir::failure();
    }
  }
  return mlir::success();
}

// Three branches deep: each gate's condition is its innermost branch, not the function's first check.
mlir::LogicalResult pickTile(TileLoadOp op, mlir::PatternRewriter &rewriter, int numWarps, int bits) {
  if (numWarps >= 4) {
    if (bits <= 16) {
      if (op.getType().getNumElements() < 64)
        return rewriter.notifyMatchFailure(op, "tile too small for a warp group");
    } else if (bits == 32) {
      op->emitWarning() << "fp32 tile on a warp group";
    }
  }
  return mlir::success();
}

} // namespace gpu
} // namespace toy
