// Bindings of the toy hardware backend: main's INIT_BACKEND macro calls
// init_triton_toyhw(m.def_submodule("toyhw")) (test corpus for compiler_index).
#include "toy/Dialect/ToyGPU/Transforms/Passes.h"
#include <pybind11/pybind11.h>

namespace py = pybind11;

static std::unique_ptr<mlir::Pass> createLowerBarriersWrapper(int32_t cc) {
  toy::gpu::ToyGPULowerBarriersOptions options;
  options.computeCapability = cc;
  return toy::gpu::createToyGPULowerBarriers(options);
}

void init_triton_toyhw_passes(py::module &&m) {
  ADD_PASS_WRAPPER_1("add_lower_barriers", createLowerBarriersWrapper,
                     int32_t);
}

void init_triton_toyhw(py::module &&m) {
  auto passes = m.def_submodule("passes");
  init_triton_toyhw_passes(passes.def_submodule("hw"));
}
