#ifndef TOYGPU_OPS
#define TOYGPU_OPS

include "toy/Dialect/ToyGPU/IR/ToyGPUDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class TGPU_Op<string mnemonic, list<Trait> traits = []> :
    Op<ToyGPU_Dialect, mnemonic, !listconcat(traits, [])> {
}

def TGPU_RelayoutOp : TGPU_Op<"relayout", [Pure, SameOperandsAndResultShape]> {
  let summary = "move a tile to another register layout";
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let hasCanonicalizer = 1;
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def TGPU_TileLoadOp : TGPU_Op<"tile_load"> {
  let summary = "load a tile from global memory";
  let arguments = (ins AnyRankedTensor:$ptr, I32Attr:$vector);
  let results = (outs AnyRankedTensor:$result);
}

def TGPU_ShuffleOp : TGPU_Op<"shuffle", [Pure]> {
  let summary = "exchange values between lanes";
  let arguments = (ins AnyRankedTensor:$src, I32Attr:$mask);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

let hasVerifier = 1 in {
def TGPU_BarrierOp : TGPU_Op<"barrier"> {
  let summary = "synchronize the lanes of a block";
}
}

#endif
