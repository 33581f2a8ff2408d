//===- Reference.h - plain-loop reference of the KV move --------*- C++ -*-===//
//
// An independent reference of move_accept_tokens_to_target_kvcache, sharing
// no code with the compiler or the runtime. Two parts:
//
// * the pure stage reference, for input inside the contract: the target
//   slots (a segmented gather over req_to_token), the source slots (a
//   compacting gather over accept_index and out_cache_loc), both zero-padded
//   to bs * W entries, and the row move done literally as "gather every row
//   of every buffer, then scatter". It reproduces the sglang stage outputs
//   that test/vectors/move_accept_tokens.json records.
//
// * the per-request reference (the semantics of kvcache.move_accepted_tokens
//   in dialect/KVCache/IR/KVCacheOps.td, written from that text): each
//   request is validated on its own, in a fixed order, the first failure
//   wins for that request; a bad request moves none of its rows, every
//   other request moves exactly (gather-then-scatter over all good requests
//   together); the status record (code, entry, value, bound, skipped,
//   moved, path, reserved) is computed whole. Targets come either from
//   req_to_token or from the head of each request's verify window in
//   out_cache_loc.
//
// Indices are held as int64 values whatever dtype the tested call uses.
// Plain C++17, header-only, slow on purpose; the executed tests compare the
// runtime against it bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_TEST_EXECUTED_REFERENCE_H
#define SPECC_TEST_EXECUTED_REFERENCE_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace specc {
namespace reference {

/// The index inputs of one call, every value widened to int64. 2-D tensors
/// are stored row-major.
struct MoveInputs {
  /// Number of requests.
  int64_t bs = 0;
  /// Columns of accept_index (speculative steps + 1).
  int64_t width = 0;
  /// Rows of req_to_token.
  int64_t maxReqs = 0;
  /// Columns of req_to_token.
  int64_t poolLen = 0;
  /// [bs] row of req_to_token owned by each request.
  std::vector<int64_t> reqPoolIndices;
  /// [maxReqs * poolLen] slot of each token position of each request row.
  std::vector<int64_t> reqToToken;
  /// [bs] tokens already committed for each request.
  std::vector<int64_t> seqLens;
  /// [bs] accepted drafts of each request, bonus token excluded.
  std::vector<int64_t> numCorrectDrafts;
  /// [bs * width] positions into outCacheLoc, padded with -1.
  std::vector<int64_t> acceptIndex;
  /// [n] slot where the verify pass wrote each draft token.
  std::vector<int64_t> outCacheLoc;
};

/// One KV buffer: `slots` rows of `rowBytes` bytes, row-major in `bytes`.
struct KVBuffer {
  int64_t rowBytes = 0;
  int64_t slots = 0;
  std::vector<uint8_t> bytes;
};

/// The padding value of accept_index.
constexpr int64_t kSentinel = -1;

/// Returns the number of entries of both slot lists, bs * W.
inline int64_t numEntries(const MoveInputs &in) { return in.bs * in.width; }

//===----------------------------------------------------------------------===//
// The pure stage reference (input inside the contract)
//===----------------------------------------------------------------------===//

/// Stage 1: target slots. tgt[off_i + j] = req_to_token[req_pool_indices[i],
/// seq_lens[i] + j] for j < acc_i, with off_i the exclusive prefix sum of
/// acc; entries past the total are 0. Expects in-contract inputs.
inline std::vector<int64_t> computeTargets(const MoveInputs &in) {
  std::vector<int64_t> targets(numEntries(in), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < in.bs; ++i) {
    int64_t accepted = in.numCorrectDrafts[i] + 1;
    int64_t row = in.reqPoolIndices[i];
    for (int64_t j = 0; j < accepted; ++j)
      targets[offset + j] = in.reqToToken[row * in.poolLen + in.seqLens[i] + j];
    offset += accepted;
  }
  return targets;
}

/// Stage 2: source slots. Walking accept_index flattened row-major, the k-th
/// entry that is not -1, with value a, gives src[k] = out_cache_loc[a];
/// entries past the count are 0. Expects in-contract inputs.
inline std::vector<int64_t> computeSources(const MoveInputs &in) {
  std::vector<int64_t> sources(numEntries(in), 0);
  int64_t k = 0;
  for (int64_t e = 0; e < numEntries(in); ++e) {
    int64_t position = in.acceptIndex[e];
    if (position == kSentinel)
      continue;
    sources[k] = in.outCacheLoc[position];
    ++k;
  }
  return sources;
}

/// Stage 3: for every buffer b and every entry i, row targets[i] of b becomes
/// what row sources[i] of b held before the move began. Done literally: every
/// source row of every buffer is copied out first, then every staged row is
/// written to its target. No entry is skipped.
inline void moveRows(std::vector<KVBuffer> &buffers,
                     const std::vector<int64_t> &targets,
                     const std::vector<int64_t> &sources) {
  int64_t n = static_cast<int64_t>(targets.size());
  for (KVBuffer &buffer : buffers) {
    int64_t rowBytes = buffer.rowBytes;
    std::vector<uint8_t> staged(static_cast<size_t>(n * rowBytes));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t byte = 0; byte < rowBytes; ++byte)
        staged[i * rowBytes + byte] =
            buffer.bytes[sources[i] * rowBytes + byte];
    for (int64_t i = 0; i < n; ++i)
      for (int64_t byte = 0; byte < rowBytes; ++byte)
        buffer.bytes[targets[i] * rowBytes + byte] =
            staged[i * rowBytes + byte];
  }
}

/// The whole function through the stages on `buffers`. When given, `targets`
/// and `sources` receive the zero-padded slot lists.
inline void moveAcceptTokens(const MoveInputs &in,
                             std::vector<KVBuffer> &buffers,
                             std::vector<int64_t> *targets = nullptr,
                             std::vector<int64_t> *sources = nullptr) {
  std::vector<int64_t> tgt = computeTargets(in);
  std::vector<int64_t> src = computeSources(in);
  moveRows(buffers, tgt, src);
  if (targets)
    *targets = tgt;
  if (sources)
    *sources = src;
}

//===----------------------------------------------------------------------===//
// The per-request reference
//===----------------------------------------------------------------------===//

/// Where the target slots come from.
enum class TargetSource {
  ReqToToken, ///< req_to_token[req_pool_indices[i], seq_lens[i] + j]
  Window      ///< out_cache_loc[i * D + j], D = len(out_cache_loc) / bs
};

/// Fields of the status record (as the contract lists them).
enum StatusField {
  kCode = 0,
  kEntry = 1,
  kValue = 2,
  kBound = 3,
  kSkipped = 4,
  kMoved = 5,
  kPath = 6,
  kReserved = 7,
  kStatusFields = 8
};

/// Violation codes (as the contract lists them).
enum ViolationCode {
  kOk = 0,
  kReqPoolIndex = 1,
  kNegativeDrafts = 2,
  kSeqRange = 3,
  kAcceptIndex = 4,
  kAcceptCount = 5,
  kSlot = 7,
  kWindowRange = 9
};

/// Paths of the status record.
enum MovePath { kPathNone = 0, kPathPerRequest = 1, kPathStaged = 2 };

using Status = std::array<int64_t, kStatusFields>;

/// One broken bound of one request (code kOk: none).
struct Violation {
  int64_t code = kOk;
  int64_t entry = 0;
  int64_t value = 0;
  int64_t bound = 0;
};

/// One accepted token of a good request: row `target` becomes old `source`.
struct Pair {
  int64_t target = 0;
  int64_t source = 0;
};

/// What the reference decides for one request.
struct RequestOutcome {
  Violation violation;     ///< code kOk for a good request
  std::vector<Pair> pairs; ///< j < acc_i, only for a good request
};

/// What the reference decides for one call.
struct PerRequestResult {
  /// Window targets with len(out_cache_loc) not a multiple of bs: the call
  /// is refused before anything happens (no status, no move).
  bool invalidArgument = false;
  Status status{};
  std::vector<RequestOutcome> requests;
};

/// a + b for b >= 0, saturated at INT64_MAX.
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b)
    return std::numeric_limits<int64_t>::max();
  return a + b;
}

/// The number of slots every moved slot must lie below: the smallest slot
/// count over all buffers (INT64_MAX without buffers).
inline int64_t minSlots(const std::vector<KVBuffer> &buffers) {
  int64_t slots = std::numeric_limits<int64_t>::max();
  for (const KVBuffer &buffer : buffers)
    slots = std::min(slots, buffer.slots);
  return slots;
}

/// D: out_cache_loc slots per request in window mode (0 when bs = 0).
inline int64_t windowWidth(const MoveInputs &in) {
  int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
  return in.bs > 0 ? n / in.bs : 0;
}

/// Validates request `i` in the contract's order (first failure wins) and,
/// when it is good, returns its (target, source) pairs.
inline RequestOutcome checkRequest(const MoveInputs &in, TargetSource targets,
                                   int64_t slots, int64_t i) {
  RequestOutcome out;
  auto fail = [&](int64_t code, int64_t entry, int64_t value, int64_t bound) {
    out.violation = Violation{code, entry, value, bound};
    out.pairs.clear();
    return out;
  };
  const int64_t width = in.width;
  const int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
  const int64_t ncd = in.numCorrectDrafts[i];

  // (a) the sign of num_correct_drafts.
  if (ncd < 0)
    return fail(kNegativeDrafts, i, ncd, 0);

  // (b) acc = ncd + 1 in [1, W] and equal to the row's non-sentinel count.
  int64_t count = 0;
  for (int64_t c = 0; c < width; ++c)
    if (in.acceptIndex[i * width + c] != kSentinel)
      ++count;
  if (ncd >= width || count != ncd + 1)
    return fail(kAcceptCount, i, count, saturatingAdd(ncd, 1));
  const int64_t acc = ncd + 1;

  // (c) every non-sentinel position inside out_cache_loc.
  std::vector<int64_t> positions;
  for (int64_t c = 0; c < width; ++c) {
    int64_t position = in.acceptIndex[i * width + c];
    if (position == kSentinel)
      continue;
    if (position < 0 || position >= n)
      return fail(kAcceptIndex, i * width + c, position, n);
    positions.push_back(position);
  }

  // (d) where the targets come from.
  std::vector<int64_t> targetSlots;
  if (targets == TargetSource::ReqToToken) {
    int64_t row = in.reqPoolIndices[i];
    if (row < 0 || row >= in.maxReqs)
      return fail(kReqPoolIndex, i, row, in.maxReqs);
    int64_t seq = in.seqLens[i];
    if (seq < 0)
      return fail(kSeqRange, i, seq, in.poolLen);
    if (seq > in.poolLen - acc)
      return fail(kSeqRange, i, saturatingAdd(seq, acc), in.poolLen);
    for (int64_t j = 0; j < acc; ++j)
      targetSlots.push_back(in.reqToToken[row * in.poolLen + seq + j]);
  } else {
    int64_t window = windowWidth(in);
    if (acc > window)
      return fail(kWindowRange, i, acc, window);
    for (int64_t j = 0; j < acc; ++j)
      targetSlots.push_back(in.outCacheLoc[i * window + j]);
  }

  // (e) every moved slot inside every buffer, target before source.
  for (int64_t j = 0; j < acc; ++j) {
    int64_t target = targetSlots[j];
    int64_t source = in.outCacheLoc[positions[j]];
    if (target < 0 || target >= slots)
      return fail(kSlot, i * width + j, target, slots);
    if (source < 0 || source >= slots)
      return fail(kSlot, i * width + j, source, slots);
    out.pairs.push_back(Pair{target, source});
  }
  return out;
}

/// Decides the whole call without touching any buffer: every request's
/// outcome and the status record.
inline PerRequestResult planPerRequest(const MoveInputs &in,
                                       TargetSource targets, int64_t slots) {
  PerRequestResult result;
  if (targets == TargetSource::Window && in.bs > 0 &&
      static_cast<int64_t>(in.outCacheLoc.size()) % in.bs != 0) {
    result.invalidArgument = true;
    return result;
  }
  Status &status = result.status;
  status.fill(0);
  for (int64_t i = 0; i < in.bs; ++i) {
    result.requests.push_back(checkRequest(in, targets, slots, i));
    const Violation &v = result.requests.back().violation;
    if (v.code == kOk)
      continue;
    if (status[kSkipped] == 0) {
      status[kCode] = v.code;
      status[kEntry] = v.entry;
      status[kValue] = v.value;
      status[kBound] = v.bound;
    }
    ++status[kSkipped];
  }

  // Moved entries and, per slot, the requests that move a row into it or
  // out of it.
  std::map<int64_t, std::set<int64_t>> writers, readers;
  for (int64_t i = 0; i < in.bs; ++i)
    for (const Pair &pair : result.requests[i].pairs) {
      if (pair.target == pair.source)
        continue;
      ++status[kMoved];
      writers[pair.target].insert(i);
      readers[pair.source].insert(i);
    }
  auto hasOther = [](const std::map<int64_t, std::set<int64_t>> &owners,
                     int64_t slot, int64_t self) {
    auto it = owners.find(slot);
    if (it == owners.end())
      return false;
    for (int64_t owner : it->second)
      if (owner != self)
        return true;
    return false;
  };
  if (status[kMoved] > 0) {
    status[kPath] = kPathPerRequest;
    for (int64_t i = 0; i < in.bs; ++i)
      for (const Pair &pair : result.requests[i].pairs)
        if (pair.target != pair.source && (hasOther(writers, pair.target, i) ||
                                           hasOther(readers, pair.target, i)))
          status[kPath] = kPathStaged;
  }
  return result;
}

/// Gather-then-scatter of the pairs of every good request, all at once.
inline void applyPlan(const PerRequestResult &plan,
                      std::vector<KVBuffer> &buffers) {
  std::vector<Pair> pairs;
  for (const RequestOutcome &request : plan.requests)
    pairs.insert(pairs.end(), request.pairs.begin(), request.pairs.end());
  for (KVBuffer &buffer : buffers) {
    int64_t rowBytes = buffer.rowBytes;
    std::vector<uint8_t> staged(pairs.size() * rowBytes);
    for (size_t e = 0; e < pairs.size(); ++e)
      std::memcpy(staged.data() + e * rowBytes,
                  buffer.bytes.data() + pairs[e].source * rowBytes, rowBytes);
    for (size_t e = 0; e < pairs.size(); ++e)
      std::memcpy(buffer.bytes.data() + pairs[e].target * rowBytes,
                  staged.data() + e * rowBytes, rowBytes);
  }
}

/// The per-request function on `buffers`: returns the plan (status record
/// included) and moves the rows of every good request.
inline PerRequestResult
moveAcceptTokensPerRequest(const MoveInputs &in, TargetSource targets,
                           std::vector<KVBuffer> &buffers) {
  PerRequestResult plan = planPerRequest(in, targets, minSlots(buffers));
  if (!plan.invalidArgument)
    applyPlan(plan, buffers);
  return plan;
}

/// Returns an empty string when the targets of the good requests of `plan`
/// are distinct (the fact that makes the result exact), else which repeats.
inline std::string checkDistinctTargets(const PerRequestResult &plan) {
  std::set<int64_t> seen;
  for (size_t i = 0; i < plan.requests.size(); ++i)
    for (size_t j = 0; j < plan.requests[i].pairs.size(); ++j)
      if (!seen.insert(plan.requests[i].pairs[j].target).second)
        return "target " + std::to_string(plan.requests[i].pairs[j].target) +
               " of request " + std::to_string(i) + " (accepted token " +
               std::to_string(j) + ") repeats a target";
  return std::string();
}

/// Returns an empty string when `in` lies inside the contract for buffers
/// of at least `slots` rows and targets from `targets` (sizes, every
/// request good, distinct targets), else a description of the first broken
/// fact. Used to check that test generators produce real inputs.
inline std::string
checkContract(const MoveInputs &in, int64_t slots,
              TargetSource targets = TargetSource::ReqToToken) {
  if (static_cast<int64_t>(in.numCorrectDrafts.size()) != in.bs ||
      static_cast<int64_t>(in.acceptIndex.size()) != numEntries(in))
    return "tensor sizes disagree with bs, W";
  if (targets == TargetSource::ReqToToken &&
      (static_cast<int64_t>(in.reqPoolIndices.size()) != in.bs ||
       static_cast<int64_t>(in.seqLens.size()) != in.bs ||
       static_cast<int64_t>(in.reqToToken.size()) != in.maxReqs * in.poolLen))
    return "tensor sizes disagree with bs, max_reqs, pool_len";
  PerRequestResult plan = planPerRequest(in, targets, slots);
  if (plan.invalidArgument)
    return "len(out_cache_loc) is not a multiple of bs";
  if (plan.status[kCode] != kOk)
    return "request " + std::to_string(plan.status[kEntry]) +
           " (or entry) breaks a bound: code " +
           std::to_string(plan.status[kCode]) + ", value " +
           std::to_string(plan.status[kValue]) + ", bound " +
           std::to_string(plan.status[kBound]);
  return checkDistinctTargets(plan);
}

} // namespace reference
} // namespace specc

#endif // SPECC_TEST_EXECUTED_REFERENCE_H
