// Stand-in for llvm/Support/Debug.h, written for the compiler_index test corpus: just what the corpus uses.
#ifndef LLVM_SUPPORT_DEBUG_H
#define LLVM_SUPPORT_DEBUG_H

namespace llvm {
class raw_ostream {
public:
  template <typename T> raw_ostream &operator<<(const T &value);
};
raw_ostream &dbgs();
extern bool DebugFlag;
} // namespace llvm

// as in a build with assertions: the statement is compiled, and runs under -debug-only
#define LLVM_DEBUG(X)                                                                                                  \
  do {                                                                                                                 \
    if (::llvm::DebugFlag) {                                                                                           \
      X;                                                                                                               \
    }                                                                                                                  \
  } while (false)

#endif
