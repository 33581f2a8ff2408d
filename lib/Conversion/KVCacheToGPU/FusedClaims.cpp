//===- FusedClaims.cpp - phase A of the fused kernel: slot claims ---------===//
//
// The hazard check of a launch past the local capacity, done where its
// entries are made: while a block validates a chunk of requests, each
// moving entry claims its target as written and its source as read in a
// hash set in the workspace (KVCacheClaimWord: one 64-bit word per slot,
// changed only by compare-and-swap, so whichever of two claims on a slot
// comes second sees the first), and compares its source with the targets
// of its request's earlier entries by warp shuffles. A claim that finds a
// target written twice, a slot written by one request and read by
// another, an earlier entry of the request writing its source, or no free
// word in its probes, marks the block suspect. The planner (FusedPlan.cpp)
// skips its own check when no block is suspect: nothing it could find is
// left, and the waiting blocks get their verdict without a block-long
// table walk in one block of the grid.
//
//===----------------------------------------------------------------------===//

#include "FusedMove.h"

#include "MovePlan.h"

#include "KVCache/KVCacheABI.h"

using namespace mlir;
using namespace mlir::kvcache;
using namespace mlir::kvcache::fused;

namespace {
/// Fibonacci hashing multiplier (2^64 / golden ratio).
constexpr uint64_t kClaimHash = 0x9E3779B97F4A7C15ull;
constexpr int64_t kRequestMask =
    ((int64_t(1) << KVCACHE_CLAIM_REQUEST_BITS) - 1)
    << KVCACHE_CLAIM_REQUEST_SHIFT;
constexpr int64_t kWriter = int64_t(1) << KVCACHE_CLAIM_WRITER_BIT;
constexpr int64_t kReadersMask = int64_t(3) << KVCACHE_CLAIM_READERS_SHIFT;
constexpr int64_t kOneReader = int64_t(1) << KVCACHE_CLAIM_READERS_SHIFT;
constexpr int64_t kManyReaders = int64_t(2) << KVCACHE_CLAIM_READERS_SHIFT;
static_assert(KVCACHE_CLAIM_REQUEST_SHIFT == 32 &&
                  KVCACHE_CLAIM_REQUEST_SHIFT + KVCACHE_CLAIM_REQUEST_BITS ==
                      KVCACHE_CLAIM_WRITER_BIT &&
                  KVCACHE_CLAIM_WRITER_BIT + 1 == KVCACHE_CLAIM_READERS_SHIFT &&
                  KVCACHE_CLAIM_READERS_SHIFT + 2 == KVCACHE_CLAIM_TAG_SHIFT,
              "the claim word's fields tile its 64 bits");
static_assert(KVCACHE_CLAIM_TAGS < 255,
              "tags skip 0 (zeroed memory) and 255 (words of -1)");
} // namespace

Value FusedKernel::claimsApply() {
  Value requestsFit =
      k.cmp(P::sle, bs, k.i64(int64_t(1) << KVCACHE_CLAIM_REQUEST_BITS));
  Value slotsFit = k.cmp(P::sle, p["min_slots"], k.i64(int64_t(1) << 32));
  return k.bitAnd(columnsFitWarp(), k.bitAnd(requestsFit, slotsFit));
}

std::pair<Value, Value> FusedKernel::claimTable() {
  Value table = k.gep(planWs, i8, moveWorkspaceBytes(k, n));
  // Q = the power of two >= max(64, 8n) (kvcacheFusedClaimsCapacity).
  int64_t minQ = kvcacheFusedClaimsCapacity(0);
  int64_t perEntry = kvcacheFusedClaimsCapacity(1 << 20) >> 20;
  Value wanted = k.mul(n, k.i64(perEntry));
  Value log2Q = k.log2Ceil(
      k.select(k.cmp(P::sgt, wanted, k.i64(minQ)), wanted, k.i64(minQ)));
  return {table, log2Q};
}

void FusedKernel::clearClaims() {
  k.barrier();
  Value verdict = k.load(i32, flag(VERDICT), 4);
  Value moves = k.bitOr(k.cmp(P::eq, verdict, k.i32(V_PER_REQUEST)),
                        k.cmp(P::eq, verdict, k.i32(V_STAGED)));
  k.ifThen(k.bitAnd(moves, claimsApply()), [&] {
    auto [table, log2Q] = claimTable();
    Value words = arith::ShLIOp::create(b, one, log2Q);
    Value threads = k.mul(nblocks, k.i64(T));
    // This block's share and the next block's: the planner, which does
    // not wait, clears nothing, and the block before it covers its share.
    Value nextBlock = k.select(k.cmp(P::eq, k.add(bid, one), nblocks), zero,
                               k.add(bid, one));
    for (Value blk : {bid, nextBlock})
      k.forLoop(k.add(k.mul(blk, k.i64(T)), tid), words, threads,
                [&](Value w) { k.store(zero, k.gep(table, i64, w), 8); });
  });
}

void FusedKernel::claimSlots(Value i, Value pos, Value t, Value src,
                             Value moving, Value runBase, Value L) {
  // Within the request: an earlier entry (lower position) whose target is
  // this entry's source. The request's lanes are one aligned run of a warp;
  // every lane reads every run lane's target, position and whether it moves.
  Value tLo = k.toI32(t);
  Value tHi = k.toI32(arith::ShRUIOp::create(b, t, k.i64(32)));
  Value info = k.select(moving, k.add(k.toI32(pos), k.i32(1)), k.i32(0));
  Value srcLo = k.toI32(src);
  Value srcHi = k.toI32(arith::ShRUIOp::create(b, src, k.i64(32)));
  Value pos32 = k.toI32(pos);
  Value order = k.forLoopCarried(
      k.i64(0), k.toI64(L), one, k.i1(false), [&](Value q, Value found) {
        Value from = k.add(runBase, k.toI32(q));
        auto take = [&](Value v) {
          return gpu::ShuffleOp::create(b, v, from, k.i32(32),
                                        gpu::ShuffleMode::IDX)
              .getShuffleResult();
        };
        Value lo = take(tLo), hi = take(tHi), in = take(info);
        Value earlier = k.bitAnd(k.cmp(P::ne, in, k.i32(0)),
                                 k.cmp(P::slt, k.sub(in, k.i32(1)), pos32));
        Value same = k.bitAnd(k.cmp(P::eq, lo, srcLo), k.cmp(P::eq, hi, srcHi));
        return k.bitOr(found, k.bitAnd(earlier, same));
      });
  Value suspect = k.bitAnd(moving, order);

  // Across requests: the claim table (KVCacheClaimWord).
  auto [table, log2Q] = claimTable();
  Value mask = k.sub(arith::ShLIOp::create(b, one, log2Q), one);
  auto home = [&](Value slot) {
    return arith::ShRUIOp::create(
        b, k.mul(slot, k.i64(static_cast<int64_t>(kClaimHash))),
        k.sub(k.i64(64), log2Q));
  };
  Value epoch =
      k.toI32(arith::ShRUIOp::create(b, k.load(i64, val(EPOCH), 8), k.i64(32)));
  Value tag = arith::ExtUIOp::create(
      b, i64,
      k.add(arith::RemUIOp::create(b, epoch, k.i32(KVCACHE_CLAIM_TAGS)),
            k.i32(1)));
  Value tagBits = arith::ShLIOp::create(b, tag, k.i64(KVCACHE_CLAIM_TAG_SHIFT));
  Value request =
      arith::ShLIOp::create(b, i, k.i64(KVCACHE_CLAIM_REQUEST_SHIFT));
  Value freshW = k.bitOr(k.bitOr(tagBits, request), k.bitOr(k.i64(kWriter), t));
  Value freshR =
      k.bitOr(k.bitOr(tagBits, request), k.bitOr(k.i64(kOneReader), src));
  Value claims = k.bitAnd(moving, claimsApply());

  // One claim's step after its compare-and-swap returned `w` at position
  // h: {h, expected, desired, done, conflict} for the next one. A word
  // without this launch's tag, or without roles, is free: claim it (with
  // the exact value read, so that a claim in between fails the swap). The
  // slot's own word: add the role, unless it conflicts or is there
  // already. Another slot's: probe the next word, guessing it zero.
  auto next = [&](Value w, Value h, Value slot, Value fresh,
                  bool writer) -> SmallVector<Value> {
    Value live = k.bitAnd(
        k.cmp(P::eq,
              arith::ShRUIOp::create(b, w, k.i64(KVCACHE_CLAIM_TAG_SHIFT)),
              tag),
        k.cmp(P::ne, k.bitAnd(w, k.i64(kWriter | kReadersMask)), zero));
    Value mine = k.cmp(P::eq, k.bitAnd(w, k.i64(0xffffffff)), slot);
    Value sameRequest = k.cmp(P::eq, k.bitAnd(w, k.i64(kRequestMask)), request);
    Value written = k.cmp(P::ne, k.bitAnd(w, k.i64(kWriter)), zero);
    Value readers = k.bitAnd(w, k.i64(kReadersMask));
    Value conflict, merged;
    if (writer) {
      // Written twice; read by several requests; read by another one.
      conflict = k.bitOr(
          written, k.bitOr(k.cmp(P::sge, readers, k.i64(kManyReaders)),
                           k.bitAnd(k.cmp(P::eq, readers, k.i64(kOneReader)),
                                    k.bitNot(sameRequest))));
      merged = k.bitOr(w, k.i64(kWriter));
    } else {
      // Written by another request (the word's request is the writer's).
      conflict = k.bitAnd(written, k.bitNot(sameRequest));
      Value firstReader = k.cmp(P::eq, readers, zero);
      Value another = k.bitAnd(k.cmp(P::eq, readers, k.i64(kOneReader)),
                               k.bitNot(sameRequest));
      merged = k.select(firstReader, k.bitOr(w, k.i64(kOneReader)),
                        k.select(another,
                                 k.bitOr(k.bitAnd(w, k.i64(~kReadersMask)),
                                         k.i64(kManyReaders)),
                                 w));
    }
    Value here = k.bitAnd(live, mine);
    Value stop = k.bitAnd(here, k.bitOr(conflict, k.cmp(P::eq, merged, w)));
    Value probe = k.bitAnd(live, k.bitNot(mine));
    Value nextH = k.select(probe, k.bitAnd(k.add(h, one), mask), h);
    Value expected = k.select(probe, zero, w);
    Value desired = k.select(here, merged, fresh);
    return {nextH, expected, desired, stop, k.bitAnd(here, conflict)};
  };
  // Both claims advance together (two compare-and-swaps in flight per
  // step); a finished one swaps a word with itself.
  k.ifThen(suspect, [&] { k.store(k.i32(1), flag(SUSPECT), 4); });
  k.ifThen(claims, [&] {
    SmallVector<Value> init = {home(t),     zero, freshW, k.i1(false),
                               home(src),   zero, freshR, k.i1(false),
                               k.i1(false), zero};
    SmallVector<Value> end = k.whileLoop(
        init, [&](ValueRange s) -> std::pair<Value, SmallVector<Value>> {
          // Both swaps issued before either result is used (the source's
          // first: in the other order, ptxas's registers had the target's
          // result tested before the source's swap was issued).
          auto swap = [&](Value h, Value expected, Value desired, Value done) {
            auto cas = LLVM::AtomicCmpXchgOp::create(
                b, k.gep(table, i64, h), expected,
                k.select(done, expected, desired),
                LLVM::AtomicOrdering::monotonic,
                LLVM::AtomicOrdering::monotonic, "device");
            return LLVM::ExtractValueOp::create(b, cas, ArrayRef<int64_t>{0})
                .getResult();
          };
          Value oldS = swap(s[4], s[5], s[6], s[7]);
          Value oldT = swap(s[0], s[1], s[2], s[3]);
          auto after = [&](Value old, Value h, Value expected, Value done,
                           Value slot, Value fresh, bool writer) {
            Value took = k.cmp(P::eq, old, expected);
            SmallVector<Value> r = next(old, h, slot, fresh, writer);
            Value finished = k.bitOr(done, k.bitOr(took, r[3]));
            return SmallVector<Value>{
                r[0], r[1], r[2], finished,
                k.bitAnd(k.bitNot(k.bitOr(done, took)), r[4])};
          };
          SmallVector<Value> a = after(oldT, s[0], s[1], s[3], t, freshW, true);
          SmallVector<Value> c =
              after(oldS, s[4], s[5], s[7], src, freshR, false);
          Value conflict = k.bitOr(s[8], k.bitOr(a[4], c[4]));
          Value steps = k.add(s[9], one);
          Value open = k.bitNot(k.bitAnd(a[3], c[3]));
          Value more =
              k.bitAnd(k.bitAnd(open, k.bitNot(conflict)),
                       k.cmp(P::slt, steps, k.i64(KVCACHE_CLAIM_PROBES)));
          return {more,
                  {a[0], a[1], a[2], a[3], c[0], c[1], c[2], c[3], conflict,
                   steps}};
        });
    // A conflict, or a claim still open after its probes.
    Value unfinished = k.bitNot(k.bitAnd(end[3], end[7]));
    k.ifThen(k.bitOr(end[8], unfinished),
             [&] { k.store(k.i32(1), flag(SUSPECT), 4); });
  });
}
