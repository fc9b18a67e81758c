// Stand-in for the core of mlir/IR (Operation, Value, Type, OpState/Op, OpBuilder, the builtin module), written for
// the compiler_index test corpus: declarations shaped like MLIR's, just what the corpus uses, no behaviour.
#ifndef MLIR_IR_OPERATION_H
#define MLIR_IR_OPERATION_H

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/ErrorHandling.h"

namespace mlir {

class LogicalResult {
public:
  static LogicalResult success(bool isSuccess = true) { return LogicalResult(isSuccess); }
  bool succeeded() const { return isSuccess; }

private:
  explicit LogicalResult(bool isSuccess) : isSuccess(isSuccess) {}
  bool isSuccess;
};
inline LogicalResult success(bool isSuccess = true) { return LogicalResult::success(isSuccess); }
inline LogicalResult failure(bool isFailure = true) { return LogicalResult::success(!isFailure); }
inline bool succeeded(LogicalResult result) { return result.succeeded(); }
inline bool failed(LogicalResult result) { return !result.succeeded(); }

class MLIRContext;
class Operation;

class Location {};

class Type {
public:
  explicit operator bool() const;
  bool operator==(Type other) const;
  bool hasRank() const;
  int64_t getNumElements() const;
  unsigned getElementTypeBitWidth() const;
};
class RankedTensorType : public Type {};

class Value {
public:
  explicit operator bool() const;
  Type getType() const;
  bool hasOneUse() const;
  void replaceAllUsesWith(Value newValue);
  template <typename OpTy> OpTy getDefiningOp() const;
};

class OpOperand {
public:
  Value get() const;
  void set(Value value);
};

class OpFoldResult {
public:
  OpFoldResult() = default;
  OpFoldResult(Value value);
};

class TypeRange {};
class ValueRange {};

class InFlightDiagnostic {
public:
  template <typename T> InFlightDiagnostic &operator<<(const T &value);
  operator LogicalResult() const;
};

class Operation {
public:
  Location getLoc();
  MLIRContext *getContext();
  std::vector<OpOperand> &getOpOperands();
  Operation *getNextNode();
  template <typename OpTy> OpTy getParentOfType();
  InFlightDiagnostic emitError(const char *message = "");
  InFlightDiagnostic emitWarning(const char *message = "");
  InFlightDiagnostic emitRemark(const char *message = "");
  InFlightDiagnostic emitOpError(const char *message = "");
  void erase();
};

template <typename To, typename From> bool isa(From value);
template <typename To, typename From> To dyn_cast(From value);

// The base of every op class: a typed handle on an Operation.
class OpState {
public:
  explicit operator bool() const { return state != nullptr; }
  operator Operation *() const { return state; }
  Operation *operator->() const { return state; }
  Operation *getOperation() const { return state; }
  Location getLoc();
  MLIRContext *getContext();
  Value getResult();
  InFlightDiagnostic emitError(const char *message = "");
  InFlightDiagnostic emitWarning(const char *message = "");
  InFlightDiagnostic emitRemark(const char *message = "");
  InFlightDiagnostic emitOpError(const char *message = "");
  void erase();
  void replaceAllUsesWith(Value newValue);
  template <typename FnT> void walk(FnT &&callback) {}

protected:
  explicit OpState(Operation *state) : state(state) {}

private:
  Operation *state;
};

template <typename ConcreteType> class Op : public OpState {
public:
  explicit Op(Operation *state = nullptr) : OpState(state) {}
};

class ModuleOp : public Op<ModuleOp> {
public:
  using Op::Op;
  template <typename OpTy> std::vector<OpTy> getOps();
};

class OpBuilder {
public:
  explicit OpBuilder(Operation *op);
  explicit OpBuilder(MLIRContext *context);
  template <typename OpTy, typename... Args> OpTy create(Location location, Args &&...args);
  template <typename OpTy, typename... Args> Value createOrFold(Location location, Args &&...args);

protected:
  OpBuilder() = default;
};

} // namespace mlir

#endif
