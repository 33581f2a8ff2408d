//===- Mover.cpp - move_accept_tokens_to_target_kvcache, C ABI ------------===//
//
// The specc_mover of specc_runtime.h: argument validation (before anything is
// launched), scratch ownership, and the one launch of the entry point the
// compiler generated for the call's element types. Which entry, in what
// order its parameters come, how large its grid is and how much scratch it
// needs all come from the launch manifest and KVCacheABI.h: this file names
// no kernel and builds no argument list by hand. Nothing here synchronises
// unless the caller asked for it, and nothing allocates or loads while a
// stream is capturing.
//
//===----------------------------------------------------------------------===//

#include "specc_runtime.h"

#include "CudaDriver.h"
#include "HostKernels.h"
#include "KVCache/KVCacheABI.h"
#include "KernelImages.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

using namespace specc;
using namespace specc::cuda;

namespace {
thread_local std::string lastError;
/// Scratch allocations still to fail (specc_testing_fail_allocations).
std::atomic<int> failAllocations{0};
bool injectedFailure() {
  int left = failAllocations.load();
  while (left > 0)
    if (failAllocations.compare_exchange_weak(left, left - 1))
      return true;
  return false;
}

int fail(int code, std::string message) {
  lastError = std::move(message);
  return code;
}

/// Runs `body`, turning any exception into an error code: nothing crosses
/// the C ABI.
template <typename F> int guarded(F body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(SPECC_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception &e) {
    return fail(SPECC_ERROR_INVALID_ARGUMENT, e.what());
  } catch (...) {
    return fail(SPECC_ERROR_INVALID_ARGUMENT, "unknown C++ exception");
  }
}

const char *dtypeName(int dtype) {
  return dtype == SPECC_INT32   ? "int32"
         : dtype == SPECC_INT64 ? "int64"
                                : "unknown";
}

/// KVCACHE_FOREACH_PARAM, as data: name and kind of every ABI parameter.
struct ParamInfo {
  const char *name;
  const char *kind;
};
constexpr ParamInfo kParams[] = {
#define SPECC_PARAM_INFO(e, name, kind) {#name, #kind},
    KVCACHE_FOREACH_PARAM(SPECC_PARAM_INFO)
#undef SPECC_PARAM_INFO
};
static_assert(sizeof(kParams) / sizeof(kParams[0]) == KVCACHE_NUM_PARAMS,
              "one entry per parameter");

int paramId(const std::string &name) {
  for (int i = 0; i < KVCACHE_NUM_PARAMS; ++i)
    if (name == kParams[i].name)
      return i;
  return -1;
}

/// The six index tensors, in the order of specc_move_args and of the
/// parameter list.
constexpr int kTensors[] = {
    KVCACHE_PARAM_REQ_POOL_INDICES, KVCACHE_PARAM_REQ_TO_TOKEN,
    KVCACHE_PARAM_SEQ_LENS,         KVCACHE_PARAM_NUM_CORRECT_DRAFTS,
    KVCACHE_PARAM_ACCEPT_INDEX,     KVCACHE_PARAM_OUT_CACHE_LOC};
constexpr int kNumTensors = 6;
const specc_tensor &tensorOf(const specc_move_args &a, int k) {
  const specc_tensor *all[] = {&a.req_pool_indices, &a.req_to_token,
                               &a.seq_lens,         &a.num_correct_drafts,
                               &a.accept_index,     &a.out_cache_loc};
  return *all[k];
}
constexpr int kRanks[kNumTensors] = {1, 2, 1, 1, 2, 1};
/// The tensors the window form does not read (req_pool_indices,
/// req_to_token, seq_lens).
bool usedBy(int targets, int k) {
  return targets == SPECC_TARGETS_REQ_TO_TOKEN || k >= 3;
}

/// Index of an entry point in the dispatch table: target source, then one
/// bit per index tensor (1 = int64).
int dispatchKey(int targets, const int dtypes[kNumTensors]) {
  int key = targets;
  for (int k = 0; k < kNumTensors; ++k)
    key = key * 2 + (usedBy(targets, k) && dtypes[k] == SPECC_INT64);
  return key;
}
constexpr int kDispatchSize = 2 << kNumTensors;

/// One generated entry point, as the manifest describes it.
struct EntryPoint {
  LaunchInfo info;
  std::vector<int> params, hostArgs;
  /// The grid's work units: a parameter and the divisor its value is
  /// rounded up by (`name/d` in the manifest; 1 for a bare name).
  std::vector<std::pair<int, int64_t>> units;
  int targets = SPECC_TARGETS_REQ_TO_TOKEN;
  CUfunction fn = nullptr;
  void *host = nullptr;
};

/// Checks rank, dtype and extents of one tensor.
bool checkTensor(const specc_tensor &t, const char *name, int rank,
                 std::string &error) {
  if (t.rank != rank) {
    error = std::string(name) + " must have rank " + std::to_string(rank) +
            ", got rank " + std::to_string(t.rank);
    return false;
  }
  if (t.dtype != SPECC_INT32 && t.dtype != SPECC_INT64) {
    error = std::string(name) + " must be int32 or int64, got " +
            dtypeName(t.dtype);
    return false;
  }
  for (int d = 0; d < rank; ++d)
    if (t.shape[d] < 0) {
      error = std::string(name) + " has a negative extent";
      return false;
    }
  if (rank == 2 && t.shape[1] > 0 && t.shape[0] > INT64_MAX / t.shape[1]) {
    error = std::string(name) + " has more than 2^63 elements";
    return false;
  }
  int64_t elems = rank == 1 ? t.shape[0] : t.shape[0] * t.shape[1];
  if (elems > 0 && !t.data) {
    error = std::string(name) + " has no data pointer";
    return false;
  }
  return true;
}

/// Validates everything the host can see before any launch.
bool validate(const specc_move_args &a, int64_t numBuffers, int64_t rowVectors,
              std::string &error) {
  if (a.targets != SPECC_TARGETS_REQ_TO_TOKEN &&
      a.targets != SPECC_TARGETS_WINDOW) {
    error = "targets must be SPECC_TARGETS_REQ_TO_TOKEN or "
            "SPECC_TARGETS_WINDOW, got " +
            std::to_string(a.targets);
    return false;
  }
  for (int k = 0; k < kNumTensors; ++k)
    if (usedBy(a.targets, k) &&
        !checkTensor(tensorOf(a, k), kParams[kTensors[k]].name, kRanks[k],
                     error))
      return false;
  int64_t bs = a.num_correct_drafts.shape[0];
  auto sameBs = [&](const specc_tensor &t, const char *name) {
    if (t.shape[0] == bs)
      return true;
    error = std::string(name) + " has " + std::to_string(t.shape[0]) +
            " entries but num_correct_drafts has " + std::to_string(bs);
    return false;
  };
  if (a.targets == SPECC_TARGETS_REQ_TO_TOKEN &&
      (!sameBs(a.req_pool_indices, "req_pool_indices") ||
       !sameBs(a.seq_lens, "seq_lens")))
    return false;
  if (!sameBs(a.accept_index, "accept_index (rows)"))
    return false;
  int64_t w = a.accept_index.shape[1];
  if (w > 0 && bs > INT32_MAX / w) {
    error = "bs * W = " + std::to_string(bs) + " * " + std::to_string(w) +
            " exceeds 2^31 - 1 entries";
    return false;
  }
  if (numBuffers > 0 && bs > INT32_MAX / numBuffers) {
    error = "bs * KV buffers exceeds 2^31 - 1";
    return false;
  }
  (void)rowVectors;
  if (a.targets == SPECC_TARGETS_WINDOW && bs > 0 &&
      a.out_cache_loc.shape[0] % bs != 0) {
    error = "targets from the verify window: len(out_cache_loc) = " +
            std::to_string(a.out_cache_loc.shape[0]) +
            " is not a multiple of bs = " + std::to_string(bs);
    return false;
  }
  return true;
}

std::string statusText(const int64_t s[4]) {
  char buf[256];
  specc_status_message(s, buf, sizeof buf);
  return buf;
}
} // namespace

/// Everything one mover owns. GPU and CPU movers share the validation and
/// the entry table, and differ in where scratch lives and how the entry runs.
struct specc_mover {
  int device = SPECC_DEVICE_CPU;
  std::string backend = "cpu";
  int64_t capacity = -1; // entries the scratch holds
  std::mutex busy;       // a mover serves one call at a time

  // Registered KV buffers (host copy of the table; GPU: also on the device).
  std::vector<int64_t> table;
  int64_t numBuffers = 0;
  int64_t maxRowBytes = 0;
  int64_t minSlots = INT64_MAX;

  std::vector<EntryPoint> entries;
  std::array<int, kDispatchSize> dispatch;

  // CPU scratch.
  std::vector<int64_t> hostStatus = std::vector<int64_t>(SPECC_STATUS_FIELDS);
  std::vector<uint8_t> hostWorkspace;

  // The report (KVCacheReportField): host memory the kernels write on a
  // violation (GPU: pinned and mapped, `dreport` its device address), read
  // here without waiting. `reported` is the sequence value already turned
  // into an error; `lastReport` what that error said.
  int64_t *report = nullptr;
  CUdeviceptr dreport = 0;
  int64_t reported = 0;
  int64_t lastReport[SPECC_REPORT_FIELDS] = {};

  // GPU state.
  const Driver *drv = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  int sms = 1;
  CUdeviceptr workspace = 0, status = 0, dtable = 0;
  int64_t tableCapacity = 0;
  /// A launch captured into a CUDA graph holds the addresses of the buffer
  /// table and the workspace it saw, and replays them later: once captured,
  /// neither is rewritten in place or freed (a graph of pool A keeps moving
  /// pool A's buffers after pool B is registered). Replaced ones are kept
  /// until the mover goes.
  bool tableCaptured = false, workspaceCaptured = false;
  std::vector<CUdeviceptr> retired;

  specc_mover() { dispatch.fill(-1); }
  ~specc_mover();
  int check(CUresult rc, const char *call, const std::string &what) {
    return rc == CUDA_SUCCESS
               ? SPECC_SUCCESS
               : fail(SPECC_ERROR_CUDA, describe(*drv, rc, call, what));
  }
  int allocate(int64_t entries);
  int allocateReport();
  int loadEntries();
  int loadModule();
  /// Takes the violations recorded since the last report, if any (never
  /// waits): fills lastReport and the error message, returns whether there
  /// were any. `self`: the caller waited for a call that itself broke the
  /// contract, whose own message it reports.
  bool takeReport(bool self = false);
};

namespace {
/// Pushes the mover's context for the scope of a call.
struct ContextScope {
  specc_mover *m;
  bool pushed = false;
  explicit ContextScope(specc_mover *m) : m(m) {
    if (m->drv)
      pushed = m->drv->cuCtxPushCurrent(m->ctx) == CUDA_SUCCESS;
  }
  ~ContextScope() {
    CUcontext popped;
    if (pushed)
      m->drv->cuCtxPopCurrent(&popped);
  }
};
} // namespace

specc_mover::~specc_mover() {
  if (!drv) {
    delete[] report;
    return;
  }
  {
    ContextScope scope(this);
    for (CUdeviceptr p : {workspace, status, dtable})
      if (p)
        drv->cuMemFree(p);
    for (CUdeviceptr p : retired)
      drv->cuMemFree(p);
    if (report)
      drv->cuMemFreeHost(report);
    if (module)
      drv->cuModuleUnload(module);
  }
  if (ctx)
    drv->cuDevicePrimaryCtxRelease(dev);
}

int specc_mover::allocateReport() {
  if (!drv) {
    report = new int64_t[SPECC_REPORT_FIELDS]();
    return SPECC_SUCCESS;
  }
  void *host = nullptr;
  if (int rc = check(drv->cuMemHostAlloc(&host, 8 * SPECC_REPORT_FIELDS,
                                         CU_MEMHOSTALLOC_PORTABLE |
                                             CU_MEMHOSTALLOC_DEVICEMAP),
                     "cuMemHostAlloc", "report"))
    return rc;
  std::memset(host, 0, 8 * SPECC_REPORT_FIELDS);
  if (int rc = check(drv->cuMemHostGetDevicePointer(&dreport, host, 0),
                     "cuMemHostGetDevicePointer", "report")) {
    drv->cuMemFreeHost(host);
    return rc;
  }
  report = static_cast<int64_t *>(host);
  return SPECC_SUCCESS;
}

bool specc_mover::takeReport(bool self) {
  // A sequence lock written by the device: an odd count or a count that
  // moved while the fields were read means an update is in flight, which
  // a later look will see whole.
  auto *r = reinterpret_cast<std::atomic<int64_t> *>(report);
  int64_t seq = r[KVCACHE_REPORT_SEQUENCE].load(std::memory_order_acquire);
  if (seq == reported || (seq & 1))
    return false;
  int64_t fields[SPECC_REPORT_FIELDS];
  for (int f = 0; f < SPECC_REPORT_FIELDS; ++f)
    fields[f] = r[f].load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (r[KVCACHE_REPORT_SEQUENCE].load(std::memory_order_relaxed) != seq)
    return false;
  int64_t calls = (seq - reported) / 2;
  reported = seq;
  std::copy(fields, fields + SPECC_REPORT_FIELDS, lastReport);
  lastReport[KVCACHE_REPORT_SEQUENCE] = calls;
  int64_t st[4] = {fields[KVCACHE_REPORT_CODE], fields[KVCACHE_REPORT_ENTRY],
                   fields[KVCACHE_REPORT_VALUE], fields[KVCACHE_REPORT_BOUND]};
  std::string skipped =
      std::to_string(fields[KVCACHE_REPORT_SKIPPED]) + " request(s) skipped";
  if (self) {
    lastError = statusText(st) + " (" + skipped + ", the others moved)";
    if (calls > 1)
      lastError += "; " + std::to_string(calls - 1) +
                   " earlier call(s) on this mover broke the contract too";
    return true;
  }
  lastError =
      "an earlier call on this mover broke the contract: " + statusText(st) +
      " (" + skipped + ", the others moved)";
  if (calls > 1)
    lastError += "; " + std::to_string(calls) +
                 " calls since the last report did, this was the latest";
  return true;
}

int specc_mover::allocate(int64_t entries) {
  entries = std::max<int64_t>(entries, 1);
  int64_t wsBytes = kvcacheFusedWorkspaceBytes(entries);
  if (injectedFailure())
    return fail(SPECC_ERROR_OUT_OF_MEMORY,
                "scratch for " + std::to_string(entries) +
                    " entries: allocation failed (injected)");
  if (!drv) {
    hostWorkspace.assign(wsBytes, 0);
    capacity = entries;
    return SPECC_SUCCESS;
  }
  // The new workspace is allocated and zeroed before the old one goes: a
  // failure leaves the mover as it was, and usable.
  CUdeviceptr fresh = 0;
  std::string what = std::to_string(entries) + " entries";
  if (int rc = check(drv->cuMemAlloc(&fresh, wsBytes), "cuMemAlloc",
                     "workspace, " + what))
    return rc;
  if (int rc = check(drv->cuMemsetD8(fresh, 0, wsBytes), "cuMemsetD8",
                     "workspace, " + what)) {
    drv->cuMemFree(fresh);
    return rc;
  }
  if (!status) {
    CUdeviceptr st = 0;
    if (int rc = check(drv->cuMemAlloc(&st, 8 * SPECC_STATUS_FIELDS),
                       "cuMemAlloc", "status")) {
      drv->cuMemFree(fresh);
      return rc;
    }
    if (int rc = check(drv->cuMemsetD8(st, 0, 8 * SPECC_STATUS_FIELDS),
                       "cuMemsetD8", "status")) {
      drv->cuMemFree(fresh);
      drv->cuMemFree(st);
      return rc;
    }
    status = st;
  }
  if (workspace && workspaceCaptured)
    retired.push_back(workspace);
  else if (workspace)
    drv->cuMemFree(workspace);
  workspace = fresh;
  workspaceCaptured = false;
  capacity = entries;
  return SPECC_SUCCESS;
}

int specc_mover::loadEntries() {
  std::string error;
  Manifest parsed;
  if (!parseManifest(manifest(), parsed, error))
    return fail(SPECC_ERROR_IMAGE, error);
  if (parsed.abi != KVCACHE_ABI_VERSION)
    return fail(SPECC_ERROR_IMAGE,
                "the kernel image was built for ABI version " +
                    std::to_string(parsed.abi) + ", this runtime speaks " +
                    std::to_string(KVCACHE_ABI_VERSION) +
                    ": rebuild the runtime from the artifacts of the same "
                    "specc commit");
  for (LaunchInfo &info : parsed.kernels) {
    if (info.entry.empty())
      continue; // a stage kernel: not an entry point
    EntryPoint e;
    auto ids = [&](const std::vector<std::string> &names,
                   std::vector<int> &out) {
      for (const std::string &n : names) {
        int id = paramId(n);
        if (id < 0) {
          error = "entry " + info.name + " takes parameter '" + n +
                  "', unknown to this runtime";
          return false;
        }
        out.push_back(id);
      }
      return true;
    };
    if (!ids(info.params, e.params) || !ids(info.hostArgs, e.hostArgs))
      return fail(SPECC_ERROR_IMAGE, error);
    for (const std::string &u : info.units) {
      size_t slash = u.find('/');
      long long d = 1;
      if (slash != std::string::npos) {
        const char *digits = u.c_str() + slash + 1;
        char *end = nullptr;
        d = std::strtoll(digits, &end, 10);
        if (end == digits || *end != '\0' || d <= 0)
          return fail(SPECC_ERROR_IMAGE, "entry " + info.name +
                                             " has a malformed grid unit '" +
                                             u + "'");
      }
      std::vector<int> id;
      if (!ids({u.substr(0, slash)}, id))
        return fail(SPECC_ERROR_IMAGE, error);
      e.units.emplace_back(id[0], d);
    }
    if (info.targets == "req_to_token")
      e.targets = SPECC_TARGETS_REQ_TO_TOKEN;
    else if (info.targets == "window")
      e.targets = SPECC_TARGETS_WINDOW;
    else
      return fail(SPECC_ERROR_IMAGE, "entry " + info.name +
                                         " has unknown targets '" +
                                         info.targets + "'");
    int dtypes[kNumTensors];
    for (int k = 0; k < kNumTensors; ++k) {
      dtypes[k] = SPECC_INT32;
      const char *name = kParams[kTensors[k]].name;
      auto it = std::find_if(info.types.begin(), info.types.end(),
                             [&](const auto &t) { return t.first == name; });
      if (it == info.types.end()) {
        if (usedBy(e.targets, k))
          return fail(SPECC_ERROR_IMAGE, "entry " + info.name +
                                             " gives no element type for " +
                                             name);
        continue;
      }
      if (it->second == "i64")
        dtypes[k] = SPECC_INT64;
      else if (it->second != "i32")
        return fail(SPECC_ERROR_IMAGE, "entry " + info.name + ": " + name +
                                           " of element type " + it->second);
    }
    int key = dispatchKey(e.targets, dtypes);
    if (dispatch[key] >= 0)
      return fail(SPECC_ERROR_IMAGE,
                  "entries " + entries[dispatch[key]].info.name + " and " +
                      info.name + " have the same signature");
    e.info = std::move(info);
    dispatch[key] = static_cast<int>(entries.size());
    entries.push_back(std::move(e));
  }
  if (entries.empty())
    return fail(SPECC_ERROR_IMAGE, "the kernel manifest has no entry point");
  if (!drv)
    for (EntryPoint &e : entries)
      if (!(e.host = host::findEntry(e.info.name)))
        return fail(SPECC_ERROR_IMAGE,
                    "the host object lacks entry " + e.info.name);
  return SPECC_SUCCESS;
}

int specc_mover::loadModule() {
  int major = 0, minor = 0;
  if (int rc =
          check(drv->cuDeviceGetAttribute(
                    &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                "cuDeviceGetAttribute", "compute capability"))
    return rc;
  drv->cuDeviceGetAttribute(&minor,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  drv->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                            dev);
  sms = std::max(sms, 1);
  const char *force = std::getenv("SPECC_FORCE_PTX");
  bool forcePtx = force && *force && std::strcmp(force, "0") != 0;
  EmbeddedFile image = ptx();
  backend = "ptx";
  // A cubin runs on its own major version at the same or a higher minor one.
  if (!forcePtx && major == 9 && minor == 0) {
    image = cubinSm90();
    backend = "cubin sm_90";
  } else if (!forcePtx && major == 8) {
    image = cubinSm80();
    backend = "cubin sm_80";
  }
  std::vector<char> log(8192, 0);
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(log.size())};
  CUresult rc =
      drv->cuModuleLoadDataEx(&module, image.data, 2, options, values);
  if (rc != CUDA_SUCCESS) {
    module = nullptr;
    return fail(SPECC_ERROR_CUDA,
                describe(*drv, rc, "cuModuleLoadDataEx",
                         backend + " for sm_" + std::to_string(major) +
                             std::to_string(minor)) +
                    (log[0] ? std::string("; JIT log: ") + log.data() : ""));
  }
  for (EntryPoint &e : entries) {
    if (int rc2 =
            check(drv->cuModuleGetFunction(&e.fn, module, e.info.name.c_str()),
                  "cuModuleGetFunction", e.info.name))
      return rc2;
    if (e.info.sharedMemory > 48 * 1024)
      if (int rc2 =
              check(drv->cuFuncSetAttribute(
                        e.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        static_cast<int>(e.info.sharedMemory)),
                    "cuFuncSetAttribute", e.info.name))
        return rc2;
  }
  return SPECC_SUCCESS;
}

namespace {
/// The bound on a mover's scratch (bs * W): entry indices are 32-bit.
int checkMaxEntries(int64_t max_entries) {
  return max_entries < 0 || max_entries > INT32_MAX
             ? fail(SPECC_ERROR_INVALID_ARGUMENT,
                    "max_entries must lie in [0, 2^31 - 1]")
             : SPECC_SUCCESS;
}
} // namespace

extern "C" {

int specc_mover_create(int device, int64_t max_entries, specc_mover **out) {
  return guarded([&]() -> int {
    if (!out)
      return fail(SPECC_ERROR_INVALID_ARGUMENT, "out must not be null");
    *out = nullptr;
    if (int rc = checkMaxEntries(max_entries))
      return rc;
    auto m = std::make_unique<specc_mover>();
    m->device = device;
    if (device != SPECC_DEVICE_CPU) {
      std::string error;
      const Driver *drv = getDriver(error);
      if (!drv)
        return fail(SPECC_ERROR_NO_DRIVER, error);
      int count = 0;
      drv->cuDeviceGetCount(&count);
      if (device < 0 || device >= count)
        return fail(SPECC_ERROR_INVALID_ARGUMENT,
                    "device " + std::to_string(device) + " does not exist (" +
                        std::to_string(count) + " CUDA devices)");
      m->drv = drv;
      if (int rc = m->check(drv->cuDeviceGet(&m->dev, device), "cuDeviceGet",
                            "device " + std::to_string(device)))
        return rc;
      if (int rc = m->check(drv->cuDevicePrimaryCtxRetain(&m->ctx, m->dev),
                            "cuDevicePrimaryCtxRetain",
                            "device " + std::to_string(device))) {
        m->ctx = nullptr;
        return rc;
      }
    }
    if (int rc = m->loadEntries())
      return rc;
    ContextScope scope(m.get());
    if (m->drv)
      if (int rc = m->loadModule())
        return rc;
    if (int rc = m->allocateReport())
      return rc;
    if (const char *trap = std::getenv("SPECC_TRAP"))
      m->report[KVCACHE_REPORT_TRAP] = *trap && std::strcmp(trap, "0") != 0;
    if (int rc = m->allocate(max_entries))
      return rc;
    *out = m.release();
    return SPECC_SUCCESS;
  });
}

void specc_mover_destroy(specc_mover *mover) { delete mover; }

int specc_mover_set_buffers(specc_mover *m, const specc_kv_buffer *buffers,
                            int64_t num_buffers) {
  return guarded([&]() -> int {
    if (!m || (num_buffers > 0 && !buffers) || num_buffers < 0)
      return fail(SPECC_ERROR_INVALID_ARGUMENT, "invalid mover or buffer list");
    if (num_buffers > 65535)
      return fail(SPECC_ERROR_INVALID_ARGUMENT, "at most 65535 KV buffers");
    {
      // The same buffers again (every call of a serving loop): nothing to
      // do, and nothing allocated to find that out.
      std::lock_guard<std::mutex> lock(m->busy);
      bool same = num_buffers == m->numBuffers;
      for (int64_t b = 0; same && b < num_buffers; ++b)
        same = m->table[3 * b + KVCACHE_BUFFER_ADDRESS] ==
                   static_cast<int64_t>(
                       reinterpret_cast<uintptr_t>(buffers[b].data)) &&
               m->table[3 * b + KVCACHE_BUFFER_ROW_BYTES] ==
                   buffers[b].row_bytes &&
               m->table[3 * b + KVCACHE_BUFFER_SLOTS] == buffers[b].slots;
      if (same)
        return SPECC_SUCCESS;
    }
    std::vector<int64_t> table;
    table.reserve(3 * num_buffers);
    int64_t maxRow = 0, minSlots = INT64_MAX;
    for (int64_t b = 0; b < num_buffers; ++b) {
      const specc_kv_buffer &kv = buffers[b];
      if (!kv.data || kv.row_bytes <= 0 || kv.slots <= 0)
        return fail(SPECC_ERROR_INVALID_ARGUMENT,
                    "KV buffer " + std::to_string(b) +
                        " needs a data pointer, row_bytes > 0 and slots > 0");
      if (kv.slots > INT64_MAX / kv.row_bytes ||
          reinterpret_cast<uintptr_t>(kv.data) >
              UINTPTR_MAX - static_cast<uint64_t>(kv.slots * kv.row_bytes))
        return fail(SPECC_ERROR_INVALID_ARGUMENT,
                    "KV buffer " + std::to_string(b) +
                        ": slots * row_bytes overflows the address space");
      table.push_back(
          static_cast<int64_t>(reinterpret_cast<uintptr_t>(kv.data)));
      table.push_back(kv.row_bytes);
      table.push_back(kv.slots);
      maxRow = std::max(maxRow, kv.row_bytes);
      minSlots = std::min(minSlots, kv.slots);
    }
    // Each buffer's rows move on their own (gather, then scatter, per
    // buffer), and the kernels split a buffer's bytes among threads and
    // blocks independently of the others': two buffers sharing a byte would
    // make the result depend on the order of their moves. Checked once per
    // set of buffers (the same buffers again returned above).
    std::vector<int64_t> order(num_buffers);
    for (int64_t b = 0; b < num_buffers; ++b)
      order[b] = b;
    auto start = [&](int64_t b) {
      return static_cast<uint64_t>(table[3 * b + KVCACHE_BUFFER_ADDRESS]);
    };
    std::sort(order.begin(), order.end(),
              [&](int64_t x, int64_t y) { return start(x) < start(y); });
    for (int64_t q = 1; q < num_buffers; ++q) {
      int64_t before = order[q - 1], b = order[q];
      uint64_t end =
          start(before) + static_cast<uint64_t>(buffers[before].slots *
                                                buffers[before].row_bytes);
      if (start(b) < end)
        return fail(SPECC_ERROR_INVALID_ARGUMENT,
                    "KV buffers " + std::to_string(std::min(before, b)) +
                        " and " + std::to_string(std::max(before, b)) +
                        " overlap in memory: each buffer's rows are moved on "
                        "their own, so no two buffers may share a byte");
    }
    std::lock_guard<std::mutex> lock(m->busy);
    if (table == m->table && num_buffers == m->numBuffers)
      return SPECC_SUCCESS;
    if (m->drv) {
      ContextScope scope(m);
      // A table a captured graph reads is left as it is: the new buffers
      // get a table of their own.
      if (num_buffers > m->tableCapacity || m->tableCaptured) {
        CUdeviceptr fresh = 0;
        if (int rc =
                m->check(m->drv->cuMemAlloc(
                             &fresh, 8 * std::max<size_t>(table.size(), 3)),
                         "cuMemAlloc", "buffer table"))
          return rc;
        if (m->dtable && m->tableCaptured)
          m->retired.push_back(m->dtable);
        else if (m->dtable)
          m->drv->cuMemFree(m->dtable);
        m->dtable = fresh;
        m->tableCapacity = std::max<int64_t>(num_buffers, 1);
        m->tableCaptured = false;
      }
      if (!table.empty())
        if (int rc = m->check(
                m->drv->cuMemcpyHtoD(m->dtable, table.data(), 8 * table.size()),
                "cuMemcpyHtoD", "buffer table"))
          return rc;
    }
    m->table = std::move(table);
    m->numBuffers = num_buffers;
    m->maxRowBytes = maxRow;
    m->minSlots = minSlots;
    return SPECC_SUCCESS;
  });
}

int specc_move_accept_tokens(specc_mover *m, const specc_move_args *a,
                             void *streamPtr, int sync) {
  return guarded([&]() -> int {
    if (!m || !a)
      return fail(SPECC_ERROR_INVALID_ARGUMENT,
                  "mover and args must not be null");
    std::unique_lock<std::mutex> lock(m->busy, std::try_to_lock);
    if (!lock.owns_lock())
      return fail(SPECC_ERROR_INVALID_ARGUMENT,
                  "this mover is in use by another thread: use one mover per "
                  "thread or stream");
    int64_t rowVectors = (m->maxRowBytes + 15) / 16;
    std::string error;
    if (!validate(*a, m->numBuffers, rowVectors, error))
      return fail(SPECC_ERROR_INVALID_ARGUMENT, error);
    int64_t bs = a->num_correct_drafts.shape[0], w = a->accept_index.shape[1];
    int64_t n = bs * w;
    int dtypes[kNumTensors];
    for (int k = 0; k < kNumTensors; ++k)
      dtypes[k] = tensorOf(*a, k).dtype;
    int index = m->dispatch[dispatchKey(a->targets, dtypes)];
    if (index < 0) {
      std::string sig;
      for (int k = 0; k < kNumTensors; ++k)
        if (usedBy(a->targets, k))
          sig += std::string(sig.empty() ? "" : ", ") +
                 kParams[kTensors[k]].name + " " + dtypeName(dtypes[k]);
      return fail(SPECC_ERROR_IMAGE,
                  "the kernel image has no entry point for " + sig);
    }
    const EntryPoint &e = m->entries[index];
    auto stream = static_cast<CUstream>(streamPtr);

    // Every value a parameter may name (KVCACHE_FOREACH_PARAM).
    int64_t values[KVCACHE_NUM_PARAMS] = {};
    for (int k = 0; k < kNumTensors; ++k)
      values[kTensors[k]] = static_cast<int64_t>(
          reinterpret_cast<uintptr_t>(tensorOf(*a, k).data));
    values[KVCACHE_PARAM_BATCH] = bs;
    values[KVCACHE_PARAM_ACCEPT_WIDTH] = w;
    values[KVCACHE_PARAM_MAX_REQS] = a->req_to_token.shape[0];
    values[KVCACHE_PARAM_POOL_LEN] = a->req_to_token.shape[1];
    values[KVCACHE_PARAM_NUM_OUT_CACHE_LOC] = a->out_cache_loc.shape[0];
    values[KVCACHE_PARAM_NUM_BUFFERS] = m->numBuffers;
    values[KVCACHE_PARAM_ROW_VECTORS] = rowVectors;
    values[KVCACHE_PARAM_MIN_SLOTS] = m->minSlots;
    // Violations of earlier calls that nobody waited for: reported once this
    // call is launched (a serving loop must not lose a step to them).
    // If this call fails, they stay pending.
    struct Keep {
      specc_mover *m;
      int64_t reported;
      bool armed = true;
      ~Keep() {
        if (armed)
          m->reported = reported;
      }
    } keep{m, m->reported};
    bool earlier = !sync && m->takeReport();
    std::string earlierError = earlier ? lastError : std::string();

    if (!m->drv) {
      if (n > m->capacity)
        if (int rc = m->allocate(n))
          return rc;
      using host::Descriptor;
      Descriptor d[KVCACHE_NUM_PARAMS];
      for (int k = 0; k < kNumTensors; ++k) {
        const specc_tensor &t = tensorOf(*a, k);
        d[kTensors[k]] = t.rank == 2
                             ? Descriptor::rank2(t.data, t.shape[0], t.shape[1])
                             : Descriptor::rank1(t.data, t.shape[0]);
      }
      d[KVCACHE_PARAM_BUFFERS] = Descriptor::rank2(
          m->table.data(), m->numBuffers, KVCACHE_BUFFER_COLUMNS);
      d[KVCACHE_PARAM_WORKSPACE] =
          Descriptor::rank1(m->hostWorkspace.data(),
                            static_cast<int64_t>(m->hostWorkspace.size()));
      d[KVCACHE_PARAM_STATUS] =
          Descriptor::rank1(m->hostStatus.data(), SPECC_STATUS_FIELDS);
      d[KVCACHE_PARAM_REPORT] =
          Descriptor::rank1(m->report, SPECC_REPORT_FIELDS);
      std::vector<Descriptor *> args;
      for (int id : e.hostArgs)
        args.push_back(&d[id]);
      if (!host::callEntry(e.host, args.data(), args.size()))
        return fail(SPECC_ERROR_IMAGE, "entry " + e.info.name + " takes " +
                                           std::to_string(args.size()) +
                                           " arguments");
      // As on the GPU: a waiting call reports its own violation; any
      // other call reports earlier ones (its own, at the next call).
      keep.armed = false;
      if (sync) {
        bool self = m->hostStatus[KVCACHE_STATUS_CODE] != 0;
        if (m->takeReport(self))
          return self ? SPECC_ERROR_INPUT : SPECC_ERROR_EARLIER_INPUT;
        return self ? fail(SPECC_ERROR_INPUT, statusText(m->hostStatus.data()))
                    : SPECC_SUCCESS;
      }
      return earlier ? fail(SPECC_ERROR_EARLIER_INPUT, earlierError)
                     : SPECC_SUCCESS;
    }

    ContextScope scope(m);
    const Driver &d = *m->drv;
    int capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    if (int rc = m->check(d.cuStreamIsCapturing(stream, &capturing),
                          "cuStreamIsCapturing", "caller's stream"))
      return rc;
    if (n > m->capacity) {
      if (capturing != CU_STREAM_CAPTURE_STATUS_NONE)
        return fail(SPECC_ERROR_CAPTURING,
                    "bs * W = " + std::to_string(n) +
                        " exceeds the mover's scratch (" +
                        std::to_string(m->capacity) +
                        " entries) while the stream is capturing; create the "
                        "mover with max_entries >= " +
                        std::to_string(n) + " before capture");
      if (int rc = m->allocate(n))
        return rc;
    }
    if (capturing != CU_STREAM_CAPTURE_STATUS_NONE)
      m->tableCaptured = m->workspaceCaptured = true;
    values[KVCACHE_PARAM_BUFFERS] = static_cast<int64_t>(m->dtable);
    values[KVCACHE_PARAM_WORKSPACE] = static_cast<int64_t>(m->workspace);
    values[KVCACHE_PARAM_STATUS] = static_cast<int64_t>(m->status);
    values[KVCACHE_PARAM_REPORT] = static_cast<int64_t>(m->dreport);
    void *args[KVCACHE_NUM_PARAMS];
    for (size_t i = 0; i < e.params.size(); ++i)
      args[i] = &values[e.params[i]];
    // Grid: the work items the manifest names, one per thread, at most
    // blocks_per_sm blocks per SM (the kernel loops over the rest).
    int64_t work = 1;
    for (auto [id, divisor] : e.units)
      work *= (std::max<int64_t>(values[id], 0) + divisor - 1) / divisor;
    int64_t block = e.info.block;
    int64_t maxBlocks =
        std::max<int64_t>(1, m->sms * std::max<int64_t>(e.info.blocksPerSM, 1));
    int64_t blocks =
        std::min(maxBlocks, std::max<int64_t>(1, (work + block - 1) / block));
    if (int rc = m->check(
            d.cuLaunchKernel(e.fn, static_cast<unsigned>(blocks), 1, 1,
                             e.info.block, 1, 1,
                             static_cast<unsigned>(e.info.sharedMemory), stream,
                             args, nullptr),
            "cuLaunchKernel", e.info.name))
      return rc;
    keep.armed = false;
    if (!sync)
      return earlier ? fail(SPECC_ERROR_EARLIER_INPUT, earlierError)
                     : SPECC_SUCCESS;
    int64_t status[SPECC_STATUS_FIELDS];
    lock.unlock();
    if (int rc = specc_mover_read_status(m, stream, status))
      return rc;
    std::lock_guard<std::mutex> relock(m->busy);
    bool self = status[KVCACHE_STATUS_CODE] != 0;
    if (!m->takeReport(self))
      return self ? fail(SPECC_ERROR_INPUT, statusText(status)) : SPECC_SUCCESS;
    return self ? SPECC_ERROR_INPUT : SPECC_ERROR_EARLIER_INPUT;
  });
}

int specc_mover_stream_is_capturing(specc_mover *m, void *stream,
                                    int *capturing) {
  return guarded([&]() -> int {
    if (!m || !capturing)
      return fail(SPECC_ERROR_INVALID_ARGUMENT,
                  "mover and capturing must not be null");
    *capturing = 0;
    if (!m->drv)
      return SPECC_SUCCESS;
    ContextScope scope(m);
    int status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (int rc = m->check(
            m->drv->cuStreamIsCapturing(static_cast<CUstream>(stream), &status),
            "cuStreamIsCapturing", "caller's stream"))
      return rc;
    *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
    return SPECC_SUCCESS;
  });
}

int specc_mover_poll(specc_mover *m, int64_t out[SPECC_REPORT_FIELDS]) {
  return guarded([&]() -> int {
    if (!m)
      return fail(SPECC_ERROR_INVALID_ARGUMENT, "mover must not be null");
    std::lock_guard<std::mutex> lock(m->busy);
    bool taken = m->takeReport();
    if (out)
      std::copy(m->lastReport, m->lastReport + SPECC_REPORT_FIELDS, out);
    return taken ? SPECC_ERROR_EARLIER_INPUT : SPECC_SUCCESS;
  });
}

int specc_mover_last_report(const specc_mover *m,
                            int64_t out[SPECC_REPORT_FIELDS]) {
  if (!m || !out)
    return fail(SPECC_ERROR_INVALID_ARGUMENT, "mover and out must not be null");
  std::copy(m->lastReport, m->lastReport + SPECC_REPORT_FIELDS, out);
  return SPECC_SUCCESS;
}

int specc_mover_reserve(specc_mover *m, int64_t max_entries) {
  return guarded([&]() -> int {
    if (!m)
      return fail(SPECC_ERROR_INVALID_ARGUMENT, "mover must not be null");
    if (int rc = checkMaxEntries(max_entries))
      return rc;
    std::lock_guard<std::mutex> lock(m->busy);
    if (max_entries <= m->capacity)
      return SPECC_SUCCESS;
    ContextScope scope(m); // pushes nothing on the CPU path
    return m->allocate(max_entries);
  });
}

int specc_mover_set_trap(specc_mover *m, int trap) {
  if (!m)
    return fail(SPECC_ERROR_INVALID_ARGUMENT, "mover must not be null");
  reinterpret_cast<std::atomic<int64_t> *>(m->report)[KVCACHE_REPORT_TRAP]
      .store(trap != 0);
  return SPECC_SUCCESS;
}

void specc_testing_fail_allocations(int count) {
  failAllocations.store(count > 0 ? count : 0);
}

int specc_mover_read_status(specc_mover *m, void *stream,
                            int64_t out[SPECC_STATUS_FIELDS]) {
  return guarded([&]() -> int {
    if (!m || !out)
      return fail(SPECC_ERROR_INVALID_ARGUMENT,
                  "mover and out must not be null");
    if (!m->drv) {
      std::copy(m->hostStatus.begin(), m->hostStatus.end(), out);
      return SPECC_SUCCESS;
    }
    ContextScope scope(m);
    if (int rc =
            m->check(m->drv->cuStreamSynchronize(static_cast<CUstream>(stream)),
                     "cuStreamSynchronize", "reading the status record"))
      return rc;
    return m->check(
        m->drv->cuMemcpyDtoH(out, m->status, 8 * SPECC_STATUS_FIELDS),
        "cuMemcpyDtoH", "status");
  });
}

const char *specc_status_message(const int64_t s[4], char *buf, int64_t len) {
  long long e = s[KVCACHE_STATUS_ENTRY], v = s[KVCACHE_STATUS_VALUE],
            b = s[KVCACHE_STATUS_BOUND];
  switch (s[KVCACHE_STATUS_CODE]) {
  case KVCACHE_OK:
    std::snprintf(buf, len, "no violation");
    break;
  case KVCACHE_ERR_REQ_POOL_INDEX:
    std::snprintf(buf, len,
                  "req_pool_indices[%lld] = %lld is outside [0, %lld) (rows of "
                  "req_to_token)",
                  e, v, b);
    break;
  case KVCACHE_ERR_NEGATIVE_DRAFTS:
    std::snprintf(buf, len, "num_correct_drafts[%lld] = %lld is negative", e,
                  v);
    break;
  case KVCACHE_ERR_SEQ_RANGE:
    std::snprintf(buf, len,
                  "request %lld: seq_lens + accepted tokens = %lld exceeds the "
                  "%lld positions of a req_to_token row (or seq_lens < 0)",
                  e, v, b);
    break;
  case KVCACHE_ERR_ACCEPT_INDEX:
    std::snprintf(buf, len,
                  "accept_index flat entry %lld = %lld is outside [0, %lld) "
                  "(len(out_cache_loc)) and is not -1",
                  e, v, b);
    break;
  case KVCACHE_ERR_ACCEPT_COUNT:
    std::snprintf(buf, len,
                  "accept_index row %lld has %lld accepted entries but "
                  "num_correct_drafts + 1 = %lld",
                  e, v, b);
    break;
  case KVCACHE_ERR_TARGETS_OVERFLOW:
    std::snprintf(
        buf, len,
        "request %lld: %lld accepted tokens in all exceed bs * W = %lld", e, v,
        b);
    break;
  case KVCACHE_ERR_SLOT:
    std::snprintf(buf, len,
                  "accepted entry %lld (request * W + j) moves slot %lld, "
                  "outside [0, %lld) (slots of the smallest KV buffer)",
                  e, v, b);
    break;
  case KVCACHE_ERR_STAGING_CAPACITY:
    std::snprintf(buf, len,
                  "%lld moved rows form or feed cycles (a row is both a source "
                  "and a target around a loop), more than the %lld the GPU "
                  "move stages at once; nothing was moved",
                  v, b);
    break;
  case KVCACHE_ERR_WINDOW_RANGE:
    std::snprintf(buf, len,
                  "request %lld accepts %lld tokens, more than the %lld slots "
                  "of its verify window in out_cache_loc",
                  e, v, b);
    break;
  default:
    std::snprintf(buf, len, "unknown status code %lld",
                  static_cast<long long>(s[0]));
  }
  return buf;
}

const char *specc_last_error(void) { return lastError.c_str(); }

const char *specc_mover_backend(const specc_mover *m) {
  return m ? m->backend.c_str() : "";
}

} // extern "C"
