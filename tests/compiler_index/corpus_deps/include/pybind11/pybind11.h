// Stand-in for pybind11/pybind11.h (compiler_index test corpus): modules, submodules, def.
#ifndef PYBIND11_PYBIND11_H
#define PYBIND11_PYBIND11_H

namespace pybind11 {
class module_ {
public:
  module_ def_submodule(const char *name);
  template <typename Func> module_ &def(const char *name, Func &&f) { return *this; }
};
using module = module_;
} // namespace pybind11

#define PYBIND11_MODULE(name, variable)                                                                                \
  void pybind11_init_##name(::pybind11::module_ &);                                                                    \
  extern "C" void *PyInit_##name();                                                                                    \
  void pybind11_init_##name(::pybind11::module_ &variable)

#endif
