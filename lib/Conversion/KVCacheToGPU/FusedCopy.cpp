//===- FusedCopy.cpp - phase B of the fused kernel: the row moves ---------===//
//
// Phase B of the kernel FusedMove.cpp builds: a safe batch moves each
// request's entries in order, one thread per (request, buffer group,
// 16-byte slice); a batch with hazards across requests stages every moving
// entry per (buffer, column) block, in depth order for large batches.
//
//===----------------------------------------------------------------------===//

#include "FusedMove.h"

#include "KVCache/KVCacheABI.h"

using namespace mlir;
using namespace mlir::kvcache;
using namespace mlir::kvcache::fused;

void FusedKernel::prefetchBufferTable() {
  Value rowBytes = k.i64(8 * KVCACHE_BUFFER_COLUMNS);
  Value lines = arith::DivUIOp::create(
      b, k.add(k.mul(p["num_buffers"], rowBytes), k.i64(kLineBytes - 1)),
      k.i64(kLineBytes));
  // Block 0 alone: every block of a local batch validates it, and a line
  // prefetched by all of them at once is a hot spot that the validation's
  // own loads queue behind (+0.4 us on a 264-block chain).
  k.ifThen(k.bitAnd(k.cmp(P::eq, bid, zero), k.cmp(P::slt, tid, lines)), [&] {
    prefetch(k.gep(p["buffers"], i8, k.mul(tid, k.i64(kLineBytes))), Cache::L2);
  });
}

void FusedKernel::prefetch(Value at, Cache level) {
  // Inline PTX: LLVM 22's NVPTX backend selects no prefetch intrinsic.
  LLVM::InlineAsmOp::create(
      b, TypeRange{}, ValueRange{at},
      level == Cache::L1 ? "prefetch.L1 [$0];" : "prefetch.global.L2 [$0];",
      "l",
      /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None, nullptr, nullptr);
}

void FusedKernel::prefetchSources() {
  constexpr int64_t kWarp = 32;
  Value chunks = chunkCount(log2ChunkRequests());
  Value warp = arith::ShRUIOp::create(b, tid, k.i64(llvm::Log2_64(kWarp)));
  Value lane = k.bitAnd(tid, k.i64(kWarp - 1));
  Value idle = k.bitAnd(k.cmp(P::sge, bid, chunks), k.cmp(P::sge, warp, one));
  k.ifThen(idle, [&] {
    Value B = p["num_buffers"], nOcl = p["num_out_cache_loc"];
    Value minSlots = p["min_slots"];
    Value warpsPer = k.i64(T / kWarp - 1);
    Value first = k.add(k.mul(k.sub(bid, chunks), warpsPer), k.sub(warp, one));
    Value stride = k.mul(k.sub(nblocks, chunks), warpsPer);
    // Requests within the budget, as if (W + 1) / 2 entries of each moved
    // every buffer's widest row; none when one request alone exceeds it
    // (32-bit divisions: both operands are below 2^31 then).
    Value perRequest =
        k.mul(k.mul(B, k.mul(p["row_vectors"], k.i64(kVectorBytes))),
              arith::ShRUIOp::create(b, k.add(W, one), one));
    Value budget = k.i64(kIdlePrefetchBytes);
    Value fits = k.bitAnd(k.cmp(P::sgt, perRequest, zero),
                          k.cmp(P::sle, perRequest, budget));
    Value requests = k.ifValue(
        fits, i64, [&]() -> Value { return div32(budget, perRequest); },
        [&]() -> Value { return zero; });
    requests = k.select(k.cmp(P::slt, requests, bs), requests, bs);
    Value d = rows ? zero : windowLength(Division::Narrow);
    // A warp per entry: every lane reads the same words (one request each),
    // then the lanes split the buffers.
    k.forLoop(first, k.mul(requests, W), stride, [&](Value e) {
      Value i = div32(e, W);
      Value j = k.sub(e, k.mul(i, W));
      Value ncd =
          k.loadI64(p["num_correct_drafts"], eltOf("num_correct_drafts"), i);
      Value a = k.loadI64(p["accept_index"], eltOf("accept_index"), e);
      Value valid =
          k.bitAnd(k.bitAnd(k.cmp(P::sge, ncd, zero), k.cmp(P::sle, j, ncd)),
                   k.bitNot(k.outside(a, zero, nOcl)));
      Value tIdx;
      if (rows) {
        Value r =
            k.loadI64(p["req_pool_indices"], eltOf("req_pool_indices"), i);
        Value s = k.loadI64(p["seq_lens"], eltOf("seq_lens"), i);
        Value poolLen = p["pool_len"];
        valid = k.bitAnd(valid, k.bitNot(k.outside(r, zero, p["max_reqs"])));
        valid =
            k.bitAnd(valid, k.bitNot(k.outside(s, zero, k.sub(poolLen, j))));
        tIdx = k.add(k.mul(r, poolLen), k.add(s, j));
      } else {
        valid = k.bitAnd(valid, k.cmp(P::slt, j, d));
        tIdx = k.add(k.mul(i, d), j);
      }
      SmallVector<Value> ts = k.ifValues(
          valid, {i64, i64},
          [&]() -> SmallVector<Value> {
            Value t =
                rows ? k.loadI64(p["req_to_token"], eltOf("req_to_token"), tIdx)
                     : k.loadI64(p["out_cache_loc"], eltOf("out_cache_loc"),
                                 tIdx);
            return {t,
                    k.loadI64(p["out_cache_loc"], eltOf("out_cache_loc"), a)};
          },
          [&]() -> SmallVector<Value> {
            return {zero, zero};
          });
      Value src = ts[1];
      Value moves = k.bitAnd(k.bitAnd(valid, k.cmp(P::ne, ts[0], src)),
                             k.bitNot(k.outside(src, zero, minSlots)));
      k.ifThen(moves, [&] {
        k.forLoop(lane, B, k.i64(kWarp), [&](Value buf) {
          auto [base, rowBytes, vectorizable] = bufferRow(buf);
          (void)vectorizable;
          // Every line the row touches: from the line holding its first
          // byte to the one holding its last (a row whose size is not a
          // multiple of a line may start anywhere in one).
          Value at = k.add(LLVM::PtrToIntOp::create(b, i64, base),
                           k.mul(src, rowBytes));
          Value firstLine = k.bitAnd(at, k.i64(~(kLineBytes - 1)));
          k.forLoop(firstLine, k.add(at, rowBytes), k.i64(kLineBytes),
                    [&](Value line) {
                      prefetch(
                          LLVM::IntToPtrOp::create(b, k.globalPtrType(), line),
                          Cache::L2);
                    });
        });
      });
    });
  });
}

std::tuple<Value, Value, Value> FusedKernel::bufferRow(Value buf) {
  Value table = p["buffers"];
  Value row = k.mul(buf, k.i64(KVCACHE_BUFFER_COLUMNS));
  Value base = k.loadI64(table, i64, k.add(row, k.i64(KVCACHE_BUFFER_ADDRESS)));
  Value rowBytes =
      k.loadI64(table, i64, k.add(row, k.i64(KVCACHE_BUFFER_ROW_BYTES)));
  Value vectorizable = k.cmp(
      P::eq, k.bitAnd(k.bitOr(base, rowBytes), k.i64(kVectorBytes - 1)), zero);
  return {LLVM::IntToPtrOp::create(b, k.globalPtrType(), base), rowBytes,
          vectorizable};
}

Value FusedKernel::loadSlice(Value base, Value rowBytes, Value vectorizable,
                             Value slot, Value col) {
  Value at = k.gep(base, i8, k.add(k.mul(slot, rowBytes), col));
  return k.ifValue(
      vectorizable, vec,
      [&]() -> Value { return k.load(vec, at, kVectorBytes); },
      [&]() -> Value {
        // Byte by byte, packed into i32 words: a slice stays in four
        // registers whichever path it takes.
        Value v = zeroVec();
        for (int64_t w = 0; w < kVectorBytes / 4; ++w) {
          Value word = k.i32(0);
          for (int64_t q = 0; q < 4; ++q) {
            int64_t off = 4 * w + q;
            Value in = k.cmp(P::slt, k.add(col, k.i64(off)), rowBytes);
            Value byte = k.ifValue(
                in, i32,
                [&]() -> Value {
                  return arith::ExtUIOp::create(
                      b, i32, k.load(i8, k.gep(at, i8, k.i64(off)), 1));
                },
                [&]() -> Value { return k.i32(0); });
            word = arith::OrIOp::create(
                b, word, arith::ShLIOp::create(b, byte, k.i32(8 * q)));
          }
          v = LLVM::InsertElementOp::create(b, v, word, k.i32(w));
        }
        return v;
      });
}

void FusedKernel::storeSlice(Value base, Value rowBytes, Value vectorizable,
                             Value slot, Value col, Value v) {
  Value at = k.gep(base, i8, k.add(k.mul(slot, rowBytes), col));
  k.ifThenElse(
      vectorizable, [&] { k.store(v, at, kVectorBytes); },
      [&] {
        for (int64_t w = 0; w < kVectorBytes / 4; ++w) {
          Value word = LLVM::ExtractElementOp::create(b, v, k.i32(w));
          for (int64_t q = 0; q < 4; ++q) {
            int64_t off = 4 * w + q;
            k.ifThen(k.cmp(P::slt, k.add(col, k.i64(off)), rowBytes), [&] {
              Value byte = arith::TruncIOp::create(
                  b, i8, arith::ShRUIOp::create(b, word, k.i32(8 * q)));
              k.store(byte, k.gep(at, i8, k.i64(off)), 1);
            });
          }
        }
      });
}

void FusedKernel::movePerRequest() {
  Value S = p["row_vectors"], B = p["num_buffers"];
  Value tT = k.i64(T);
  // Entries g .. g + kEntryGroup - 1 of the request whose entries start at
  // `first`: their targets, sources and whether each moves (past W: -1, -1,
  // not moving).
  struct EntryGroup {
    SmallVector<Value> tg, sg, mv;
  };
  auto entryGroup = [&](Value first, Value g) {
    EntryGroup out;
    for (int64_t q = 0; q < kEntryGroup; ++q) {
      Value j = k.add(g, k.i64(q));
      SmallVector<Value> ts = k.ifValues(
          k.cmp(P::slt, j, W), {i64, i64},
          [&]() -> SmallVector<Value> {
            return {tgtAt(k.add(first, j)), srcAt(k.add(first, j))};
          },
          [&]() -> SmallVector<Value> {
            return {minusOne, minusOne};
          });
      out.tg.push_back(ts[0]);
      out.sg.push_back(ts[1]);
      out.mv.push_back(k.cmp(P::ne, ts[0], ts[1]));
    }
    return out;
  };
  // Groups of `width` buffers, the last one possibly short.
  auto groupsOf = [&](int64_t width) -> Value {
    return arith::DivUIOp::create(b, k.add(B, k.i64(width - 1)), k.i64(width));
  };
  // Tasks of `width` buffers (kBufferGroup, the grid's unit, or wider), a
  // (task, slice) pair per grid thread: thread x moves slice x % S of task
  // x / S (stride: the grid), so the grid the runtime sizes by such pairs
  // covers every one of them at once whatever S. (A block taking T / S whole
  // tasks left T % S threads idle, and for a row size that does not divide the
  // block, such as 576-byte rows of 36 slices, 7 tasks on 252 threads, sent the
  // tasks past the grid's last block to a second round.)
  auto moveInGroups = [&](int64_t width) {
    Value G = k.i64(width);
    Value groups = groupsOf(width);
    Value tasks = k.mul(bs, groups);
    // Slice c of `task`.
    auto moveTask = [&](Value task, Value c) {
      // The runtime bounds bs * buffers below 2^31.
      Value i = div32(task, groups);
      Value group = rem32(task, groups);
      SmallVector<std::tuple<Value, Value, Value>> rowsOf;
      for (int64_t q = 0; q < width; ++q) {
        Value buf = k.add(k.mul(group, G), k.i64(q));
        Value in = k.cmp(P::slt, buf, B);
        // Absent buffers read as zero-byte rows at address 0.
        SmallVector<Value> row = k.ifValues(
            in, {k.globalPtrType(), i64, b.getI1Type()},
            [&]() -> SmallVector<Value> {
              auto [base, rowBytes, vectorizable] = bufferRow(buf);
              return {base, rowBytes, vectorizable};
            },
            [&]() -> SmallVector<Value> {
              return {LLVM::ZeroOp::create(b, k.globalPtrType()), zero,
                      k.i1(true)};
            });
        rowsOf.push_back({row[0], row[1], row[2]});
      }
      Value allVector = k.i1(true);
      for (auto [base, rowBytes, vectorizable] : rowsOf)
        allVector = k.bitAnd(allVector, vectorizable);
      Value first = k.mul(i, W);
      Value col = k.mul(c, k.i64(kVectorBytes));
      // The byte path for a group with a row not 16-byte aligned
      // (rare: laid out of line). The common case, every row of the
      // group aligned: the request's entries kEntryGroup at a time,
      // each in every buffer of the group, all loads before any store
      // (one memory round trip per group of entries, not per entry).
      k.ifCold(k.bitNot(allVector), [&] {
        // Buffer by buffer (the table row read again: the path is
        // rare and out of line), kEntryGroup entries at a time, a
        // group's loads before its stores, as on the common path:
        // a request moved without the hazard check (a batch of one
        // request, its entries in one group) relies on it.
        k.forLoop(zero, G, one, [&](Value q) {
          Value buf = k.add(k.mul(group, G), q);
          k.ifThen(k.cmp(P::slt, buf, B), [&] {
            auto [base, rowBytes, vectorizable] = bufferRow(buf);
            k.ifThen(k.cmp(P::slt, col, rowBytes), [&] {
              k.forLoop(zero, W, k.i64(kEntryGroup), [&](Value g) {
                EntryGroup eg = entryGroup(first, g);
                SmallVector<Value> data;
                for (int64_t e = 0; e < kEntryGroup; ++e)
                  data.push_back(k.ifValue(
                      eg.mv[e], vec,
                      [&]() -> Value {
                        return loadSlice(base, rowBytes, vectorizable, eg.sg[e],
                                         col);
                      },
                      [&]() -> Value { return zeroVec(); }));
                for (int64_t e = 0; e < kEntryGroup; ++e)
                  k.ifThen(eg.mv[e], [&] {
                    storeSlice(base, rowBytes, vectorizable, eg.tg[e], col,
                               data[e]);
                  });
              });
            });
          });
        });
      });
      k.ifThen(allVector, [&] {
        k.forLoop(zero, W, k.i64(kEntryGroup), [&](Value g) {
          EntryGroup eg = entryGroup(first, g);
          SmallVector<Value> &tg = eg.tg, &sg = eg.sg, &mv = eg.mv;
          // A group in which nothing moves (a tree's root, a
          // request that accepted its drafts in order) skips its
          // loads and stores: one branch, taken after the list
          // reads that the loads' addresses wait for anyway.
          Value any = mv[0];
          for (int64_t q = 1; q < kEntryGroup; ++q)
            any = k.bitOr(any, mv[q]);
          k.ifThen(any, [&] {
            SmallVector<Value> data;
            for (int64_t q = 0; q < kEntryGroup; ++q)
              for (auto [base, rowBytes, vectorizable] : rowsOf) {
                Value here = k.bitAnd(mv[q], k.cmp(P::slt, col, rowBytes));
                Value at = k.gep(base, i8, k.add(k.mul(sg[q], rowBytes), col));
                data.push_back(k.ifValue(
                    here, vec,
                    [&]() -> Value { return k.load(vec, at, kVectorBytes); },
                    [&]() -> Value { return zeroVec(); }));
              }
            for (int64_t q = 0; q < kEntryGroup; ++q)
              for (auto [r, row] : llvm::enumerate(rowsOf)) {
                auto [base, rowBytes, vectorizable] = row;
                Value here = k.bitAnd(mv[q], k.cmp(P::slt, col, rowBytes));
                k.ifThen(here, [&] {
                  k.store(data[q * rowsOf.size() + r],
                          k.gep(base, i8, k.add(k.mul(tg[q], rowBytes), col)),
                          kVectorBytes);
                });
              }
          });
        });
      });
    };
    // Pair x = task * S + slice, x from bid * T + tid in steps of the
    // grid: the first pair and the step are divided once (both below the
    // grid's thread count), then each step adds the step's quotient and
    // remainder, carrying one slice row into the task.
    Value stride = k.mul(nblocks, tT);
    Value x0 = k.add(k.mul(bid, tT), tid);
    Value task0 = div32(x0, S), dq = div32(stride, S);
    Value c0 = k.sub(x0, k.mul(task0, S)), dr = k.sub(stride, k.mul(dq, S));
    k.forLoopCarried(
        x0, k.mul(tasks, S), stride, ValueRange{task0, c0},
        [&](Value, ValueRange at) -> SmallVector<Value> {
          Value task = at[0], c = at[1];
          moveTask(task, c);
          Value next = k.add(c, dr);
          Value carry = k.cmp(P::sge, next, S);
          return {k.add(k.add(task, dq), arith::ExtUIOp::create(b, i64, carry)),
                  k.select(carry, k.sub(next, S), next)};
        });
  };
  // The grid has a thread per (task, slice) pair of kBufferGroup buffers,
  // as many as fit at once. When they do not all fit (the threads loop
  // over pairs anyway), tasks of kWideBufferGroup buffers keep more loads
  // in flight per thread and halve the rounds; when they do, the narrow
  // tasks spread the bytes over every block of the grid.
  Value narrowThreads = k.mul(k.mul(bs, groupsOf(kBufferGroup)), S);
  Value wide = k.cmp(P::sgt, narrowThreads, k.mul(nblocks, tT));
  k.ifThenElse(
      wide, [&] { moveInGroups(kWideBufferGroup); },
      [&] { moveInGroups(kBufferGroup); });
}

void FusedKernel::moveStaged() {
  Value S = p["row_vectors"], B = p["num_buffers"];
  Value units = k.mul(B, S);
  Value planList = k.gep(planWs, i8, k.i64(kvcacheMoveListOffset()));
  // Local plans stage every entry in one chunk (n <= C); large ones the
  // overlapping entries in depth order, then the rest directly.
  Value staged = k.ifValue(
      local, i64, [&]() -> Value { return n; },
      [&]() -> Value { return k.loadI64(planWs, i32, k.i64(1)); });
  Value direct = k.ifValue(
      local, i64, [&]() -> Value { return zero; },
      [&]() -> Value {
        return k.sub(k.loadI64(planWs, i32, k.i64(0)), staged);
      });
  auto entryAt = [&](Value pos) {
    return k.ifValue(
        local, i64, [&]() -> Value { return pos; },
        [&]() -> Value { return k.loadI64(planList, i32, pos); });
  };
  k.forLoop(bid, units, nblocks, [&](Value u) {
    Value buf = arith::DivUIOp::create(b, u, S);
    Value c = arith::RemUIOp::create(b, u, S);
    auto [base, rowBytes, vectorizable] = bufferRow(buf);
    Value col = k.mul(c, k.i64(kVectorBytes));
    k.ifThen(k.cmp(P::slt, col, rowBytes), [&] {
      k.forLoop(zero, staged, k.i64(C), [&](Value chunk) {
        SmallVector<Value> tg, mv, data;
        for (int64_t q = 0; q < kStageSlots; ++q) {
          Value pos = k.add(chunk, k.add(k.i64(q * T), tid));
          Value in = k.cmp(P::slt, pos, staged);
          SmallVector<Value> ts = k.ifValues(
              in, {i64, i64},
              [&]() -> SmallVector<Value> {
                Value e = entryAt(pos);
                return {tgtAt(e), srcAt(e)};
              },
              [&]() -> SmallVector<Value> {
                return {minusOne, minusOne};
              });
          Value moves = k.cmp(P::ne, ts[0], ts[1]);
          tg.push_back(ts[0]);
          mv.push_back(moves);
          data.push_back(k.ifValue(
              moves, vec,
              [&]() -> Value {
                return loadSlice(base, rowBytes, vectorizable, ts[1], col);
              },
              [&]() -> Value { return zeroVec(); }));
        }
        k.barrier();
        for (int64_t q = 0; q < kStageSlots; ++q)
          k.ifThen(mv[q], [&] {
            storeSlice(base, rowBytes, vectorizable, tg[q], col, data[q]);
          });
        k.barrier();
      });
      k.forLoop(tid, direct, k.i64(T), [&](Value pos) {
        Value e = k.loadI64(planList, i32, k.sub(k.sub(n, one), pos));
        Value t = tgtAt(e), s = srcAt(e);
        k.ifThen(k.cmp(P::ne, t, s), [&] {
          Value v = loadSlice(base, rowBytes, vectorizable, s, col);
          storeSlice(base, rowBytes, vectorizable, t, col, v);
        });
      });
    });
  });
}
