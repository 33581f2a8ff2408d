//===- Mover.cpp - move_accept_tokens_to_target_kvcache, C ABI ------------===//
//
// The specc_mover of specc_runtime.h: argument validation (before anything is
// launched), scratch ownership, and the three stages launched on the caller's
// stream (GPU: kernels loaded through the CUDA driver API; CPU: the same
// kernels compiled for the host). Nothing here synchronises unless the caller
// asked for it, and nothing allocates or loads while a stream is capturing.
//
//===----------------------------------------------------------------------===//

#include "specc_runtime.h"

#include "CudaDriver.h"
#include "HostKernels.h"
#include "KVCache/KVCacheABI.h"
#include "KernelImages.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace specc;
using namespace specc::cuda;

namespace {
thread_local std::string lastError;

/// Batches of at most this many entries (bs * W) take the stage-all move:
/// past it, every block re-reading all slot pairs costs more than the plan.
constexpr int64_t kStageAllMaxEntries = 1024;

int fail(int code, std::string message) {
  lastError = std::move(message);
  return code;
}

const char *dtypeName(int dtype) {
  return dtype == SPECC_INT32   ? "int32"
         : dtype == SPECC_INT64 ? "int64"
                                : "unknown";
}
const char *suffix(int dtype) { return dtype == SPECC_INT32 ? "i32" : "i64"; }

/// Checks rank, dtype and (for rank 1) length of one tensor.
bool checkTensor(const specc_tensor &t, const char *name, int rank,
                 bool int32Only, std::string &error) {
  if (t.rank != rank) {
    error = std::string(name) + " must have rank " + std::to_string(rank) +
            ", got rank " + std::to_string(t.rank);
    return false;
  }
  if (t.dtype != SPECC_INT32 && (int32Only || t.dtype != SPECC_INT64)) {
    error = std::string(name) + " must be " +
            (int32Only ? "int32" : "int32 or int64") + ", got " +
            dtypeName(t.dtype);
    return false;
  }
  for (int d = 0; d < rank; ++d)
    if (t.shape[d] < 0) {
      error = std::string(name) + " has a negative extent";
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
bool validate(const specc_move_args &a, std::string &error) {
  if (!checkTensor(a.req_pool_indices, "req_pool_indices", 1, false, error) ||
      !checkTensor(a.req_to_token, "req_to_token", 2, true, error) ||
      !checkTensor(a.seq_lens, "seq_lens", 1, false, error) ||
      !checkTensor(a.num_correct_drafts, "num_correct_drafts", 1, false,
                   error) ||
      !checkTensor(a.accept_index, "accept_index", 2, false, error) ||
      !checkTensor(a.out_cache_loc, "out_cache_loc", 1, false, error))
    return false;
  int64_t bs = a.req_pool_indices.shape[0];
  auto sameBs = [&](const specc_tensor &t, const char *name) {
    if (t.shape[0] == bs)
      return true;
    error = std::string(name) + " has " + std::to_string(t.shape[0]) +
            " entries but req_pool_indices has " + std::to_string(bs);
    return false;
  };
  if (!sameBs(a.seq_lens, "seq_lens") ||
      !sameBs(a.num_correct_drafts, "num_correct_drafts") ||
      !sameBs(a.accept_index, "accept_index (rows)"))
    return false;
  if (a.seq_lens.dtype != a.req_pool_indices.dtype) {
    error = std::string("seq_lens (") + dtypeName(a.seq_lens.dtype) +
            ") and req_pool_indices (" + dtypeName(a.req_pool_indices.dtype) +
            ") must share a dtype";
    return false;
  }
  if (bs * a.accept_index.shape[1] > INT32_MAX) {
    error = "bs * W exceeds 2^31 - 1 entries";
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
/// differ in where scratch lives and how the stages run.
struct specc_mover {
  int device = SPECC_DEVICE_CPU;
  std::string backend = "cpu";
  int64_t capacity = 0; // entries the scratch holds

  // Registered KV buffers (host copy of the table; GPU: also on the device).
  std::vector<int64_t> table;
  int64_t numBuffers = 0;
  int64_t maxRowBytes = 0;

  // CPU scratch.
  std::vector<int64_t> hostTargets, hostSources, hostStatus;
  std::vector<uint8_t> hostWorkspace;

  // GPU state.
  const Driver *drv = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  std::map<std::string, std::pair<CUfunction, LaunchInfo>> kernels;
  CUdeviceptr targets = 0, sources = 0, workspace = 0, status = 0, dtable = 0;
  int64_t tableCapacity = 0;

  ~specc_mover();
  int check(CUresult rc, const char *call, const std::string &what) {
    return rc == CUDA_SUCCESS
               ? SPECC_SUCCESS
               : fail(SPECC_ERROR_CUDA, describe(*drv, rc, call, what));
  }
  int allocate(int64_t entries);
  int loadKernels();
  int launch(const std::string &name, unsigned gridX, unsigned gridY,
             CUstream stream, std::vector<void *> args);
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
  if (!drv)
    return;
  {
    ContextScope scope(this);
    for (CUdeviceptr p : {targets, sources, workspace, status, dtable})
      if (p)
        drv->cuMemFree(p);
    if (module)
      drv->cuModuleUnload(module);
  }
  if (ctx)
    drv->cuDevicePrimaryCtxRelease(dev);
}

int specc_mover::allocate(int64_t entries) {
  entries = std::max<int64_t>(entries, 1);
  int64_t wsBytes = kvcacheMoveWorkspaceBytes(entries);
  if (!drv) {
    hostTargets.assign(entries, 0);
    hostSources.assign(entries, 0);
    hostWorkspace.assign(wsBytes, 0);
    hostStatus.assign(KVCACHE_STATUS_FIELDS, 0);
    capacity = entries;
    return SPECC_SUCCESS;
  }
  for (CUdeviceptr *p : {&targets, &sources, &workspace})
    if (*p) {
      drv->cuMemFree(*p);
      *p = 0;
    }
  std::string what = std::to_string(entries) + " entries";
  if (int rc = check(drv->cuMemAlloc(&targets, 8 * entries), "cuMemAlloc",
                     "targets, " + what))
    return rc;
  if (int rc = check(drv->cuMemAlloc(&sources, 8 * entries), "cuMemAlloc",
                     "sources, " + what))
    return rc;
  if (int rc = check(drv->cuMemAlloc(&workspace, wsBytes), "cuMemAlloc",
                     "workspace, " + what))
    return rc;
  if (!status)
    if (int rc = check(drv->cuMemAlloc(&status, 8 * KVCACHE_STATUS_FIELDS),
                       "cuMemAlloc", "status"))
      return rc;
  capacity = entries;
  return SPECC_SUCCESS;
}

int specc_mover::loadKernels() {
  int major = 0, minor = 0;
  if (int rc =
          check(drv->cuDeviceGetAttribute(
                    &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                "cuDeviceGetAttribute", "compute capability"))
    return rc;
  drv->cuDeviceGetAttribute(&minor,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
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
  if (rc != CUDA_SUCCESS)
    return fail(SPECC_ERROR_CUDA,
                describe(*drv, rc, "cuModuleLoadDataEx",
                         backend + " for sm_" + std::to_string(major) +
                             std::to_string(minor)) +
                    (log[0] ? std::string("; JIT log: ") + log.data() : ""));
  std::string error;
  std::vector<LaunchInfo> infos = parseManifest(manifest(), error);
  if (infos.empty())
    return fail(SPECC_ERROR_CUDA,
                error.empty() ? "empty kernel manifest" : error);
  for (const LaunchInfo &info : infos) {
    CUfunction fn;
    if (int rc2 =
            check(drv->cuModuleGetFunction(&fn, module, info.name.c_str()),
                  "cuModuleGetFunction", info.name))
      return rc2;
    if (info.sharedMemory > 48 * 1024)
      if (int rc2 =
              check(drv->cuFuncSetAttribute(
                        fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        static_cast<int>(info.sharedMemory)),
                    "cuFuncSetAttribute", info.name))
        return rc2;
    kernels[info.name] = {fn, info};
  }
  return SPECC_SUCCESS;
}

int specc_mover::launch(const std::string &name, unsigned gridX, unsigned gridY,
                        CUstream stream, std::vector<void *> args) {
  auto it = kernels.find(name);
  if (it == kernels.end())
    return fail(SPECC_ERROR_CUDA,
                "kernel " + name + " is not in the kernel image");
  const LaunchInfo &info = it->second.second;
  return check(drv->cuLaunchKernel(it->second.first, gridX, gridY, 1,
                                   info.block, 1, 1,
                                   static_cast<unsigned>(info.sharedMemory),
                                   stream, args.data(), nullptr),
               "cuLaunchKernel", name);
}

extern "C" {

int specc_mover_create(int device, int64_t max_entries, specc_mover **out) {
  if (!out)
    return fail(SPECC_ERROR_INVALID_ARGUMENT, "out must not be null");
  *out = nullptr;
  auto m = std::make_unique<specc_mover>();
  m->device = device;
  if (device == SPECC_DEVICE_CPU) {
    if (int rc = m->allocate(max_entries))
      return rc;
    *out = m.release();
    return SPECC_SUCCESS;
  }
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
                        "device " + std::to_string(device)))
    return rc;
  ContextScope scope(m.get());
  if (int rc = m->loadKernels())
    return rc;
  if (int rc = m->allocate(max_entries))
    return rc;
  *out = m.release();
  return SPECC_SUCCESS;
}

void specc_mover_destroy(specc_mover *mover) { delete mover; }

int specc_mover_set_buffers(specc_mover *m, const specc_kv_buffer *buffers,
                            int64_t num_buffers) {
  if (!m || (num_buffers > 0 && !buffers) || num_buffers < 0)
    return fail(SPECC_ERROR_INVALID_ARGUMENT, "invalid mover or buffer list");
  if (num_buffers > 65535)
    return fail(SPECC_ERROR_INVALID_ARGUMENT, "at most 65535 KV buffers");
  std::vector<int64_t> table;
  int64_t maxRow = 0;
  for (int64_t b = 0; b < num_buffers; ++b) {
    const specc_kv_buffer &kv = buffers[b];
    if (!kv.data || kv.row_bytes <= 0 || kv.slots <= 0)
      return fail(SPECC_ERROR_INVALID_ARGUMENT,
                  "KV buffer " + std::to_string(b) +
                      " needs a data pointer, row_bytes > 0 and slots > 0");
    table.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(kv.data)));
    table.push_back(kv.row_bytes);
    table.push_back(kv.slots);
    maxRow = std::max(maxRow, kv.row_bytes);
  }
  if (table == m->table)
    return SPECC_SUCCESS;
  if (m->drv) {
    ContextScope scope(m);
    if (num_buffers > m->tableCapacity) {
      if (m->dtable)
        m->drv->cuMemFree(m->dtable);
      m->dtable = 0;
      if (int rc = m->check(m->drv->cuMemAlloc(&m->dtable, 8 * table.size()),
                            "cuMemAlloc", "buffer table"))
        return rc;
      m->tableCapacity = num_buffers;
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
  return SPECC_SUCCESS;
}

int specc_move_accept_tokens(specc_mover *m, const specc_move_args *a,
                             void *streamPtr, int sync) {
  if (!m || !a)
    return fail(SPECC_ERROR_INVALID_ARGUMENT,
                "mover and args must not be null");
  std::string error;
  if (!validate(*a, error))
    return fail(SPECC_ERROR_INVALID_ARGUMENT, error);
  int64_t bs = a->req_pool_indices.shape[0], w = a->accept_index.shape[1];
  int64_t n = bs * w;
  int rpiT = a->req_pool_indices.dtype, ncdT = a->num_correct_drafts.dtype;
  int accT = a->accept_index.dtype, oclT = a->out_cache_loc.dtype;
  auto stream = static_cast<CUstream>(streamPtr);

  if (!m->drv) {
    if (n > m->capacity)
      if (int rc = m->allocate(n))
        return rc;
    using host::MemRef;
    auto v1 = [](void *p, int64_t len) {
      return MemRef<1>{p, p, 0, {len}, {1}};
    };
    auto v2 = [](void *p, int64_t r, int64_t c) {
      return MemRef<2>{p, p, 0, {r, c}, {c, 1}};
    };
    std::fill(m->hostStatus.begin(), m->hostStatus.end(), 0);
    MemRef<1> rpi = v1(a->req_pool_indices.data, bs);
    MemRef<2> r2t = v2(a->req_to_token.data, a->req_to_token.shape[0],
                       a->req_to_token.shape[1]);
    MemRef<1> seq = v1(a->seq_lens.data, bs);
    MemRef<1> ncd = v1(a->num_correct_drafts.data, bs);
    MemRef<2> acc = v2(a->accept_index.data, bs, w);
    MemRef<1> ocl = v1(a->out_cache_loc.data, a->out_cache_loc.shape[0]);
    MemRef<1> tgt = v1(m->hostTargets.data(), n);
    MemRef<1> src = v1(m->hostSources.data(), n);
    MemRef<1> st = v1(m->hostStatus.data(), KVCACHE_STATUS_FIELDS);
    MemRef<2> table =
        v2(m->table.data(), m->numBuffers, KVCACHE_BUFFER_COLUMNS);
    MemRef<1> ws = v1(m->hostWorkspace.data(), m->hostWorkspace.size());
    host::assignTargets(rpiT, ncdT)(&rpi, &r2t, &seq, &ncd, &tgt, &st);
    host::compactSources(accT, oclT, ncdT)(&acc, &ocl, &ncd, &src, &st);
    host::moveRows()(&table, &src, &tgt, &ws, &st);
    // As on the GPU, bad input is an error only for a waiting call.
    if (sync && m->hostStatus[KVCACHE_STATUS_CODE] != 0)
      return fail(SPECC_ERROR_INPUT, statusText(m->hostStatus.data()));
    return SPECC_SUCCESS;
  }

  ContextScope scope(m);
  const Driver &d = *m->drv;
  int capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  if (int rc = m->check(d.cuStreamIsCapturing(stream, &capturing),
                        "cuStreamIsCapturing", "caller's stream"))
    return rc;
  if (n > m->capacity) {
    if (capturing != CU_STREAM_CAPTURE_STATUS_NONE)
      return fail(
          SPECC_ERROR_CAPTURING,
          "bs * W = " + std::to_string(n) + " exceeds the mover's scratch (" +
              std::to_string(m->capacity) +
              " entries) while the stream is capturing; create the mover "
              "with max_entries >= " +
              std::to_string(n) + " before capture");
    if (int rc = m->allocate(n))
      return rc;
  }
  if (int rc = m->check(
          d.cuMemsetD8Async(m->status, 0, 8 * KVCACHE_STATUS_FIELDS, stream),
          "cuMemsetD8Async", "status"))
    return rc;

  auto ptr = [](const specc_tensor &t) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(t.data));
  };
  CUdeviceptr rpi = ptr(a->req_pool_indices), r2t = ptr(a->req_to_token);
  CUdeviceptr seq = ptr(a->seq_lens), ncd = ptr(a->num_correct_drafts);
  CUdeviceptr acc = ptr(a->accept_index), ocl = ptr(a->out_cache_loc);
  int64_t maxReqs = a->req_to_token.shape[0],
          poolLen = a->req_to_token.shape[1];
  int64_t nOcl = a->out_cache_loc.shape[0], numBuffers = m->numBuffers;

  std::string assign = std::string("assign_targets_") + suffix(rpiT) + "_" +
                       suffix(ncdT) + "_assign_targets";
  if (int rc = m->launch(assign, 1, 1, stream,
                         {&rpi, &r2t, &seq, &ncd, &m->targets, &m->status, &bs,
                          &maxReqs, &poolLen, &n}))
    return rc;
  std::string compact = std::string("compact_sources_") + suffix(accT) + "_" +
                        suffix(oclT) + "_" + suffix(ncdT) + "_compact_sources";
  if (int rc = m->launch(
          compact, 1, 1, stream,
          {&acc, &ocl, &ncd, &m->sources, &m->status, &bs, &w, &nOcl}))
    return rc;
  if (numBuffers > 0 && n > 0) {
    // Small batches: one stage-all launch (every moved tile through shared
    // memory) instead of plan + copy; it must hold all n entries.
    const LaunchInfo &stageAll = m->kernels["move_rows_move_stage_all"].second;
    int64_t stageAllEntries =
        stageAll.tileBytes ? stageAll.sharedMemory / stageAll.tileBytes : 0;
    bool small = n <= std::min<int64_t>(stageAllEntries, kStageAllMaxEntries);
    const LaunchInfo &tiled =
        small ? stageAll : m->kernels["move_rows_move_copy"].second;
    unsigned tiles = static_cast<unsigned>(
        (m->maxRowBytes + tiled.tileBytes - 1) / tiled.tileBytes);
    if (small) {
      if (int rc = m->launch("move_rows_move_stage_all", tiles,
                             static_cast<unsigned>(numBuffers), stream,
                             {&m->dtable, &m->sources, &m->targets, &m->status,
                              &n, &numBuffers}))
        return rc;
    } else {
      if (int rc = m->launch("move_rows_move_plan", 1, 1, stream,
                             {&m->dtable, &m->sources, &m->targets,
                              &m->workspace, &m->status, &n, &numBuffers}))
        return rc;
      if (int rc = m->launch("move_rows_move_copy", tiles,
                             static_cast<unsigned>(numBuffers), stream,
                             {&m->dtable, &m->sources, &m->targets,
                              &m->workspace, &m->status, &n}))
        return rc;
    }
  }
  if (!sync)
    return SPECC_SUCCESS;
  int64_t status[KVCACHE_STATUS_FIELDS];
  if (int rc = specc_mover_read_status(m, stream, status))
    return rc;
  if (status[KVCACHE_STATUS_CODE] != 0)
    return fail(SPECC_ERROR_INPUT, statusText(status));
  return SPECC_SUCCESS;
}

int specc_mover_read_status(specc_mover *m, void *stream, int64_t out[4]) {
  if (!m || !out)
    return fail(SPECC_ERROR_INVALID_ARGUMENT, "mover and out must not be null");
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
      m->drv->cuMemcpyDtoH(out, m->status, 8 * KVCACHE_STATUS_FIELDS),
      "cuMemcpyDtoH", "status");
}

int specc_mover_read_slots(specc_mover *m, void *stream, int64_t *targets,
                           int64_t *sources, int64_t n) {
  if (!m || n < 0 || n > m->capacity || (n > 0 && (!targets || !sources)))
    return fail(SPECC_ERROR_INVALID_ARGUMENT,
                "invalid mover, buffers or count");
  if (!m->drv) {
    std::copy_n(m->hostTargets.begin(), n, targets);
    std::copy_n(m->hostSources.begin(), n, sources);
    return SPECC_SUCCESS;
  }
  if (n == 0)
    return SPECC_SUCCESS;
  ContextScope scope(m);
  if (int rc =
          m->check(m->drv->cuStreamSynchronize(static_cast<CUstream>(stream)),
                   "cuStreamSynchronize", "reading the slot lists"))
    return rc;
  if (int rc = m->check(m->drv->cuMemcpyDtoH(targets, m->targets, 8 * n),
                        "cuMemcpyDtoH", "targets"))
    return rc;
  return m->check(m->drv->cuMemcpyDtoH(sources, m->sources, 8 * n),
                  "cuMemcpyDtoH", "sources");
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
                  "entry %lld moves slot %lld, outside [0, %lld) (slots of the "
                  "smallest KV buffer)",
                  e, v, b);
    break;
  case KVCACHE_ERR_STAGING_CAPACITY:
    std::snprintf(buf, len,
                  "%lld moved rows form or feed cycles (a row is both a source "
                  "and a target around a loop), more than the %lld the GPU "
                  "move stages at once; nothing was moved",
                  v, b);
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
