//===- Emitter.h - structured IR emission shared by the lowerings -*- C++
//-*-===//
//
// A thin layer over ImplicitLocOpBuilder that both kvcache lowerings write
// their algorithms with: i64 constants and arithmetic, scf loops, branches and
// while loops with i64 carried values. Memory access is lowering-specific
// (bare pointers on the GPU, memrefs on the host) and lives in the users.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_LIB_CONVERSION_COMMON_EMITTER_H
#define SPECC_LIB_CONVERSION_COMMON_EMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::kvcache {

class Emitter {
public:
  Emitter(Location loc, MLIRContext *ctx) : b(loc, ctx) {}
  ImplicitLocOpBuilder &builder() { return b; }

  Value i64(int64_t v);
  Value i32(int64_t v);
  Value i1(bool v);
  Value add(Value a, Value c) { return arith::AddIOp::create(b, a, c); }
  Value sub(Value a, Value c) { return arith::SubIOp::create(b, a, c); }
  Value mul(Value a, Value c) { return arith::MulIOp::create(b, a, c); }
  Value bitAnd(Value a, Value c) { return arith::AndIOp::create(b, a, c); }
  Value bitOr(Value a, Value c) { return arith::OrIOp::create(b, a, c); }
  Value bitNot(Value a) { return arith::XOrIOp::create(b, a, i1(true)); }
  Value cmp(arith::CmpIPredicate p, Value a, Value c) {
    return arith::CmpIOp::create(b, p, a, c);
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }
  /// Sign-extends integers and casts index values to i64.
  Value toI64(Value v);
  Value toI32(Value v);
  Value toIndex(Value v);
  /// True when `v` lies outside [lo, hi).
  Value outside(Value v, Value lo, Value hi);

  /// for (iv = lb; iv < ub; iv += step), i64 induction variable.
  void forLoop(Value lb, Value ub, Value step,
               llvm::function_ref<void(Value)> body);
  /// Same, with one value carried from iteration to iteration.
  Value forLoopCarried(Value lb, Value ub, Value step, Value init,
                       llvm::function_ref<Value(Value, Value)> body);
  /// Same, with several values carried.
  SmallVector<Value> forLoopCarried(
      Value lb, Value ub, Value step, ValueRange inits,
      llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body);
  /// do { (more, next) = step(x); x = next } while (more): `step` returns
  /// whether to run again and the value to carry; returns the last value.
  Value whileLoop(Value init,
                  llvm::function_ref<std::pair<Value, Value>(Value)> step);
  /// Same, with several values carried.
  SmallVector<Value>
  whileLoop(ValueRange inits,
            llvm::function_ref<std::pair<Value, SmallVector<Value>>(ValueRange)>
                step);
  void ifThen(Value cond, llvm::function_ref<void()> then);
  void ifThenElse(Value cond, llvm::function_ref<void()> then,
                  llvm::function_ref<void()> otherwise);
  /// An if that yields one value of type `type`.
  Value ifValue(Value cond, Type type, llvm::function_ref<Value()> then,
                llvm::function_ref<Value()> otherwise);

  /// An if that yields several values.
  SmallVector<Value>
  ifValues(Value cond, TypeRange types,
           llvm::function_ref<SmallVector<Value>()> then,
           llvm::function_ref<SmallVector<Value>()> otherwise);

  Type i64Type() { return b.getI64Type(); }
  Type i32Type() { return b.getI32Type(); }

protected:
  ImplicitLocOpBuilder b;
};

} // namespace mlir::kvcache

#endif // SPECC_LIB_CONVERSION_COMMON_EMITTER_H
