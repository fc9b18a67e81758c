// Stand-in for llvm/Support/ErrorHandling.h (compiler_index test corpus).
#ifndef LLVM_SUPPORT_ERRORHANDLING_H
#define LLVM_SUPPORT_ERRORHANDLING_H

namespace llvm {
[[noreturn]] void report_fatal_error(const char *reason, bool genCrashDiag = true);
} // namespace llvm

#endif
