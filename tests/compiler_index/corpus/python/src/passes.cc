// Python bindings of the ToyGPU passes (test corpus for compiler_index).
#include "passes.h"
#include "toy/Dialect/ToyGPU/Transforms/Passes.h"
#include <pybind11/pybind11.h>

namespace py = pybind11;

void init_toy_passes_tgpu(py::module &&m) {
  using namespace toy::gpu;
  ADD_PASS_WRAPPER_0("add_vectorize_loads", createToyGPUVectorizeLoads);
  ADD_PASS_OPTION_WRAPPER_2("add_fuse_relayouts", createFuseRelayoutsPass,
                            int, bool);
  m.def("add_print_ir", [](mlir::PassManager &pm, const std::string &label) {
    pm.addPass(mlir::createPrintIRPass(label));
  });
  m.def("dialect_names", []() { return std::vector<std::string>{"tgpu"}; });
}

void init_toy_passes(py::module &&m) {
  init_toy_passes_tgpu(m.def_submodule("tgpu"));
}

PYBIND11_MODULE(libtoy, m) {
  init_toy_passes(m.def_submodule("passes"));
}
