//===- MovePlan.cpp - the depth plan of a gather-then-scatter move --------===//
//
// Implementation of MovePlan (see MovePlan.h). The algorithm: a hash table
// of moved targets (open addressing, Fibonacci hashing), writer(i) = the
// entry whose target is i's source, depth by pointer jumping (list ranking,
// at most log2 of the table rounds), a histogram of depths turned into list
// positions by a block scan, and every moving entry placed.
//
//===----------------------------------------------------------------------===//

#include "MovePlan.h"

#include "KVCache/KVCacheABI.h"

using namespace mlir;
using namespace mlir::kvcache;
using P = arith::CmpIPredicate;

namespace {
/// Fibonacci hashing multiplier (2^64 / golden ratio).
constexpr uint64_t kHashMultiplier = 0x9E3779B97F4A7C15ull;
/// Shared counters: overlapping, depth-0, cyclic entries; two round flags.
enum { HAZARDS, SAFE, CYCLIC, FLAG0, FLAG1, NUM_COUNTERS };

/// `fn(n)` of KVCacheABI.h as IR, for offsets linear in n: the layout is
/// written once, in the header, and the lowering derives from it.
Value linearOffset(KernelBuilder &k, int64_t (*fn)(int64_t), Value n) {
  int64_t at0 = fn(0), slope = fn(1) - fn(0);
  return k.add(k.mul(n, k.i64(slope)), k.i64(at0));
}

/// Where the workspace's table lies for n entries (byte offsets).
struct TableLayout {
  Value log2P, capacity, keysOffset, valuesOffset, end;
};
TableLayout tableLayout(KernelBuilder &k, Value n) {
  ImplicitLocOpBuilder &b = k.builder();
  TableLayout t;
  // P = the power of two >= max(64, 2n) (kvcacheMoveHashCapacity).
  Value twoN = k.mul(n, k.i64(2));
  Value atLeast = k.select(k.cmp(P::sgt, twoN, k.i64(64)), twoN, k.i64(64));
  t.log2P = k.log2Ceil(atLeast);
  t.capacity = arith::ShLIOp::create(b, k.i64(1), t.log2P);
  // keys = align8(end of hist) (kvcacheMoveKeysOffset).
  Value histEnd = linearOffset(k, kvcacheMoveHistEndOffset, n);
  t.keysOffset = k.bitAnd(k.add(histEnd, k.i64(7)), k.i64(~int64_t(7)));
  t.valuesOffset = k.add(t.keysOffset, k.mul(t.capacity, k.i64(8)));
  t.end = k.add(t.valuesOffset, k.mul(t.capacity, k.i64(4)));
  return t;
}
} // namespace

Value mlir::kvcache::moveWorkspaceBytes(KernelBuilder &k, Value n) {
  return tableLayout(k, n).end;
}

MovePlan::MovePlan(KernelBuilder &k, Value ws, Value n, int64_t blockSize,
                   StringRef sharedPrefix)
    : k(k), ws(ws), n(n), blockSize(blockSize) {
  ImplicitLocOpBuilder &b = k.builder();
  keyTy = b.getI64Type();
  Type i8 = b.getI8Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  tid = k.threadId();
  step = k.i64(blockSize);
  auto at = [&](Value byteOffset) { return k.gep(ws, i8, byteOffset); };
  listBuf = at(k.i64(kvcacheMoveListOffset()));
  Value next0 = linearOffset(k, kvcacheMoveNextOffset, n);
  Value rank0 = linearOffset(k, kvcacheMoveRankOffset, n);
  // Each pointer-jumping array is two buffers of n i32 (read one, write
  // the other).
  nextBuf[0] = at(next0);
  nextBuf[1] = at(k.add(next0, k.mul(n, k.i64(4))));
  rankBuf[0] = at(rank0);
  rankBuf[1] = at(k.add(rank0, k.mul(n, k.i64(4))));
  hist = at(linearOffset(k, kvcacheMoveHistOffset, n));
  TableLayout t = tableLayout(k, n);
  log2P = t.log2P;
  capacity = t.capacity;
  keys = at(t.keysOffset);
  values = at(t.valuesOffset);
  counters = k.sharedMemory((sharedPrefix + "_counts").str(),
                            LLVM::LLVMArrayType::get(i32, NUM_COUNTERS),
                            /*external=*/false);
  (void)i64;
}

MovePlan::MovePlan(KernelBuilder &k, Value keys, Value values,
                   int64_t log2Capacity, Value n, int64_t blockSize,
                   StringRef sharedPrefix, Type keyType)
    : k(k), n(n), blockSize(blockSize), keys(keys), values(values),
      keyTy(keyType) {
  tid = k.threadId();
  step = k.i64(blockSize);
  log2P = k.i64(log2Capacity);
  fixedCapacity = int64_t(1) << log2Capacity;
  capacity = k.i64(fixedCapacity);
  counters = k.sharedMemory(
      (sharedPrefix + "_counts").str(),
      LLVM::LLVMArrayType::get(k.builder().getI32Type(), NUM_COUNTERS),
      /*external=*/false);
}

Value MovePlan::counter(int64_t c) {
  return k.gep(counters, k.builder().getI32Type(), k.i64(c));
}

Value MovePlan::atomicAdd(Value ptr, Value v) {
  // Device scope suffices (system scope is slower): only this GPU's blocks
  // touch the workspace and the shared counters.
  return k.toI64(
      LLVM::AtomicRMWOp::create(k.builder(), LLVM::AtomicBinOp::add, ptr, v,
                                LLVM::AtomicOrdering::monotonic, "device"));
}

Value MovePlan::loadKey(Value h) {
  return k.toI64(k.load(keyTy, k.gep(keys, keyTy, h), keyBytes()));
}

Value MovePlan::home(Value key) {
  return arith::ShRUIOp::create(
      k.builder(), k.mul(key, k.i64(static_cast<int64_t>(kHashMultiplier))),
      k.sub(k.i64(64), log2P));
}

Value MovePlan::nextSlot(Value h) {
  return k.bitAnd(k.add(h, k.i64(1)), k.sub(capacity, k.i64(1)));
}

void MovePlan::init() {
  Type i32 = k.builder().getI32Type();
  k.ifThen(k.cmp(P::eq, tid, k.i64(0)), [&] {
    for (int64_t c = 0; c < NUM_COUNTERS; ++c)
      k.store(k.i32(c == FLAG0 ? 1 : 0), counter(c), 4);
  });
  Value empty = arith::ConstantOp::create(
      k.builder(), keyTy, k.builder().getIntegerAttr(keyTy, -1));
  k.forLoop(tid, capacity, step, [&](Value e) {
    k.store(empty, k.gep(keys, keyTy, e), keyBytes());
  });
  if (hist)
    k.forLoop(tid, k.add(n, k.i64(2)), step,
              [&](Value e) { k.store(k.i32(0), k.gep(hist, i32, e), 4); });
  k.barrier();
}

void MovePlan::insertTargets(SlotFn src, SlotFn tgt, Value duplicate) {
  k.forLoop(tid, n, step, [&](Value i) {
    Value s = src(i), t = tgt(i);
    k.ifThen(k.cmp(P::ne, s, t), [&] { insert(t, k.toI32(i), duplicate); });
  });
  k.barrier();
}

void MovePlan::insert(Value t, Value writer, Value duplicate) {
  ImplicitLocOpBuilder &b = k.builder();
  Type i32 = b.getI32Type();
  Value minusOne = k.i64(-1);
  Value empty =
      arith::ConstantOp::create(b, keyTy, b.getIntegerAttr(keyTy, -1));
  Value key =
      keyTy.isInteger(64) ? t : Value(arith::TruncIOp::create(b, keyTy, t));
  k.whileLoop(home(t), [&](Value h) -> std::pair<Value, Value> {
    auto cas = LLVM::AtomicCmpXchgOp::create(
        b, k.gep(keys, keyTy, h), empty, key, LLVM::AtomicOrdering::monotonic,
        LLVM::AtomicOrdering::monotonic, "device");
    Value old =
        k.toI64(LLVM::ExtractValueOp::create(b, cas, ArrayRef<int64_t>{0}));
    Value won = k.cmp(P::eq, old, minusOne);
    k.ifThen(won, [&] { k.store(writer, k.gep(values, i32, h), 4); });
    Value again = k.cmp(P::eq, old, t);
    if (duplicate)
      k.ifThen(again, [&] { k.store(k.i32(1), duplicate, 4); });
    Value done = k.bitOr(won, again);
    return {k.bitNot(done), k.select(done, h, nextSlot(h))};
  });
}

void MovePlan::clearKeys(Value thread) {
  Value empty = arith::ConstantOp::create(
      k.builder(), keyTy, k.builder().getIntegerAttr(keyTy, -1));
  assert(fixedCapacity > 0 && "clearKeys needs the table-only constructor");
  int64_t cap = fixedCapacity;
  for (int64_t at = 0; at < cap; at += blockSize)
    k.ifThen(k.cmp(P::slt, k.add(thread, k.i64(at)), capacity), [&] {
      k.store(empty, k.gep(keys, keyTy, k.add(thread, k.i64(at))), keyBytes());
    });
}

Value MovePlan::writerOf(Value s) {
  Type i32 = k.builder().getI32Type(), i64 = k.builder().getI64Type();
  Value minusOne = k.i64(-1);
  Value h = k.whileLoop(home(s), [&](Value h) -> std::pair<Value, Value> {
    Value v = loadKey(h);
    Value stop = k.bitOr(k.cmp(P::eq, v, s), k.cmp(P::eq, v, minusOne));
    return {k.bitNot(stop), k.select(stop, h, nextSlot(h))};
  });
  Value found = k.cmp(P::eq, loadKey(h), s);
  return k.ifValue(
      found, i64,
      [&]() -> Value { return k.toI64(k.load(i32, k.gep(values, i32, h), 4)); },
      [&]() -> Value { return minusOne; });
}

void MovePlan::plan(SlotFn src, SlotFn tgt) {
  assert(ws && "plan() needs the workspace constructor");
  ImplicitLocOpBuilder &b = k.builder();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value zero = k.i64(0), one = k.i64(1), minusOne = k.i64(-1);
  Value isThread0 = k.cmp(P::eq, tid, zero);
  Value list = listBuf;
  int64_t T = blockSize;
  auto counter = [&](int64_t c) { return this->counter(c); };
  auto atomicAdd = [&](Value ptr, Value v) { return this->atomicAdd(ptr, v); };
  // 2. writer(i) and the first pointer-jumping step.
  k.forLoop(tid, n, step, [&](Value i) {
    Value s = src(i);
    Value t = tgt(i);
    Value writer = k.ifValue(
        k.cmp(P::ne, s, t), i64, [&]() -> Value { return writerOf(s); },
        [&]() -> Value { return minusOne; });
    k.store(k.toI32(writer), k.gep(nextBuf[0], i32, i), 4);
    k.store(k.toI32(k.select(k.cmp(P::sge, writer, zero), one, zero)),
            k.gep(rankBuf[0], i32, i), 4);
  });
  k.barrier();
  // 3. Pointer jumping (list ranking): rank += rank[next]; next =
  //    next[next], while some chain is unfinished, at most log2(P)
  //    rounds; a round flag in shared memory ends it early.
  Value parity =
      k.forLoopCarried(zero, log2P, one, zero, [&](Value r, Value cur) {
        Value odd = k.cmp(P::ne, k.bitAnd(r, one), zero);
        Value goFlag = k.select(odd, counter(FLAG1), counter(FLAG0));
        Value nextFlag = k.select(odd, counter(FLAG0), counter(FLAG1));
        k.ifThen(isThread0, [&] { k.store(k.i32(0), nextFlag, 4); });
        k.barrier();
        Value go = k.cmp(P::ne, k.load(i32, goFlag, 4), k.i32(0));
        k.ifThen(go, [&] {
          Value isOne = k.cmp(P::ne, cur, zero);
          Value nextIn = k.select(isOne, nextBuf[1], nextBuf[0]);
          Value nextOut = k.select(isOne, nextBuf[0], nextBuf[1]);
          Value rankIn = k.select(isOne, rankBuf[1], rankBuf[0]);
          Value rankOut = k.select(isOne, rankBuf[0], rankBuf[1]);
          k.forLoop(tid, n, step, [&](Value i) {
            Value nx = k.toI64(k.load(i32, k.gep(nextIn, i32, i), 4));
            Value rk = k.toI64(k.load(i32, k.gep(rankIn, i32, i), 4));
            Value live = k.cmp(P::sge, nx, zero);
            Value nn = k.ifValue(
                live, i64,
                [&]() -> Value {
                  return k.toI64(k.load(i32, k.gep(nextIn, i32, nx), 4));
                },
                [&]() -> Value { return minusOne; });
            Value nr = k.ifValue(
                live, i64,
                [&]() -> Value {
                  return k.add(rk,
                               k.toI64(k.load(i32, k.gep(rankIn, i32, nx), 4)));
                },
                [&]() -> Value { return rk; });
            k.store(k.toI32(nn), k.gep(nextOut, i32, i), 4);
            k.store(k.toI32(nr), k.gep(rankOut, i32, i), 4);
            k.ifThen(k.cmp(P::sge, nn, zero),
                     [&] { k.store(k.i32(1), nextFlag, 4); });
          });
        });
        k.barrier();
        return k.select(go, k.sub(one, cur), cur);
      });
  Value isOne = k.cmp(P::ne, parity, zero);
  Value nextFinal = k.select(isOne, nextBuf[1], nextBuf[0]);
  Value rankFinal = k.select(isOne, rankBuf[1], rankBuf[0]);
  Value depthOut = k.select(isOne, nextBuf[0], nextBuf[1]);
  Value infinite = k.add(n, one);
  // 4. Depth of each entry; histogram of the overlapping ones.
  k.forLoop(tid, n, step, [&](Value i) {
    Value s = src(i);
    Value t = tgt(i);
    Value moving = k.cmp(P::ne, s, t);
    Value nx = k.toI64(k.load(i32, k.gep(nextFinal, i32, i), 4));
    Value rk = k.toI64(k.load(i32, k.gep(rankFinal, i32, i), 4));
    Value cyclic = k.cmp(P::sge, nx, zero);
    Value depth = k.select(moving, k.select(cyclic, infinite, rk), minusOne);
    k.store(k.toI32(depth), k.gep(depthOut, i32, i), 4);
    k.ifThen(k.cmp(P::sge, depth, one), [&] {
      atomicAdd(k.gep(hist, i32, depth), k.i32(1));
      atomicAdd(counter(HAZARDS), k.i32(1));
      k.ifThen(cyclic, [&] { atomicAdd(counter(CYCLIC), k.i32(1)); });
    });
  });
  k.barrier();
  // 5. Counts -> first list position per depth, deepest first: each
  //    thread owns a run of buckets (in descending depth), a block scan
  //    orders the runs.
  Value buckets = k.add(n, k.i64(2));
  Value run = arith::DivUIOp::create(b, k.add(buckets, k.i64(T - 1)), step);
  Value firstQ = k.mul(tid, run);
  Value lastQ = k.select(k.cmp(P::slt, k.add(firstQ, run), buckets),
                         k.add(firstQ, run), buckets);
  auto bucketOf = [&](Value q) { return k.sub(k.add(n, one), q); };
  Value mine =
      k.forLoopCarried(firstQ, lastQ, one, zero, [&](Value q, Value acc) {
        return k.add(acc,
                     k.toI64(k.load(i32, k.gep(hist, i32, bucketOf(q)), 4)));
      });
  Value scratch =
      k.sharedMemory((k.getKernel().getName() + "_scan").str(),
                     LLVM::LLVMArrayType::get(i32, 32), /*external=*/false);
  auto [excl, total] = k.blockExclusiveScan(k.toI32(mine), scratch);
  (void)total;
  k.forLoopCarried(firstQ, lastQ, one, k.toI64(excl), [&](Value q, Value off) {
    Value p = k.gep(hist, i32, bucketOf(q));
    Value c = k.toI64(k.load(i32, p, 4));
    k.store(k.toI32(off), p, 4);
    return k.add(off, c);
  });
  k.barrier();
  // 6. Place every moving entry.
  k.forLoop(tid, n, step, [&](Value i) {
    Value depth = k.toI64(k.load(i32, k.gep(depthOut, i32, i), 4));
    k.ifThenElse(
        k.cmp(P::sge, depth, one),
        [&] {
          Value pos = atomicAdd(k.gep(hist, i32, depth), k.i32(1));
          k.store(k.toI32(i), k.gep(list, i32, pos), 4);
        },
        [&] {
          k.ifThen(k.cmp(P::eq, depth, zero), [&] {
            Value pos = atomicAdd(counter(SAFE), k.i32(1));
            k.store(k.toI32(i), k.gep(list, i32, k.sub(k.sub(n, one), pos)), 4);
          });
        });
  });
  k.barrier();
  k.ifThen(isThread0, [&] {
    Value hz = k.load(i32, counter(HAZARDS), 4);
    Value safe = k.load(i32, counter(SAFE), 4);
    k.store(arith::AddIOp::create(b, hz, safe), k.gep(ws, i32, k.i64(0)), 4);
    k.store(hz, k.gep(ws, i32, k.i64(1)), 4);
    k.store(k.load(i32, counter(CYCLIC), 4), k.gep(ws, i32, k.i64(2)), 4);
  });
  k.barrier();
}
