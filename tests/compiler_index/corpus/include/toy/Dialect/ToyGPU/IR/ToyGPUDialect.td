#ifndef TOYGPU_DIALECT
#define TOYGPU_DIALECT

include "mlir/IR/OpBase.td"

def ToyGPU_Dialect : Dialect {
  let name = "tgpu";
  let cppNamespace = "::toy::gpu";
  let summary = "A small GPU dialect used to test the compiler index";
  let description = [{
    Tiles live in registers with a layout; `tgpu.relayout` moves a tile from
    one layout to another.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif
