//===- Reference.h - plain-loop reference of the KV move --------*- C++ -*-===//
//
// An independent reference of move_accept_tokens_to_target_kvcache, written
// from DESIGN.md section 1 alone and sharing no code with the compiler or the
// runtime: the target slots (a segmented gather over req_to_token), the source
// slots (a compacting gather over accept_index and out_cache_loc), both
// zero-padded to bs * W entries, and the row move done literally as "gather
// every row of every buffer, then scatter", skipping no entry (the padding
// entries copy slot 0 onto slot 0). Indices are held as int64 values whatever
// dtype the tested call uses. Plain C++17, header-only, slow on purpose; the
// executed tests compare the runtime against it bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_TEST_EXECUTED_REFERENCE_H
#define SPECC_TEST_EXECUTED_REFERENCE_H

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace specc {
namespace reference {

/// The index inputs of one call, every value widened to int64. Shapes follow
/// DESIGN.md section 1; 2-D tensors are stored row-major.
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

/// Returns the number of entries of both slot lists, bs * W.
inline int64_t numEntries(const MoveInputs &in) { return in.bs * in.width; }

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
    if (position == -1)
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

/// The whole function: stages 1 to 3 on `buffers`. When given, `targets` and
/// `sources` receive the zero-padded slot lists.
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

/// Returns an empty string when `in` lies inside the contract of DESIGN.md
/// section 1 for buffers of at least `slots` rows (bounds, per-row counts,
/// distinct non-padding targets), else a description of the first broken
/// fact. Used to check that test generators produce real inputs.
inline std::string checkContract(const MoveInputs &in, int64_t slots) {
  auto at = [](const char *what, int64_t index) {
    return std::string(what) + "[" + std::to_string(index) + "]";
  };
  if (static_cast<int64_t>(in.reqPoolIndices.size()) != in.bs ||
      static_cast<int64_t>(in.seqLens.size()) != in.bs ||
      static_cast<int64_t>(in.numCorrectDrafts.size()) != in.bs ||
      static_cast<int64_t>(in.acceptIndex.size()) != numEntries(in) ||
      static_cast<int64_t>(in.reqToToken.size()) != in.maxReqs * in.poolLen)
    return "tensor sizes disagree with bs, W, max_reqs, pool_len";
  int64_t total = 0;
  for (int64_t i = 0; i < in.bs; ++i) {
    if (in.reqPoolIndices[i] < 0 || in.reqPoolIndices[i] >= in.maxReqs)
      return at("req_pool_indices", i) + " out of range";
    if (in.numCorrectDrafts[i] < 0)
      return at("num_correct_drafts", i) + " negative";
    int64_t accepted = in.numCorrectDrafts[i] + 1;
    if (in.seqLens[i] < 0 || in.seqLens[i] + accepted > in.poolLen)
      return at("seq_lens", i) + " + acc exceeds pool_len";
    int64_t count = 0;
    for (int64_t c = 0; c < in.width; ++c) {
      int64_t position = in.acceptIndex[i * in.width + c];
      if (position == -1)
        continue;
      if (position < 0 ||
          position >= static_cast<int64_t>(in.outCacheLoc.size()))
        return at("accept_index", i * in.width + c) + " out of range";
      ++count;
    }
    if (count != accepted)
      return "row " + std::to_string(i) + " of accept_index has " +
             std::to_string(count) + " entries, acc is " +
             std::to_string(accepted);
    total += accepted;
  }
  if (total > numEntries(in))
    return "accepted tokens exceed bs * W";
  std::vector<int64_t> targets = computeTargets(in);
  std::vector<int64_t> sources = computeSources(in);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < numEntries(in); ++i) {
    if (targets[i] < 0 || targets[i] >= slots)
      return at("targets", i) + " outside [0, slots)";
    if (sources[i] < 0 || sources[i] >= slots)
      return at("sources", i) + " outside [0, slots)";
    if (i < total && !seen.insert(targets[i]).second)
      return at("targets", i) + " repeats a target";
  }
  return std::string();
}

} // namespace reference
} // namespace specc

#endif // SPECC_TEST_EXECUTED_REFERENCE_H
