//===- CpuMoveTest.cpp - executed tests of the CPU KV move ----------------===//
//
// Runs move_accept_tokens_to_target_kvcache through the runtime's C API on a
// SPECC_DEVICE_CPU mover (host pointers) and checks the results bit for bit:
// the exact cases of test/vectors/move_accept_tokens.json (path in argv[1]),
// deterministic randomized cases against the plain-loop reference of
// Reference.h, checked-mode rejections of bad input (status code, untouched
// buffers) and scratch growth past the size a mover was created for. Prints
// one line per case and ends with "N passed, M failed"; exits non-zero when
// any case failed.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "KVCache/KVCacheABI.h"
#include "specc_runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

using specc::reference::KVBuffer;
using specc::reference::MoveInputs;

namespace {

//===----------------------------------------------------------------------===//
// Bookkeeping
//===----------------------------------------------------------------------===//

/// Counts and prints case outcomes, one line per case.
class Results {
public:
  /// Records case `name`: passed when `failure` is empty.
  void record(const std::string &name, const std::string &failure,
              double seconds, const std::string &note = std::string()) {
    if (failure.empty()) {
      ++passed;
      std::printf("PASS %-52s (%.3f s)%s%s\n", name.c_str(), seconds,
                  note.empty() ? "" : " ", note.c_str());
    } else {
      ++failed;
      std::printf("FAIL %-52s %s\n", name.c_str(), failure.c_str());
    }
    std::fflush(stdout);
  }

  /// Runs `body` (which returns a failure message, empty on success) as case
  /// `name`.
  void run(const std::string &name, const std::function<std::string()> &body) {
    auto start = std::chrono::steady_clock::now();
    std::string failure = body();
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    record(name, failure, elapsed.count());
  }

  int passed = 0;
  int failed = 0;
};

/// Returns the runtime's last error message, or a placeholder.
std::string lastError() {
  const char *message = specc_last_error();
  return message && *message ? message : "(no message)";
}

/// Returns "rc N: message" for a failed runtime call.
std::string describeRc(const char *call, int rc) {
  return std::string(call) + " returned " + std::to_string(rc) + ": " +
         lastError();
}

//===----------------------------------------------------------------------===//
// Deterministic randomness
//===----------------------------------------------------------------------===//

/// Random numbers that are the same on every platform: std::mt19937_64's
/// output sequence is fixed by the standard; the standard distributions are
/// not, so values are reduced by modulo here.
class Random {
public:
  explicit Random(uint64_t seed) : engine(seed) {}

  uint64_t next() { return engine(); }

  /// Returns a value in [lo, hi] (inclusive).
  int64_t uniform(int64_t lo, int64_t hi) {
    uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(next() % span);
  }

  /// Shuffles `values` (Fisher-Yates).
  void shuffle(std::vector<int64_t> &values) {
    for (int64_t i = static_cast<int64_t>(values.size()) - 1; i > 0; --i)
      std::swap(values[i], values[uniform(0, i)]);
  }

  /// Returns `count` distinct values of [lo, hi), ascending.
  std::vector<int64_t> sortedSample(int64_t lo, int64_t hi, int64_t count) {
    std::vector<int64_t> all;
    for (int64_t v = lo; v < hi; ++v)
      all.push_back(v);
    for (int64_t i = 0; i < count; ++i)
      std::swap(all[i], all[uniform(i, static_cast<int64_t>(all.size()) - 1)]);
    all.resize(count);
    std::sort(all.begin(), all.end());
    return all;
  }

  /// Fills `bytes` with random bytes.
  void fill(std::vector<uint8_t> &bytes) {
    for (size_t i = 0; i < bytes.size(); i += 8) {
      uint64_t word = next();
      for (size_t k = 0; k < 8 && i + k < bytes.size(); ++k)
        bytes[i + k] = static_cast<uint8_t>(word >> (8 * k));
    }
  }

private:
  std::mt19937_64 engine;
};

//===----------------------------------------------------------------------===//
// Calling the runtime
//===----------------------------------------------------------------------===//

/// Element types of the index tensors of one call; req_to_token is always
/// int32 and seq_lens shares the dtype of req_pool_indices (specc_runtime.h).
struct Dtypes {
  int32_t reqPoolIndices = SPECC_INT64;
  int32_t numCorrectDrafts = SPECC_INT64;
  int32_t acceptIndex = SPECC_INT64;
  int32_t outCacheLoc = SPECC_INT64;
};

/// All index tensors in one dtype.
Dtypes uniformDtypes(int32_t dtype) {
  return Dtypes{dtype, dtype, dtype, dtype};
}

const char *dtypeName(int32_t dtype) {
  return dtype == SPECC_INT32 ? "32" : "64";
}

/// Storage of one index tensor in the dtype a call uses. The data pointer is
/// never null, even for an empty tensor.
class IndexTensor {
public:
  IndexTensor(const std::vector<int64_t> &values, int32_t dtype, int32_t rank,
              int64_t rows, int64_t columns) {
    if (dtype == SPECC_INT32) {
      int32Values.assign(values.begin(), values.end());
      int32Values.push_back(0);
      tensor.data = int32Values.data();
    } else {
      int64Values = values;
      int64Values.push_back(0);
      tensor.data = int64Values.data();
    }
    tensor.dtype = dtype;
    tensor.rank = rank;
    tensor.shape[0] = rows;
    tensor.shape[1] = rank == 2 ? columns : 0;
  }

  specc_tensor tensor{};

private:
  std::vector<int32_t> int32Values;
  std::vector<int64_t> int64Values;
};

/// Registers `buffers` with `mover` and runs one move on `in`. Returns the
/// status of specc_move_accept_tokens, or of specc_mover_set_buffers when
/// that failed (then `*setFailed` is true).
int callMove(specc_mover *mover, const MoveInputs &in, const Dtypes &dtypes,
             std::vector<KVBuffer> &buffers, int sync, bool *setFailed) {
  *setFailed = false;
  std::vector<specc_kv_buffer> table;
  for (KVBuffer &buffer : buffers)
    table.push_back({buffer.bytes.data(), buffer.rowBytes, buffer.slots});
  int rc = specc_mover_set_buffers(mover, table.data(),
                                   static_cast<int64_t>(table.size()));
  if (rc != SPECC_SUCCESS) {
    *setFailed = true;
    return rc;
  }
  IndexTensor reqPoolIndices(in.reqPoolIndices, dtypes.reqPoolIndices, 1, in.bs,
                             0);
  IndexTensor reqToToken(in.reqToToken, SPECC_INT32, 2, in.maxReqs, in.poolLen);
  IndexTensor seqLens(in.seqLens, dtypes.reqPoolIndices, 1, in.bs, 0);
  IndexTensor numCorrectDrafts(in.numCorrectDrafts, dtypes.numCorrectDrafts, 1,
                               in.bs, 0);
  IndexTensor acceptIndex(in.acceptIndex, dtypes.acceptIndex, 2, in.bs,
                          in.width);
  IndexTensor outCacheLoc(in.outCacheLoc, dtypes.outCacheLoc, 1,
                          static_cast<int64_t>(in.outCacheLoc.size()), 0);
  specc_move_args args;
  args.req_pool_indices = reqPoolIndices.tensor;
  args.req_to_token = reqToToken.tensor;
  args.seq_lens = seqLens.tensor;
  args.num_correct_drafts = numCorrectDrafts.tensor;
  args.accept_index = acceptIndex.tensor;
  args.out_cache_loc = outCacheLoc.tensor;
  return specc_move_accept_tokens(mover, &args, /*stream=*/nullptr, sync);
}

/// Compares two slot lists; returns a message about the first difference.
std::string compareSlots(const char *what, const std::vector<int64_t> &got,
                         const std::vector<int64_t> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return std::string(what) + "[" + std::to_string(i) + "] is " +
             std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
  return std::string();
}

/// Compares every byte of every buffer; returns a message about the first
/// differing row (saying whether it is a target row) and the number of
/// differing rows.
std::string compareBuffers(const std::vector<KVBuffer> &got,
                           const std::vector<KVBuffer> &want,
                           const std::vector<int64_t> &targets) {
  for (size_t b = 0; b < want.size(); ++b) {
    if (got[b].bytes == want[b].bytes)
      continue;
    int64_t rowBytes = want[b].rowBytes;
    int64_t firstSlot = -1, rows = 0;
    for (int64_t s = 0; s < want[b].slots; ++s) {
      if (std::equal(want[b].bytes.begin() + s * rowBytes,
                     want[b].bytes.begin() + (s + 1) * rowBytes,
                     got[b].bytes.begin() + s * rowBytes))
        continue;
      if (firstSlot < 0)
        firstSlot = s;
      ++rows;
    }
    std::string role = targets.empty() ? "" : " (a row outside the targets)";
    for (size_t i = 0; i < targets.size(); ++i)
      if (targets[i] == firstSlot) {
        role = " (the target of entry " + std::to_string(i) + ")";
        break;
      }
    return "buffer " + std::to_string(b) + " (row " + std::to_string(rowBytes) +
           " B): row " + std::to_string(firstSlot) + role + " differs; " +
           std::to_string(rows) + " rows differ in this buffer";
  }
  return std::string();
}

/// Runs `in` on `before` and checks a successful call whose results must be
/// `expectedAfter` and the slot lists `expectedTargets`/`expectedSources`.
std::string runValid(specc_mover *mover, const MoveInputs &in,
                     const Dtypes &dtypes, const std::vector<KVBuffer> &before,
                     const std::vector<KVBuffer> &expectedAfter,
                     const std::vector<int64_t> &expectedTargets,
                     const std::vector<int64_t> &expectedSources, int sync) {
  std::vector<KVBuffer> buffers = before;
  bool setFailed = false;
  int rc = callMove(mover, in, dtypes, buffers, sync, &setFailed);
  if (rc != SPECC_SUCCESS)
    return describeRc(
        setFailed ? "specc_mover_set_buffers" : "specc_move_accept_tokens", rc);
  int64_t status[4] = {-1, -1, -1, -1};
  rc = specc_mover_read_status(mover, nullptr, status);
  if (rc != SPECC_SUCCESS)
    return describeRc("specc_mover_read_status", rc);
  if (status[KVCACHE_STATUS_CODE] != KVCACHE_OK)
    return "status code " + std::to_string(status[KVCACHE_STATUS_CODE]) +
           " after a valid call";
  int64_t n = specc::reference::numEntries(in);
  std::vector<int64_t> targets(std::max<int64_t>(n, 1), -7);
  std::vector<int64_t> sources(std::max<int64_t>(n, 1), -7);
  rc =
      specc_mover_read_slots(mover, nullptr, targets.data(), sources.data(), n);
  if (rc != SPECC_SUCCESS)
    return describeRc("specc_mover_read_slots", rc);
  std::string failure = compareSlots("targets", targets, expectedTargets);
  if (failure.empty())
    failure = compareSlots("sources", sources, expectedSources);
  if (failure.empty())
    failure = compareBuffers(buffers, expectedAfter, expectedTargets);
  return failure;
}

/// Runs `in` through the reference and then through the runtime, expecting
/// identical results.
std::string runAgainstReference(specc_mover *mover, const MoveInputs &in,
                                const Dtypes &dtypes,
                                const std::vector<KVBuffer> &before, int sync) {
  std::vector<KVBuffer> after = before;
  std::vector<int64_t> targets, sources;
  specc::reference::moveAcceptTokens(in, after, &targets, &sources);
  return runValid(mover, in, dtypes, before, after, targets, sources, sync);
}

/// Marks a status field whose value a case does not pin down.
constexpr int64_t kAny = INT64_MIN;

/// The status record a rejected call must leave.
struct ExpectedStatus {
  std::vector<int64_t> codes; ///< any of these codes
  int64_t entry = kAny;
  int64_t value = kAny;
  int64_t bound = kAny;
};

/// Runs bad input `in` on `before` and checks the rejection: with sync = 1
/// the call returns SPECC_ERROR_INPUT (with sync = 0 also SPECC_SUCCESS is
/// accepted), the status record matches `expected` and no buffer changed.
std::string runRejected(specc_mover *mover, const MoveInputs &in,
                        const Dtypes &dtypes,
                        const std::vector<KVBuffer> &before,
                        const ExpectedStatus &expected, int sync,
                        std::string *note) {
  std::vector<KVBuffer> buffers = before;
  bool setFailed = false;
  int rc = callMove(mover, in, dtypes, buffers, sync, &setFailed);
  if (setFailed)
    return describeRc("specc_mover_set_buffers", rc);
  if (rc != SPECC_ERROR_INPUT && !(sync == 0 && rc == SPECC_SUCCESS))
    return "specc_move_accept_tokens returned " + std::to_string(rc) +
           ", expected SPECC_ERROR_INPUT (" +
           std::to_string(SPECC_ERROR_INPUT) + "): " + lastError();
  if (rc == SPECC_ERROR_INPUT && lastError() == "(no message)")
    return "SPECC_ERROR_INPUT without a message from specc_last_error";
  int64_t status[4] = {0, 0, 0, 0};
  int readRc = specc_mover_read_status(mover, nullptr, status);
  if (readRc != SPECC_SUCCESS)
    return describeRc("specc_mover_read_status", readRc);
  char text[256] = {0};
  const char *message = specc_status_message(status, text, sizeof(text));
  *note = message ? message : "";
  std::string got = "status {" + std::to_string(status[0]) + ", " +
                    std::to_string(status[1]) + ", " +
                    std::to_string(status[2]) + ", " +
                    std::to_string(status[3]) + "}";
  if (std::find(expected.codes.begin(), expected.codes.end(),
                status[KVCACHE_STATUS_CODE]) == expected.codes.end())
    return got + ": wrong code";
  const int64_t want[4] = {0, expected.entry, expected.value, expected.bound};
  const char *field[4] = {"code", "entry", "value", "bound"};
  for (int f = 1; f < 4; ++f)
    if (want[f] != kAny && status[f] != want[f])
      return got + ": " + field[f] + " should be " + std::to_string(want[f]);
  std::string failure = compareBuffers(buffers, before, {});
  if (!failure.empty())
    return "a rejected call changed a buffer: " + failure;
  return std::string();
}

//===----------------------------------------------------------------------===//
// The JSON vectors
//===----------------------------------------------------------------------===//

std::vector<int64_t> toInts(const nlohmann::json &array) {
  std::vector<int64_t> values;
  for (const nlohmann::json &v : array)
    values.push_back(v.get<int64_t>());
  return values;
}

/// Flattens a 2-D array row-major; `*columns` gets the row length.
std::vector<int64_t> toInts2D(const nlohmann::json &array, int64_t *columns) {
  std::vector<int64_t> values;
  *columns = array.empty() ? 0 : static_cast<int64_t>(array[0].size());
  for (const nlohmann::json &row : array)
    for (const nlohmann::json &v : row)
      values.push_back(v.get<int64_t>());
  return values;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// Decodes buffers given as one hex string per row.
std::vector<KVBuffer> toBuffers(const nlohmann::json &buffers,
                                const nlohmann::json &rowBytes) {
  std::vector<KVBuffer> result;
  for (size_t b = 0; b < buffers.size(); ++b) {
    KVBuffer buffer;
    buffer.rowBytes = rowBytes[b].get<int64_t>();
    buffer.slots = static_cast<int64_t>(buffers[b].size());
    for (const nlohmann::json &row : buffers[b]) {
      std::string hex = row.get<std::string>();
      if (static_cast<int64_t>(hex.size()) != 2 * buffer.rowBytes)
        throw std::runtime_error("a row's hex string has the wrong length");
      for (size_t i = 0; i < hex.size(); i += 2) {
        int high = hexDigit(hex[i]), low = hexDigit(hex[i + 1]);
        if (high < 0 || low < 0)
          throw std::runtime_error("bad hex digit in a row");
        buffer.bytes.push_back(static_cast<uint8_t>(high * 16 + low));
      }
    }
    result.push_back(std::move(buffer));
  }
  return result;
}

/// One case of move_accept_tokens.json.
struct VectorCase {
  std::string name;
  MoveInputs inputs;
  Dtypes dtypes;
  std::vector<KVBuffer> before, after;
  std::vector<int64_t> targets, sources;
};

VectorCase parseVectorCase(const nlohmann::json &c) {
  VectorCase vc;
  vc.name = c.at("name").get<std::string>();
  MoveInputs &in = vc.inputs;
  in.bs = c.at("bs").get<int64_t>();
  in.width = c.at("W").get<int64_t>();
  in.reqPoolIndices = toInts(c.at("req_pool_indices"));
  in.reqToToken = toInts2D(c.at("req_to_token"), &in.poolLen);
  in.maxReqs = static_cast<int64_t>(c.at("req_to_token").size());
  in.seqLens = toInts(c.at("seq_lens"));
  in.numCorrectDrafts = toInts(c.at("num_correct_drafts"));
  int64_t columns = 0;
  in.acceptIndex = toInts2D(c.at("accept_index"), &columns);
  if (in.bs > 0 && columns != in.width)
    throw std::runtime_error("accept_index rows are not W long");
  in.outCacheLoc = toInts(c.at("out_cache_loc"));
  std::string dtype = c.at("index_dtype").get<std::string>();
  if (dtype != "int32" && dtype != "int64")
    throw std::runtime_error("unknown index_dtype " + dtype);
  vc.dtypes = uniformDtypes(dtype == "int32" ? SPECC_INT32 : SPECC_INT64);
  vc.before = toBuffers(c.at("buffers_before"), c.at("row_bytes"));
  vc.after = toBuffers(c.at("expected_buffers_after"), c.at("row_bytes"));
  vc.targets = toInts(c.at("expected_tgt"));
  vc.sources = toInts(c.at("expected_src"));
  int64_t slots = c.at("slots").get<int64_t>();
  for (const KVBuffer &buffer : vc.before)
    if (buffer.slots != slots)
      throw std::runtime_error("a buffer does not hold `slots` rows");
  if (static_cast<int64_t>(vc.targets.size()) != in.bs * in.width ||
      static_cast<int64_t>(vc.sources.size()) != in.bs * in.width)
    throw std::runtime_error("expected_tgt/src are not bs * W long");
  return vc;
}

void runVectorCases(Results &results, specc_mover *mover, const char *path) {
  std::vector<VectorCase> cases;
  std::string loadFailure;
  try {
    std::ifstream file(path);
    if (!file)
      throw std::runtime_error(std::string("cannot open ") + path);
    nlohmann::json document = nlohmann::json::parse(file);
    for (const nlohmann::json &c : document.at("cases"))
      cases.push_back(parseVectorCase(c));
    if (cases.empty())
      throw std::runtime_error("no cases");
  } catch (const std::exception &e) {
    loadFailure = e.what();
  }
  results.record("vectors:load", loadFailure, 0);
  if (!loadFailure.empty())
    return;

  // The reference must reproduce the vectors: both come from DESIGN.md alone.
  results.run("vectors:reference-agrees", [&]() -> std::string {
    for (const VectorCase &vc : cases) {
      std::vector<KVBuffer> after = vc.before;
      std::vector<int64_t> targets, sources;
      specc::reference::moveAcceptTokens(vc.inputs, after, &targets, &sources);
      std::string failure = compareSlots("targets", targets, vc.targets);
      if (failure.empty())
        failure = compareSlots("sources", sources, vc.sources);
      if (failure.empty())
        failure = compareBuffers(after, vc.after, vc.targets);
      if (!failure.empty())
        return vc.name + ": Reference.h disagrees with the vectors: " + failure;
    }
    return std::string();
  });

  int index = 0;
  for (const VectorCase &vc : cases) {
    int sync = index++ % 2 == 0 ? 1 : 0;
    results.run("vectors:" + vc.name, [&] {
      return runValid(mover, vc.inputs, vc.dtypes, vc.before, vc.after,
                      vc.targets, vc.sources, sync);
    });
  }
}

//===----------------------------------------------------------------------===//
// Randomized cases
//===----------------------------------------------------------------------===//

/// How draft slots relate to the target slots.
enum class Shape {
  Chain,  ///< topk = 1: accepted nodes 0..acc-1, so every source is its target
  Tree,   ///< topk > 1: accepted nodes 0 < n1 < n2 ... of D draft nodes
  Crossed ///< out_cache_loc rewritten with other entries' targets (cycles,
          ///< cross-request and repeated sources); still in the contract
};

/// Where the non -1 entries of a row of accept_index sit.
enum class Layout {
  Packed,          ///< columns 0..acc-1, as sglang writes them
  HolesAfterFirst, ///< column 0 and acc-1 random later columns
  HolesAnywhere    ///< acc random columns
};

/// A randomized case: how to build its inputs and buffers.
struct CaseSpec {
  std::string name;
  uint64_t seed = 1;
  int64_t bs = 4;
  int64_t width = 4;
  int64_t numDraft = 4; ///< D: out_cache_loc entries per request
  int64_t slots = 256;  ///< slots every moved slot lies below
  int64_t poolLen = 0;  ///< 0: D + 40
  Shape shape = Shape::Tree;
  Layout layout = Layout::Packed;
  std::vector<int64_t> accepted; ///< fixed acc per request, else random
  std::vector<int64_t> rowBytes{16, 16};
  std::vector<int64_t> bufferSlots; ///< per buffer; empty: `slots` each
  Dtypes dtypes;
  bool lastSeqAtEnd = false; ///< request 0 ends exactly at pool_len
  int sync = 1;
  /// Applied to the inputs after they are built (garbage outside reads).
  std::function<void(MoveInputs &, Random &)> mutate;
};

/// Builds the inputs of `spec` the way sglang lays them out: each request
/// owns a row of req_to_token whose positions seq_len .. seq_len + D hold
/// fresh distinct slots; out_cache_loc of request r is exactly those slots;
/// the accepted path nodes index into them.
MoveInputs buildInputs(const CaseSpec &spec, Random &random) {
  MoveInputs in;
  in.bs = spec.bs;
  in.width = spec.width;
  int64_t draft = spec.numDraft;
  in.maxReqs = spec.bs + 3;
  in.poolLen = spec.poolLen ? spec.poolLen : draft + 40;
  in.reqToToken.resize(in.maxReqs * in.poolLen);
  for (int64_t &slot : in.reqToToken)
    slot = random.uniform(1, spec.slots - 1);

  std::vector<int64_t> rows;
  for (int64_t r = 0; r < in.maxReqs; ++r)
    rows.push_back(r);
  random.shuffle(rows);
  std::vector<int64_t> fresh;
  for (int64_t s = 1; s < spec.slots; ++s)
    fresh.push_back(s);
  random.shuffle(fresh);

  in.outCacheLoc.resize(spec.bs * draft);
  in.acceptIndex.assign(spec.bs * spec.width, -1);
  for (int64_t r = 0; r < spec.bs; ++r) {
    int64_t row = rows[r];
    int64_t seq = (spec.lastSeqAtEnd && r == 0)
                      ? in.poolLen - draft
                      : random.uniform(0, in.poolLen - draft);
    in.reqPoolIndices.push_back(row);
    in.seqLens.push_back(seq);
    for (int64_t n = 0; n < draft; ++n) {
      int64_t slot = fresh[r * draft + n];
      in.reqToToken[row * in.poolLen + seq + n] = slot;
      in.outCacheLoc[r * draft + n] = slot;
    }

    int64_t most = std::min(spec.width, draft);
    int64_t accepted;
    if (!spec.accepted.empty()) {
      accepted = spec.accepted[r];
    } else {
      int64_t pick = random.uniform(0, 3);
      accepted = pick == 0 ? 1 : pick == 1 ? most : random.uniform(1, most);
    }
    in.numCorrectDrafts.push_back(accepted - 1);

    std::vector<int64_t> nodes;
    if (spec.shape == Shape::Chain) {
      for (int64_t n = 0; n < accepted; ++n)
        nodes.push_back(n);
    } else {
      nodes = random.sortedSample(1, draft, accepted - 1);
      nodes.insert(nodes.begin(), 0);
    }
    std::vector<int64_t> columns;
    if (spec.layout == Layout::Packed) {
      for (int64_t c = 0; c < accepted; ++c)
        columns.push_back(c);
    } else if (spec.layout == Layout::HolesAfterFirst) {
      columns = random.sortedSample(1, spec.width, accepted - 1);
      columns.insert(columns.begin(), 0);
    } else {
      columns = random.sortedSample(0, spec.width, accepted);
    }
    for (int64_t k = 0; k < accepted; ++k)
      in.acceptIndex[r * spec.width + columns[k]] = r * draft + nodes[k];
  }

  if (spec.shape == Shape::Crossed) {
    std::vector<int64_t> targets = specc::reference::computeTargets(in);
    int64_t total = 0;
    for (int64_t d : in.numCorrectDrafts)
      total += d + 1;
    for (int64_t &slot : in.outCacheLoc)
      slot = random.uniform(0, 3) != 0 && total > 0
                 ? targets[random.uniform(0, total - 1)]
                 : random.uniform(0, spec.slots - 1);
  }
  if (spec.mutate)
    spec.mutate(in, random);
  return in;
}

/// Buffers of `spec` filled with random bytes.
std::vector<KVBuffer> buildBuffers(const CaseSpec &spec, Random &random) {
  std::vector<KVBuffer> buffers;
  for (size_t b = 0; b < spec.rowBytes.size(); ++b) {
    KVBuffer buffer;
    buffer.rowBytes = spec.rowBytes[b];
    buffer.slots = spec.bufferSlots.empty() ? spec.slots : spec.bufferSlots[b];
    buffer.bytes.resize(buffer.slots * buffer.rowBytes);
    random.fill(buffer.bytes);
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}

/// Builds `spec` and checks that the generator stayed inside the contract.
std::string buildCase(const CaseSpec &spec, MoveInputs *in,
                      std::vector<KVBuffer> *buffers) {
  Random random(spec.seed);
  *in = buildInputs(spec, random);
  *buffers = buildBuffers(spec, random);
  int64_t slots = spec.slots;
  for (const KVBuffer &buffer : *buffers)
    slots = std::min(slots, buffer.slots);
  std::string broken = specc::reference::checkContract(*in, slots);
  if (!broken.empty())
    return "test generator bug, input outside the contract: " + broken;
  return std::string();
}

/// Garbage in every position of req_to_token the function does not read and
/// in every out_cache_loc entry no accept_index entry names: a checked call
/// must not reject it.
void fillUnreadWithGarbage(MoveInputs &in, Random &random) {
  std::vector<bool> read(in.reqToToken.size(), false);
  for (int64_t i = 0; i < in.bs; ++i)
    for (int64_t j = 0; j <= in.numCorrectDrafts[i]; ++j)
      read[in.reqPoolIndices[i] * in.poolLen + in.seqLens[i] + j] = true;
  for (size_t p = 0; p < read.size(); ++p)
    if (!read[p])
      in.reqToToken[p] = random.uniform(0, 1) ? -7 : 1 << 30;
  std::vector<bool> named(in.outCacheLoc.size(), false);
  for (int64_t position : in.acceptIndex)
    if (position >= 0)
      named[position] = true;
  for (size_t p = 0; p < named.size(); ++p)
    if (!named[p])
      in.outCacheLoc[p] = random.uniform(0, 1) ? -9 : int64_t(1) << 40;
}

std::vector<CaseSpec> randomizedSpecs() {
  std::vector<CaseSpec> specs;
  auto add = [&](CaseSpec spec) {
    spec.seed = 1000 + specs.size();
    spec.sync = specs.size() % 2 == 0 ? 1 : 0;
    specs.push_back(std::move(spec));
  };
  CaseSpec s;

  // Chains: every target is its own source.
  s = CaseSpec();
  s.name = "chain_bs4_w4";
  s.bs = 4, s.width = 4, s.numDraft = 4, s.shape = Shape::Chain;
  add(s);
  s.name = "chain_bs16_w6_holes_int32";
  s.bs = 16, s.width = 6, s.numDraft = 6, s.layout = Layout::HolesAfterFirst;
  s.dtypes = uniformDtypes(SPECC_INT32);
  add(s);
  s = CaseSpec();
  s.name = "chain_all_accepted_ends_at_pool_len";
  s.bs = 3, s.width = 4, s.numDraft = 4, s.shape = Shape::Chain;
  s.accepted = {4, 4, 4}, s.lastSeqAtEnd = true;
  add(s);

  // Trees: sources are other entries' targets.
  s = CaseSpec();
  s.name = "tree_bs8_w4_d8";
  s.bs = 8, s.width = 4, s.numDraft = 8;
  add(s);
  s.name = "tree_bs16_w6_d16_holes";
  s.bs = 16, s.width = 6, s.numDraft = 16, s.layout = Layout::HolesAfterFirst;
  add(s);
  s.name = "tree_bs32_w9_d25_holes_anywhere";
  s.bs = 32, s.width = 9, s.numDraft = 25, s.slots = 1024;
  s.layout = Layout::HolesAnywhere;
  add(s);
  s.name = "tree_drafts_end_at_pool_len";
  s.bs = 5, s.width = 5, s.numDraft = 9, s.slots = 256;
  s.accepted = {5, 5, 5, 5, 5}, s.lastSeqAtEnd = true;
  s.layout = Layout::Packed;
  add(s);
  s = CaseSpec();
  s.name = "crossed_bs64_w5_d10_cycles";
  s.bs = 64, s.width = 5, s.numDraft = 10, s.slots = 1024;
  s.shape = Shape::Crossed, s.layout = Layout::HolesAfterFirst;
  add(s);
  s.name = "crossed_bs6_w3_d3_dense";
  s.bs = 6, s.width = 3, s.numDraft = 3, s.slots = 24;
  add(s);

  // W = 1 and bs = 0.
  s = CaseSpec();
  s.name = "w1_chain_bs50";
  s.bs = 50, s.width = 1, s.numDraft = 1, s.shape = Shape::Chain;
  add(s);
  s.name = "w1_tree_bs50_d4";
  s.bs = 50, s.width = 1, s.numDraft = 4, s.shape = Shape::Tree;
  add(s);
  s.name = "w1_crossed_bs50_d2";
  s.bs = 50, s.width = 1, s.numDraft = 2, s.shape = Shape::Crossed;
  add(s);
  s = CaseSpec();
  s.name = "bs0_w4_int64";
  s.bs = 0, s.width = 4, s.numDraft = 8;
  add(s);
  s.name = "bs0_w4_int32";
  s.dtypes = uniformDtypes(SPECC_INT32);
  add(s);
  s.name = "bs0_w1";
  s.width = 1;
  add(s);

  // Accepted lengths around and past 1024 in one request.
  s = CaseSpec();
  s.name = "long_bs1_w3000_acc2500";
  s.bs = 1, s.width = 3000, s.numDraft = 4096, s.slots = 8192;
  s.accepted = {2500}, s.layout = Layout::HolesAfterFirst;
  s.rowBytes = {8, 12};
  add(s);
  s.name = "long_bs1_w3000_acc3000_chain";
  s.shape = Shape::Chain, s.numDraft = 3000, s.accepted = {3000};
  s.layout = Layout::Packed;
  add(s);
  s = CaseSpec();
  s.name = "long_bs3_w1100_acc1023_1024_1025";
  s.bs = 3, s.width = 1100, s.numDraft = 1200, s.slots = 4096;
  s.accepted = {1023, 1024, 1025}, s.layout = Layout::HolesAnywhere;
  s.rowBytes = {4, 20};
  s.dtypes = uniformDtypes(SPECC_INT32);
  add(s);
  s = CaseSpec();
  s.name = "long_mixed_bs6_w1500";
  s.bs = 6, s.width = 1500, s.numDraft = 1600, s.slots = 10000;
  s.accepted = {1, 1400, 2, 1500, 1, 7}, s.layout = Layout::HolesAfterFirst;
  s.rowBytes = {16, 8};
  add(s);

  // Every dtype combination (seq_lens follows req_pool_indices).
  for (int mask = 0; mask < 16; ++mask) {
    s = CaseSpec();
    s.dtypes.reqPoolIndices = mask & 1 ? SPECC_INT32 : SPECC_INT64;
    s.dtypes.numCorrectDrafts = mask & 2 ? SPECC_INT32 : SPECC_INT64;
    s.dtypes.acceptIndex = mask & 4 ? SPECC_INT32 : SPECC_INT64;
    s.dtypes.outCacheLoc = mask & 8 ? SPECC_INT32 : SPECC_INT64;
    s.name = std::string("dtypes_rpi") + dtypeName(s.dtypes.reqPoolIndices) +
             "_ncd" + dtypeName(s.dtypes.numCorrectDrafts) + "_ai" +
             dtypeName(s.dtypes.acceptIndex) + "_ocl" +
             dtypeName(s.dtypes.outCacheLoc);
    s.bs = 12, s.width = 5, s.numDraft = 12, s.slots = 512;
    s.layout = Layout::HolesAfterFirst;
    s.rowBytes = {12, 20};
    add(s);
  }

  // Row sizes and buffer counts.
  s = CaseSpec();
  s.name = "rows_12_20_33";
  s.bs = 10, s.width = 4, s.numDraft = 8, s.rowBytes = {12, 20, 33};
  add(s);
  s.name = "rows_1_3_7_65_127";
  s.rowBytes = {1, 3, 7, 65, 127};
  add(s);
  s.name = "k192_v128_4_layers";
  s.rowBytes = {192, 128, 192, 128, 192, 128, 192, 128};
  add(s);
  s.name = "fp8_rows_64";
  s.rowBytes = {64, 64};
  s.layout = Layout::HolesAfterFirst;
  add(s);
  s.name = "mla_6_layers_1152";
  s.rowBytes = std::vector<int64_t>(6, 1152), s.slots = 512;
  add(s);
  s.name = "rows_4096_2048";
  s.rowBytes = {4096, 2048}, s.slots = 256;
  add(s);
  s = CaseSpec();
  s.name = "many_buffers_64";
  s.bs = 24, s.width = 5, s.numDraft = 12, s.slots = 1024;
  s.layout = Layout::HolesAfterFirst;
  {
    Random sizes(77);
    s.rowBytes.clear();
    for (int b = 0; b < 64; ++b)
      s.rowBytes.push_back(sizes.uniform(1, 256));
  }
  add(s);
  s = CaseSpec();
  s.name = "buffers_of_different_slot_counts";
  s.bs = 8, s.width = 4, s.numDraft = 8, s.slots = 100;
  s.rowBytes = {16, 24, 8}, s.bufferSlots = {100, 300, 129};
  add(s);

  // Larger batch; garbage outside what the function reads.
  s = CaseSpec();
  s.name = "tree_bs512_w4_d8";
  s.bs = 512, s.width = 4, s.numDraft = 8, s.slots = 8192;
  s.rowBytes = {64, 64};
  add(s);
  s = CaseSpec();
  s.name = "garbage_in_unread_positions";
  s.bs = 10, s.width = 5, s.numDraft = 12, s.slots = 512;
  s.layout = Layout::HolesAfterFirst;
  s.mutate = fillUnreadWithGarbage;
  add(s);
  return specs;
}

void runRandomizedCases(Results &results, specc_mover *mover) {
  for (const CaseSpec &spec : randomizedSpecs()) {
    results.run("random:" + spec.name, [&] {
      MoveInputs in;
      std::vector<KVBuffer> buffers;
      std::string failure = buildCase(spec, &in, &buffers);
      if (!failure.empty())
        return failure;
      return runAgainstReference(mover, in, spec.dtypes, buffers, spec.sync);
    });
  }

  // Two calls on the same registered buffers: the second starts from the
  // first's result.
  results.run("random:two_calls_same_buffers", [&]() -> std::string {
    CaseSpec spec;
    spec.bs = 12, spec.width = 5, spec.numDraft = 12, spec.slots = 512;
    spec.layout = Layout::HolesAfterFirst;
    MoveInputs first, second;
    std::vector<KVBuffer> buffers, unused;
    spec.seed = 91;
    std::string failure = buildCase(spec, &first, &buffers);
    spec.seed = 92, spec.shape = Shape::Crossed;
    if (failure.empty())
      failure = buildCase(spec, &second, &unused);
    if (!failure.empty())
      return failure;
    std::vector<KVBuffer> expected = buffers;
    specc::reference::moveAcceptTokens(first, expected);
    specc::reference::moveAcceptTokens(second, expected);
    Dtypes dtypes;
    bool setFailed = false;
    for (const MoveInputs *in : {&first, &second}) {
      int rc = callMove(mover, *in, dtypes, buffers, 1, &setFailed);
      if (rc != SPECC_SUCCESS)
        return describeRc(setFailed ? "specc_mover_set_buffers"
                                    : "specc_move_accept_tokens",
                          rc);
    }
    return compareBuffers(buffers, expected,
                          specc::reference::computeTargets(second));
  });
}

//===----------------------------------------------------------------------===//
// Checked-mode rejections
//===----------------------------------------------------------------------===//

/// The valid base input of the rejection cases: bs = 6, W = 5, D = 12 tree
/// with holes, acc = {3, 1, 5, 2, 4, 2}.
CaseSpec rejectionBase(int32_t dtype) {
  CaseSpec spec;
  spec.seed = 4242;
  spec.bs = 6, spec.width = 5, spec.numDraft = 12, spec.slots = 256;
  spec.layout = Layout::HolesAfterFirst;
  spec.accepted = {3, 1, 5, 2, 4, 2};
  spec.rowBytes = {16, 24};
  spec.dtypes = uniformDtypes(dtype);
  return spec;
}

/// Entry of the slot lists where request `r`'s accepted tokens start.
int64_t offsetOf(const MoveInputs &in, int64_t r) {
  int64_t offset = 0;
  for (int64_t i = 0; i < r; ++i)
    offset += in.numCorrectDrafts[i] + 1;
  return offset;
}

/// Flat accept_index entry of the k-th non -1 column of row `r`.
int64_t acceptedEntry(const MoveInputs &in, int64_t r, int64_t k) {
  for (int64_t c = 0; c < in.width; ++c)
    if (in.acceptIndex[r * in.width + c] != -1 && k-- == 0)
      return r * in.width + c;
  return -1;
}

/// A rejection case: a mutation of the base input and the status it must
/// produce.
struct Rejection {
  std::string name;
  std::function<ExpectedStatus(MoveInputs &)> corrupt;
  int64_t bufferSlotsOfSecond = 0; ///< when set, buffer 1 has fewer slots
};

std::vector<Rejection> rejections() {
  std::vector<Rejection> list;
  list.push_back({"req_pool_index_past_end", [](MoveInputs &in) {
                    in.reqPoolIndices[2] = in.maxReqs;
                    return ExpectedStatus{{KVCACHE_ERR_REQ_POOL_INDEX},
                                          2,
                                          in.maxReqs,
                                          in.maxReqs};
                  }});
  list.push_back(
      {"req_pool_index_negative", [](MoveInputs &in) {
         in.reqPoolIndices[0] = -1;
         return ExpectedStatus{{KVCACHE_ERR_REQ_POOL_INDEX}, 0, -1, in.maxReqs};
       }});
  list.push_back(
      {"num_correct_drafts_negative", [](MoveInputs &in) {
         // acc = 0 and an empty row: only the sign is wrong.
         in.numCorrectDrafts[3] = -1;
         for (int64_t c = 0; c < in.width; ++c)
           in.acceptIndex[3 * in.width + c] = -1;
         return ExpectedStatus{{KVCACHE_ERR_NEGATIVE_DRAFTS}, 3, -1, 0};
       }});
  list.push_back({"seq_lens_plus_acc_past_pool_len", [](MoveInputs &in) {
                    in.seqLens[1] = in.poolLen - 1 + 1; // acc_1 = 1
                    return ExpectedStatus{
                        {KVCACHE_ERR_SEQ_RANGE}, 1, in.poolLen + 1, in.poolLen};
                  }});
  list.push_back(
      {"seq_lens_plus_acc_past_pool_len_long_row", [](MoveInputs &in) {
         in.seqLens[2] = in.poolLen - 5 + 2; // acc_2 = 5
         return ExpectedStatus{
             {KVCACHE_ERR_SEQ_RANGE}, 2, in.poolLen + 2, in.poolLen};
       }});
  list.push_back({"seq_lens_negative", [](MoveInputs &in) {
                    in.seqLens[4] = -1;
                    return ExpectedStatus{{KVCACHE_ERR_SEQ_RANGE}, 4};
                  }});
  list.push_back(
      {"accept_index_past_out_cache_loc", [](MoveInputs &in) {
         int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
         int64_t entry = acceptedEntry(in, 2, 1);
         in.acceptIndex[entry] = n;
         return ExpectedStatus{{KVCACHE_ERR_ACCEPT_INDEX}, entry, n, n};
       }});
  list.push_back(
      {"accept_index_far_past_out_cache_loc", [](MoveInputs &in) {
         int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
         int64_t entry = acceptedEntry(in, 5, 1);
         in.acceptIndex[entry] = 1000000;
         return ExpectedStatus{{KVCACHE_ERR_ACCEPT_INDEX}, entry, 1000000, n};
       }});
  list.push_back(
      {"accept_index_below_sentinel", [](MoveInputs &in) {
         int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
         int64_t entry = acceptedEntry(in, 0, 0);
         in.acceptIndex[entry] = -2;
         return ExpectedStatus{{KVCACHE_ERR_ACCEPT_INDEX}, entry, -2, n};
       }});
  list.push_back({"accept_row_count_short", [](MoveInputs &in) {
                    in.acceptIndex[acceptedEntry(in, 4, 3)] = -1; // acc_4 = 4
                    return ExpectedStatus{{KVCACHE_ERR_ACCEPT_COUNT}, 4, 3, 4};
                  }});
  list.push_back({"accept_row_count_long", [](MoveInputs &in) {
                    // acc_1 = 1: fill one more column of row 1.
                    for (int64_t c = 1; c < in.width; ++c)
                      if (in.acceptIndex[1 * in.width + c] == -1) {
                        in.acceptIndex[1 * in.width + c] = 12 + 5;
                        break;
                      }
                    return ExpectedStatus{{KVCACHE_ERR_ACCEPT_COUNT}, 1, 2, 1};
                  }});
  list.push_back({"target_slot_past_end", [](MoveInputs &in) {
                    int64_t row = in.reqPoolIndices[2];
                    in.reqToToken[row * in.poolLen + in.seqLens[2] + 3] = 256;
                    return ExpectedStatus{
                        {KVCACHE_ERR_SLOT}, offsetOf(in, 2) + 3, 256, 256};
                  }});
  list.push_back(
      {"target_slot_negative", [](MoveInputs &in) {
         int64_t row = in.reqPoolIndices[5];
         in.reqToToken[row * in.poolLen + in.seqLens[5]] = -3;
         return ExpectedStatus{{KVCACHE_ERR_SLOT}, offsetOf(in, 5), -3, 256};
       }});
  list.push_back({"source_slot_past_end", [](MoveInputs &in) {
                    int64_t position = in.acceptIndex[acceptedEntry(in, 3, 1)];
                    in.outCacheLoc[position] = 256 + 7;
                    return ExpectedStatus{
                        {KVCACHE_ERR_SLOT}, offsetOf(in, 3) + 1, 256 + 7, 256};
                  }});
  // Buffer 1 holds 200 slots only; every valid slot of the base is below
  // 200 because the base is generated with 200 slots, then slot 230 (a row
  // of buffer 0, not of buffer 1) becomes a target.
  list.push_back({"target_slot_past_smaller_buffer",
                  [](MoveInputs &in) {
                    int64_t row = in.reqPoolIndices[0];
                    in.reqToToken[row * in.poolLen + in.seqLens[0] + 1] = 230;
                    return ExpectedStatus{
                        {KVCACHE_ERR_SLOT}, offsetOf(in, 0) + 1, 230, 200};
                  },
                  200});
  list.push_back({"accepted_tokens_past_bs_times_w", [](MoveInputs &in) {
                    // Every request claims W + 1 tokens and fills its row.
                    for (int64_t r = 0; r < in.bs; ++r) {
                      in.numCorrectDrafts[r] = in.width;
                      for (int64_t c = 0; c < in.width; ++c)
                        in.acceptIndex[r * in.width + c] = r * 12 + c;
                    }
                    return ExpectedStatus{{KVCACHE_ERR_ACCEPT_COUNT,
                                           KVCACHE_ERR_TARGETS_OVERFLOW}};
                  }});
  return list;
}

void runRejectionCases(Results &results, specc_mover *mover) {
  for (int32_t dtype : {SPECC_INT64, SPECC_INT32}) {
    for (const Rejection &rejection : rejections()) {
      std::string name = "reject:" + rejection.name + "_int" + dtypeName(dtype);
      std::string note;
      auto start = std::chrono::steady_clock::now();
      std::string failure = [&]() -> std::string {
        CaseSpec spec = rejectionBase(dtype);
        if (rejection.bufferSlotsOfSecond) {
          spec.slots = rejection.bufferSlotsOfSecond;
          spec.bufferSlots = {256, rejection.bufferSlotsOfSecond};
        }
        MoveInputs in;
        std::vector<KVBuffer> buffers;
        std::string broken = buildCase(spec, &in, &buffers);
        if (!broken.empty())
          return broken;
        ExpectedStatus expected = rejection.corrupt(in);
        return runRejected(mover, in, spec.dtypes, buffers, expected, 1, &note);
      }();
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      results.record(name, failure, elapsed.count(), "[" + note + "]");
    }
  }

  // An asynchronous call on bad input: whatever it returns, the status record
  // holds the violation and no buffer changed.
  results.run("reject:source_slot_past_end_sync0", [&]() -> std::string {
    CaseSpec spec = rejectionBase(SPECC_INT64);
    MoveInputs in;
    std::vector<KVBuffer> buffers;
    std::string broken = buildCase(spec, &in, &buffers);
    if (!broken.empty())
      return broken;
    int64_t position = in.acceptIndex[acceptedEntry(in, 2, 4)];
    in.outCacheLoc[position] = 999;
    ExpectedStatus expected{{KVCACHE_ERR_SLOT}, offsetOf(in, 2) + 4, 999, 256};
    std::string note;
    return runRejected(mover, in, spec.dtypes, buffers, expected, 0, &note);
  });

  // A valid call right after a rejected one, on the same buffers: the status
  // record is reset and the move happens.
  results.run("reject:valid_call_after_rejection", [&]() -> std::string {
    CaseSpec spec = rejectionBase(SPECC_INT64);
    MoveInputs good;
    std::vector<KVBuffer> buffers;
    std::string broken = buildCase(spec, &good, &buffers);
    if (!broken.empty())
      return broken;
    MoveInputs bad = good;
    bad.reqPoolIndices[1] = bad.maxReqs + 5;
    std::string note;
    std::string failure = runRejected(
        mover, bad, spec.dtypes, buffers,
        ExpectedStatus{
            {KVCACHE_ERR_REQ_POOL_INDEX}, 1, bad.maxReqs + 5, bad.maxReqs},
        1, &note);
    if (!failure.empty())
      return "the rejection itself: " + failure;
    return runAgainstReference(mover, good, spec.dtypes, buffers, 1);
  });
}

//===----------------------------------------------------------------------===//
// Scratch growth
//===----------------------------------------------------------------------===//

void runGrowthCase(Results &results) {
  results.run("growth:max_entries_4_then_4000", []() -> std::string {
    specc_mover *mover = nullptr;
    int rc = specc_mover_create(SPECC_DEVICE_CPU, 4, &mover);
    if (rc != SPECC_SUCCESS || !mover)
      return describeRc("specc_mover_create(CPU, 4)", rc);
    std::string failure = [&]() -> std::string {
      CaseSpec big;
      big.seed = 555;
      big.bs = 500, big.width = 8, big.numDraft = 16, big.slots = 9000;
      big.layout = Layout::HolesAfterFirst;
      big.rowBytes = {32, 48};
      MoveInputs in;
      std::vector<KVBuffer> buffers;
      std::string broken = buildCase(big, &in, &buffers);
      if (!broken.empty())
        return broken;
      std::string result =
          runAgainstReference(mover, in, big.dtypes, buffers, 1);
      if (!result.empty())
        return "bs*W = 4000: " + result;
      // And smaller again on the grown mover.
      CaseSpec small;
      small.seed = 556;
      small.bs = 2, small.width = 2, small.numDraft = 4, small.slots = 64;
      broken = buildCase(small, &in, &buffers);
      if (!broken.empty())
        return broken;
      result = runAgainstReference(mover, in, small.dtypes, buffers, 1);
      if (!result.empty())
        return "bs*W = 4 after growth: " + result;
      return std::string();
    }();
    specc_mover_destroy(mover);
    return failure;
  });
}

} // namespace

int main(int argc, char **argv) {
  Results results;
  specc_mover *mover = nullptr;
  int rc = specc_mover_create(SPECC_DEVICE_CPU, 16, &mover);
  results.record("create:cpu_mover",
                 rc == SPECC_SUCCESS && mover
                     ? std::string()
                     : describeRc("specc_mover_create(CPU, 16)", rc),
                 0);
  if (rc == SPECC_SUCCESS && mover) {
    results.run("create:backend_is_cpu", [&]() -> std::string {
      const char *backend = specc_mover_backend(mover);
      if (!backend || std::string(backend) != "cpu")
        return std::string("specc_mover_backend is \"") +
               (backend ? backend : "(null)") + "\", expected \"cpu\"";
      return std::string();
    });
    if (argc > 1)
      runVectorCases(results, mover, argv[1]);
    else
      results.record("vectors:load",
                     "no path to move_accept_tokens.json "
                     "given (argv[1])",
                     0);
    runRandomizedCases(results, mover);
    runRejectionCases(results, mover);
    specc_mover_destroy(mover);
  }
  runGrowthCase(results);
  std::printf("%d passed, %d failed\n", results.passed, results.failed);
  return results.failed == 0 ? 0 : 1;
}
