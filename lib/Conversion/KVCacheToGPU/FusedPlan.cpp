//===- FusedPlan.cpp - phase A of the fused kernel: validation, plan ------===//
//
// Phase A of the kernel FusedMove.cpp builds: each request validated on its
// own (a bad one skipped and reported; a small batch, and each chunk of a
// large one, a thread per request column, checkSmallBatch; a larger local
// batch, or requests of more than 32 columns, a thread per request), its
// (target, source) entries written, the verdict on hazards across requests (a
// shared-memory table for local batches, filled and probed without loops by a
// small one, smallCrossCheck; for large ones the slot claims each chunk
// makes as it is validated (FusedClaims.cpp), and, when a claim was
// suspect, the workspace table and depth plan of MovePlan after every block
// validated its chunks), and the status record and report.
//
//===----------------------------------------------------------------------===//

#include "FusedMove.h"

#include "MovePlan.h"

#include "KVCache/KVCacheABI.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::kvcache;
using namespace mlir::kvcache::fused;

static Value log2Lanes(KernelBuilder &k, Value W);

Value FusedKernel::columnsFitWarp() {
  return k.bitAnd(k.cmp(P::sge, W, one), k.cmp(P::sle, W, k.i64(32)));
}

Value FusedKernel::log2ChunkRequests() {
  int64_t log2T = llvm::Log2_64(T);
  return k.select(columnsFitWarp(), k.sub(k.i64(log2T), log2Lanes(k, W)),
                  k.i64(log2T));
}

Value FusedKernel::chunkCount(Value log2Per) {
  Value per = arith::ShLIOp::create(b, one, log2Per);
  return arith::ShRUIOp::create(b, k.add(bs, k.sub(per, one)), log2Per);
}

void FusedKernel::validateChunks() {
  Value isThread0 = k.cmp(P::eq, tid, zero);
  Value lanes = columnsFitWarp();
  Value log2Per = log2ChunkRequests();
  Value chunks = chunkCount(log2Per);
  Value low = k.i64(0xffffffff);
  // Block b validates chunk b first, without a ticket; the chunks past the
  // grid (chunks > blocks) are handed out by tickets: ticket t names chunk
  // blocks + t. Every block draws tickets until one names no chunk, so the
  // launch draws max(chunks, blocks) tickets, the last of which starts the
  // next epoch.
  Value extra = k.sub(chunks, nblocks);
  Value lastTicket = k.sub(
      k.add(k.select(k.cmp(P::sgt, extra, zero), extra, zero), nblocks), one);
  // A draw is issued one chunk ahead and its word used only after that
  // chunk is validated, so that no warp waits for the atomic's round trip
  // before its loads (thread 0 alone draws; the others carry zero).
  auto draw = [&]() -> Value {
    return k.ifValue(
        isThread0, i64,
        [&]() -> Value {
          return globalAtomic(LLVM::AtomicBinOp::add, word(KVCACHE_CTRL_CLAIM),
                              one);
        },
        [&]() -> Value { return zero; });
  };
  // A drawn word's epoch: its high half, kept in place.
  auto epochOf = [&](Value got) { return k.sub(got, k.bitAnd(got, low)); };
  // Thread 0: the chunk the drawn ticket names to CLAIMED, and the word's
  // epoch to EPOCH unless it is there already (`publish`: EPOCH is written
  // once, as other threads may be reading it); the last ticket's block
  // stores the next epoch.
  auto useDraw = [&](Value got, Value publish) {
    k.ifThen(isThread0, [&] {
      Value ticket = k.bitAnd(got, low);
      k.ifThen(publish, [&] { k.store(epochOf(got), val(EPOCH), 8); });
      k.ifThen(k.cmp(P::eq, ticket, lastTicket), [&] {
        Value next = arith::ShLIOp::create(
            b, k.add(arith::ShRUIOp::create(b, got, k.i64(32)), one),
            k.i64(32));
        storeWord(next, KVCACHE_CTRL_CLAIM);
      });
      k.store(k.toI32(k.add(nblocks, ticket)), flag(CLAIMED), 4);
    });
  };
  SmallVector<Value> inits = {bid, draw(), zero};
  SmallVector<Value> ends = k.whileLoop(
      inits, [&](ValueRange x) -> std::pair<Value, SmallVector<Value>> {
        Value c = x[0], got = x[1], done = x[2];
        Value more = k.cmp(P::slt, c, chunks);
        k.ifThen(more, [&] {
          Value first = arith::ShLIOp::create(b, c, log2Per);
          // The claims of the block's first chunk need the epoch: thread 0
          // stores it once the loads of the chunk's first round trip are
          // issued, and the block meets at a barrier (the atomic and those
          // loads are in flight together).
          Value firstChunk = k.cmp(P::eq, done, zero);
          auto publishEpoch = [&] {
            k.ifThen(firstChunk, [&] {
              k.ifThen(isThread0,
                       [&] { k.store(epochOf(got), val(EPOCH), 8); });
              k.barrier();
            });
          };
          k.ifThenElse(
              lanes,
              [&] {
                checkSmallBatch(p["min_slots"], first, false, publishEpoch);
              },
              [&] {
                Value i = k.add(first, tid);
                checkRequest(i, k.cmp(P::slt, i, bs), p["min_slots"]);
              });
        });
        // The block's first ticket publishes the epoch, unless the claims
        // of its first chunk did (checkSmallBatch's hook).
        Value hooked = k.bitAnd(more, lanes);
        useDraw(got, k.bitAnd(k.cmp(P::eq, done, zero), k.bitNot(hooked)));
        k.barrier();
        Value nextChunk = k.toI64(k.load(i32, flag(CLAIMED), 4));
        Value again = k.cmp(P::slt, nextChunk, chunks);
        // Every thread has read CLAIMED before thread 0 replaces it.
        k.ifThen(again, [&] { k.barrier(); });
        Value nextDraw = k.ifValue(
            again, i64, [&]() -> Value { return draw(); },
            [&]() -> Value { return zero; });
        return {again,
                {nextChunk, nextDraw, k.select(more, k.add(done, one), done)}};
      });
  Value mine = ends[2];
  k.ifThen(isThread0, [&] {
    Value moved = count(MOVED);
    Value skipped = count(SKIPPED);
    Value first = firstBad();
    Value anyMoved = k.cmp(P::sgt, moved, zero);
    Value anySkipped = k.cmp(P::sgt, skipped, zero);
    Value suspect = k.cmp(P::ne, k.load(i32, flag(SUSPECT), 4), k.i32(0));
    Value last = k.ifValue(
        k.cmp(P::sgt, mine, zero), b.getI1Type(),
        [&]() -> Value {
          k.ifThen(anyMoved, [&] {
            globalAtomic(LLVM::AtomicBinOp::add, word(KVCACHE_TOTAL_MOVED),
                         moved);
          });
          k.ifThen(anySkipped, [&] {
            globalAtomic(LLVM::AtomicBinOp::add, word(KVCACHE_TOTAL_SKIPPED),
                         skipped);
            globalAtomic(LLVM::AtomicBinOp::max, word(KVCACHE_TOTAL_FIRST_BAD),
                         k.sub(k.i64(INT64_MAX), first));
          });
          k.ifThen(suspect, [&] {
            globalAtomic(LLVM::AtomicBinOp::add, word(KVCACHE_TOTAL_SUSPECT),
                         one);
          });
          Value progress = k.add(
              mine,
              k.add(k.select(anyMoved,
                             k.i64(int64_t(1) << KVCACHE_PROGRESS_MOVED_BIT),
                             zero),
                    k.select(k.bitOr(anySkipped, suspect),
                             k.i64(int64_t(1) << KVCACHE_PROGRESS_SKIPPED_BIT),
                             zero)));
          // Release: the block's entries and totals before its progress.
          LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
          Value after =
              k.add(globalAtomic(LLVM::AtomicBinOp::add,
                                 word(KVCACHE_TOTAL_PROGRESS), progress),
                    progress);
          Value isLast =
              k.cmp(P::eq, k.bitAnd(after, k.i64(0xffffffff)), chunks);
          // Every block that adds to the totals has added: the planner
          // reads them and leaves them zero for the next launch.
          k.ifThen(isLast, [&] {
            storeWord(zero, KVCACHE_TOTAL_PROGRESS);
            // The totals, read only if some block moved or skipped
            // (otherwise they are all zero: no round trip). Only then is
            // there anything to acquire: a batch in which no block moved
            // reads no other block's entries (its plan is skipped).
            Value others =
                k.cmp(P::ne,
                      arith::ShRUIOp::create(b, after,
                                             k.i64(KVCACHE_PROGRESS_MOVED_BIT)),
                      zero);
            k.ifThen(others, [&] {
              // Acquire: every block's entries and totals are visible.
              LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
              auto take = [&](int64_t t) {
                return globalAtomic(LLVM::AtomicBinOp::xchg, word(t), zero);
              };
              Value m = take(KVCACHE_TOTAL_MOVED);
              Value sk = take(KVCACHE_TOTAL_SKIPPED);
              Value fb = take(KVCACHE_TOTAL_FIRST_BAD);
              Value sus = take(KVCACHE_TOTAL_SUSPECT);
              k.store(k.toI32(m), flag(MOVED), 4);
              k.store(k.select(k.cmp(P::ne, sus, zero), k.i32(1), k.i32(0)),
                      flag(SUSPECT), 4);
              k.store(k.toI32(sk), flag(SKIPPED), 4);
              k.store(k.select(k.cmp(P::eq, fb, zero), k.i32(INT32_MAX),
                               k.toI32(k.sub(k.i64(INT64_MAX), fb))),
                      flag(FIRST_BAD), 4);
            });
          });
          return isLast;
        },
        [&]() -> Value { return k.i1(false); });
    k.store(k.select(last, k.i32(0), k.i32(1)), flag(PLANNER), 4);
  });
  k.barrier();
}

void FusedKernel::waitVerdict() {
  k.ifThen(k.cmp(P::eq, tid, zero), [&] {
    // Relaxed polls, then one fence: the acquire pattern. An acquire load
    // per poll would invalidate the SM's L1 each time, under the feet of
    // the block beside it (the planner's prefetched lists among them).
    // Device scope, not volatile: a volatile access is system scope in
    // PTX. A verdict counts only with this launch's epoch: FLAG still holds
    // the previous large launch's (or zero, on a fresh workspace).
    // PROGRESS is polled too: once it shows every chunk validated and no
    // block that moved, the verdict can only be V_NONE, and the waiter
    // leaves without the planner's publication (a chain's common case);
    // with slot claims, every chunk validated and no block that skipped or
    // was suspect, V_PER_REQUEST (a tree's).
    // PROGRESS is zero when this launch starts (the previous planner left
    // it so) and goes back to zero once the planner has read it: a
    // waiter that misses the complete count still gets FLAG.
    Value epoch = k.load(i64, val(EPOCH), 8);
    Value chunks = chunkCount(log2ChunkRequests());
    Value claims = claimsApply();
    Value v = k.whileLoop(k.i32(0), [&](Value) -> std::pair<Value, Value> {
      Value got = loadWord(KVCACHE_CTRL_FLAG);
      Value progress = loadWord(KVCACHE_TOTAL_PROGRESS);
      Value stale =
          k.cmp(P::ne, k.bitAnd(got, k.i64(~int64_t(0xffffffff))), epoch);
      Value verdict = k.select(stale, k.i32(0), k.toI32(got));
      // The chunks validated, and the blocks that moved.
      Value nothingMoves = k.cmp(
          P::eq,
          k.bitAnd(progress,
                   k.i64((int64_t(1) << KVCACHE_PROGRESS_SKIPPED_BIT) - 1)),
          chunks);
      // Every chunk validated, and no block that skipped a request or
      // found a suspect claim.
      constexpr int64_t kMovedField =
          ((int64_t(1) << KVCACHE_PROGRESS_SKIPPED_BIT) - 1) &
          ~int64_t(0xffffffff);
      Value clean =
          k.cmp(P::eq, k.bitAnd(progress, k.i64(~kMovedField)), chunks);
      verdict =
          k.select(k.bitAnd(clean, claims), k.i32(V_PER_REQUEST), verdict);
      verdict = k.select(nothingMoves, k.i32(V_NONE), verdict);
      Value waiting = k.cmp(P::eq, verdict, k.i32(0));
      // A short sleep: the verdict is on every waiter's critical path, and
      // the polls of the two words are L2 hits.
      k.ifThen(waiting,
               [&] { NVVM::NanosleepOp::create(b, k.i32(kPollSleepNs)); });
      return {waiting, verdict};
    });
    // Acquire only for a verdict that moves: V_NONE reads nothing.
    k.ifThen(k.cmp(P::ne, v, k.i32(V_NONE)), [&] {
      LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
    });
    k.store(v, flag(VERDICT), 4);
  });
}

void FusedKernel::lookUpSources(MovePlan &table) {
  Value W32 = k.toI32(W);
  k.forLoop(tid, n, k.i64(T), [&](Value e) {
    Value s = srcAt(e), t = tgtAt(e);
    k.ifThen(k.cmp(P::ne, s, t), [&] {
      // The entry that writes this entry's source: unsafe if it belongs to
      // another request, or is an earlier entry of the same one (the
      // per-request move goes kEntryGroup entries at a time, in order; a
      // later entry's write is behind this entry's read).
      Value w = table.writerOf(s);
      // 32-bit division (entries stay below 2^31): a 64-bit one is a
      // called subroutine.
      Value other = k.cmp(P::ne, arith::DivUIOp::create(b, k.toI32(w), W32),
                          arith::DivUIOp::create(b, k.toI32(e), W32));
      Value hazard =
          k.bitAnd(k.cmp(P::sge, w, zero), k.bitOr(other, k.cmp(P::slt, w, e)));
      k.ifThen(hazard, [&] { k.store(k.i32(1), flag(UNSAFE), 4); });
    });
  });
  k.barrier();
}

void FusedKernel::crossCheck(MovePlan &table) {
  table.init();
  table.insertTargets([&](Value e) { return srcAt(e); },
                      [&](Value e) { return tgtAt(e); }, flag(UNSAFE));
  lookUpSources(table);
}

void FusedKernel::plan() {
  Value isThread0 = k.cmp(P::eq, tid, zero);
  // Every moved slot lies below the smallest slot count of all buffers
  // (the runtime passes it: a table walk here would cost every block a
  // memory round trip and a barrier).
  Value minSlots = p["min_slots"];
  // A local batch: a small one a thread per (request, column); a larger
  // one its requests in rounds of T (uniform trip count), out of the small
  // batches' instruction stream. A large one was validated by every block
  // (validateChunks).
  k.ifThen(local, [&] {
    Value small = smallBatch();
    k.ifThen(small, [&] { checkSmallBatch(minSlots, zero, true); });
    k.ifCold(k.bitNot(small), [&] {
      prefetchBufferTable();
      k.forLoop(zero, bs, k.i64(T), [&](Value base) {
        Value i = k.add(base, tid);
        Value active = k.cmp(P::slt, i, bs);
        checkRequest(i, active, minSlots);
      });
    });
    k.barrier();
  });
  recordFirstViolation(minSlots);
  // Hazards across requests.
  auto src = [&](Value e) { return srcAt(e); };
  auto tgt = [&](Value e) { return tgtAt(e); };
  std::string name = k.getKernel().getName().str();
  // A batch that moves nothing (a topk-1 chain) has no hazard to find:
  // the check is skipped (MOVED is final behind the rounds' barrier, so
  // the branch is uniform).
  Value anyMoves = k.cmp(P::sgt, count(MOVED), zero);
  k.ifThen(k.bitAnd(anyMoves, k.bitAnd(local, smallBatch())),
           [&] { smallPrefetch(); });
  // A batch of one request whose entries fit one group of kEntryGroup
  // skips the hazard check too: no other request shares its rows, and the
  // per-request move loads the whole group, in every buffer of a task,
  // before it stores any of it, so every entry reads its source's old row
  // whatever the pattern (gather then scatter). Uniform: bs and W are
  // parameters.
  Value solo =
      k.bitAnd(k.cmp(P::eq, bs, one), k.cmp(P::sle, W, k.i64(kEntryGroup)));
  // A local batch: 2 C slots of i64 keys and i32 writers in the arena,
  // after the lists.
  k.ifThen(k.bitAnd(anyMoves, local), [&] {
    k.ifThenElse(
        smallBatch(),
        [&] { k.ifThen(k.bitNot(solo), [&] { smallCrossCheck(); }); },
        [&] {
          MovePlan table(k, k.gep(arena, i8, k.i64(arenaLocalKeysOffset())),
                         k.gep(arena, i8, k.i64(arenaLocalWritersOffset())),
                         llvm::Log2_64(localTableSlots()), n, T,
                         name + "_local", i64);
          crossCheck(table);
        });
  });
  // A large batch: its lists are in the workspace. Up to 2 C entries whose
  // slots fit in 31 bits, the planner checks them with a table of 4 C
  // slots of i32 keys in the arena (shared atomics, not a global round
  // trip per probe); larger ones, and any batch found unsafe (whose depth
  // plan needs it), with the workspace table of MovePlan.
  // Unless every block's slot claims (FusedClaims.cpp) came back clean:
  // then no hazard is left for the check to find.
  Value claimed = k.bitAnd(
      claimsApply(), k.cmp(P::eq, k.load(i32, flag(SUSPECT), 4), k.i32(0)));
  Value check =
      k.bitAnd(k.bitAnd(anyMoves, k.bitNot(local)), k.bitNot(claimed));
  k.ifCold(check, [&] {
    // The loops below walk the lists, an entry per thread at a time: one
    // prefetch of every line into L1 first (after the acquire, so no line
    // is stale), and their reads are L1 hits, not an L2 round trip each.
    Value lines = arith::DivUIOp::create(
        b, k.add(k.mul(n, k.i64(8)), k.i64(kLineBytes - 1)), k.i64(kLineBytes));
    k.forLoop(tid, k.mul(lines, k.i64(2)), k.i64(T), [&](Value l) {
      Value inSources = k.cmp(P::sge, l, lines);
      Value list = k.select(inSources, srcList, tgtList);
      Value line = k.select(inSources, k.sub(l, lines), l);
      prefetch(k.gep(list, i8, k.mul(line, k.i64(kLineBytes))), Cache::L1);
    });
    Value fast = k.bitAnd(k.cmp(P::sle, n, k.i64(largeTableSlots() / 2)),
                          k.cmp(P::sle, minSlots, k.i64(INT32_MAX)));
    k.ifThen(fast, [&] {
      MovePlan table(
          k, arena, k.gep(arena, i8, k.i64(arenaLargeWritersOffset())),
          llvm::Log2_64(largeTableSlots()), n, T, name + "_large", i32);
      crossCheck(table);
    });
    Value found = k.cmp(P::ne, k.load(i32, flag(UNSAFE), 4), k.i32(0));
    k.ifThen(k.bitOr(k.bitNot(fast), found), [&] {
      MovePlan table(k, planWs, n, T, name);
      table.init();
      table.insertTargets(src, tgt, flag(UNSAFE));
      k.ifThen(k.bitNot(fast), [&] { lookUpSources(table); });
      Value unsafe = k.cmp(P::ne, k.load(i32, flag(UNSAFE), 4), k.i32(0));
      k.ifThen(unsafe, [&] { table.plan(src, tgt); });
      // Rows on or feeding a cycle must fit one chunk.
      Value cyclic = k.ifValue(
          unsafe, i64,
          [&]() -> Value { return k.loadI64(planWs, i32, k.i64(2)); },
          [&]() -> Value { return zero; });
      k.ifThen(k.cmp(P::sgt, cyclic, k.i64(C)),
               [&] { k.store(k.i32(1), flag(CAPACITY), 4); });
    });
    k.barrier();
  });
  Value capacityError = k.cmp(P::ne, k.load(i32, flag(CAPACITY), 4), k.i32(0));
  Value unsafe = k.cmp(P::ne, k.load(i32, flag(UNSAFE), 4), k.i32(0));
  Value moved = count(MOVED);
  Value verdict =
      k.select(k.bitOr(capacityError, k.cmp(P::eq, moved, zero)), k.i32(V_NONE),
               k.select(unsafe, k.i32(V_STAGED), k.i32(V_PER_REQUEST)));
  // The status record, whole, once per launch.
  Value recorder =
      k.bitAnd(isThread0, k.bitOr(k.bitNot(local), k.cmp(P::eq, bid, zero)));
  k.ifThen(recorder, [&] {
    // Publish to the waiting blocks first (release: lists and plan before
    // the verdict); the status record is for the host alone, so its stores
    // are not on their critical path.
    k.ifThen(k.bitNot(local), [&] {
      // Release, for a verdict that moves (V_NONE: the waiters read
      // nothing).
      k.ifThen(k.cmp(P::ne, verdict, k.i32(V_NONE)), [&] {
        LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
      });
      Value published = k.bitOr(k.load(i64, val(EPOCH), 8),
                                arith::ExtUIOp::create(b, i64, verdict));
      // Relaxed behind the fence; device scope (a volatile or release
      // store here was a system-scope fence and store).
      storeWord(published, KVCACHE_CTRL_FLAG);
    });
    Value st = p["status"];
    Value code = k.load(i64, val(CODE), 8);
    Value capFirst = k.bitAnd(capacityError, k.cmp(P::eq, code, zero));
    auto pick = [&](int64_t f, Value cap) {
      return k.select(capFirst, cap, k.load(i64, val(f), 8));
    };
    Value cyclic = k.ifValue(
        capacityError, i64,
        [&]() -> Value { return k.loadI64(planWs, i32, k.i64(2)); },
        [&]() -> Value { return zero; });
    auto put = [&](int64_t f, Value v) {
      k.store(v, k.gep(st, i64, k.i64(f)), 8);
    };
    put(KVCACHE_STATUS_CODE,
        k.select(capFirst, k.i64(KVCACHE_ERR_STAGING_CAPACITY), code));
    put(KVCACHE_STATUS_ENTRY, pick(ENTRY, zero));
    put(KVCACHE_STATUS_VALUE, pick(VALUE, cyclic));
    put(KVCACHE_STATUS_BOUND, pick(BOUND, k.i64(C)));
    put(KVCACHE_STATUS_SKIPPED, count(SKIPPED));
    put(KVCACHE_STATUS_MOVED, k.select(capacityError, zero, moved));
    put(KVCACHE_STATUS_PATH,
        k.select(k.cmp(P::eq, verdict, k.i32(V_NONE)), k.i64(KVCACHE_PATH_NONE),
                 k.select(unsafe, k.i64(KVCACHE_PATH_STAGED),
                          k.i64(KVCACHE_PATH_PER_REQUEST))));
    put(KVCACHE_STATUS_RESERVED, zero);
    if (p.count("report"))
      report(k.select(capFirst, k.i64(KVCACHE_ERR_STAGING_CAPACITY), code),
             pick(ENTRY, zero), pick(VALUE, cyclic), pick(BOUND, k.i64(C)),
             count(SKIPPED));
    k.store(verdict, flag(VERDICT), 4);
  });
  // Non-recording blocks of a local plan keep their own verdict.
  k.ifThen(k.bitAnd(isThread0, k.bitNot(recorder)),
           [&] { k.store(verdict, flag(VERDICT), 4); });
}

void FusedKernel::report(Value code, Value entry, Value value, Value bound,
                         Value skipped) {
  k.ifCold(k.cmp(P::ne, code, zero), [&] {
    Value r = p["report"];
    auto field = [&](int64_t f) { return k.gep(r, i64, k.i64(f)); };
    auto load = [&](int64_t f) {
      return LLVM::LoadOp::create(b, i64, field(f), 8, /*isVolatile=*/true)
          .getResult();
    };
    auto put = [&](int64_t f, Value v) {
      LLVM::StoreOp::create(b, v, field(f), 8, /*isVolatile=*/true);
    };
    auto fence = [&] {
      LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "");
    };
    // An odd sequence left by a trapped or killed execution is closed
    // by the next update: round up to even first.
    Value seq = k.bitAnd(k.add(load(KVCACHE_REPORT_SEQUENCE), k.i64(1)),
                         k.i64(~int64_t(1)));
    put(KVCACHE_REPORT_SEQUENCE, k.add(seq, k.i64(1)));
    fence();
    put(KVCACHE_REPORT_CODE, code);
    put(KVCACHE_REPORT_ENTRY, entry);
    put(KVCACHE_REPORT_VALUE, value);
    put(KVCACHE_REPORT_BOUND, bound);
    put(KVCACHE_REPORT_SKIPPED, skipped);
    fence();
    put(KVCACHE_REPORT_SEQUENCE, k.add(seq, k.i64(2)));
    fence();
    Value trap = k.cmp(P::ne, load(KVCACHE_REPORT_TRAP), zero);
    k.ifThen(trap, [&] { LLVM::Trap::create(b); });
  });
}

Value FusedKernel::windowLength(Division division) {
  Value nOcl = p["num_out_cache_loc"];
  Value safeBs = k.select(k.cmp(P::sgt, bs, zero), bs, one);
  if (division == Division::Wide)
    return arith::DivSIOp::create(b, nOcl, safeBs);
  Value fits = k.cmp(P::sle, nOcl, k.i64(INT32_MAX));
  if (division == Division::Narrow)
    return div32(k.select(fits, nOcl, zero), safeBs);
  return k.ifValue(
      fits, i64, [&]() -> Value { return div32(nOcl, safeBs); },
      [&]() -> Value { return arith::DivSIOp::create(b, nOcl, safeBs); });
}

FusedKernel::RowBounds FusedKernel::rowBounds(Value i, Value r, Value s,
                                              Value acc, Value d) {
  RowBounds rb;
  if (rows) {
    Value maxReqs = p["max_reqs"], poolLen = p["pool_len"];
    rb.outsidePool = k.outside(r, zero, maxReqs);
    // s + acc <= pool_len, tested as s <= pool_len - acc: no overflow.
    rb.outsideRow =
        k.bitOr(k.cmp(P::slt, s, zero), k.cmp(P::sgt, s, k.sub(poolLen, acc)));
    rb.rowBase = k.add(k.mul(r, poolLen), s);
  } else {
    rb.outsidePool = k.cmp(P::sgt, acc, d);
    rb.outsideRow = k.i1(false);
    rb.rowBase = k.mul(i, d);
  }
  return rb;
}

FusedKernel::Verdict FusedKernel::validate(Value i, Value active,
                                           Value minSlots, bool write) {
  constexpr int64_t kCols = 4;
  Value nOcl = p["num_out_cache_loc"];
  Value sentinel = k.i64(op.getSentinelAttr().getInt());
  Value rowStart = k.mul(i, W);
  Value cols = k.i64(kCols);
  Value ncd = loadIf(active, "num_correct_drafts", i);
  Value r = zero, s = zero, d = zero;
  if (rows) {
    r = loadIf(active, "req_pool_indices", i);
    s = loadIf(active, "seq_lens", i);
  } else {
    d = windowLength(Division::Wide);
  }
  auto acceptAt = [&](Value chunk, int64_t q, Value cond) {
    Value j = k.add(chunk, k.i64(q));
    Value in = k.bitAnd(cond, k.cmp(P::slt, j, W));
    return std::make_pair(loadIf(in, "accept_index", k.add(rowStart, j)), in);
  };
  // Pass 1: the row's count and its first position outside
  // [0, len(out_cache_loc)).
  SmallVector<Value> row =
      k.forLoopCarried(zero, W, cols, ValueRange{zero, minusOne, zero},
                       [&](Value chunk, ValueRange c) -> SmallVector<Value> {
                         Value count = c[0], badJ = c[1], badA = c[2];
                         SmallVector<std::pair<Value, Value>> as;
                         for (int64_t q = 0; q < kCols; ++q)
                           as.push_back(acceptAt(chunk, q, active));
                         for (int64_t q = 0; q < kCols; ++q) {
                           auto [a, in] = as[q];
                           Value keep = k.bitAnd(in, k.cmp(P::ne, a, sentinel));
                           Value out = k.bitAnd(keep, k.outside(a, zero, nOcl));
                           Value first =
                               k.bitAnd(out, k.cmp(P::slt, badJ, zero));
                           count = k.select(keep, k.add(count, one), count);
                           badJ = k.select(first, k.add(chunk, k.i64(q)), badJ);
                           badA = k.select(first, a, badA);
                         }
                         return {count, badJ, badA};
                       });
  Value count = row[0], badJ = row[1], badA = row[2];
  Value e1 = k.cmp(P::slt, ncd, zero);
  Value e2 =
      k.bitAnd(k.bitNot(e1), k.bitOr(k.cmp(P::sge, ncd, W),
                                     k.cmp(P::ne, count, k.add(ncd, one))));
  Value e3 = k.bitAnd(k.bitNot(k.bitOr(e1, e2)), k.cmp(P::sge, badJ, zero));
  Value acc = k.add(ncd, one); // meaningful once e1, e2 are false
  Value ok3 = k.bitAnd(active, k.bitNot(k.bitOr(k.bitOr(e1, e2), e3)));
  RowBounds rb = rowBounds(i, r, s, acc, d);
  Value e4 = k.bitAnd(ok3, rb.outsidePool);
  Value e5 = k.bitAnd(k.bitAnd(ok3, k.bitNot(e4)), rb.outsideRow);
  Value v4, v5, b4;
  if (rows) {
    v4 = r;
    b4 = p["max_reqs"];
    Value sat = k.cmp(P::sgt, s, k.sub(k.i64(INT64_MAX), acc));
    v5 = k.select(k.cmp(P::slt, s, zero), s,
                  k.select(sat, k.i64(INT64_MAX), k.add(s, acc)));
  } else {
    v4 = acc;
    b4 = d;
    v5 = zero;
  }
  Value ok5 = k.bitAnd(ok3, k.bitNot(k.bitOr(e4, e5)));
  Value rowBase = rb.rowBase;
  // Pass 2: the entries in accepted order; the first slot outside
  // [0, min slots).
  SmallVector<Value> walk = k.forLoopCarried(
      zero, W, cols, ValueRange{zero, minusOne, zero, zero},
      [&](Value chunk, ValueRange c) -> SmallVector<Value> {
        Value pos = c[0], slotJ = c[1], slotV = c[2], moves = c[3];
        SmallVector<Value> keeps, poss, as, ts, ss;
        for (int64_t q = 0; q < kCols; ++q) {
          auto [a, in] = acceptAt(chunk, q, ok5);
          Value keep = k.bitAnd(in, k.cmp(P::ne, a, sentinel));
          keeps.push_back(keep);
          poss.push_back(pos);
          as.push_back(a);
          pos = k.select(keep, k.add(pos, one), pos);
        }
        for (int64_t q = 0; q < kCols; ++q) {
          ts.push_back(loadIf(keeps[q], rows ? "req_to_token" : "out_cache_loc",
                              k.add(rowBase, poss[q])));
          ss.push_back(loadIf(keeps[q], "out_cache_loc", as[q]));
        }
        for (int64_t q = 0; q < kCols; ++q) {
          Value badT = k.outside(ts[q], zero, minSlots);
          Value badS = k.outside(ss[q], zero, minSlots);
          Value bad = k.bitAnd(keeps[q], k.bitOr(badT, badS));
          Value first = k.bitAnd(bad, k.cmp(P::slt, slotJ, zero));
          Value flat = k.add(rowStart, poss[q]);
          if (write)
            k.ifThen(keeps[q], [&] {
              k.store(ts[q], k.gep(tgtList, i64, flat), 8);
              k.store(ss[q], k.gep(srcList, i64, flat), 8);
            });
          slotJ = k.select(first, flat, slotJ);
          slotV = k.select(first, k.select(badT, ts[q], ss[q]), slotV);
          Value m = k.bitAnd(keeps[q], k.cmp(P::ne, ts[q], ss[q]));
          moves = k.select(m, k.add(moves, one), moves);
        }
        return {pos, slotJ, slotV, moves};
      });
  Value e6 = k.bitAnd(ok5, k.cmp(P::sge, walk[1], zero));
  Verdict v;
  v.bad = k.bitAnd(active, k.bitOr(k.bitOr(k.bitOr(e1, e2), e3),
                                   k.bitOr(k.bitOr(e4, e5), e6)));
  v.written = walk[0];
  v.moves = walk[3];
  auto sel = [&](Value c1, Value c2, Value c3, Value c4, Value c5, Value c6) {
    return k.select(
        e1, c1,
        k.select(e2, c2,
                 k.select(e3, c3, k.select(e4, c4, k.select(e5, c5, c6)))));
  };
  if (!write) {
    Value accBound = k.select(k.cmp(P::eq, ncd, k.i64(INT64_MAX)),
                              k.i64(INT64_MAX), k.add(ncd, one));
    v.code =
        sel(k.i64(KVCACHE_ERR_NEGATIVE_DRAFTS), k.i64(KVCACHE_ERR_ACCEPT_COUNT),
            k.i64(KVCACHE_ERR_ACCEPT_INDEX),
            k.i64(rows ? KVCACHE_ERR_REQ_POOL_INDEX : KVCACHE_ERR_WINDOW_RANGE),
            k.i64(KVCACHE_ERR_SEQ_RANGE), k.i64(KVCACHE_ERR_SLOT));
    v.entry = sel(i, i, k.add(rowStart, badJ), i, i, walk[1]);
    v.value = sel(ncd, count, badA, v4, v5, walk[2]);
    v.bound =
        sel(zero, accBound, nOcl, b4, rows ? p["pool_len"] : zero, minSlots);
  }
  return v;
}

void FusedKernel::checkRequest(Value i, Value active, Value minSlots) {
  Value rowStart = k.mul(i, W);
  Verdict v = validate(i, active, minSlots, /*write=*/true);
  // Every entry a request does not move holds the same slot twice.
  Value firstSkip = k.select(v.bad, zero, v.written);
  k.ifThen(active, [&] {
    k.forLoop(firstSkip, W, one, [&](Value q) {
      Value flat = k.add(rowStart, q);
      k.store(minusOne, k.gep(tgtList, i64, flat), 8);
      k.store(minusOne, k.gep(srcList, i64, flat), 8);
    });
  });
  // Order hazards inside the request are found with those across
  // requests, by the plan's writer table (lookUpSources).
  Value good = k.bitAnd(active, k.bitNot(v.bad));
  k.ifThen(k.bitAnd(good, k.cmp(P::sgt, v.moves, zero)), [&] {
    sharedAtomic(LLVM::AtomicBinOp::add, flag(MOVED), k.toI32(v.moves));
  });
  k.ifThen(v.bad, [&] {
    sharedAtomic(LLVM::AtomicBinOp::min, flag(FIRST_BAD), k.toI32(i));
    sharedAtomic(LLVM::AtomicBinOp::add, flag(SKIPPED), k.i32(1));
  });
}

/// log2 of the lanes of a request in a small batch: of the power of two
/// >= W (0 for W <= 1).
static Value log2Lanes(KernelBuilder &k, Value W) {
  ImplicitLocOpBuilder &b = k.builder();
  Value clz = LLVM::CountLeadingZerosOp::create(
      b, b.getI64Type(), k.sub(W, k.i64(1)), b.getBoolAttr(false));
  Value l = k.sub(k.i64(64), clz);
  return k.select(k.cmp(P::sle, W, k.i64(1)), k.i64(0), l);
}

Value FusedKernel::smallBatch() {
  Value lanes = arith::ShLIOp::create(b, one, log2Lanes(k, W));
  Value fits = k.cmp(P::sle, k.mul(bs, lanes), k.i64(T));
  return k.bitAnd(k.bitAnd(local, fits), columnsFitWarp());
}

void FusedKernel::checkSmallBatch(Value minSlots, Value firstRequest,
                                  bool whole,
                                  llvm::function_ref<void()> afterLoads) {
  Value log2L = log2Lanes(k, W);
  Value L = arith::ShLIOp::create(b, one, log2L);
  Value i = k.add(firstRequest, arith::ShRUIOp::create(b, tid, log2L));
  Value j = k.bitAnd(tid, k.sub(L, one));
  Value inRequest = k.cmp(P::slt, i, bs);
  Value active = k.bitAnd(inRequest, k.cmp(P::slt, j, W));
  Value nOcl = p["num_out_cache_loc"];
  Value sentinel = k.i64(op.getSentinelAttr().getInt());
  // Memory round trip 1: the request's values and this column's index.
  Value ncd = loadIf(inRequest, "num_correct_drafts", i);
  Value r = zero, s = zero;
  if (rows) {
    r = loadIf(inRequest, "req_pool_indices", i);
    s = loadIf(inRequest, "seq_lens", i);
  }
  Value flat = k.add(k.mul(i, W), j);
  Value a = loadIf(active, "accept_index", flat);
  if (afterLoads)
    afterLoads();
  // Behind the first loads, before anyone knows whether the batch moves:
  // a few instructions for a chain, a memory round trip hidden for a tree.
  if (whole) {
    prefetchBufferTable();
    // The last warp's threads (without request columns unless the batch
    // fills the block) copy the table rows of the block's buffers into
    // shared memory for smallPrefetch, holding no register: thread
    // T - 1 - q the row of buffer bid + q * grid.
    Value q = k.sub(k.i64(T - 1), tid);
    Value buf = k.add(bid, k.mul(q, nblocks));
    Value own = k.bitAnd(k.cmp(P::slt, q, k.i64(kPrefetchBuffers)),
                         k.cmp(P::slt, buf, p["num_buffers"]));
    k.ifThen(own, [&] {
      Value row = k.mul(buf, k.i64(KVCACHE_BUFFER_COLUMNS));
      Value into = k.mul(q, k.i64(KVCACHE_BUFFER_COLUMNS));
      for (int64_t column : {KVCACHE_BUFFER_ADDRESS, KVCACHE_BUFFER_ROW_BYTES})
        NVVM::CpAsyncOp::create(
            b, k.gep(ownRows, i64, k.add(into, k.i64(column))),
            k.gep(p["buffers"], i64, k.add(row, k.i64(column))), 8,
            NVVM::LoadCacheModifierKind::CA, Value());
    });
    NVVM::CpAsyncCommitGroupOp::create(b);
  }
  // Window targets, a whole local batch whose out_cache_loc fits the
  // arena's free words (after the first T entries of the target list, which
  // a small batch does not use): out_cache_loc is copied into shared memory
  // by cp.async during round trip 1, so that both slots of every entry come
  // from there (one round trip for the whole validation, not two). The
  // copies hold no register, so no instruction waits for them before the
  // barrier that ends the round trip.
  Value windowed = k.i1(false);
  Value window = arena;
  Type oclElt = eltOf("out_cache_loc");
  if (whole && !rows) {
    window = k.gep(arena, i8, k.i64(8 * T));
    windowed = k.cmp(P::sle, nOcl, k.i64(kWindowWordsPerThread * T));
    auto bytes = static_cast<uint32_t>(oclElt.getIntOrFloatBitWidth() / 8);
    for (int64_t q = 0; q < kWindowWordsPerThread; ++q) {
      Value x = k.add(tid, k.i64(q * T));
      k.ifThen(k.bitAnd(windowed, k.cmp(P::slt, x, nOcl)), [&] {
        NVVM::CpAsyncOp::create(b, k.gep(window, oclElt, x),
                                k.gep(p["out_cache_loc"], oclElt, x), bytes,
                                NVVM::LoadCacheModifierKind::CA, Value());
      });
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
  }
  // The request's lanes: an aligned run of L lanes of one warp (L <= 32).
  Value lane = k.toI32(k.bitAnd(tid, k.i64(31)));
  Value L32 = k.toI32(L);
  Value runBase = k.bitAnd(lane, k.sub(k.i32(0), L32));
  Value ones =
      k.select(k.cmp(P::sge, L32, k.i32(32)), k.i32(-1),
               k.sub(arith::ShLIOp::create(b, k.i32(1), L32), k.i32(1)));
  Value run = arith::ShLIOp::create(b, ones, runBase);
  auto ballot = [&](Value pred) -> Value {
    Value v = NVVM::VoteSyncOp::create(b, i32, k.i32(-1), pred,
                                       NVVM::VoteSyncKind::ballot);
    return arith::AndIOp::create(b, v, run);
  };
  auto popc = [&](Value x) -> Value {
    return k.toI64(LLVM::CtPopOp::create(b, i32, x));
  };
  Value keep = k.bitAnd(active, k.cmp(P::ne, a, sentinel));
  Value kept = ballot(keep);
  Value count = popc(kept);
  Value below = k.sub(arith::ShLIOp::create(b, k.i32(1), lane), k.i32(1));
  Value pos = popc(arith::AndIOp::create(b, kept, below));
  Value anyOut =
      k.cmp(P::ne, ballot(k.bitAnd(keep, k.outside(a, zero, nOcl))), k.i32(0));
  // The checks of validate, in its order (only whether one fails matters
  // here).
  Value e1 = k.cmp(P::slt, ncd, zero);
  Value e2 =
      k.bitOr(k.cmp(P::sge, ncd, W), k.cmp(P::ne, count, k.add(ncd, one)));
  Value acc = k.add(ncd, one); // meaningful once e1, e2 are false
  Value ok3 = k.bitAnd(inRequest, k.bitNot(k.bitOr(k.bitOr(e1, e2), anyOut)));
  Value d = rows ? zero : windowLength(Division::Fast);
  RowBounds rb = rowBounds(i, r, s, acc, d);
  Value rowBase = rb.rowBase;
  Value ok5 = k.bitAnd(ok3, k.bitNot(k.bitOr(rb.outsidePool, rb.outsideRow)));
  // Memory round trip 2: the entry's target and source (from the window
  // in shared memory, when round trip 1 brought it there).
  Value want = k.bitAnd(ok5, keep);
  if (whole && !rows) {
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
    k.barrier();
  }
  // out_cache_loc[idx] when `want` holds (else 0): from the window, or
  // from global memory when the window did not fit.
  auto oclSlot = [&](Value idx) {
    return k.ifValue(
        want, i64,
        [&]() -> Value {
          return k.ifValue(
              windowed, i64,
              [&]() -> Value { return k.loadI64(window, oclElt, idx); },
              [&]() -> Value {
                return k.loadI64(p["out_cache_loc"], oclElt, idx);
              });
        },
        [&]() -> Value { return zero; });
  };
  Value t = rows ? loadIf(want, "req_to_token", k.add(rowBase, pos))
                 : oclSlot(k.add(rowBase, pos));
  Value src = oclSlot(a);
  Value badSlot = k.bitAnd(want, k.bitOr(k.outside(t, zero, minSlots),
                                         k.outside(src, zero, minSlots)));
  Value anyBadSlot = k.cmp(P::ne, ballot(badSlot), k.i32(0));
  Value bad = k.bitAnd(inRequest, k.bitOr(k.bitNot(ok5), anyBadSlot));
  Value good = k.bitAnd(inRequest, k.bitNot(bad));
  // The entries: the kept columns at their positions, skip entries after
  // them (all of the request's when it is bad).
  k.ifThen(k.bitAnd(good, keep), [&] {
    Value at = k.add(k.mul(i, W), pos);
    k.store(t, k.gep(tgtList, i64, at), 8);
    k.store(src, k.gep(srcList, i64, at), 8);
  });
  k.ifThen(k.bitAnd(active, k.bitOr(bad, k.cmp(P::sge, j, count))), [&] {
    k.store(minusOne, k.gep(tgtList, i64, flat), 8);
    k.store(minusOne, k.gep(srcList, i64, flat), 8);
  });
  Value moves = k.bitAnd(k.bitAnd(good, keep), k.cmp(P::ne, t, src));
  k.ifThen(moves, [&] {
    Value m = sharedAtomic(LLVM::AtomicBinOp::add, flag(MOVED), k.i32(1));
    // A whole small batch: the count before this entry's is its place in
    // the list of moving sources that smallPrefetch walks.
    if (whole)
      k.store(src, k.gep(movingSources(), i64, k.toI64(m)), 8);
  });
  k.ifThen(k.bitAnd(bad, k.cmp(P::eq, j, zero)), [&] {
    sharedAtomic(LLVM::AtomicBinOp::min, flag(FIRST_BAD), k.toI32(i));
    sharedAtomic(LLVM::AtomicBinOp::add, flag(SKIPPED), k.i32(1));
  });
  // The hazard table's keys, for the check after validation's barrier; a
  // chunk's hazards are found by its claims instead.
  // A warp none of whose lanes moves (every warp of a chain) has nothing
  // to compare or claim.
  if (whole) {
    smallTable().clearKeys(tid);
    // The own buffer's row in shared memory before validation's barrier.
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
  } else
    k.ifThen(k.cmp(P::ne,
                   NVVM::VoteSyncOp::create(b, i32, k.i32(-1), moves,
                                            NVVM::VoteSyncKind::ballot),
                   k.i32(0)),
             [&] { claimSlots(i, pos, t, src, moves, runBase, L32); });
}

MovePlan FusedKernel::smallTable() {
  // At most 2 T slots of the local table's 2 C (a small batch has at most
  // T entries).
  return MovePlan(k, k.gep(arena, i8, k.i64(arenaLocalKeysOffset())),
                  k.gep(arena, i8, k.i64(arenaLocalWritersOffset())),
                  llvm::Log2_64(2 * T), n, T,
                  k.getKernel().getName().str() + "_local", i64);
}

void FusedKernel::smallPrefetch() {
  Value lanes = arith::ShLIOp::create(b, one, log2Lanes(k, W));
  // The first thread of the first warp without a request column.
  Value idle =
      k.bitAnd(k.add(k.mul(bs, lanes), k.i64(31)), k.i64(~int64_t(31)));
  // The block's buffers: bid, bid + grid, ... below the buffer count, at
  // most kPrefetchBuffers (none for a block past the buffer count).
  Value B = p["num_buffers"];
  Value mine =
      k.select(k.cmp(P::slt, bid, B),
               div32(k.add(k.sub(B, bid), k.sub(nblocks, one)), nblocks), zero);
  mine = k.select(k.cmp(P::slt, mine, k.i64(kPrefetchBuffers)), mine,
                  k.i64(kPrefetchBuffers));
  Value line = k.i64(kLineBytes);
  auto rowOf = [&](Value q, int64_t column) {
    return k.load(
        i64,
        k.gep(ownRows, i64,
              k.add(k.mul(q, k.i64(KVCACHE_BUFFER_COLUMNS)), k.i64(column))),
        8);
  };
  // Line l of the m-th moving entry's source row, if the row is that long.
  Value sources = movingSources();
  auto prefetchLine = [&](Value base, Value rowBytes, Value m, Value l) {
    Value s = k.load(i64, k.gep(sources, i64, m), 8);
    Value col = k.mul(l, line);
    k.ifThen(k.cmp(P::slt, col, rowBytes), [&] {
      Value rows = LLVM::IntToPtrOp::create(b, k.globalPtrType(), base);
      prefetch(k.gep(rows, i8, k.add(k.mul(s, rowBytes), col)), Cache::L2);
    });
  };
  // Work items spread over the idle threads (a runtime step: a loop that
  // the compiler does not unroll into the small batch's instruction
  // stream); 32-bit divisions, so items below 2^31 only.
  auto overIdle = [&](Value items, llvm::function_ref<void(Value)> body) {
    k.ifThen(
        k.bitAnd(k.bitAnd(k.cmp(P::sge, tid, idle), k.cmp(P::sgt, items, zero)),
                 k.cmp(P::slt, items, k.i64(INT32_MAX))),
        [&] {
          k.forLoop(k.sub(tid, idle), items, k.sub(k.i64(T), idle), body);
        });
  };
  // Only the moving entries (MOVED of them, final behind validation's
  // barrier), whose sources checkSmallBatch listed in the order of their
  // count: a tree's items are its moving rows' lines, not every entry's.
  Value moved = count(MOVED);
  // One buffer (a grid with as many blocks as buffers): (entry, line)
  // pairs of its row, the row read once (one division per pair).
  k.ifThen(k.cmp(P::eq, mine, one), [&] {
    Value base = rowOf(zero, KVCACHE_BUFFER_ADDRESS);
    Value rowBytes = rowOf(zero, KVCACHE_BUFFER_ROW_BYTES);
    Value lines =
        arith::DivUIOp::create(b, k.add(rowBytes, k.i64(kLineBytes - 1)), line);
    overIdle(k.mul(moved, lines), [&](Value x) {
      Value m = div32(x, lines);
      prefetchLine(base, rowBytes, m, k.sub(x, k.mul(m, lines)));
    });
  });
  // Several: (buffer, entry, line) triples over the lines of the longest
  // row (row_vectors slices); a shorter row skips its lines past its end.
  k.ifThen(k.cmp(P::sgt, mine, one), [&] {
    Value lines = arith::DivUIOp::create(
        b, k.add(p["row_vectors"], k.i64(kLineBytes / kVectorBytes - 1)),
        k.i64(kLineBytes / kVectorBytes));
    Value perBuffer = k.mul(moved, lines);
    overIdle(k.mul(mine, perBuffer), [&](Value x) {
      Value q = div32(x, perBuffer);
      Value rest = k.sub(x, k.mul(q, perBuffer));
      Value m = div32(rest, lines);
      prefetchLine(rowOf(q, KVCACHE_BUFFER_ADDRESS),
                   rowOf(q, KVCACHE_BUFFER_ROW_BYTES), m,
                   k.sub(rest, k.mul(m, lines)));
    });
  });
}

void FusedKernel::smallCrossCheck() {
  static_assert(kStageSlots >= 2, "the small table fits the local one");
  Value log2L = log2Lanes(k, W);
  Value L = arith::ShLIOp::create(b, one, log2L);
  Value i = arith::ShRUIOp::create(b, tid, log2L);
  Value j = k.bitAnd(tid, k.sub(L, one));
  Value active = k.bitAnd(k.cmp(P::slt, i, bs), k.cmp(P::slt, j, W));
  Value e = k.add(k.mul(i, W), j);
  SmallVector<Value> ts = k.ifValues(
      active, {i64, i64},
      [&]() -> SmallVector<Value> {
        return {tgtAt(e), srcAt(e)};
      },
      [&]() -> SmallVector<Value> {
        return {minusOne, minusOne};
      });
  Value t = ts[0], s = ts[1];
  Value moves = k.cmp(P::ne, t, s);
  // Writers numbered i * 32 + j (i < block, j < 32): the request is the
  // writer >> 5, and within a request the order is the entries'.
  Value id = k.add(arith::ShLIOp::create(b, i, k.i64(5)), j);
  MovePlan table = smallTable();
  k.ifThen(moves, [&] { table.insert(t, k.toI32(id), flag(UNSAFE)); });
  k.barrier();
  k.ifThen(moves, [&] {
    Value w = table.writerOf(s);
    Value other = k.cmp(P::ne, arith::ShRSIOp::create(b, w, k.i64(5)), i);
    Value hazard =
        k.bitAnd(k.cmp(P::sge, w, zero), k.bitOr(other, k.cmp(P::slt, w, id)));
    k.ifThen(hazard, [&] { k.store(k.i32(1), flag(UNSAFE), 4); });
  });
  k.barrier();
}

void FusedKernel::recordFirstViolation(Value minSlots) {
  Value first = firstBad();
  k.ifCold(
      k.bitAnd(k.cmp(P::eq, tid, zero), k.cmp(P::ne, first, k.i64(INT64_MAX))),
      [&] {
        Verdict v = validate(first, k.i1(true), minSlots,
                             /*write=*/false);
        k.store(v.code, val(CODE), 8);
        k.store(v.entry, val(ENTRY), 8);
        k.store(v.value, val(VALUE), 8);
        k.store(v.bound, val(BOUND), 8);
      });
}
