// ToyGPU pass factories and options (test corpus for compiler_index); declared from Passes.td.
#ifndef TOY_DIALECT_TOYGPU_TRANSFORMS_PASSES_H
#define TOY_DIALECT_TOYGPU_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace toy::gpu {

#define GEN_PASS_DECL
#include "toy/Dialect/ToyGPU/Transforms/Passes.h.inc"

std::unique_ptr<mlir::Pass> createFuseRelayoutsPass();
std::unique_ptr<mlir::Pass> createFuseRelayoutsPass(ToyGPUFuseRelayoutsOptions options);

} // namespace toy::gpu

#endif
