//===- FusedMove.h - state of the fused move kernel ------------*- C++ -*-===//
//
// The state and the phases of the one kernel that kvcache.move_accepted_tokens
// becomes (FusedMove.cpp: the pattern, the launch contract and the kernel's
// skeleton; FusedPlan.cpp: phase A, validation and the plan; FusedCopy.cpp:
// phase B, the row moves). The phases share the kernel's parameters, its
// shared-memory values and flags and the entry lists through this struct.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_LIB_CONVERSION_KVCACHETOGPU_FUSEDMOVE_H
#define SPECC_LIB_CONVERSION_KVCACHETOGPU_FUSEDMOVE_H

#include "KernelBuilder.h"
#include "MovePlan.h"
#include "Patterns.h"

#include "KVCache/IR/KVCache.h"

namespace mlir::kvcache::fused {

using P = arith::CmpIPredicate;

inline constexpr int64_t kVectorBytes = 16;
/// Register slots per thread when staging: C = block * kStageSlots entries.
inline constexpr int64_t kStageSlots = 4;
/// Buffers, and entries of one request, whose slices a thread loads before
/// it stores them (kBufferGroup * kEntryGroup 16-byte loads in flight).
inline constexpr int64_t kBufferGroup = 2;
/// Buffers of a task when the grid cannot hold a thread per task of
/// kBufferGroup (FusedKernel::movePerRequest).
inline constexpr int64_t kWideBufferGroup = 4;
inline constexpr int64_t kEntryGroup = 4;
/// Launch bound the manifest states (blocks per SM the grid may fill).
inline constexpr int64_t kBlocksPerSM = 2;
/// The shared arena, in bytes per entry of the local capacity C: a local
/// plan's lists (i64 target and source, 16 C) and hazard table (2 C slots
/// of an i64 key and an i32 writer, 24 C); a large plan of at most 2 C
/// entries reuses it for a table of 4 C slots of i32 keys and writers
/// (32 C).
inline constexpr int64_t kArenaBytesPerC = 40;
/// The arena's views, in bytes per entry of C from its start. A local
/// plan: the target list (C i64), the source list (C i64), then its hazard
/// table, the i64 keys and after them the i32 writers. A large plan: its
/// table's i32 keys from the arena's start and after them the i32
/// writers. A small batch's window words and its moving sources lie in the
/// lists' unused words (checkSmallBatch, FusedKernel::movingSources).
inline constexpr int64_t kLocalTableSlotsPerC = 2;
inline constexpr int64_t kLargeTableSlotsPerC = 4;
inline constexpr int64_t kArenaSourcesPerC = 8;
inline constexpr int64_t kArenaLocalKeysPerC = kArenaSourcesPerC + 8;
inline constexpr int64_t kArenaLocalWritersPerC =
    kArenaLocalKeysPerC + 8 * kLocalTableSlotsPerC;
inline constexpr int64_t kArenaLargeWritersPerC = 4 * kLargeTableSlotsPerC;
static_assert(kArenaLocalWritersPerC + 4 * kLocalTableSlotsPerC <=
                      kArenaBytesPerC &&
                  kArenaLargeWritersPerC + 4 * kLargeTableSlotsPerC <=
                      kArenaBytesPerC,
              "both plans' views fit the arena");
/// out_cache_loc words a thread brings into shared memory for a small
/// batch with window targets (the arena's words past a small batch's
/// target list: 8 (C - T) bytes, C = 4 T).
inline constexpr int64_t kWindowWordsPerThread = 3;
static_assert(kWindowWordsPerThread <= kStageSlots - 1,
              "the window fits between the small batch's lists");
/// Nanoseconds a waiting block sleeps between polls of the verdict.
inline constexpr int64_t kPollSleepNs = 64;
/// Bytes of an L1 line (the unit of the planner's prefetch of the lists).
inline constexpr int64_t kLineBytes = 128;
/// Source rows a large batch's idle blocks bring into L2 before the verdict
/// (prefetchSources), in bytes, counted as if half of every request's W
/// entries moved every buffer's widest row: about half of a 50 MB L2, the
/// rest left to the lists, the claim table and the move's stores.
inline constexpr int64_t kIdlePrefetchBytes = int64_t(24) << 20;

/// Buffers whose moving rows a block of a small batch prefetches into L2
/// at most (smallPrefetch): buffers bid, bid + grid, bid + 2 grid, ...,
/// whose table rows (address, row bytes) validation copies into shared
/// memory, one thread of the last warp each.
inline constexpr int64_t kPrefetchBuffers = 32;

/// Shared i64 values of the plan phase: the first violation's details;
/// a large launch's epoch (KVCacheFusedControl), shifted into the high half.
enum { CODE, ENTRY, VALUE, BOUND, EPOCH, NUM_VALUES };
/// Shared i32 flags: hazard across requests, whether the block plans (0)
/// or waits (1), the chunk it claimed, the verdict, whether a large plan's
/// cyclic rows exceed the staging capacity, whether the block's slot
/// claims found a possible hazard (the planner: whether any block's did);
/// and the counts every request adds to (moved entries, skipped requests,
/// the lowest bad request, or INT32_MAX). 32-bit, so that the atomics are
/// native (a 64-bit shared atomic is a compare-and-swap loop, which a warp's
/// requests go through one at a time); the runtime bounds bs * accept_width
/// below 2^31.
enum {
  UNSAFE,
  PLANNER,
  CLAIMED,
  VERDICT,
  CAPACITY,
  SUSPECT,
  MOVED,
  SKIPPED,
  FIRST_BAD,
  NUM_FLAGS
};
/// Verdicts published by a planner block (0 = not yet).
enum { V_PER_REQUEST = 1, V_STAGED = 2, V_NONE = 3 };

/// One parameter of the entry point: its ABI name (KVCACHE_FOREACH_PARAM)
/// and, for tensors, the operand it stands for.
struct Param {
  StringRef name;
  Value operand;
  KernelParam kind;
};

/// The kernel body; one instance per entry point.
struct FusedKernel {
  KernelBuilder &k;
  ImplicitLocOpBuilder &b;
  MoveAcceptedTokensOp op;
  int64_t T, C;
  bool rows;
  Type i8, i32, i64, ptr, vec;
  llvm::StringMap<Value> p;
  Value tid, bid, nblocks, zero, one, minusOne;
  Value bs, W, n, local;
  Value vals, flags;      // shared plan values and flags
  Value ownRows;          // shared table rows for smallPrefetch
  Value arena;            // shared lists and hazard tables
  Value tgtList, srcList; // entry lists (generic pointers)
  Value planWs;           // depth-plan workspace (global)

  FusedKernel(KernelBuilder &k, MoveAcceptedTokensOp op, ArrayRef<Param> params,
              int64_t T, int64_t C, bool rows)
      : k(k), b(k.builder()), op(op), T(T), C(C), rows(rows) {
    for (auto [i, prm] : llvm::enumerate(params))
      p[prm.name] = k.param(i);
    i8 = b.getI8Type();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    ptr = LLVM::LLVMPointerType::get(b.getContext());
    vec = VectorType::get({kVectorBytes / 4}, i32);
  }

  Type eltOf(StringRef name) {
    if (name == "req_pool_indices")
      return elementType(op.getReqPoolIndices());
    if (name == "req_to_token")
      return elementType(op.getReqToToken());
    if (name == "seq_lens")
      return elementType(op.getSeqLens());
    if (name == "num_correct_drafts")
      return elementType(op.getNumCorrectDrafts());
    if (name == "accept_index")
      return elementType(op.getAcceptIndex());
    return elementType(op.getOutCacheLoc());
  }
  /// name[idx] sign-extended to i64, read only when `cond` holds (else 0):
  /// nothing is ever read out of bounds or from unwritten memory.
  Value loadIf(Value cond, StringRef name, Value idx) {
    return k.ifValue(
        cond, i64,
        [&]() -> Value { return k.loadI64(p[name], eltOf(name), idx); },
        [&]() -> Value { return zero; });
  }
  Value generic(Value v) { return LLVM::AddrSpaceCastOp::create(b, ptr, v); }
  /// x / y and x % y for operands below 2^31, as i64 (a 64-bit division is
  /// a called subroutine).
  Value div32(Value x, Value y) {
    return k.toI64(arith::DivUIOp::create(b, k.toI32(x), k.toI32(y)));
  }
  Value rem32(Value x, Value y) {
    return k.toI64(arith::RemUIOp::create(b, k.toI32(x), k.toI32(y)));
  }
  Value val(int64_t f) { return k.gep(vals, i64, k.i64(f)); }
  Value flag(int64_t f) { return k.gep(flags, i32, k.i64(f)); }
  /// A count flag (MOVED, SKIPPED) as i64.
  Value count(int64_t f) { return k.toI64(k.load(i32, flag(f), 4)); }
  /// FIRST_BAD as i64: INT64_MAX when no request was bad.
  Value firstBad() {
    Value f = k.load(i32, flag(FIRST_BAD), 4);
    return k.select(k.cmp(P::eq, f, k.i32(INT32_MAX)), k.i64(INT64_MAX),
                    k.toI64(f));
  }
  /// An i64 word of the workspace's first 64 bytes: a control word
  /// (KVCacheFusedControl) or a total (KVCacheFusedTotal).
  Value word(int64_t f) { return k.gep(p["workspace"], i64, k.i64(f)); }
  /// Relaxed device-scope access to control word `w` (not volatile: a
  /// volatile access is system scope in PTX); ordered by explicit fences.
  Value loadWord(int64_t w) {
    return LLVM::LoadOp::create(b, i64, word(w), /*alignment=*/8,
                                /*isVolatile=*/false, false, false, false,
                                LLVM::AtomicOrdering::monotonic, "device");
  }
  void storeWord(Value v, int64_t w) {
    LLVM::StoreOp::create(b, v, word(w), /*alignment=*/8,
                          /*isVolatile=*/false, false, false,
                          LLVM::AtomicOrdering::monotonic, "device");
  }
  Value globalAtomic(LLVM::AtomicBinOp bin, Value at, Value v) {
    return LLVM::AtomicRMWOp::create(b, bin, at, v,
                                     LLVM::AtomicOrdering::monotonic, "device");
  }
  Value sharedAtomic(LLVM::AtomicBinOp bin, Value at, Value v) {
    return LLVM::AtomicRMWOp::create(b, bin, at, v,
                                     LLVM::AtomicOrdering::monotonic, "block");
  }
  Value tgtAt(Value e) { return k.load(i64, k.gep(tgtList, i64, e), 8); }
  Value srcAt(Value e) { return k.load(i64, k.gep(srcList, i64, e), 8); }

  void build();

  /// A batch past the local capacity, in every block: validate chunks of
  /// requests (2^log2ChunkRequests; block b's first is chunk b, later ones
  /// come from tickets of CLAIM, whose high half is the launch's epoch) with
  /// checkSmallBatch, or checkRequest for W > 32, writing their entries to
  /// the workspace lists, until none is left (each ticket is drawn while the
  /// chunk before it is validated); the block drawing the launch's last
  /// ticket sets CLAIM to the next epoch. Then add the
  /// block's counts to the workspace totals and its progress to PROGRESS. The
  /// block whose addition completes the chunk count plans (PLANNER = 0), with
  /// the totals in its shared values (and zeroes them for the next launch); the
  /// others wait for its verdict. A block waits only for the planner, which is
  /// running and waits for nobody (every chunk was validated by a block that
  /// had claimed it, without waiting): no residency assumption can deadlock.
  void validateChunks();

  /// Blocks of a launch past the local capacity other than the planner:
  /// poll (relaxed, device scope) for the verdict published with their
  /// epoch, or for PROGRESS showing every chunk validated and no block
  /// that moved (V_NONE without the planner's publication); then, for a
  /// verdict that moves, acquire and read the lists like the planner.
  void waitVerdict();

  /// Phase A on the planner: entries, checks, verdict, status record.
  void plan();

  /// Hazards across requests with `table` (MovePlan's insertTargets and
  /// writerOf): a target written twice, or a moving entry's source that
  /// another request writes, sets UNSAFE.
  void crossCheck(MovePlan &table);
  /// The lookups of crossCheck alone, after `table` holds the targets.
  void lookUpSources(MovePlan &table);

  /// On a violation, records it in the report (a sequence lock in memory
  /// the host may read while the kernel runs, see KVCacheReportField) and,
  /// if the host asked for it, traps. System-scope volatile accesses and
  /// fences: the record usually lives in mapped host memory. Executions
  /// without a violation do not touch it (no host round trip).
  void report(Value code, Value entry, Value value, Value bound, Value skipped);

  /// What validating one request found: whether it breaks the contract,
  /// the first violation (code, entry, value, bound), its entries written
  /// and how many of them move.
  struct Verdict {
    Value bad, code, entry, value, bound, written, moves;
  };

  /// Request i's bounds that its columns do not change, for `acc` accepted
  /// tokens (`d`: the window's slots, for window targets): row targets:
  /// its row outside req_to_token (`outsidePool`), its positions outside
  /// the row (`outsideRow`: s < 0 or s + acc > pool_len, without overflow);
  /// window targets: acc past the window (`outsidePool`). And where its
  /// targets start (`rowBase`). validate and checkSmallBatch test these.
  struct RowBounds {
    Value outsidePool, outsideRow, rowBase;
  };
  RowBounds rowBounds(Value i, Value r, Value s, Value acc, Value d);
  /// How windowLength divides: `Wide`, a 64-bit division (a called
  /// subroutine; validate's, where a branch around it would cost the kernel
  /// a stack frame); `Fast`, a 32-bit division when len(out_cache_loc) fits
  /// one, else the 64-bit one (checkSmallBatch); `Narrow`, the 32-bit one,
  /// or 0 past 2^31 slots (no window: prefetchSources' guess skips the
  /// batch).
  enum class Division { Wide, Fast, Narrow };
  /// Window targets: the slots of each request's verify window,
  /// len(out_cache_loc) / bs (bs 0 counts as 1). Every reader of the window
  /// takes its length from here.
  Value windowLength(Division division);

  /// Validates request i (`active`: i < bs); with `write`, writes its
  /// entries at i * W + j (skip entries for the rest, all of them when
  /// the request is bad). Columns go kCols at a time, unrolled, so that
  /// a request's loads are in flight together (two memory round trips for
  /// W <= kCols, not one per column).
  Verdict validate(Value i, Value active, Value minSlots, bool write);

  /// Validates request i and writes its entries (or skip entries); counts
  /// moved entries and skipped requests and keeps the lowest bad request.
  void checkRequest(Value i, Value active, Value minSlots);

  /// A local batch of at most 32 columns whose requests, at L lanes each
  /// (L = the power of two >= W), fit one block: `smallBatch` says whether
  /// this one is; checkSmallBatch validates it with a thread per (request,
  /// column), a request's L lanes in one warp combining their columns by
  /// ballots, and writes the same entries, counts and verdicts as
  /// checkRequest (without the first violation's details, which
  /// recordFirstViolation finds). Short code, without a loop: a small
  /// batch's latency is mostly the fetch of the instructions it runs.
  Value smallBatch();
  /// The requests from `firstRequest` on that fit the block at L lanes
  /// each (those below bs): the whole local batch (`whole`: block 0 also
  /// prefetches the buffer table, every thread clears its hazard-table
  /// keys) or one chunk of a large one.
  /// `afterLoads`, when given, runs once the loads of the first memory
  /// round trip are issued (in every thread: it may hold a barrier).
  void checkSmallBatch(Value minSlots, Value firstRequest, bool whole,
                       llvm::function_ref<void()> afterLoads = nullptr);
  /// Whether a request's columns fit one warp's lanes (1 <= W <= 32): then
  /// small batches and the chunks of large ones are validated a thread per
  /// (request, column).
  Value columnsFitWarp();
  /// log2 of the requests in a chunk of a large batch: block / L when
  /// columnsFitWarp, else block (a thread per request).
  Value log2ChunkRequests();
  /// The chunks of a large batch, of 2^log2Per requests each: what
  /// PROGRESS counts to (validateChunks and the waiters agree through it).
  Value chunkCount(Value log2Per);

  /// Whether a launch past the local capacity claims the slots of its
  /// moving entries during validation (KVCacheClaimWord): its chunks are
  /// validated a thread per request column (W <= 32), its requests fit the
  /// claim word's request field and its slots (below min_slots) 32 bits.
  /// The planner trusts the claims (skips its check) only then.
  Value claimsApply();
  /// In a chunk's checkSmallBatch, every thread (the shuffles need the
  /// whole warp): the entry of request i at position `pos` moving `src`
  /// to `t` (when `moving`) claims `t` as written and `src` as read in the
  /// workspace's claim table, and looks for an earlier entry of its request
  /// that writes `src` among the request's lanes (`runBase`, the run's
  /// first lane, and `L` lanes, i32). Sets SUSPECT on a possible hazard.
  /// Called only by warps with a moving lane (checkSmallBatch).
  void claimSlots(Value i, Value pos, Value t, Value src, Value moving,
                  Value runBase, Value L);
  /// The claim table of this launch's n entries: its first word and log2 of
  /// its word count Q (kvcacheFusedClaimsOffset, kvcacheFusedClaimsCapacity).
  std::pair<Value, Value> claimTable();
  /// In the blocks of a large launch that wait for the verdict, after the
  /// wait (a barrier, then the verdict): when it moves and the launch's
  /// chunks claimed their slots (every claim was made before the verdict,
  /// and nothing reads the table after it), the block zeroes its share of
  /// the table's Q words (a word per thread per grid-wide step) and the
  /// next block's share, so that the planner's share, which it does not
  /// clear (it waits for nobody), is covered by the block before it. The
  /// next launch of the same n then finds each word free at its first
  /// compare-and-swap (which expects zero) instead of reading a stale word
  /// in one round trip and taking it in a second. A launch that stops
  /// before this (bad input, a trap) leaves its words, which the next one
  /// takes in two swaps, as every launch did before. Not after the move:
  /// the test there made every local batch's move end with a jump to
  /// instructions no call had fetched (ab-1957cdd.md).
  void clearClaims();

  /// The arena's views, as byte offsets from its start (kArena*PerC).
  int64_t arenaSourcesOffset() const { return kArenaSourcesPerC * C; }
  int64_t arenaLocalKeysOffset() const { return kArenaLocalKeysPerC * C; }
  int64_t arenaLocalWritersOffset() const { return kArenaLocalWritersPerC * C; }
  int64_t localTableSlots() const { return kLocalTableSlotsPerC * C; }
  int64_t arenaLargeWritersOffset() const { return kArenaLargeWritersPerC * C; }
  int64_t largeTableSlots() const { return kLargeTableSlotsPerC * C; }
  /// A whole small batch's moving sources, i64, in the order in which their
  /// entries took their place in MOVED (checkSmallBatch): the arena's words
  /// past the first T of the source list, which a small batch (at most T
  /// entries) does not use. smallPrefetch walks them.
  Value movingSources() {
    return k.gep(arena, i8, k.i64(arenaSourcesOffset() + 8 * T));
  }
  static_assert(kStageSlots >= 2, "the moving sources fit the source list");

  /// The hazard table of a small batch: 2 * block slots of i64 keys and
  /// i32 writers in the arena (a small batch has at most `block` entries),
  /// cleared by checkSmallBatch before validation's barrier.
  MovePlan smallTable();
  /// A small batch that moves, after validation's barrier, before its
  /// hazard check: the warps with no request column (those past bs * L)
  /// bring the moving sources' rows of the block's buffers (bid, bid +
  /// grid, ..., at most kPrefetchBuffers of them, whose table rows
  /// checkSmallBatch copied into `ownRows`) into L2, a 128-byte line per
  /// instruction, the (buffer, moving entry, line) triples spread over
  /// those warps: only the entries that move (`movingSources`), so that a
  /// tree whose entries mostly stay issues only the lines it will read. So
  /// the blocks together cover every buffer when the grid has at
  /// least 1 / kPrefetchBuffers of the buffer count in blocks (a grid
  /// sized by the work of one request has far fewer blocks than buffers);
  /// buffers past that are left to the move's own loads. The move's row
  /// loads then find the rows in L2 instead of waiting for DRAM after the
  /// verdict. A hint: no byte changes.
  void smallPrefetch();
  /// crossCheck for a small batch, without loops: lane (request i, column
  /// j) reads entry i * W + j from the lists, inserts its target if it
  /// moves (writer i * 32 + j), and after a barrier looks up its source:
  /// unsafe if another request writes it, or an earlier entry of its own.
  void smallCrossCheck();

  /// After every request was checked (behind a barrier): thread 0 finds
  /// the details of the lowest bad request again (one request: cheaper
  /// than carrying every request's details through the rounds).
  void recordFirstViolation(Value minSlots);

  /// Brings the buffer table into L2 (block 0, a line per thread) ahead of
  /// the move, whose first step reads it: issued during validation, its
  /// memory round trip runs under validation's second one and the hazard
  /// check instead of before the row loads.
  void prefetchBufferTable();
  /// A large batch's blocks that validate no chunk (bid >= chunks) wait
  /// for the verdict with 7 of their 8 warps idle, while DRAM reads little
  /// (validation's loads are a few round trips of a few words). Those
  /// warps read the first requests' inputs unvalidated (a warp per entry,
  /// every bound checked so that no address leaves the tensors and the
  /// buffers' first min_slots rows) and prefetch into L2 the rows of each
  /// entry whose source differs from its target, a buffer per lane: the
  /// rows the move's first rounds read (it takes the lowest requests
  /// first), within kIdlePrefetchBytes. A prefetch changes no byte, so a
  /// wrong guess (a bad request, a batch that will not move per request)
  /// costs only bandwidth; a chain prefetches nothing.
  void prefetchSources();
  /// Where a prefetch brings a line.
  enum class Cache { L1, L2 };
  /// `prefetch.L1` or `prefetch.global.L2` of the line holding `at`.
  void prefetch(Value at, Cache level);

  /// Row base pointer, row bytes and whether 16-byte vectors may be used,
  /// for buffer `buf`.
  std::tuple<Value, Value, Value> bufferRow(Value buf);

  /// The 16 bytes at column `col` of row `slot` (bytes past the row's end
  /// read as zero and are never written back).
  Value loadSlice(Value base, Value rowBytes, Value vectorizable, Value slot,
                  Value col);
  void storeSlice(Value base, Value rowBytes, Value vectorizable, Value slot,
                  Value col, Value v);
  Value zeroVec() { return LLVM::ZeroOp::create(b, vec); }

  /// Safe batch: thread (request, group of kBufferGroup buffers, slice),
  /// grid thread x taking the x-th (task, slice) pair and every grid-th
  /// after it (whatever S, so the grid covers each pair once). A thread
  /// moves the request's entries kEntryGroup at a time, in order,
  /// each in all the group's buffers (loads, then stores): a group reads
  /// after the previous one wrote, which the plan proved safe. A group of
  /// which no entry moves branches over its loads and stores.
  void movePerRequest();

  /// Batch with hazards across requests: block per (buffer, column).
  void moveStaged();
};

} // namespace mlir::kvcache::fused

#endif // SPECC_LIB_CONVERSION_KVCACHETOGPU_FUSEDMOVE_H
