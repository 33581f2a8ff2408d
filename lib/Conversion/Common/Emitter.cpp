//===- Emitter.cpp - structured IR emission shared by the lowerings -------===//
//
// Implementation of Emitter (see Emitter.h).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

using namespace mlir;
using namespace mlir::kvcache;

Value Emitter::i64(int64_t v) {
  return arith::ConstantIntOp::create(b, b.getI64Type(), v);
}
Value Emitter::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, b.getI32Type(), v);
}
Value Emitter::i1(bool v) {
  return arith::ConstantIntOp::create(b, b.getI1Type(), v);
}

Value Emitter::toI64(Value v) {
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, b.getI64Type(), v);
  if (v.getType().isInteger(64))
    return v;
  return arith::ExtSIOp::create(b, b.getI64Type(), v);
}

Value Emitter::toI32(Value v) {
  if (v.getType().isInteger(32))
    return v;
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, b.getI32Type(), v);
  return arith::TruncIOp::create(b, b.getI32Type(), v);
}

Value Emitter::toIndex(Value v) {
  if (v.getType().isIndex())
    return v;
  return arith::IndexCastOp::create(b, b.getIndexType(), v);
}

Value Emitter::outside(Value v, Value lo, Value hi) {
  return bitOr(cmp(arith::CmpIPredicate::slt, v, lo),
               cmp(arith::CmpIPredicate::sge, v, hi));
}

void Emitter::forLoop(Value lb, Value ub, Value step,
                      llvm::function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

Value Emitter::forLoopCarried(Value lb, Value ub, Value step, Value init,
                              llvm::function_ref<Value(Value, Value)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, step, ValueRange{init});
  OpBuilder::InsertionGuard guard(b);
  Block *blk = loop.getBody();
  // The builder adds a terminator only when nothing is carried.
  if (!blk->empty() && isa<scf::YieldOp>(blk->back()))
    blk->back().erase();
  b.setInsertionPointToEnd(blk);
  Value next = body(loop.getInductionVar(), loop.getRegionIterArgs()[0]);
  scf::YieldOp::create(b, next);
  return loop.getResult(0);
}

Value Emitter::whileLoop(
    Value init, llvm::function_ref<std::pair<Value, Value>(Value)> step) {
  return whileLoop(ValueRange{init},
                   [&](ValueRange x) -> std::pair<Value, SmallVector<Value>> {
                     auto [more, next] = step(x[0]);
                     return {more, {next}};
                   })[0];
}

SmallVector<Value> Emitter::whileLoop(
    ValueRange inits,
    llvm::function_ref<std::pair<Value, SmallVector<Value>>(ValueRange)> step) {
  SmallVector<Type> types(inits.getTypes());
  SmallVector<Location> locs(inits.size(), b.getLoc());
  auto loop = scf::WhileOp::create(b, types, inits);
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
  b.setInsertionPointToEnd(before);
  auto [more, next] = step(before->getArguments());
  scf::ConditionOp::create(b, more, next);
  Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
  b.setInsertionPointToEnd(after);
  scf::YieldOp::create(b, after->getArguments());
  return SmallVector<Value>(loop.getResults());
}

void Emitter::ifThen(Value cond, llvm::function_ref<void()> then) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
}

void Emitter::ifThenElse(Value cond, llvm::function_ref<void()> then,
                         llvm::function_ref<void()> otherwise) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
  b.setInsertionPoint(op.elseBlock()->getTerminator());
  otherwise();
}

Value Emitter::ifValue(Value cond, Type type, llvm::function_ref<Value()> then,
                       llvm::function_ref<Value()> otherwise) {
  auto op =
      scf::IfOp::create(b, TypeRange{type}, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  Block *thenBlock = op.thenBlock(), *elseBlock = op.elseBlock();
  // With results, the builder leaves both blocks without terminators.
  b.setInsertionPointToEnd(thenBlock);
  scf::YieldOp::create(b, then());
  b.setInsertionPointToEnd(elseBlock);
  scf::YieldOp::create(b, otherwise());
  return op.getResult(0);
}

SmallVector<Value> Emitter::forLoopCarried(
    Value lb, Value ub, Value step, ValueRange inits,
    llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, step, inits);
  OpBuilder::InsertionGuard guard(b);
  Block *blk = loop.getBody();
  if (!blk->empty() && isa<scf::YieldOp>(blk->back()))
    blk->back().erase();
  b.setInsertionPointToEnd(blk);
  SmallVector<Value> next =
      body(loop.getInductionVar(), loop.getRegionIterArgs());
  scf::YieldOp::create(b, next);
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value>
Emitter::ifValues(Value cond, TypeRange types,
                  llvm::function_ref<SmallVector<Value>()> then,
                  llvm::function_ref<SmallVector<Value>()> otherwise) {
  auto op = scf::IfOp::create(b, types, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(op.thenBlock());
  scf::YieldOp::create(b, then());
  b.setInsertionPointToEnd(op.elseBlock());
  scf::YieldOp::create(b, otherwise());
  return SmallVector<Value>(op.getResults());
}
