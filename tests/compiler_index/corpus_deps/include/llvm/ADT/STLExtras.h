// Stand-in for llvm/ADT/STLExtras.h (compiler_index test corpus).
#ifndef LLVM_ADT_STLEXTRAS_H
#define LLVM_ADT_STLEXTRAS_H

namespace llvm {
template <typename RangeT> RangeT make_early_inc_range(RangeT &&range) { return range; }
} // namespace llvm

#endif
