//===- CpuMoveTest.cpp - executed tests of the CPU KV move ----------------===//
//
// Runs move_accept_tokens_to_target_kvcache through the runtime's C API on a
// SPECC_DEVICE_CPU mover (host pointers) and checks the results bit for bit
// against the per-request contract (dialect/KVCache/IR/KVCacheOps.td,
// kvcache.move_accepted_tokens; the C ABI of specc_runtime.h):
//
// * the exact cases of test/vectors/move_accept_tokens.json (path in
//   argv[1]), with targets from req_to_token and, where the vectors' verify
//   windows start with the target slots, from the window too;
// * deterministic randomized cases against the plain-loop reference of
//   Reference.h, both target sources, every int32/int64 combination of the
//   index tensors, chains, trees, cross-request overlap and cycles;
// * rejections of bad input: per request, the whole status record, the good
//   requests moved exactly, the bad ones' rows untouched; the status record
//   rewritten by every call;
// * scratch growth past the size a mover was created for.
//
// Prints one line per case and ends with "N passed, M failed"; exits
// non-zero when any case failed.
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
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ref = specc::reference;
using ref::KVBuffer;
using ref::MoveInputs;
using ref::PerRequestResult;
using ref::Status;
using ref::TargetSource;

// Reference.h spells the contract's numbers on its own; they must be the
// ABI's.
#define SPECC_SAME(a, b) (static_cast<int>(a) == static_cast<int>(b))
static_assert(SPECC_SAME(ref::kStatusFields, SPECC_STATUS_FIELDS) &&
                  SPECC_SAME(ref::kStatusFields, KVCACHE_MOVE_STATUS_FIELDS),
              "status record size");
static_assert(SPECC_SAME(ref::kCode, KVCACHE_STATUS_CODE) &&
                  SPECC_SAME(ref::kEntry, KVCACHE_STATUS_ENTRY) &&
                  SPECC_SAME(ref::kValue, KVCACHE_STATUS_VALUE) &&
                  SPECC_SAME(ref::kBound, KVCACHE_STATUS_BOUND) &&
                  SPECC_SAME(ref::kSkipped, KVCACHE_STATUS_SKIPPED) &&
                  SPECC_SAME(ref::kMoved, KVCACHE_STATUS_MOVED) &&
                  SPECC_SAME(ref::kPath, KVCACHE_STATUS_PATH) &&
                  SPECC_SAME(ref::kReserved, KVCACHE_STATUS_RESERVED),
              "status fields");
static_assert(SPECC_SAME(ref::kOk, KVCACHE_OK) &&
                  SPECC_SAME(ref::kReqPoolIndex, KVCACHE_ERR_REQ_POOL_INDEX) &&
                  SPECC_SAME(ref::kNegativeDrafts,
                             KVCACHE_ERR_NEGATIVE_DRAFTS) &&
                  SPECC_SAME(ref::kSeqRange, KVCACHE_ERR_SEQ_RANGE) &&
                  SPECC_SAME(ref::kAcceptIndex, KVCACHE_ERR_ACCEPT_INDEX) &&
                  SPECC_SAME(ref::kAcceptCount, KVCACHE_ERR_ACCEPT_COUNT) &&
                  SPECC_SAME(ref::kSlot, KVCACHE_ERR_SLOT) &&
                  SPECC_SAME(ref::kWindowRange, KVCACHE_ERR_WINDOW_RANGE),
              "status codes");
static_assert(SPECC_SAME(ref::kPathNone, KVCACHE_PATH_NONE) &&
                  SPECC_SAME(ref::kPathPerRequest, KVCACHE_PATH_PER_REQUEST) &&
                  SPECC_SAME(ref::kPathStaged, KVCACHE_PATH_STAGED),
              "move paths");
#undef SPECC_SAME

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t k2Pow32 = int64_t(1) << 32;

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
  /// `name`; `body` may set a note printed after a pass.
  void run(const std::string &name,
           const std::function<std::string(std::string &note)> &body) {
    auto start = std::chrono::steady_clock::now();
    std::string note;
    std::string failure = body(note);
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    record(name, failure, elapsed.count(), note);
  }

  /// The same for a body without a note.
  void run(const std::string &name, const std::function<std::string()> &body) {
    run(name, [&](std::string &) { return body(); });
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

const char *targetsName(TargetSource targets) {
  return targets == TargetSource::Window ? "window" : "req_to_token";
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

/// Element types of the six index tensors of one call; each may be int32 or
/// int64 on its own.
struct Dtypes {
  int32_t reqPoolIndices = SPECC_INT64;
  int32_t reqToToken = SPECC_INT32;
  int32_t seqLens = SPECC_INT64;
  int32_t numCorrectDrafts = SPECC_INT64;
  int32_t acceptIndex = SPECC_INT64;
  int32_t outCacheLoc = SPECC_INT64;
};

/// All index tensors in one dtype.
Dtypes uniformDtypes(int32_t dtype) {
  return Dtypes{dtype, dtype, dtype, dtype, dtype, dtype};
}

/// Bit k of `mask` set: tensor k (rpi, rtt, seq_lens, ncd, accept_index,
/// out_cache_loc) is int32, else int64.
Dtypes dtypesFromMask(int mask) {
  auto pick = [&](int bit) {
    return mask & (1 << bit) ? SPECC_INT32 : SPECC_INT64;
  };
  return Dtypes{pick(0), pick(1), pick(2), pick(3), pick(4), pick(5)};
}

const char *dtypeName(int32_t dtype) {
  return dtype == SPECC_INT32 ? "32" : "64";
}

/// "rpi32_rtt64_..." naming the dtypes a call with `targets` reads.
std::string dtypesName(const Dtypes &d, TargetSource targets) {
  std::string name;
  if (targets == TargetSource::ReqToToken)
    name = std::string("rpi") + dtypeName(d.reqPoolIndices) + "_rtt" +
           dtypeName(d.reqToToken) + "_sl" + dtypeName(d.seqLens) + "_";
  return name + "ncd" + dtypeName(d.numCorrectDrafts) + "_ai" +
         dtypeName(d.acceptIndex) + "_ocl" + dtypeName(d.outCacheLoc);
}

/// How a call is made.
struct CallMode {
  TargetSource targets = TargetSource::ReqToToken;
  /// Window targets only: leave req_pool_indices, req_to_token and seq_lens
  /// zero in specc_move_args (no data, no shape).
  bool omitRows = false;
  int sync = 1;
};

/// The six index tensors with their values and dtypes, in ABI order.
struct NamedValues {
  const char *name;
  const std::vector<int64_t> *values;
  int32_t *dtype;
};

std::vector<NamedValues> namedValues(MoveInputs &in, Dtypes &d) {
  return {{"req_pool_indices", &in.reqPoolIndices, &d.reqPoolIndices},
          {"req_to_token", &in.reqToToken, &d.reqToToken},
          {"seq_lens", &in.seqLens, &d.seqLens},
          {"num_correct_drafts", &in.numCorrectDrafts, &d.numCorrectDrafts},
          {"accept_index", &in.acceptIndex, &d.acceptIndex},
          {"out_cache_loc", &in.outCacheLoc, &d.outCacheLoc}};
}

bool fitsInt32(const std::vector<int64_t> &values) {
  for (int64_t v : values)
    if (v < kInt32Min || v > kInt32Max)
      return false;
  return true;
}

/// Returns an empty string when every tensor the call passes can hold its
/// values in its dtype, else a test-bug message.
std::string checkFits(const MoveInputs &in, const Dtypes &dtypes,
                      const CallMode &mode) {
  MoveInputs copy = in;
  Dtypes d = dtypes;
  std::vector<NamedValues> all = namedValues(copy, d);
  for (size_t k = 0; k < all.size(); ++k) {
    if (mode.omitRows && k < 3)
      continue;
    if (*all[k].dtype == SPECC_INT32 && !fitsInt32(*all[k].values))
      return std::string("test bug: a value of ") + all[k].name +
             " does not fit its int32 tensor";
  }
  return std::string();
}

/// Makes every int32 tensor whose values do not fit int64; returns the
/// names of the tensors it widened ("" when none).
std::string widenToFit(MoveInputs &in, Dtypes &dtypes) {
  std::string widened;
  for (NamedValues &t : namedValues(in, dtypes))
    if (*t.dtype == SPECC_INT32 && !fitsInt32(*t.values)) {
      *t.dtype = SPECC_INT64;
      widened += std::string(widened.empty() ? "" : ", ") + t.name;
    }
  return widened.empty() ? widened : widened + " int64";
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
             const CallMode &mode, std::vector<KVBuffer> &buffers,
             bool *setFailed) {
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
  IndexTensor reqPoolIndices(in.reqPoolIndices, dtypes.reqPoolIndices, 1,
                             static_cast<int64_t>(in.reqPoolIndices.size()), 0);
  IndexTensor reqToToken(in.reqToToken, dtypes.reqToToken, 2, in.maxReqs,
                         in.poolLen);
  IndexTensor seqLens(in.seqLens, dtypes.seqLens, 1,
                      static_cast<int64_t>(in.seqLens.size()), 0);
  IndexTensor numCorrectDrafts(in.numCorrectDrafts, dtypes.numCorrectDrafts, 1,
                               in.bs, 0);
  IndexTensor acceptIndex(in.acceptIndex, dtypes.acceptIndex, 2, in.bs,
                          in.width);
  IndexTensor outCacheLoc(in.outCacheLoc, dtypes.outCacheLoc, 1,
                          static_cast<int64_t>(in.outCacheLoc.size()), 0);
  specc_move_args args{};
  if (!mode.omitRows) {
    args.req_pool_indices = reqPoolIndices.tensor;
    args.req_to_token = reqToToken.tensor;
    args.seq_lens = seqLens.tensor;
  }
  args.num_correct_drafts = numCorrectDrafts.tensor;
  args.accept_index = acceptIndex.tensor;
  args.out_cache_loc = outCacheLoc.tensor;
  args.targets = mode.targets == TargetSource::Window
                     ? SPECC_TARGETS_WINDOW
                     : SPECC_TARGETS_REQ_TO_TOKEN;
  return specc_move_accept_tokens(mover, &args, /*stream=*/nullptr, mode.sync);
}

/// Reads the whole status record (pre-filled with a marker, so a field the
/// runtime does not write shows).
std::string readStatus(specc_mover *mover, Status *status) {
  status->fill(-77);
  int rc = specc_mover_read_status(mover, nullptr, status->data());
  if (rc != SPECC_SUCCESS)
    return describeRc("specc_mover_read_status", rc);
  return std::string();
}

std::string statusText(const Status &s) {
  return "{code " + std::to_string(s[ref::kCode]) + ", entry " +
         std::to_string(s[ref::kEntry]) + ", value " +
         std::to_string(s[ref::kValue]) + ", bound " +
         std::to_string(s[ref::kBound]) + ", skipped " +
         std::to_string(s[ref::kSkipped]) + ", moved " +
         std::to_string(s[ref::kMoved]) + ", path " +
         std::to_string(s[ref::kPath]) + ", reserved " +
         std::to_string(s[ref::kReserved]) + "}";
}

/// Compares two whole status records.
std::string compareStatus(const Status &got, const Status &want) {
  static const char *field[ref::kStatusFields] = {"code",  "entry",   "value",
                                                  "bound", "skipped", "moved",
                                                  "path",  "reserved"};
  for (int f = 0; f < ref::kStatusFields; ++f)
    if (got[f] != want[f])
      return "status " + statusText(got) + ", expected " + statusText(want) +
             " (" + field[f] + " differs)";
  return std::string();
}

/// The status message the runtime gives for a record (its first 4 fields).
std::string statusMessage(const Status &status) {
  char text[256] = {0};
  const char *message = specc_status_message(status.data(), text, sizeof(text));
  return message ? message : "";
}

/// Slots request `i` would write if it moved: the first min(acc, W)
/// positions that can be read without leaving a tensor (test bookkeeping
/// only, to name rows in messages and to check a bad request's rows).
std::vector<int64_t> wouldBeTargets(const MoveInputs &in, TargetSource targets,
                                    int64_t i) {
  std::vector<int64_t> slots;
  int64_t ncd = in.numCorrectDrafts[i];
  int64_t acc = ncd < 0 ? 0 : ncd >= in.width ? in.width : ncd + 1;
  if (targets == TargetSource::ReqToToken) {
    if (i >= static_cast<int64_t>(in.reqPoolIndices.size()))
      return slots;
    int64_t row = in.reqPoolIndices[i], seq = in.seqLens[i];
    if (row < 0 || row >= in.maxReqs || seq < 0 || seq >= in.poolLen)
      return slots;
    for (int64_t j = 0; j < acc && seq + j < in.poolLen; ++j)
      slots.push_back(in.reqToToken[row * in.poolLen + seq + j]);
  } else {
    int64_t window = ref::windowWidth(in);
    for (int64_t j = 0; j < acc && j < window; ++j)
      slots.push_back(in.outCacheLoc[i * window + j]);
  }
  return slots;
}

/// Names what a row is to the call (for messages).
std::string slotRole(const MoveInputs &in, TargetSource targets,
                     const PerRequestResult *plan, int64_t slot) {
  if (!plan)
    return std::string();
  for (size_t i = 0; i < plan->requests.size(); ++i) {
    const ref::RequestOutcome &request = plan->requests[i];
    for (size_t j = 0; j < request.pairs.size(); ++j)
      if (request.pairs[j].target == slot)
        return " (target " + std::to_string(j) + " of good request " +
               std::to_string(i) + ", source " +
               std::to_string(request.pairs[j].source) + ")";
    if (request.violation.code != ref::kOk)
      for (int64_t s : wouldBeTargets(in, targets, static_cast<int64_t>(i)))
        if (s == slot)
          return " (a row bad request " + std::to_string(i) +
                 " would write: it must stay untouched)";
  }
  return " (a row no request writes)";
}

/// Compares every byte of every buffer; returns a message about the first
/// differing row (with its role) and the number of differing rows.
std::string compareBuffers(const std::vector<KVBuffer> &got,
                           const std::vector<KVBuffer> &want,
                           const MoveInputs *in = nullptr,
                           TargetSource targets = TargetSource::ReqToToken,
                           const PerRequestResult *plan = nullptr) {
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
    std::string role = in ? slotRole(*in, targets, plan, firstSlot) : "";
    return "buffer " + std::to_string(b) + " (row " + std::to_string(rowBytes) +
           " B): row " + std::to_string(firstSlot) + role + " differs; " +
           std::to_string(rows) + " rows differ in this buffer";
  }
  return std::string();
}

/// Runs `in` on `before` through the runtime and checks everything the
/// reference decides: the return code (SPECC_ERROR_INVALID_ARGUMENT for a
/// refused call, SPECC_ERROR_INPUT with a message for a synchronous call
/// with a violation, else SPECC_SUCCESS), the whole status record (unless
/// refused) and every byte of every buffer. `expectedAfter` and
/// `expectedStatus`, when given, replace the reference's (the vectors).
/// `*note` gets the runtime's status message; `*after`, when given, the
/// buffers after the call.
std::string runChecked(specc_mover *mover, const MoveInputs &in,
                       const Dtypes &dtypes, const CallMode &mode,
                       const std::vector<KVBuffer> &before,
                       std::string *note = nullptr,
                       std::vector<KVBuffer> *after = nullptr,
                       const std::vector<KVBuffer> *expectedAfter = nullptr,
                       const Status *expectedStatus = nullptr) {
  std::string unfit = checkFits(in, dtypes, mode);
  if (!unfit.empty())
    return unfit;
  std::vector<KVBuffer> want = before;
  PerRequestResult plan =
      ref::moveAcceptTokensPerRequest(in, mode.targets, want);
  if (expectedAfter)
    want = *expectedAfter;
  Status wantStatus = expectedStatus ? *expectedStatus : plan.status;

  std::vector<KVBuffer> buffers = before;
  bool setFailed = false;
  int rc = callMove(mover, in, dtypes, mode, buffers, &setFailed);
  if (setFailed)
    return describeRc("specc_mover_set_buffers", rc);
  if (after)
    *after = buffers;
  if (plan.invalidArgument) {
    if (rc != SPECC_ERROR_INVALID_ARGUMENT)
      return "specc_move_accept_tokens returned " + std::to_string(rc) +
             ", expected SPECC_ERROR_INVALID_ARGUMENT (" +
             std::to_string(SPECC_ERROR_INVALID_ARGUMENT) + ")";
    if (note)
      *note = "[" + lastError() + "]";
    std::string failure = compareBuffers(buffers, before);
    return failure.empty() ? failure
                           : "a refused call changed a buffer: " + failure;
  }
  bool violation = wantStatus[ref::kCode] != ref::kOk;
  int wantRc = violation && mode.sync ? SPECC_ERROR_INPUT : SPECC_SUCCESS;
  if (rc != wantRc)
    return "specc_move_accept_tokens returned " + std::to_string(rc) + " (" +
           lastError() + "), expected " + std::to_string(wantRc) +
           (violation ? " (sync = " + std::to_string(mode.sync) +
                            ", a request breaks a bound)"
                      : std::string(" (valid input)"));
  if (rc == SPECC_ERROR_INPUT && lastError() == "(no message)")
    return "SPECC_ERROR_INPUT without a message from specc_last_error";
  // A violation nobody waited for is kept in the mover's report until a
  // poll (or the next call) takes it, exactly once; a waiting call has taken
  // its own already.
  {
    std::string text = violation ? statusMessage(wantStatus) : std::string();
    int64_t report[SPECC_REPORT_FIELDS];
    int polled = specc_mover_poll(mover, report);
    int wantPoll =
        violation && !mode.sync ? SPECC_ERROR_EARLIER_INPUT : SPECC_SUCCESS;
    if (polled != wantPoll)
      return "specc_mover_poll returned " + std::to_string(polled) + " (" +
             lastError() + "), expected " + std::to_string(wantPoll);
    if (polled == SPECC_ERROR_EARLIER_INPUT) {
      const int64_t want[6] = {1,
                               wantStatus[ref::kCode],
                               wantStatus[ref::kEntry],
                               wantStatus[ref::kValue],
                               wantStatus[ref::kBound],
                               wantStatus[ref::kSkipped]};
      for (int f = 0; f < 6; ++f)
        if (report[f] != want[f])
          return "report field " + std::to_string(f) + " = " +
                 std::to_string(report[f]) + ", expected " +
                 std::to_string(want[f]);
      if (lastError().find("earlier call") == std::string::npos ||
          lastError().find(text) == std::string::npos)
        return "the poll's message '" + lastError() +
               "' does not name the earlier call and '" + text + "'";
    }
    if (int again = specc_mover_poll(mover, nullptr))
      return "a second poll returned " + std::to_string(again) + " (" +
             lastError() + "): the violation was reported twice";
  }
  Status status;
  std::string failure = readStatus(mover, &status);
  if (!failure.empty())
    return failure;
  if (note && violation)
    *note = "[" + statusMessage(status) + "; skipped " +
            std::to_string(status[ref::kSkipped]) + "]";
  failure = compareStatus(status, wantStatus);
  if (!failure.empty())
    return failure;
  failure = compareBuffers(buffers, want, &in, mode.targets, &plan);
  if (!failure.empty())
    return failure;
  // Spelled out although the comparison above implies it: no row a bad
  // request would write changed.
  for (size_t i = 0; i < plan.requests.size(); ++i) {
    if (plan.requests[i].violation.code == ref::kOk)
      continue;
    for (int64_t slot :
         wouldBeTargets(in, mode.targets, static_cast<int64_t>(i))) {
      bool moved = false;
      for (const ref::RequestOutcome &good : plan.requests)
        for (const ref::Pair &pair : good.pairs)
          moved = moved || pair.target == slot;
      for (size_t b = 0; b < buffers.size() && !moved; ++b) {
        if (slot < 0 || slot >= buffers[b].slots)
          continue;
        int64_t rowBytes = buffers[b].rowBytes;
        if (!std::equal(buffers[b].bytes.begin() + slot * rowBytes,
                        buffers[b].bytes.begin() + (slot + 1) * rowBytes,
                        before[b].bytes.begin() + slot * rowBytes))
          return "row " + std::to_string(slot) + " of buffer " +
                 std::to_string(b) + ", a target of bad request " +
                 std::to_string(i) + ", changed";
      }
    }
  }
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
  // index_dtype names every index tensor but req_to_token, which stays int32.
  vc.dtypes = uniformDtypes(dtype == "int32" ? SPECC_INT32 : SPECC_INT64);
  vc.dtypes.reqToToken = SPECC_INT32;
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

/// Entries of the vectors' slot lists that move a row (source != target).
int64_t movedInVectors(const VectorCase &vc) {
  int64_t moved = 0;
  for (size_t e = 0; e < vc.targets.size(); ++e)
    moved += vc.targets[e] != vc.sources[e];
  return moved;
}

/// Whether the verify window of every request starts with its target slots
/// (as the vectors record them): then targets from the window give the same
/// move.
bool windowHoldsTargets(const VectorCase &vc) {
  const MoveInputs &in = vc.inputs;
  if (in.bs == 0)
    return in.outCacheLoc.empty();
  if (in.outCacheLoc.size() % in.bs != 0)
    return false;
  int64_t window = ref::windowWidth(in), offset = 0;
  for (int64_t i = 0; i < in.bs; ++i) {
    int64_t acc = in.numCorrectDrafts[i] + 1;
    if (acc > window)
      return false;
    for (int64_t j = 0; j < acc; ++j)
      if (in.outCacheLoc[i * window + j] != vc.targets[offset + j])
        return false;
    offset += acc;
  }
  return true;
}

/// The status record a valid vector case must leave: no violation, nothing
/// skipped, moved = the vectors' moving entries; the path is the reference's.
Status vectorStatus(const VectorCase &vc, TargetSource targets) {
  PerRequestResult plan =
      ref::planPerRequest(vc.inputs, targets, ref::minSlots(vc.before));
  Status status{};
  status[ref::kMoved] = movedInVectors(vc);
  status[ref::kPath] = plan.status[ref::kPath];
  return status;
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

  // The references must reproduce the vectors: the stage reference the slot
  // lists and the buffers, the per-request one the buffers and the count of
  // moved entries, with no violation.
  results.run("vectors:reference-agrees", [&]() -> std::string {
    for (const VectorCase &vc : cases) {
      std::vector<KVBuffer> after = vc.before;
      std::vector<int64_t> targets, sources;
      ref::moveAcceptTokens(vc.inputs, after, &targets, &sources);
      for (size_t e = 0; e < vc.targets.size(); ++e)
        if (targets[e] != vc.targets[e] || sources[e] != vc.sources[e])
          return vc.name + ": the stage reference gives (tgt, src)[" +
                 std::to_string(e) + "] = (" + std::to_string(targets[e]) +
                 ", " + std::to_string(sources[e]) + "), the vectors (" +
                 std::to_string(vc.targets[e]) + ", " +
                 std::to_string(vc.sources[e]) + ")";
      std::string failure = compareBuffers(after, vc.after);
      if (!failure.empty())
        return vc.name + ": the stage reference disagrees: " + failure;
      std::vector<TargetSource> sourcesToTry{TargetSource::ReqToToken};
      if (windowHoldsTargets(vc))
        sourcesToTry.push_back(TargetSource::Window);
      for (TargetSource source : sourcesToTry) {
        after = vc.before;
        PerRequestResult plan =
            ref::moveAcceptTokensPerRequest(vc.inputs, source, after);
        Status want = vectorStatus(vc, source);
        failure = compareStatus(plan.status, want);
        if (failure.empty())
          failure = compareBuffers(after, vc.after);
        if (!failure.empty())
          return vc.name + ": the per-request reference (" +
                 targetsName(source) + ") disagrees: " + failure;
      }
    }
    return std::string();
  });

  int index = 0;
  for (const VectorCase &vc : cases) {
    CallMode mode;
    mode.sync = index++ % 2 == 0 ? 1 : 0;
    results.run("vectors:" + vc.name, [&] {
      Status want = vectorStatus(vc, mode.targets);
      return runChecked(mover, vc.inputs, vc.dtypes, mode, vc.before, nullptr,
                        nullptr, &vc.after, &want);
    });
    if (!windowHoldsTargets(vc))
      continue;
    mode.targets = TargetSource::Window;
    mode.sync = 1 - mode.sync;
    results.run("vectors:" + vc.name + ":window", [&] {
      Status want = vectorStatus(vc, mode.targets);
      return runChecked(mover, vc.inputs, vc.dtypes, mode, vc.before, nullptr,
                        nullptr, &vc.after, &want);
    });
  }
}

//===----------------------------------------------------------------------===//
// Randomized cases
//===----------------------------------------------------------------------===//

/// How draft slots relate to the target slots.
enum class Shape {
  Chain,     ///< topk = 1: accepted nodes 0..acc-1, every source its target
  Tree,      ///< topk > 1: accepted nodes 0 < n1 < n2 ... of D draft nodes
  Crossed,   ///< sources rewritten to other requests' targets or any slot
             ///< (cycles, cross-request and repeated sources)
  Cycle,     ///< each request's sources a rotation of its own targets
  CrossCycle ///< entry e's source is entry e+1's target over all requests
};

/// Where the non -1 entries of a row of accept_index sit.
enum class Layout {
  Packed,          ///< columns 0..acc-1, as sglang writes them
  HolesAfterFirst, ///< column 0 and acc-1 random later columns
  HolesAnywhere    ///< acc random columns
};

/// req_pool_indices, req_to_token, seq_lens of a window-targets case.
enum class Rows {
  Reused,  ///< valid, but the row holds other slots than the window
  Garbage, ///< out-of-range indices (ignored by a window call)
  Absent   ///< Garbage in the inputs, left zero in specc_move_args
};

/// A randomized case: how to build its inputs and buffers.
struct CaseSpec {
  std::string name;
  uint64_t seed = 1;
  TargetSource targets = TargetSource::ReqToToken;
  int64_t bs = 4;
  int64_t width = 4;
  int64_t numDraft = 4; ///< D: out_cache_loc entries per request
  int64_t slots = 256;  ///< slots every moved slot lies below
  int64_t poolLen = 0;  ///< 0: D + 40
  Shape shape = Shape::Tree;
  Layout layout = Layout::Packed;
  Rows rows = Rows::Reused; ///< window targets only
  /// req_to_token targets only: request r's draft slots sit in window
  /// block perm(r) of out_cache_loc, so the window heads are not the targets.
  bool shuffleWindows = false;
  std::vector<int64_t> accepted; ///< fixed acc per request, else random
  std::vector<int64_t> rowBytes{16, 16};
  std::vector<int64_t> bufferSlots; ///< per buffer; empty: `slots` each
  Dtypes dtypes;
  bool lastSeqAtEnd = false; ///< request 0 ends exactly at pool_len
  int sync = 1;
  /// Generator checks: the path the reference must report (-1: any),
  /// whether the moves must hold a cycle, and whether the other target
  /// source must give another outcome (so a wrong one cannot pass).
  int64_t expectPath = -1;
  bool expectCycle = false;
  bool discriminate = false;
  /// Applied to the inputs after they are built (garbage outside reads).
  std::function<void(MoveInputs &, Random &, const CaseSpec &)> mutate;
};

CallMode modeOf(const CaseSpec &spec) {
  CallMode mode;
  mode.targets = spec.targets;
  mode.omitRows =
      spec.targets == TargetSource::Window && spec.rows == Rows::Absent;
  mode.sync = spec.sync;
  return mode;
}

/// Builds the inputs of `spec` the way sglang lays them out: each request
/// has a verify window of D fresh distinct slots in out_cache_loc and
/// accepts nodes of it; with req_to_token targets its row of req_to_token
/// holds the window at positions seq_len .. seq_len + D; with window targets
/// that row holds other slots (or the row indices are garbage). The shapes
/// then rewrite the sources.
MoveInputs buildInputs(const CaseSpec &spec, Random &random) {
  const bool window = spec.targets == TargetSource::Window;
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
  std::vector<int64_t> block;
  for (int64_t r = 0; r < spec.bs; ++r)
    block.push_back(r);
  if (spec.shuffleWindows && !window)
    random.shuffle(block);

  in.outCacheLoc.resize(spec.bs * draft);
  in.acceptIndex.assign(spec.bs * spec.width, -1);
  std::vector<std::vector<int64_t>> columnsOf(spec.bs);
  for (int64_t r = 0; r < spec.bs; ++r) {
    int64_t row = rows[r];
    int64_t seq = (spec.lastSeqAtEnd && r == 0)
                      ? in.poolLen - draft
                      : random.uniform(0, in.poolLen - draft);
    in.reqPoolIndices.push_back(row);
    in.seqLens.push_back(seq);
    for (int64_t n = 0; n < draft; ++n) {
      int64_t slot = fresh[r * draft + n];
      in.outCacheLoc[block[r] * draft + n] = slot;
      if (!window) {
        in.reqToToken[row * in.poolLen + seq + n] = slot;
      } else if (spec.rows == Rows::Reused) {
        // The row of another request's window, reversed (own one for bs 1).
        int64_t other = (r + 1) % spec.bs;
        in.reqToToken[row * in.poolLen + seq + n] =
            fresh[other * draft + (draft - 1 - n)];
      }
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
      in.acceptIndex[r * spec.width + columns[k]] = block[r] * draft + nodes[k];
    columnsOf[r] = columns;
  }
  if (window && spec.rows != Rows::Reused) {
    for (int64_t r = 0; r < spec.bs; ++r) {
      int64_t pick = random.uniform(0, 3);
      if (pick == 0)
        in.reqPoolIndices[r] = -5;
      else if (pick == 1)
        in.reqPoolIndices[r] = in.maxReqs + 100;
      else if (pick == 2)
        in.seqLens[r] = -3;
      else
        in.seqLens[r] = in.poolLen + 7;
    }
  }

  // Every accepted entry, in request order: (request, k, flat accept_index
  // entry, target slot, out_cache_loc position of the target in window mode).
  struct Entry {
    int64_t request, k, column, target, targetPosition;
  };
  std::vector<Entry> entries;
  for (int64_t r = 0; r < spec.bs; ++r)
    for (int64_t k = 0; k <= in.numCorrectDrafts[r]; ++k) {
      Entry e;
      e.request = r, e.k = k;
      e.column = r * spec.width + columnsOf[r][k];
      e.targetPosition = r * draft + k;
      e.target = window ? in.outCacheLoc[e.targetPosition]
                        : in.reqToToken[in.reqPoolIndices[r] * in.poolLen +
                                        in.seqLens[r] + k];
      entries.push_back(e);
    }
  // Makes entry `e` read `slot`, named by out_cache_loc position `position`
  // in window mode (where out_cache_loc also holds the targets).
  auto setSource = [&](const Entry &e, int64_t slot, int64_t position) {
    if (window)
      in.acceptIndex[e.column] = position;
    else
      in.outCacheLoc[in.acceptIndex[e.column]] = slot;
  };
  int64_t total = static_cast<int64_t>(entries.size());
  int64_t positions = static_cast<int64_t>(in.outCacheLoc.size());
  if (spec.shape == Shape::Crossed && total > 0) {
    for (const Entry &e : entries) {
      if (random.uniform(0, 3) != 0) {
        const Entry &other = entries[random.uniform(0, total - 1)];
        setSource(e, other.target, other.targetPosition);
      } else if (window) {
        setSource(e, 0, random.uniform(0, positions - 1));
      } else {
        setSource(e, random.uniform(0, spec.slots - 1), 0);
      }
    }
    // At least one cycle across requests: the first tokens of the first
    // and the last request swap rows.
    const Entry &first = entries.front(),
                &last = entries[total - 1 - in.numCorrectDrafts[spec.bs - 1]];
    if (first.request != last.request) {
      setSource(first, last.target, last.targetPosition);
      setSource(last, first.target, first.targetPosition);
    }
  } else if (spec.shape == Shape::Cycle) {
    for (size_t first = 0; first < entries.size();) {
      size_t end = first;
      while (end < entries.size() &&
             entries[end].request == entries[first].request)
        ++end;
      size_t count = end - first;
      for (size_t e = first; e < end; ++e) {
        const Entry &next = entries[first + (e - first + 1) % count];
        setSource(entries[e], next.target, next.targetPosition);
      }
      first = end;
    }
  } else if (spec.shape == Shape::CrossCycle) {
    for (int64_t e = 0; e < total; ++e) {
      const Entry &next = entries[(e + 1) % total];
      setSource(entries[e], next.target, next.targetPosition);
    }
  }
  if (spec.mutate)
    spec.mutate(in, random, spec);
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

/// Whether the moving pairs of `plan` hold a cycle (row a to b, b to a, or
/// longer).
bool hasCycle(const PerRequestResult &plan) {
  std::map<int64_t, int64_t> sourceOf;
  for (const ref::RequestOutcome &request : plan.requests)
    for (const ref::Pair &pair : request.pairs)
      if (pair.target != pair.source)
        sourceOf[pair.target] = pair.source;
  for (const auto &start : sourceOf) {
    int64_t slot = start.second;
    for (size_t step = 0; step <= sourceOf.size(); ++step) {
      if (slot == start.first)
        return true;
      auto it = sourceOf.find(slot);
      if (it == sourceOf.end())
        break;
      slot = it->second;
    }
  }
  return false;
}

/// Builds `spec` and checks that the generator stayed inside the contract
/// and produced what the case is about.
std::string buildCase(const CaseSpec &spec, MoveInputs *in,
                      std::vector<KVBuffer> *buffers) {
  if (spec.bs * spec.numDraft > spec.slots - 1)
    return "test generator bug: bs * D = " +
           std::to_string(spec.bs * spec.numDraft) +
           " fresh slots needed, slots 1.." + std::to_string(spec.slots - 1) +
           " hold fewer";
  Random random(spec.seed);
  *in = buildInputs(spec, random);
  *buffers = buildBuffers(spec, random);
  auto bug = [](const std::string &what) {
    return "test generator bug: " + what;
  };
  std::string broken = checkFits(*in, spec.dtypes, modeOf(spec));
  if (!broken.empty())
    return broken;
  int64_t slots = ref::minSlots(*buffers);
  broken = ref::checkContract(*in, slots, spec.targets);
  if (!broken.empty())
    return bug("input outside the contract: " + broken);
  PerRequestResult plan = ref::planPerRequest(*in, spec.targets, slots);
  if (spec.expectPath >= 0 && plan.status[ref::kPath] != spec.expectPath)
    return bug("the reference's path is " +
               std::to_string(plan.status[ref::kPath]) + ", the case wants " +
               std::to_string(spec.expectPath));
  if (spec.expectCycle && !hasCycle(plan))
    return bug("no cycle among the moves");
  if (spec.discriminate) {
    TargetSource other = spec.targets == TargetSource::Window
                             ? TargetSource::ReqToToken
                             : TargetSource::Window;
    std::vector<KVBuffer> mine = *buffers, theirs = *buffers;
    PerRequestResult a =
        ref::moveAcceptTokensPerRequest(*in, spec.targets, mine);
    PerRequestResult b = ref::moveAcceptTokensPerRequest(*in, other, theirs);
    if (!b.invalidArgument && a.status == b.status &&
        mine.size() == theirs.size() && compareBuffers(mine, theirs).empty())
      return bug(std::string("targets from ") + targetsName(other) +
                 " would give the same result");
  }
  return std::string();
}

/// Garbage in every index position the function does not read: in
/// req_to_token outside the rows' accepted positions (all of it for window
/// targets, with garbage row indices too) and in every out_cache_loc entry
/// that is neither named by accept_index nor a window target. A call must
/// not reject it.
void fillUnreadWithGarbage(MoveInputs &in, Random &random,
                           const CaseSpec &spec) {
  const bool window = spec.targets == TargetSource::Window;
  std::vector<bool> read(in.reqToToken.size(), false);
  if (!window)
    for (int64_t i = 0; i < in.bs; ++i)
      for (int64_t j = 0; j <= in.numCorrectDrafts[i]; ++j)
        read[in.reqPoolIndices[i] * in.poolLen + in.seqLens[i] + j] = true;
  for (size_t p = 0; p < read.size(); ++p)
    if (!read[p])
      in.reqToToken[p] = random.uniform(0, 1) ? -7 : 1 << 30;
  if (window)
    for (int64_t i = 0; i < in.bs; ++i) {
      in.reqPoolIndices[i] = random.uniform(0, 1) ? -1 : kInt32Max;
      in.seqLens[i] = random.uniform(0, 1) ? kInt32Min : kInt32Max;
    }
  std::vector<bool> named(in.outCacheLoc.size(), false);
  for (int64_t position : in.acceptIndex)
    if (position >= 0)
      named[position] = true;
  if (window) {
    int64_t d = ref::windowWidth(in);
    for (int64_t i = 0; i < in.bs; ++i)
      for (int64_t j = 0; j <= in.numCorrectDrafts[i]; ++j)
        named[i * d + j] = true;
  }
  int64_t big = spec.dtypes.outCacheLoc == SPECC_INT32 ? int64_t(1) << 30
                                                       : int64_t(1) << 40;
  for (size_t p = 0; p < named.size(); ++p)
    if (!named[p])
      in.outCacheLoc[p] = random.uniform(0, 1) ? -9 : big;
}

std::vector<CaseSpec> randomizedSpecs() {
  std::vector<CaseSpec> specs;
  auto add = [&](CaseSpec spec) {
    spec.seed = 1000 + specs.size();
    spec.sync = specs.size() % 2 == 0 ? 1 : 0;
    specs.push_back(std::move(spec));
  };
  CaseSpec s;

  // Chains: every target is its own source; nothing moves.
  s = CaseSpec();
  s.name = "chain_bs4_w4";
  s.bs = 4, s.width = 4, s.numDraft = 4, s.shape = Shape::Chain;
  s.expectPath = ref::kPathNone;
  add(s);
  s.name = "chain_bs16_w6_holes_int32";
  s.bs = 16, s.width = 6, s.numDraft = 6, s.layout = Layout::HolesAfterFirst;
  s.dtypes = uniformDtypes(SPECC_INT32);
  add(s);
  s = CaseSpec();
  s.name = "chain_all_accepted_ends_at_pool_len";
  s.bs = 3, s.width = 4, s.numDraft = 4, s.shape = Shape::Chain;
  s.accepted = {4, 4, 4}, s.lastSeqAtEnd = true;
  s.expectPath = ref::kPathNone;
  add(s);

  // Trees: sources are other entries' targets of the same request.
  s = CaseSpec();
  s.name = "tree_bs8_w4_d8";
  s.bs = 8, s.width = 4, s.numDraft = 8;
  s.expectPath = ref::kPathPerRequest;
  add(s);
  s.name = "tree_bs16_w6_d16_holes";
  s.bs = 16, s.width = 6, s.numDraft = 16, s.slots = 512;
  s.layout = Layout::HolesAfterFirst;
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
  s.name = "tree_bs16_w5_d12_windows_shuffled";
  s.bs = 16, s.width = 5, s.numDraft = 12, s.slots = 512;
  s.shuffleWindows = true, s.discriminate = true;
  s.expectPath = ref::kPathPerRequest;
  add(s);

  // Cross-request overlap and cycles.
  s = CaseSpec();
  s.name = "crossed_bs64_w5_d10_cycles";
  s.bs = 64, s.width = 5, s.numDraft = 10, s.slots = 1024;
  s.shape = Shape::Crossed, s.layout = Layout::HolesAfterFirst;
  s.expectPath = ref::kPathStaged, s.expectCycle = true;
  add(s);
  s.name = "crossed_bs6_w3_d3_dense";
  s.bs = 6, s.width = 3, s.numDraft = 3, s.slots = 24;
  add(s);
  s = CaseSpec();
  s.name = "cycle_within_requests_bs8_w5_d8";
  s.bs = 8, s.width = 5, s.numDraft = 8, s.shape = Shape::Cycle;
  s.accepted = {2, 5, 3, 1, 4, 5, 2, 3};
  s.expectPath = ref::kPathPerRequest, s.expectCycle = true;
  add(s);
  s.name = "cycle_across_requests_bs8_w5_d8";
  s.shape = Shape::CrossCycle, s.layout = Layout::HolesAnywhere;
  s.expectPath = ref::kPathStaged;
  add(s);
  s.name = "cycle_across_requests_bs2_w1_swap";
  s.bs = 2, s.width = 1, s.numDraft = 2, s.accepted = {1, 1};
  s.layout = Layout::Packed;
  add(s);

  // W = 1 and bs = 0.
  s = CaseSpec();
  s.name = "w1_chain_bs50";
  s.bs = 50, s.width = 1, s.numDraft = 1, s.shape = Shape::Chain;
  s.expectPath = ref::kPathNone;
  add(s);
  s.name = "w1_tree_bs50_d4";
  s.bs = 50, s.width = 1, s.numDraft = 4, s.shape = Shape::Tree;
  add(s);
  s.name = "w1_crossed_bs50_d2";
  s.bs = 50, s.width = 1, s.numDraft = 2, s.shape = Shape::Crossed;
  s.expectPath = ref::kPathStaged;
  add(s);
  s = CaseSpec();
  s.name = "bs0_w4_int64";
  s.bs = 0, s.width = 4, s.numDraft = 8;
  s.expectPath = ref::kPathNone;
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
  s.expectPath = ref::kPathNone;
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
  s.name = "long_cycle_across_bs4_w1500";
  s.bs = 4, s.accepted = {1400, 3, 1500, 700}, s.shape = Shape::CrossCycle;
  s.expectPath = ref::kPathStaged;
  add(s);

  // Every dtype combination of the six index tensors; windows shuffled so
  // that window targets would move other rows.
  for (int mask = 0; mask < 64; ++mask) {
    s = CaseSpec();
    s.dtypes = dtypesFromMask(mask);
    static const Shape shapes[3] = {Shape::Tree, Shape::Crossed,
                                    Shape::CrossCycle};
    static const char *shapeNames[3] = {"tree", "crossed", "crosscycle"};
    s.shape = shapes[mask % 3];
    s.name = std::string("dtypes_") +
             dtypesName(s.dtypes, TargetSource::ReqToToken) + "_" +
             shapeNames[mask % 3];
    s.bs = 12, s.width = 5, s.numDraft = 12, s.slots = 512;
    s.layout = Layout::HolesAfterFirst;
    s.rowBytes = {12, 20};
    s.shuffleWindows = true, s.discriminate = true;
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

  // Targets from the verify window. Rows::Reused: req_to_token holds other
  // valid slots for each request, so req_to_token targets would move other
  // rows; Garbage/Absent: they would be rejected.
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_chain_bs8_w4_reused_rows";
  s.bs = 8, s.width = 4, s.numDraft = 4, s.shape = Shape::Chain;
  s.expectPath = ref::kPathNone, s.discriminate = true;
  add(s);
  s.name = "window_chain_bs16_w6_holes_int32_rows_absent";
  s.bs = 16, s.width = 6, s.numDraft = 6, s.layout = Layout::HolesAfterFirst;
  s.dtypes = uniformDtypes(SPECC_INT32), s.rows = Rows::Absent;
  s.discriminate = false;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_tree_bs8_w4_d8_reused_rows";
  s.bs = 8, s.width = 4, s.numDraft = 8;
  s.expectPath = ref::kPathPerRequest, s.discriminate = true;
  add(s);
  s.name = "window_tree_bs16_w6_d16_holes_rows_garbage";
  s.bs = 16, s.width = 6, s.numDraft = 16, s.slots = 512;
  s.layout = Layout::HolesAfterFirst;
  s.rows = Rows::Garbage;
  add(s);
  s.name = "window_tree_bs32_w9_d25_holes_anywhere_rows_absent";
  s.bs = 32, s.width = 9, s.numDraft = 25, s.slots = 1024;
  s.layout = Layout::HolesAnywhere, s.rows = Rows::Absent;
  s.discriminate = false;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_bs1_w4_d4_reused_own_row_reversed";
  s.bs = 1, s.width = 4, s.numDraft = 4, s.accepted = {3};
  s.discriminate = true;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_acc_equals_d_w6_d4";
  s.bs = 6, s.width = 6, s.numDraft = 4, s.accepted = {4, 4, 1, 4, 2, 4};
  s.layout = Layout::HolesAnywhere, s.discriminate = true;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_crossed_bs32_w5_d10";
  s.bs = 32, s.width = 5, s.numDraft = 10, s.slots = 1024;
  s.shape = Shape::Crossed, s.layout = Layout::HolesAfterFirst;
  s.expectPath = ref::kPathStaged, s.expectCycle = true;
  s.discriminate = true;
  add(s);
  s.name = "window_crossed_bs6_w3_d3_dense";
  s.bs = 6, s.width = 3, s.numDraft = 3, s.slots = 24;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_cycle_within_requests_bs8_w5_d8";
  s.bs = 8, s.width = 5, s.numDraft = 8, s.shape = Shape::Cycle;
  s.accepted = {2, 5, 3, 1, 4, 5, 2, 3};
  s.expectPath = ref::kPathPerRequest, s.expectCycle = true;
  s.discriminate = true;
  add(s);
  s.name = "window_cycle_across_requests_bs8_w5_d8";
  s.shape = Shape::CrossCycle, s.expectPath = ref::kPathStaged;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_w1_tree_bs50_d4";
  s.bs = 50, s.width = 1, s.numDraft = 4;
  s.expectPath = ref::kPathNone, s.discriminate = true;
  add(s);
  s.name = "window_w1_crossed_bs50_d2";
  s.numDraft = 2, s.shape = Shape::Crossed, s.expectPath = ref::kPathStaged;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_bs0_w4_rows_absent";
  s.bs = 0, s.width = 4, s.numDraft = 8, s.rows = Rows::Absent;
  s.expectPath = ref::kPathNone;
  add(s);
  s.name = "window_bs0_w1_int32";
  s.width = 1, s.rows = Rows::Reused, s.dtypes = uniformDtypes(SPECC_INT32);
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_long_bs3_w1500_acc1_1400_1500";
  s.bs = 3, s.width = 1500, s.numDraft = 1600, s.slots = 8192;
  s.accepted = {1, 1400, 1500}, s.layout = Layout::HolesAfterFirst;
  s.rowBytes = {16, 8};
  s.discriminate = true;
  add(s);
  s.name = "window_long_cycle_across_bs3_w1500";
  s.shape = Shape::CrossCycle, s.expectPath = ref::kPathStaged;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_rows_1_3_7_65_127";
  s.bs = 10, s.width = 4, s.numDraft = 8, s.rowBytes = {1, 3, 7, 65, 127};
  s.discriminate = true;
  add(s);
  s.name = "window_buffers_of_different_slot_counts";
  s.slots = 100, s.rowBytes = {16, 24, 8}, s.bufferSlots = {100, 300, 129};
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_tree_bs512_w4_d8";
  s.bs = 512, s.width = 4, s.numDraft = 8, s.slots = 8192;
  s.rowBytes = {64, 64}, s.discriminate = true;
  add(s);
  s = CaseSpec();
  s.targets = TargetSource::Window;
  s.name = "window_garbage_in_unread_positions";
  s.bs = 10, s.width = 5, s.numDraft = 12, s.slots = 512;
  s.layout = Layout::HolesAfterFirst;
  s.mutate = fillUnreadWithGarbage, s.discriminate = true;
  add(s);

  // Every dtype combination of the three tensors a window call reads; the
  // ignored row tensors in other dtypes.
  for (int mask = 0; mask < 8; ++mask) {
    s = CaseSpec();
    s.targets = TargetSource::Window;
    s.dtypes = dtypesFromMask((mask << 3) | (~mask & 7));
    static const Shape shapes[4] = {Shape::Tree, Shape::Crossed, Shape::Cycle,
                                    Shape::CrossCycle};
    static const char *shapeNames[4] = {"tree", "crossed", "cycle",
                                        "crosscycle"};
    s.shape = shapes[mask % 4];
    s.name = std::string("window_dtypes_") +
             dtypesName(s.dtypes, TargetSource::Window) + "_" +
             shapeNames[mask % 4];
    s.bs = 12, s.width = 5, s.numDraft = 12, s.slots = 512;
    s.layout = Layout::HolesAfterFirst;
    s.rowBytes = {12, 20};
    s.discriminate = true;
    add(s);
  }
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
      return runChecked(mover, in, spec.dtypes, modeOf(spec), buffers);
    });
  }

  // Two calls on the same registered buffers: the second starts from the
  // first's result; then one with window targets on the result.
  results.run("random:three_calls_same_buffers", [&]() -> std::string {
    CaseSpec spec;
    spec.bs = 12, spec.width = 5, spec.numDraft = 12, spec.slots = 512;
    spec.layout = Layout::HolesAfterFirst;
    MoveInputs first, second, third;
    std::vector<KVBuffer> buffers, unused;
    spec.seed = 91;
    std::string failure = buildCase(spec, &first, &buffers);
    spec.seed = 92, spec.shape = Shape::Crossed;
    if (failure.empty())
      failure = buildCase(spec, &second, &unused);
    spec.seed = 93, spec.shape = Shape::Cycle;
    spec.targets = TargetSource::Window;
    if (failure.empty())
      failure = buildCase(spec, &third, &unused);
    if (!failure.empty())
      return failure;
    std::vector<KVBuffer> after;
    failure = runChecked(mover, first, spec.dtypes, CallMode{}, buffers,
                         nullptr, &after);
    if (!failure.empty())
      return "first call: " + failure;
    buffers = after;
    failure = runChecked(mover, second, spec.dtypes, CallMode{}, buffers,
                         nullptr, &after);
    if (!failure.empty())
      return "second call: " + failure;
    buffers = after;
    CallMode window;
    window.targets = TargetSource::Window;
    failure = runChecked(mover, third, spec.dtypes, window, buffers);
    return failure.empty() ? failure : "third call (window): " + failure;
  });
}

//===----------------------------------------------------------------------===//
// Rejections: per-request fault isolation
//===----------------------------------------------------------------------===//

/// Marks a status field whose value a case does not pin down.
constexpr int64_t kAny = INT64_MIN + 1;

/// What a bad input must produce (the reference must agree too).
struct ExpectedStatus {
  int64_t code = ref::kOk;
  int64_t entry = kAny;
  int64_t value = kAny;
  int64_t bound = kAny;
  int64_t skipped = 1;
};

/// The valid base input of the rejection cases: bs = 6, W = 5, D = 12 tree
/// with holes, acc = {3, 1, 5, 2, 4, 2}, 256 slots (len(out_cache_loc) 72).
CaseSpec rejectionBase(int32_t dtype, TargetSource targets) {
  CaseSpec spec;
  spec.seed = 4242;
  spec.targets = targets;
  spec.bs = 6, spec.width = 5, spec.numDraft = 12, spec.slots = 256;
  spec.layout = Layout::HolesAfterFirst;
  spec.accepted = {3, 1, 5, 2, 4, 2};
  spec.rowBytes = {16, 24};
  spec.dtypes = uniformDtypes(dtype);
  return spec;
}

/// Flat accept_index entry of the k-th non -1 column of row `r`.
int64_t acceptedEntry(const MoveInputs &in, int64_t r, int64_t k) {
  for (int64_t c = 0; c < in.width; ++c)
    if (in.acceptIndex[r * in.width + c] != -1 && k-- == 0)
      return r * in.width + c;
  return -1;
}

/// out_cache_loc position of the source of request r's k-th accepted token.
int64_t sourcePosition(const MoveInputs &in, int64_t r, int64_t k) {
  return in.acceptIndex[acceptedEntry(in, r, k)];
}

/// req_to_token entry of request r's j-th target.
int64_t &targetCell(MoveInputs &in, int64_t r, int64_t j) {
  return in.reqToToken[in.reqPoolIndices[r] * in.poolLen + in.seqLens[r] + j];
}

/// The first -1 column of row `r` (-1 when full).
int64_t freeEntry(const MoveInputs &in, int64_t r) {
  for (int64_t c = 0; c < in.width; ++c)
    if (in.acceptIndex[r * in.width + c] == -1)
      return r * in.width + c;
  return -1;
}

/// A rejection case: a change of the base spec, a mutation of the base input
/// and the status it must produce.
struct Rejection {
  std::string name;
  TargetSource targets = TargetSource::ReqToToken;
  std::function<ExpectedStatus(MoveInputs &)> corrupt;
  std::function<void(CaseSpec &)> base;
};

std::vector<Rejection> requestRowRejections() {
  using E = ExpectedStatus;
  std::vector<Rejection> list;
  auto add = [&](const std::string &name,
                 std::function<ExpectedStatus(MoveInputs &)> corrupt,
                 std::function<void(CaseSpec &)> base = nullptr) {
    list.push_back({name, TargetSource::ReqToToken, corrupt, base});
  };
  // (d) req_pool_indices.
  add("req_pool_index_past_end", [](MoveInputs &in) {
    in.reqPoolIndices[2] = in.maxReqs;
    return E{ref::kReqPoolIndex, 2, in.maxReqs, in.maxReqs};
  });
  add("req_pool_index_negative", [](MoveInputs &in) {
    in.reqPoolIndices[0] = -1;
    return E{ref::kReqPoolIndex, 0, -1, in.maxReqs};
  });
  add("req_pool_index_int64_max", [](MoveInputs &in) {
    in.reqPoolIndices[3] = kInt64Max;
    return E{ref::kReqPoolIndex, 3, kInt64Max, in.maxReqs};
  });
  add("req_pool_index_int64_min", [](MoveInputs &in) {
    in.reqPoolIndices[5] = kInt64Min;
    return E{ref::kReqPoolIndex, 5, kInt64Min, in.maxReqs};
  });
  add("req_pool_index_2pow32_plus_1", [](MoveInputs &in) {
    // Truncated to 32 bits it would be row 1, a valid row.
    in.reqPoolIndices[1] = k2Pow32 + 1;
    return E{ref::kReqPoolIndex, 1, k2Pow32 + 1, in.maxReqs};
  });
  // (a), (b) num_correct_drafts.
  add("num_correct_drafts_negative", [](MoveInputs &in) {
    // acc = 0 and an empty row: only the sign is wrong.
    in.numCorrectDrafts[3] = -1;
    for (int64_t c = 0; c < in.width; ++c)
      in.acceptIndex[3 * in.width + c] = -1;
    return E{ref::kNegativeDrafts, 3, -1, 0};
  });
  add("num_correct_drafts_negative_row_kept", [](MoveInputs &in) {
    in.numCorrectDrafts[2] = -1; // the row still has 5 entries: (a) first
    return E{ref::kNegativeDrafts, 2, -1, 0};
  });
  add("num_correct_drafts_int64_min", [](MoveInputs &in) {
    in.numCorrectDrafts[1] = kInt64Min;
    return E{ref::kNegativeDrafts, 1, kInt64Min, 0};
  });
  add("num_correct_drafts_int64_max", [](MoveInputs &in) {
    in.numCorrectDrafts[4] = kInt64Max; // acc would be 2^63
    return E{ref::kAcceptCount, 4, 4, kInt64Max};
  });
  add("num_correct_drafts_int32_max", [](MoveInputs &in) {
    in.numCorrectDrafts[4] = kInt32Max;
    return E{ref::kAcceptCount, 4, 4, kInt32Max + 1};
  });
  add("num_correct_drafts_2pow32_plus_2", [](MoveInputs &in) {
    // Truncated to 32 bits it would be 2, matching the row's 3 entries.
    in.numCorrectDrafts[0] = k2Pow32 + 2;
    return E{ref::kAcceptCount, 0, 3, k2Pow32 + 3};
  });
  add("num_correct_drafts_equals_w_row_full", [](MoveInputs &in) {
    in.numCorrectDrafts[2] = in.width; // acc = W + 1, the row holds W
    return E{ref::kAcceptCount, 2, in.width, in.width + 1};
  });
  // (d) seq_lens.
  add("seq_lens_plus_acc_past_pool_len", [](MoveInputs &in) {
    in.seqLens[1] = in.poolLen - 1 + 1; // acc_1 = 1
    return E{ref::kSeqRange, 1, in.poolLen + 1, in.poolLen};
  });
  add("seq_lens_plus_acc_past_pool_len_long_row", [](MoveInputs &in) {
    in.seqLens[2] = in.poolLen - 5 + 2; // acc_2 = 5
    return E{ref::kSeqRange, 2, in.poolLen + 2, in.poolLen};
  });
  add("seq_lens_negative", [](MoveInputs &in) {
    in.seqLens[4] = -1;
    return E{ref::kSeqRange, 4, -1, in.poolLen};
  });
  add("seq_lens_int64_min", [](MoveInputs &in) {
    in.seqLens[4] = kInt64Min;
    return E{ref::kSeqRange, 4, kInt64Min, in.poolLen};
  });
  add("seq_lens_int64_max", [](MoveInputs &in) {
    in.seqLens[2] = kInt64Max; // + acc 5 saturates
    return E{ref::kSeqRange, 2, kInt64Max, in.poolLen};
  });
  add("seq_lens_plus_acc_is_2pow63", [](MoveInputs &in) {
    in.seqLens[2] = kInt64Max - 4; // + 5 wraps to INT64_MIN in i64
    return E{ref::kSeqRange, 2, kInt64Max, in.poolLen};
  });
  add("seq_lens_plus_acc_is_int64_max", [](MoveInputs &in) {
    in.seqLens[2] = kInt64Max - 5;
    return E{ref::kSeqRange, 2, kInt64Max, in.poolLen};
  });
  add("seq_lens_near_2pow63_acc1", [](MoveInputs &in) {
    in.seqLens[1] = kInt64Max - 1; // acc_1 = 1
    return E{ref::kSeqRange, 1, kInt64Max, in.poolLen};
  });
  add("seq_lens_2pow32", [](MoveInputs &in) {
    // Truncated to 32 bits it would be 0, a valid start.
    in.seqLens[3] = k2Pow32; // acc_3 = 2
    return E{ref::kSeqRange, 3, k2Pow32 + 2, in.poolLen};
  });
  add("seq_lens_int32_max", [](MoveInputs &in) {
    in.seqLens[0] = kInt32Max; // + acc 3 wraps in i32
    return E{ref::kSeqRange, 0, kInt32Max + 3, in.poolLen};
  });
  // (c) accept_index.
  add("accept_index_past_out_cache_loc", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 2, 1);
    in.acceptIndex[entry] = n;
    return E{ref::kAcceptIndex, entry, n, n};
  });
  add("accept_index_far_past_out_cache_loc", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 5, 1);
    in.acceptIndex[entry] = 1000000;
    return E{ref::kAcceptIndex, entry, 1000000, n};
  });
  add("accept_index_below_sentinel", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 0, 0);
    in.acceptIndex[entry] = -2;
    return E{ref::kAcceptIndex, entry, -2, n};
  });
  add("accept_index_int32_max", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 4, 2);
    in.acceptIndex[entry] = kInt32Max;
    return E{ref::kAcceptIndex, entry, kInt32Max, n};
  });
  add("accept_index_int64_min", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 3, 1);
    in.acceptIndex[entry] = kInt64Min;
    return E{ref::kAcceptIndex, entry, kInt64Min, n};
  });
  add("accept_index_int64_max", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 2, 4);
    in.acceptIndex[entry] = kInt64Max;
    return E{ref::kAcceptIndex, entry, kInt64Max, n};
  });
  add("accept_index_2pow32_plus_3", [](MoveInputs &in) {
    // Truncated to 32 bits it would be position 3.
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 1, 0);
    in.acceptIndex[entry] = k2Pow32 + 3;
    return E{ref::kAcceptIndex, entry, k2Pow32 + 3, n};
  });
  add("accept_index_2pow32_minus_1", [](MoveInputs &in) {
    // Truncated to 32 bits it would be the sentinel.
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 2, 2);
    in.acceptIndex[entry] = k2Pow32 - 1;
    return E{ref::kAcceptIndex, entry, k2Pow32 - 1, n};
  });
  add("accept_row_count_short", [](MoveInputs &in) {
    in.acceptIndex[acceptedEntry(in, 4, 3)] = -1; // acc_4 = 4
    return E{ref::kAcceptCount, 4, 3, 4};
  });
  add("accept_row_count_long", [](MoveInputs &in) {
    in.acceptIndex[freeEntry(in, 1)] = 12 + 5; // acc_1 = 1
    return E{ref::kAcceptCount, 1, 2, 1};
  });
  // (e) slots.
  add("target_slot_past_end", [](MoveInputs &in) {
    targetCell(in, 2, 3) = 256;
    return E{ref::kSlot, 2 * in.width + 3, 256, 256};
  });
  add("target_slot_negative", [](MoveInputs &in) {
    targetCell(in, 5, 0) = -3;
    return E{ref::kSlot, 5 * in.width, -3, 256};
  });
  add("target_slot_2pow32_plus_5", [](MoveInputs &in) {
    targetCell(in, 4, 1) = k2Pow32 + 5;
    return E{ref::kSlot, 4 * in.width + 1, k2Pow32 + 5, 256};
  });
  add("source_slot_past_end", [](MoveInputs &in) {
    in.outCacheLoc[sourcePosition(in, 3, 1)] = 256 + 7;
    return E{ref::kSlot, 3 * in.width + 1, 256 + 7, 256};
  });
  add("source_slot_negative", [](MoveInputs &in) {
    in.outCacheLoc[sourcePosition(in, 1, 0)] = -1;
    return E{ref::kSlot, 1 * in.width, -1, 256};
  });
  add("source_slot_2pow32", [](MoveInputs &in) {
    // Truncated to 32 bits it would be slot 0.
    in.outCacheLoc[sourcePosition(in, 2, 3)] = k2Pow32;
    return E{ref::kSlot, 2 * in.width + 3, k2Pow32, 256};
  });
  add("target_and_source_bad_same_entry", [](MoveInputs &in) {
    targetCell(in, 5, 1) = 300;
    in.outCacheLoc[sourcePosition(in, 5, 1)] = 400;
    return E{ref::kSlot, 5 * in.width + 1, 300, 256}; // target first
  });
  add("source_bad_before_later_target_bad", [](MoveInputs &in) {
    in.outCacheLoc[sourcePosition(in, 2, 1)] = 500;
    targetCell(in, 2, 3) = 600;
    return E{ref::kSlot, 2 * in.width + 1, 500, 256}; // lower entry first
  });
  // Buffer 1 holds 200 slots only; every valid slot of the base is below
  // 200 because the base is generated with 200 slots, then slot 230 (a row
  // of buffer 0, not of buffer 1) becomes a target or a source.
  auto smaller = [](CaseSpec &spec) {
    spec.slots = 200;
    spec.bufferSlots = {256, 200};
  };
  add(
      "target_slot_past_smaller_buffer",
      [](MoveInputs &in) {
        targetCell(in, 0, 1) = 230;
        return E{ref::kSlot, 1, 230, 200};
      },
      smaller);
  add(
      "source_slot_past_smaller_buffer",
      [](MoveInputs &in) {
        in.outCacheLoc[sourcePosition(in, 4, 2)] = 210;
        return E{ref::kSlot, 4 * in.width + 2, 210, 200};
      },
      smaller);
  // The order of the checks inside one request.
  add("order_count_before_accept_index", [](MoveInputs &in) {
    in.acceptIndex[acceptedEntry(in, 3, 1)] = 999; // (c)
    in.acceptIndex[freeEntry(in, 3)] = 4;          // (b): 3 entries, acc 2
    return E{ref::kAcceptCount, 3, 3, 2};
  });
  add("order_accept_index_before_req_pool_index", [](MoveInputs &in) {
    int64_t entry = acceptedEntry(in, 1, 0);
    in.acceptIndex[entry] = -7;
    in.reqPoolIndices[1] = -1;
    return E{ref::kAcceptIndex, entry, -7,
             static_cast<int64_t>(in.outCacheLoc.size())};
  });
  add("order_req_pool_index_before_seq_lens", [](MoveInputs &in) {
    in.reqPoolIndices[4] = in.maxReqs + 1;
    in.seqLens[4] = -1;
    return E{ref::kReqPoolIndex, 4, in.maxReqs + 1, in.maxReqs};
  });
  add("order_seq_lens_before_slot", [](MoveInputs &in) {
    in.outCacheLoc[sourcePosition(in, 0, 0)] = 9999;
    in.seqLens[0] = in.poolLen;
    return E{ref::kSeqRange, 0, in.poolLen + 3, in.poolLen};
  });
  // Several bad requests: the lowest-index one is reported.
  add("two_bad_requests_lowest_reported", [](MoveInputs &in) {
    in.reqPoolIndices[4] = -1;
    in.numCorrectDrafts[1] = -1;
    E e{ref::kNegativeDrafts, 1, -1, 0};
    e.skipped = 2;
    return e;
  });
  add("three_bad_requests_different_codes", [](MoveInputs &in) {
    in.outCacheLoc[sourcePosition(in, 5, 0)] = -4;
    in.seqLens[2] = in.poolLen;
    in.acceptIndex[freeEntry(in, 3)] = 0;
    // Requests 2 (seq_lens, acc 5), 3 (count) and 5 (slot): 2 is reported.
    E e{ref::kSeqRange, 2, in.poolLen + 5, in.poolLen};
    e.skipped = 3;
    return e;
  });
  add("every_request_claims_w_plus_1", [](MoveInputs &in) {
    // Every request claims W + 1 tokens and fills its row.
    for (int64_t r = 0; r < in.bs; ++r) {
      in.numCorrectDrafts[r] = in.width;
      for (int64_t c = 0; c < in.width; ++c)
        in.acceptIndex[r * in.width + c] = r * 12 + c;
    }
    E e{ref::kAcceptCount, 0, in.width, in.width + 1};
    e.skipped = in.bs;
    return e;
  });
  // One bad request among 8: the other 7 move exactly.
  auto eight = [](CaseSpec &spec) {
    spec.bs = 8;
    spec.accepted = {3, 1, 5, 2, 4, 2, 5, 3};
  };
  add(
      "one_bad_of_8_source_slot",
      [](MoveInputs &in) {
        in.outCacheLoc[sourcePosition(in, 3, 1)] = 256;
        return E{ref::kSlot, 3 * in.width + 1, 256, 256};
      },
      eight);
  add(
      "one_bad_of_8_last_seq_lens",
      [](MoveInputs &in) {
        in.seqLens[7] = kInt64Max - 1;
        return E{ref::kSeqRange, 7, kInt64Max, in.poolLen};
      },
      eight);
  add(
      "one_bad_of_8_first_req_pool_index",
      [](MoveInputs &in) {
        in.reqPoolIndices[0] = in.maxReqs;
        return E{ref::kReqPoolIndex, 0, in.maxReqs, in.maxReqs};
      },
      eight);
  // Cross-request overlap with a bad request: the good ones still move
  // through each other's rows.
  add(
      "one_bad_of_8_crossed",
      [](MoveInputs &in) {
        in.numCorrectDrafts[5] = kInt64Max;
        return E{ref::kAcceptCount, 5, 2, kInt64Max};
      },
      [](CaseSpec &spec) {
        spec.bs = 8;
        spec.accepted = {3, 1, 5, 2, 4, 2, 5, 3};
        spec.shape = Shape::CrossCycle;
      });
  return list;
}

std::vector<Rejection> windowRejections() {
  using E = ExpectedStatus;
  std::vector<Rejection> list;
  auto add = [&](const std::string &name,
                 std::function<ExpectedStatus(MoveInputs &)> corrupt,
                 std::function<void(CaseSpec &)> base = nullptr) {
    list.push_back({"window_" + name, TargetSource::Window, corrupt, base});
  };
  const int64_t draft = 12;
  add("num_correct_drafts_negative", [](MoveInputs &in) {
    in.numCorrectDrafts[2] = -1;
    return E{ref::kNegativeDrafts, 2, -1, 0};
  });
  add("num_correct_drafts_int64_max", [](MoveInputs &in) {
    in.numCorrectDrafts[4] = kInt64Max;
    return E{ref::kAcceptCount, 4, 4, kInt64Max};
  });
  add("num_correct_drafts_equals_w_row_full", [](MoveInputs &in) {
    in.numCorrectDrafts[2] = in.width;
    return E{ref::kAcceptCount, 2, in.width, in.width + 1};
  });
  add("accept_row_count_short", [](MoveInputs &in) {
    in.acceptIndex[acceptedEntry(in, 4, 3)] = -1;
    return E{ref::kAcceptCount, 4, 3, 4};
  });
  add("accept_index_past_out_cache_loc", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 2, 1);
    in.acceptIndex[entry] = n;
    return E{ref::kAcceptIndex, entry, n, n};
  });
  add("accept_index_int32_max", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 4, 2);
    in.acceptIndex[entry] = kInt32Max;
    return E{ref::kAcceptIndex, entry, kInt32Max, n};
  });
  add("accept_index_int64_min", [](MoveInputs &in) {
    int64_t n = static_cast<int64_t>(in.outCacheLoc.size());
    int64_t entry = acceptedEntry(in, 3, 1);
    in.acceptIndex[entry] = kInt64Min;
    return E{ref::kAcceptIndex, entry, kInt64Min, n};
  });
  // acc > D: W = 6, D = 4.
  add(
      "acc_past_window",
      [](MoveInputs &in) {
        in.numCorrectDrafts[2] = 4; // acc 5 > D = 4
        in.acceptIndex[freeEntry(in, 2)] = 2 * 4 + 1;
        return E{ref::kWindowRange, 2, 5, 4};
      },
      [](CaseSpec &spec) {
        spec.width = 6, spec.numDraft = 4;
        spec.accepted = {3, 1, 4, 2, 4, 2};
      });
  add(
      "acc_is_w_past_window",
      [](MoveInputs &in) {
        in.numCorrectDrafts[0] = 5; // acc 6 = W > D = 4
        for (int64_t c = 0; c < in.width; ++c)
          in.acceptIndex[c] = c % 4;
        return E{ref::kWindowRange, 0, 6, 4};
      },
      [](CaseSpec &spec) {
        spec.width = 6, spec.numDraft = 4;
        spec.accepted = {3, 1, 4, 2, 4, 2};
      });
  // A target slot (window head) that no entry reads: request 2 (acc 5)
  // accepts nodes 0 < n1 < ... of 12, so some head j in [1, 5) is not one.
  add("target_slot_past_end", [draft](MoveInputs &in) {
    for (int64_t j = 1; j < 5; ++j) {
      bool read = false;
      for (int64_t k = 0; k < 5; ++k)
        read = read || sourcePosition(in, 2, k) == 2 * draft + j;
      if (read)
        continue;
      in.outCacheLoc[2 * draft + j] = 256;
      return E{ref::kSlot, 2 * in.width + j, 256, 256};
    }
    return E{-1}; // the base has no such head: the case reports it
  });
  // A source past the window head: request 4 (acc 4) reads a node >= 4.
  add("source_slot_past_end", [draft](MoveInputs &in) {
    for (int64_t k = 4 - 1; k > 0; --k) {
      int64_t position = sourcePosition(in, 4, k);
      if (position - 4 * draft < 4)
        continue;
      in.outCacheLoc[position] = 999;
      return E{ref::kSlot, 4 * in.width + k, 999, 256};
    }
    return E{-1};
  });
  add("head_bad_is_own_source", [draft](MoveInputs &in) {
    // Node 0 of request 1 is both its target 0 and its source 0.
    in.outCacheLoc[1 * draft] = 300;
    return E{ref::kSlot, 1 * in.width, 300, 256};
  });
  add("every_request_claims_w_plus_1", [draft](MoveInputs &in) {
    for (int64_t r = 0; r < in.bs; ++r) {
      in.numCorrectDrafts[r] = in.width;
      for (int64_t c = 0; c < in.width; ++c)
        in.acceptIndex[r * in.width + c] = r * draft + c;
    }
    E e{ref::kAcceptCount, 0, in.width, in.width + 1};
    e.skipped = in.bs;
    return e;
  });
  add("two_bad_requests_lowest_reported", [draft](MoveInputs &in) {
    in.outCacheLoc[5 * draft] = -2;
    in.numCorrectDrafts[3] = 0; // row 3 holds 2
    E e{ref::kAcceptCount, 3, 2, 1};
    e.skipped = 2;
    return e;
  });
  auto eight = [](CaseSpec &spec) {
    spec.bs = 8;
    spec.accepted = {3, 1, 5, 2, 4, 2, 5, 3};
  };
  add(
      "one_bad_of_8_acc_index",
      [](MoveInputs &in) {
        int64_t entry = acceptedEntry(in, 6, 3);
        in.acceptIndex[entry] = -100;
        return E{ref::kAcceptIndex, entry, -100,
                 static_cast<int64_t>(in.outCacheLoc.size())};
      },
      eight);
  add(
      "one_bad_of_8_rows_garbage",
      [draft](MoveInputs &in) {
        in.outCacheLoc[3 * draft] = 1000;
        return E{ref::kSlot, 3 * in.width, 1000, 256};
      },
      [](CaseSpec &spec) {
        spec.bs = 8;
        spec.accepted = {3, 1, 5, 2, 4, 2, 5, 3};
        spec.rows = Rows::Garbage;
      });
  add(
      "one_bad_of_8_rows_absent_crossed",
      [](MoveInputs &in) {
        in.numCorrectDrafts[6] = -1;
        return E{ref::kNegativeDrafts, 6, -1, 0};
      },
      [](CaseSpec &spec) {
        spec.bs = 8;
        spec.accepted = {3, 1, 5, 2, 4, 2, 5, 3};
        spec.rows = Rows::Absent;
        spec.shape = Shape::CrossCycle;
      });
  return list;
}

/// Runs one rejection case: the base is valid, the corrupted input must
/// give `corrupt`'s status in the reference and in the runtime, the good
/// requests must move exactly as the reference says and the bad ones not
/// at all.
std::string runRejection(specc_mover *mover, const Rejection &rejection,
                         int32_t dtype, int sync, std::string *note) {
  CaseSpec spec = rejectionBase(dtype, rejection.targets);
  if (rejection.base)
    rejection.base(spec);
  spec.sync = sync;
  MoveInputs in;
  std::vector<KVBuffer> buffers;
  std::string broken = buildCase(spec, &in, &buffers);
  if (!broken.empty())
    return "base: " + broken;
  ExpectedStatus expected = rejection.corrupt(in);
  if (expected.code <= 0)
    return "test bug: the base lacks what the corruption needs";
  Dtypes dtypes = spec.dtypes;
  std::string widened = widenToFit(in, dtypes);
  // The reference must agree with the case's expectation.
  PerRequestResult plan =
      ref::planPerRequest(in, spec.targets, ref::minSlots(buffers));
  const Status &s = plan.status;
  const int64_t want[5] = {expected.code, expected.entry, expected.value,
                           expected.bound, expected.skipped};
  const int fields[5] = {ref::kCode, ref::kEntry, ref::kValue, ref::kBound,
                         ref::kSkipped};
  for (int f = 0; f < 5; ++f)
    if (want[f] != kAny && s[fields[f]] != want[f])
      return "Reference.h disagrees with the case: it gives " + statusText(s);
  std::string distinct = ref::checkDistinctTargets(plan);
  if (!distinct.empty())
    return "test bug: " + distinct;
  if (s[ref::kSkipped] < in.bs && s[ref::kMoved] == 0)
    return "test bug: the good requests move nothing, so the case cannot "
           "tell whether they moved";
  std::string failure =
      runChecked(mover, in, dtypes, modeOf(spec), buffers, note);
  if (!widened.empty())
    *note += " (" + widened + ")";
  return failure;
}

void runRejectionCases(Results &results, specc_mover *mover) {
  std::vector<Rejection> all = requestRowRejections();
  for (const Rejection &r : windowRejections())
    all.push_back(r);
  for (int32_t dtype : {SPECC_INT64, SPECC_INT32})
    for (const Rejection &rejection : all)
      results.run("reject:" + rejection.name + "_int" + dtypeName(dtype),
                  [&](std::string &note) {
                    return runRejection(mover, rejection, dtype, 1, &note);
                  });

  // Asynchronous calls on bad input: SPECC_SUCCESS, the status record holds
  // the violation, the good requests moved.
  for (const Rejection &rejection : all) {
    if (rejection.name != "source_slot_past_end" &&
        rejection.name != "window_one_bad_of_8_rows_garbage" &&
        rejection.name != "seq_lens_plus_acc_is_2pow63")
      continue;
    results.run("reject:" + rejection.name + "_sync0", [&](std::string &note) {
      return runRejection(mover, rejection, SPECC_INT64, 0, &note);
    });
  }

  // Window targets with len(out_cache_loc) not a multiple of bs: refused,
  // nothing changes; a valid call afterwards works.
  for (int sync : {1, 0})
    results.run(
        "reject:window_len_not_multiple_of_bs_sync" + std::to_string(sync),
        [&](std::string &note) -> std::string {
          CaseSpec spec = rejectionBase(SPECC_INT64, TargetSource::Window);
          spec.sync = sync;
          MoveInputs good;
          std::vector<KVBuffer> buffers;
          std::string broken = buildCase(spec, &good, &buffers);
          if (!broken.empty())
            return broken;
          MoveInputs bad = good;
          bad.outCacheLoc.push_back(bad.outCacheLoc[0]);
          std::string failure =
              runChecked(mover, bad, spec.dtypes, modeOf(spec), buffers, &note);
          if (!failure.empty())
            return failure;
          bad.outCacheLoc.resize(good.outCacheLoc.size() - 1);
          failure = runChecked(mover, bad, spec.dtypes, modeOf(spec), buffers);
          if (!failure.empty())
            return "len one short: " + failure;
          failure = runChecked(mover, good, spec.dtypes, modeOf(spec), buffers);
          return failure.empty() ? failure : "the valid call after: " + failure;
        });
}

//===----------------------------------------------------------------------===//
// The status record, rewritten by every call
//===----------------------------------------------------------------------===//

void runStatusCases(Results &results, specc_mover *mover) {
  // Builds the rejection base for `targets` (0 on success).
  auto base = [](TargetSource targets, MoveInputs *in,
                 std::vector<KVBuffer> *buffers, CaseSpec *spec) {
    *spec = rejectionBase(SPECC_INT64, targets);
    return buildCase(*spec, in, buffers);
  };

  // A valid call right after a rejected one, on the same buffers: code 0,
  // nothing skipped, the move happens.
  for (TargetSource targets : {TargetSource::ReqToToken, TargetSource::Window})
    results.run(std::string("status:valid_call_after_rejection_") +
                    targetsName(targets),
                [&]() -> std::string {
                  CaseSpec spec;
                  MoveInputs good;
                  std::vector<KVBuffer> buffers, after;
                  std::string broken = base(targets, &good, &buffers, &spec);
                  if (!broken.empty())
                    return broken;
                  MoveInputs bad = good;
                  bad.numCorrectDrafts[1] = -1;
                  bad.numCorrectDrafts[4] = kInt64Max;
                  std::string failure =
                      runChecked(mover, bad, spec.dtypes, modeOf(spec), buffers,
                                 nullptr, &after);
                  if (!failure.empty())
                    return "the rejection itself: " + failure;
                  failure =
                      runChecked(mover, good, spec.dtypes, modeOf(spec), after);
                  if (!failure.empty())
                    return "the valid call: " + failure;
                  Status status;
                  failure = readStatus(mover, &status);
                  if (failure.empty() &&
                      (status[ref::kCode] != 0 || status[ref::kSkipped] != 0))
                    failure = "after the valid call the status is " +
                              statusText(status);
                  return failure;
                });

  // A chain after a move: moved and path are rewritten to 0, not kept.
  results.run("status:chain_after_move", [&]() -> std::string {
    CaseSpec spec;
    MoveInputs moving, chain;
    std::vector<KVBuffer> buffers, unused, after;
    std::string broken =
        base(TargetSource::ReqToToken, &moving, &buffers, &spec);
    spec.shape = Shape::Chain, spec.seed = 4343;
    if (broken.empty())
      broken = buildCase(spec, &chain, &unused);
    if (!broken.empty())
      return broken;
    std::string failure = runChecked(mover, moving, spec.dtypes, CallMode{},
                                     buffers, nullptr, &after);
    if (!failure.empty())
      return "the moving call: " + failure;
    failure = runChecked(mover, chain, spec.dtypes, CallMode{}, after);
    return failure.empty() ? failure : "the chain: " + failure;
  });

  // A rejection after a rejection: the second record only (skipped is not
  // summed, the first violation is not kept).
  results.run("status:rejection_after_rejection", [&]() -> std::string {
    CaseSpec spec;
    MoveInputs first;
    std::vector<KVBuffer> buffers, after;
    std::string broken =
        base(TargetSource::ReqToToken, &first, &buffers, &spec);
    if (!broken.empty())
      return broken;
    MoveInputs second = first;
    first.reqPoolIndices[0] = -1;
    first.reqPoolIndices[1] = -1;
    first.reqPoolIndices[2] = -1;
    second.seqLens[4] = -5;
    std::string failure = runChecked(mover, first, spec.dtypes, CallMode{},
                                     buffers, nullptr, &after);
    if (!failure.empty())
      return "the first rejection: " + failure;
    failure = runChecked(mover, second, spec.dtypes, CallMode{}, after);
    return failure.empty() ? failure : "the second rejection: " + failure;
  });

  // Window, then req_to_token targets with a bad request, then a bs = 0
  // call: each record is the last call's.
  results.run("status:mixed_sources_then_bs0", [&]() -> std::string {
    CaseSpec spec;
    MoveInputs window, rows;
    std::vector<KVBuffer> buffers, unused, after;
    std::string broken = base(TargetSource::Window, &window, &buffers, &spec);
    if (broken.empty())
      broken = base(TargetSource::ReqToToken, &rows, &unused, &spec);
    if (!broken.empty())
      return broken;
    rows.outCacheLoc[sourcePosition(rows, 2, 0)] = 4096;
    CallMode windowMode;
    windowMode.targets = TargetSource::Window;
    std::string failure = runChecked(mover, window, spec.dtypes, windowMode,
                                     buffers, nullptr, &after);
    if (!failure.empty())
      return "window call: " + failure;
    buffers = after;
    failure = runChecked(mover, rows, spec.dtypes, CallMode{}, buffers, nullptr,
                         &after);
    if (!failure.empty())
      return "req_to_token call: " + failure;
    MoveInputs empty;
    empty.width = 5;
    empty.maxReqs = rows.maxReqs, empty.poolLen = rows.poolLen;
    empty.reqToToken = rows.reqToToken;
    failure = runChecked(mover, empty, spec.dtypes, windowMode, after);
    return failure.empty() ? failure : "bs = 0 call: " + failure;
  });
}

//===----------------------------------------------------------------------===//
// The report: violations of calls nobody waited for
//===----------------------------------------------------------------------===//

/// Runs `body` on a fresh CPU mover of `entries` entries.
std::string withMover(int64_t entries,
                      const std::function<std::string(specc_mover *)> &body) {
  specc_mover *mover = nullptr;
  int rc = specc_mover_create(SPECC_DEVICE_CPU, entries, &mover);
  if (rc != SPECC_SUCCESS || !mover)
    return describeRc("specc_mover_create(CPU)", rc);
  std::string failure = body(mover);
  specc_mover_destroy(mover);
  return failure;
}

/// One call without the checks of runChecked: its return code, the message,
/// and the buffers after it.
int rawCall(specc_mover *mover, const MoveInputs &in, const CaseSpec &spec,
            int sync, std::vector<KVBuffer> &buffers) {
  CallMode mode = modeOf(spec);
  mode.sync = sync;
  bool setFailed = false;
  return callMove(mover, in, spec.dtypes, mode, buffers, &setFailed);
}

void runReportCases(Results &results) {
  auto base = [](CaseSpec *spec, MoveInputs *good, MoveInputs *bad,
                 std::vector<KVBuffer> *buffers) {
    *spec = rejectionBase(SPECC_INT64, TargetSource::ReqToToken);
    std::string broken = buildCase(*spec, good, buffers);
    *bad = *good;
    bad->numCorrectDrafts[3] = -1;
    return broken;
  };

  // The call after a bad one that nobody waited for does its own work, then
  // says what the earlier call found; the call after that is clean.
  results.run(
      "report:next_call_reports_the_earlier_violation", [&]() -> std::string {
        return withMover(64, [&](specc_mover *m) -> std::string {
          CaseSpec spec;
          MoveInputs good, bad;
          std::vector<KVBuffer> buffers;
          std::string broken = base(&spec, &good, &bad, &buffers);
          if (!broken.empty())
            return broken;
          std::vector<KVBuffer> want = buffers;
          ref::moveAcceptTokensPerRequest(bad, spec.targets, want);
          ref::moveAcceptTokensPerRequest(good, spec.targets, want);
          if (int rc = rawCall(m, bad, spec, 0, buffers))
            return describeRc("the bad call (sync 0)", rc);
          int rc = rawCall(m, good, spec, 0, buffers);
          if (rc != SPECC_ERROR_EARLIER_INPUT)
            return "the next call returned " + std::to_string(rc) +
                   ", expected SPECC_ERROR_EARLIER_INPUT";
          std::string message = lastError();
          if (message.find("earlier call") == std::string::npos ||
              message.find("num_correct_drafts[3] = -1") == std::string::npos)
            return "message '" + message +
                   "' does not name the earlier call's violation";
          std::string failure = compareBuffers(buffers, want);
          if (!failure.empty())
            return "the reporting call did not do its own work: " + failure;
          rc = rawCall(m, good, spec, 0, buffers);
          return rc == SPECC_SUCCESS
                     ? std::string()
                     : describeRc("the call after the report", rc);
        });
      });

  // A waiting call that breaks the contract also counts the violations
  // before it that nobody took.
  results.run("report:waiting_call_counts_earlier_ones", [&]() -> std::string {
    return withMover(64, [&](specc_mover *m) -> std::string {
      CaseSpec spec;
      MoveInputs good, bad;
      std::vector<KVBuffer> buffers;
      std::string broken = base(&spec, &good, &bad, &buffers);
      if (!broken.empty())
        return broken;
      if (int rc = rawCall(m, bad, spec, 0, buffers))
        return describeRc("the first bad call (sync 0)", rc);
      int rc = rawCall(m, bad, spec, 1, buffers);
      if (rc != SPECC_ERROR_INPUT)
        return "the waiting bad call returned " + std::to_string(rc);
      if (lastError().find("1 earlier call") == std::string::npos)
        return "message '" + lastError() + "' does not count the earlier call";
      int64_t report[SPECC_REPORT_FIELDS];
      specc_mover_last_report(m, report);
      if (report[0] != 2 || report[1] != KVCACHE_ERR_NEGATIVE_DRAFTS ||
          report[2] != 3 || report[5] != 1)
        return "report {" + std::to_string(report[0]) + ", " +
               std::to_string(report[1]) + ", " + std::to_string(report[2]) +
               ", .., " + std::to_string(report[5]) +
               "}, expected {2 calls, code 2, entry 3, .., 1 skipped}";
      rc = specc_mover_poll(m, nullptr);
      return rc == SPECC_SUCCESS
                 ? std::string()
                 : "a poll after the report returned " + std::to_string(rc);
    });
  });

  // Trap mode stops the process at the first violation (a child process
  // here), after a valid call ran normally.
  results.run("report:trap_mode_stops_at_the_violation", [&]() -> std::string {
    CaseSpec spec;
    MoveInputs good, bad;
    std::vector<KVBuffer> buffers;
    std::string broken = base(&spec, &good, &bad, &buffers);
    if (!broken.empty())
      return broken;
    std::fflush(nullptr);
    pid_t child = fork();
    if (child < 0)
      return "fork failed";
    if (child == 0) {
      specc_mover *m = nullptr;
      if (specc_mover_create(SPECC_DEVICE_CPU, 64, &m) != SPECC_SUCCESS)
        _exit(2);
      specc_mover_set_trap(m, 1);
      if (rawCall(m, good, spec, 0, buffers) != SPECC_SUCCESS)
        _exit(3);
      rawCall(m, bad, spec, 0, buffers);
      _exit(4); // not reached when the trap works
    }
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    if (WIFSIGNALED(wstatus) &&
        (WTERMSIG(wstatus) == SIGILL || WTERMSIG(wstatus) == SIGTRAP))
      return std::string();
    return WIFEXITED(wstatus) ? "the child exited with " +
                                    std::to_string(WEXITSTATUS(wstatus)) +
                                    " (2: create, 3: valid call, 4: no trap)"
                              : "the child died of signal " +
                                    std::to_string(WTERMSIG(wstatus));
  });

  // A failed scratch allocation leaves the mover as it was: the grown call
  // fails with OUT_OF_MEMORY and changes nothing, calls that fit still
  // work, and the next grown call succeeds.
  results.run(
      "inject:allocation_failure_keeps_the_mover", [&]() -> std::string {
        return withMover(4, [&](specc_mover *m) -> std::string {
          CaseSpec small;
          small.seed = 91;
          small.bs = 2, small.width = 2, small.numDraft = 4, small.slots = 64;
          CaseSpec big = rejectionBase(SPECC_INT64, TargetSource::ReqToToken);
          MoveInputs smallIn, bigIn;
          std::vector<KVBuffer> smallBufs, bigBufs;
          std::string broken = buildCase(small, &smallIn, &smallBufs);
          if (broken.empty())
            broken = buildCase(big, &bigIn, &bigBufs);
          if (!broken.empty())
            return broken;
          specc_testing_fail_allocations(1);
          std::vector<KVBuffer> untouched = bigBufs;
          int rc = rawCall(m, bigIn, big, 1, bigBufs);
          specc_testing_fail_allocations(0);
          if (rc != SPECC_ERROR_OUT_OF_MEMORY)
            return "the grown call under an injected failure returned " +
                   std::to_string(rc) + " (" + lastError() + ")";
          std::string failure = compareBuffers(bigBufs, untouched);
          if (!failure.empty())
            return "the failed call changed a buffer: " + failure;
          failure =
              runChecked(m, smallIn, small.dtypes, modeOf(small), smallBufs);
          if (!failure.empty())
            return "a call that fits, after the failure: " + failure;
          failure = runChecked(m, bigIn, big.dtypes, modeOf(big), bigBufs);
          if (!failure.empty())
            return "the grown call, retried: " + failure;
          specc_testing_fail_allocations(1);
          specc_mover *other = nullptr;
          rc = specc_mover_create(SPECC_DEVICE_CPU, 4, &other);
          specc_testing_fail_allocations(0);
          if (rc != SPECC_ERROR_OUT_OF_MEMORY || other)
            return "specc_mover_create under an injected failure returned " +
                   std::to_string(rc);
          return std::string();
        });
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
          runChecked(mover, in, big.dtypes, modeOf(big), buffers);
      if (!result.empty())
        return "bs*W = 4000: " + result;
      // Window targets with a bad request at the grown size.
      big.seed = 557, big.targets = TargetSource::Window;
      big.shape = Shape::Crossed;
      broken = buildCase(big, &in, &buffers);
      if (!broken.empty())
        return broken;
      in.numCorrectDrafts[321] = -1;
      result = runChecked(mover, in, big.dtypes, modeOf(big), buffers);
      if (!result.empty())
        return "bs*W = 4000, window targets, one bad request: " + result;
      // And smaller again on the grown mover.
      CaseSpec small;
      small.seed = 556;
      small.bs = 2, small.width = 2, small.numDraft = 4, small.slots = 64;
      broken = buildCase(small, &in, &buffers);
      if (!broken.empty())
        return broken;
      result = runChecked(mover, in, small.dtypes, modeOf(small), buffers);
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
    runStatusCases(results, mover);
    specc_mover_destroy(mover);
  }
  runGrowthCase(results);
  runReportCases(results);
  std::printf("%d passed, %d failed\n", results.passed, results.failed);
  return results.failed == 0 ? 0 : 1;
}
