#ifndef TOYGPU_PASSES
#define TOYGPU_PASSES

include "mlir/Pass/PassBase.td"

def ToyGPUVectorizeLoads : Pass<"toygpu-vectorize-loads", "mlir::ModuleOp"> {
  let summary = "widen tile loads to vector loads";
  let description = [{
    Rewrites `tgpu.tile_load` into wide loads when the pointer operand is
    contiguous enough, relayouting operands as needed.
  }];
  let dependentDialects = ["toy::gpu::ToyGPUDialect"];
  let options = [
    Option<"computeCapability", "compute-capability", "int32_t", /*default*/"80",
           "target compute capability">,
    ListOption<"skipOps", "skip-ops", "std::string", "op names to leave alone">
  ];
}

def ToyGPUFuseRelayouts : Pass<"toygpu-fuse-relayouts", "mlir::ModuleOp"> {
  let summary = "remove relayouts that cancel out";
  let constructor = "toy::gpu::createFuseRelayoutsPass()";
  let options = [
    Option<"maxRounds", "max-rounds", "int", /*default*/"2", "fixpoint rounds">,
    Option<"aggressive", "aggressive", "bool", /*default*/"false", "also fuse across blocks">
  ];
}

def ToyGPULowerBarriers : Pass<"toygpu-lower-barriers", "mlir::ModuleOp"> {
  let summary = "lower barriers to the target's intrinsic";
  let options = [
    Option<"computeCapability", "compute-capability", "int32_t", /*default*/"80", "target">
  ];
}

def ToyGPUTestOnly : Pass<"toygpu-test-only", "mlir::ModuleOp"> {
  let summary = "a pass without a Python adder";
}

def ToyGPUSinkRelayouts : Pass<"toygpu-sink-relayouts", "mlir::ModuleOp"> {
  let summary = "move relayouts below the shuffles that read them";
}

#endif
