//===- specc_torch.cpp - the KV move as a native torch binding ------------===//
//
// specc._native: the Python call path of specc on torch tensors, in C++.
// It reads dtype, shape, data pointer and device of each index tensor and the
// current CUDA stream straight from ATen, validates once (the same messages
// as the runtime), and calls the C ABI of specc_runtime.h. KV buffers are
// registered once per pool (`Pool`): a call checks each registered tensor's
// data pointer and size against what was registered (a pool resized or
// re-pointed in place is refused, never written past its end) and does no
// other per-buffer work, no allocation and no Python-level work.
//
// Two entry points share the movers (one per device and thread, as in
// api.py) and the validation:
//   * `move(...)`, a plain function for specc.api (the eager fast path);
//   * the torch op `specc::move_accept_tokens_to_target_kvcache`, registered
//     here with CPU, CUDA and Meta (fake) kernels, so that torch.compile
//     (fullgraph) and CUDA-graph capture see a mutating op of known schema.
//
//===----------------------------------------------------------------------===//

#include "specc_runtime.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;

namespace {

/// The exception classes of specc._runtime (set by the package at import),
/// so that both call paths raise the same types.
struct Errors {
  py::object input, speccError, noDriver, outOfMemory;
};
Errors &errors() {
  static Errors *e = new Errors(); // never destroyed: outlives the interpreter
  return *e;
}

/// A runtime failure, carried out of code that must not touch Python (the
/// op kernels) and turned into the right Python exception by the binding.
struct RuntimeFailure : std::runtime_error {
  int rc;
  int64_t status[SPECC_STATUS_FIELDS] = {};
  int64_t report[SPECC_REPORT_FIELDS] = {};
  RuntimeFailure(int rc, const std::string &message)
      : std::runtime_error(message), rc(rc) {}
};

/// Bad arguments found before any launch.
struct ArgumentError : std::invalid_argument {
  bool type;
  ArgumentError(const std::string &message, bool type = false)
      : std::invalid_argument(message), type(type) {}
};

struct MoverDeleter {
  void operator()(specc_mover *m) const { specc_mover_destroy(m); }
};
using MoverPtr = std::unique_ptr<specc_mover, MoverDeleter>;

/// A registered pool: its tensors (held), their descriptors, and what each
/// looked like at registration.
struct PoolState {
  std::vector<at::Tensor> tensors;
  std::vector<specc_kv_buffer> descs;
  std::vector<size_t> nbytes;
  int device = SPECC_DEVICE_CPU;
  uint64_t id = 0;
};

uint64_t nextPoolId() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

int deviceOf(const at::Tensor &t, const char *name) {
  if (t.device().is_cuda())
    return t.device().has_index() ? t.device().index() : 0;
  if (t.device().is_cpu())
    return SPECC_DEVICE_CPU;
  throw ArgumentError(std::string(name) +
                      " is on a device that is neither CUDA nor the CPU: "
                      "specc moves on CUDA devices and the CPU only");
}

std::shared_ptr<PoolState> makePool(const std::vector<at::Tensor> &buffers) {
  auto pool = std::make_shared<PoolState>();
  pool->id = nextPoolId();
  pool->tensors = buffers;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const at::Tensor &b = buffers[i];
    std::string name = "kv_buffers[" + std::to_string(i) + "]";
    if (!b.defined())
      throw ArgumentError(name + " is an undefined tensor", true);
    if (b.layout() != c10::kStrided)
      throw ArgumentError(name + " is not a dense (strided) tensor");
    int dev = deviceOf(b, name.c_str());
    if (i == 0)
      pool->device = dev;
    else if (dev != pool->device)
      throw ArgumentError(name + " is on another device than kv_buffers[0]");
    if (b.dim() < 1 || b.size(0) == 0)
      throw ArgumentError(name + " must have at least one slot (dimension 0)");
    if (!b.is_contiguous())
      throw ArgumentError(name +
                          " must be contiguous (rows of one slot adjacent)");
    int64_t slots = b.size(0);
    int64_t rowBytes = b.numel() / slots * b.element_size();
    if (rowBytes == 0)
      throw ArgumentError(name + " has empty rows");
    if (!b.data_ptr())
      throw ArgumentError(name + " has no data (a meta tensor?)");
    pool->descs.push_back({b.data_ptr(), rowBytes, slots});
    pool->nbytes.push_back(b.nbytes());
  }
  return pool;
}

/// Refuses a pool whose tensors changed since registration.
void checkUnchanged(const PoolState &pool) {
  for (size_t i = 0; i < pool.tensors.size(); ++i) {
    const at::Tensor &t = pool.tensors[i];
    if (t.data_ptr() != pool.descs[i].data || t.nbytes() != pool.nbytes[i])
      throw ArgumentError(
          "kv_buffers[" + std::to_string(i) +
          "] was resized or re-pointed since the pool was registered: "
          "register the pool again (specc.Pool)");
  }
}

/// One mover per (device, thread): a mover serves one call at a time.
struct ThreadMovers {
  std::unordered_map<int, MoverPtr> movers;
  std::unordered_map<int, uint64_t> poolOf;  // pool registered on each mover
  std::unordered_map<int, int64_t> capacity; // entries its scratch holds
  specc_mover *last = nullptr;
  void *lastStream = nullptr;
  // The list path: the pool of the last list of tensors seen.
  std::vector<c10::TensorImpl *> listKey;
  std::shared_ptr<PoolState> listPool;
};
ThreadMovers &threadMovers() {
  static thread_local ThreadMovers t;
  return t;
}
bool trapMode = false;

[[noreturn]] void runtimeFailure(int rc, specc_mover *m = nullptr,
                                 void *stream = nullptr) {
  RuntimeFailure f(rc, specc_last_error());
  if (m && rc == SPECC_ERROR_INPUT)
    specc_mover_read_status(m, stream, f.status);
  if (m && (rc == SPECC_ERROR_INPUT || rc == SPECC_ERROR_EARLIER_INPUT))
    specc_mover_last_report(m, f.report);
  throw f;
}

/// The thread's mover of `device`, created when needed, its scratch grown
/// to hold `entries` (the same mover: graphs captured on it stay valid).
specc_mover *moverFor(int device, int64_t entries) {
  ThreadMovers &t = threadMovers();
  auto it = t.movers.find(device);
  if (it != t.movers.end()) {
    if (t.capacity[device] < entries) {
      if (int rc = specc_mover_reserve(it->second.get(), entries))
        runtimeFailure(rc, it->second.get());
      t.capacity[device] = entries;
    }
    return it->second.get();
  }
  specc_mover *raw = nullptr;
  int64_t size = std::max<int64_t>(entries, 4096);
  if (int rc = specc_mover_create(device, size, &raw))
    runtimeFailure(rc);
  t.capacity[device] = size;
  MoverPtr fresh(raw);
  if (trapMode)
    specc_mover_set_trap(raw, 1);
  t.movers.emplace(device, std::move(fresh));
  return raw;
}

void *currentStream(int device) {
  if (device == SPECC_DEVICE_CPU)
    return nullptr;
  c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
  c10::Stream s = impl.getStream(c10::Device(c10::DeviceType::CUDA, device));
  return s.native_handle();
}

/// Registers `pool` on `m` unless it is the mover's pool already.
void usePool(specc_mover *m, int device, const PoolState &pool, void *stream) {
  ThreadMovers &t = threadMovers();
  auto it = t.poolOf.find(device);
  if (it != t.poolOf.end() && it->second == pool.id)
    return;
  int capturing = 0;
  if (int rc = specc_mover_stream_is_capturing(m, stream, &capturing))
    runtimeFailure(rc);
  if (capturing)
    throw RuntimeFailure(
        SPECC_ERROR_CAPTURING,
        "specc is not ready for CUDA-graph capture on device " +
            std::to_string(device) +
            ": these KV buffers are not registered yet; call "
            "specc.prepare(device, max_entries, kv_buffers) (or run the move "
            "once) before capturing");
  if (int rc = specc_mover_set_buffers(m, pool.descs.data(),
                                       static_cast<int64_t>(pool.descs.size())))
    runtimeFailure(rc);
  t.poolOf[device] = pool.id;
}

/// The pool of a list of tensors: the last one's while the same tensor
/// objects come back (an identity check per buffer, nothing else).
std::shared_ptr<PoolState> poolOfList(const std::vector<at::Tensor> &list) {
  ThreadMovers &t = threadMovers();
  bool same = t.listPool && t.listKey.size() == list.size();
  for (size_t i = 0; same && i < list.size(); ++i)
    same = t.listKey[i] == list[i].unsafeGetTensorImpl();
  if (same) {
    checkUnchanged(*t.listPool);
    return t.listPool;
  }
  auto pool = makePool(list);
  t.listKey.clear();
  for (const at::Tensor &b : list)
    t.listKey.push_back(b.unsafeGetTensorImpl());
  t.listPool = pool;
  return pool;
}

constexpr const char *kNames[] = {"req_pool_indices", "req_to_token",
                                  "seq_lens",         "num_correct_drafts",
                                  "accept_index",     "out_cache_loc"};
constexpr int kRanks[] = {1, 2, 1, 1, 2, 1};

specc_tensor indexTensor(const std::optional<at::Tensor> &x, int k,
                         int device) {
  specc_tensor t{};
  if (!x || !x->defined())
    throw ArgumentError(std::string(kNames[k]) +
                        " is required with targets=\"req_to_token\"");
  const at::Tensor &v = *x;
  if (deviceOf(v, kNames[k]) != device)
    throw ArgumentError(std::string(kNames[k]) +
                        " is on another device than num_correct_drafts");
  if (v.dim() != kRanks[k]) {
    std::string shape = "(";
    for (int64_t d = 0; d < v.dim(); ++d)
      shape += (d ? ", " : "") + std::to_string(v.size(d));
    throw ArgumentError(std::string(kNames[k]) + " must have rank " +
                        std::to_string(kRanks[k]) + ", got shape " + shape +
                        ")");
  }
  if (v.scalar_type() == c10::kInt)
    t.dtype = SPECC_INT32;
  else if (v.scalar_type() == c10::kLong)
    t.dtype = SPECC_INT64;
  else
    throw ArgumentError(std::string(kNames[k]) +
                            " must be int32 or int64, got " +
                            std::string(c10::toString(v.scalar_type())),
                        true);
  if (!v.is_contiguous())
    throw ArgumentError(std::string(kNames[k]) + " must be contiguous");
  t.data = v.data_ptr();
  t.rank = kRanks[k];
  t.shape[0] = v.size(0);
  t.shape[1] = kRanks[k] == 2 ? v.size(1) : 0;
  return t;
}

int targetsCode(const std::string &targets) {
  if (targets == "req_to_token")
    return SPECC_TARGETS_REQ_TO_TOKEN;
  if (targets == "window")
    return SPECC_TARGETS_WINDOW;
  throw ArgumentError("targets must be 'req_to_token' or 'window', got '" +
                      targets + "'");
}

/// The whole call, without Python: validation, mover, buffers, launch.
void moveImpl(const PoolState *pool, const std::optional<at::Tensor> &rpi,
              const std::optional<at::Tensor> &rtt,
              const std::optional<at::Tensor> &seq, const at::Tensor &ncd,
              const at::Tensor &acc, const at::Tensor &ocl, int targets,
              bool check) {
  if (!ncd.defined())
    throw ArgumentError("num_correct_drafts is required");
  int device = deviceOf(ncd, "num_correct_drafts");
  if (!pool->descs.empty() && pool->device != device)
    throw ArgumentError(
        "kv_buffers are on another device than the index tensors");
  checkUnchanged(*pool);
  specc_move_args a{};
  a.targets = targets;
  if (targets == SPECC_TARGETS_REQ_TO_TOKEN) {
    a.req_pool_indices = indexTensor(rpi, 0, device);
    a.req_to_token = indexTensor(rtt, 1, device);
    a.seq_lens = indexTensor(seq, 2, device);
  }
  a.num_correct_drafts = indexTensor(ncd, 3, device);
  a.accept_index = indexTensor(acc, 4, device);
  a.out_cache_loc = indexTensor(ocl, 5, device);
  void *stream = currentStream(device);
  specc_mover *m = moverFor(device, 0);
  usePool(m, device, *pool, stream);
  ThreadMovers &t = threadMovers();
  t.last = m;
  t.lastStream = stream;
  int rc = specc_move_accept_tokens(m, &a, stream, check ? 1 : 0);
  if (rc == SPECC_SUCCESS || rc == SPECC_ERROR_INPUT ||
      rc == SPECC_ERROR_EARLIER_INPUT) {
    // The call ran: the runtime grew the scratch to the batch.
    int64_t &cap = t.capacity[device];
    cap = std::max(cap, a.accept_index.shape[0] * a.accept_index.shape[1]);
  }
  if (rc)
    runtimeFailure(rc, m, stream);
}

//===----------------------------------------------------------------------===//
// Python: exceptions and the module
//===----------------------------------------------------------------------===//

py::tuple ints(const int64_t *v, int n) {
  py::tuple t(n);
  for (int i = 0; i < n; ++i)
    t[i] = py::int_(v[i]);
  return t;
}

/// Runs `body`, turning C++ failures into specc's Python exceptions.
template <typename F> auto translated(F body) -> decltype(body()) {
  try {
    return body();
  } catch (const ArgumentError &e) {
    if (e.type)
      throw py::type_error(e.what());
    throw py::value_error(e.what());
  } catch (const RuntimeFailure &f) {
    Errors &err = errors();
    py::object exc;
    switch (f.rc) {
    case SPECC_ERROR_INPUT:
      exc = err.input(f.what(), ints(f.status, SPECC_STATUS_FIELDS), false,
                      f.report[0] > 0 ? f.report[0] : 1, f.report[5]);
      break;
    case SPECC_ERROR_EARLIER_INPUT:
      exc = err.input(f.what(), ints(f.report + 1, 4), true, f.report[0],
                      f.report[5]);
      break;
    case SPECC_ERROR_NO_DRIVER:
      exc = err.noDriver(f.what());
      break;
    case SPECC_ERROR_OUT_OF_MEMORY:
      exc = err.outOfMemory(f.what());
      break;
    case SPECC_ERROR_INVALID_ARGUMENT:
      throw py::value_error(f.what());
    default:
      exc = err.speccError(f.what());
    }
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exc.ptr())),
                    exc.ptr());
    throw py::error_already_set();
  }
}

std::shared_ptr<PoolState> poolArg(const py::handle &buffers) {
  if (py::isinstance<PoolState>(buffers))
    return buffers.cast<std::shared_ptr<PoolState>>();
  std::vector<at::Tensor> list;
  try {
    list = buffers.cast<std::vector<at::Tensor>>();
  } catch (const py::cast_error &) {
    throw ArgumentError("kv_buffers must be a specc.Pool or a sequence of "
                        "torch tensors",
                        true);
  }
  return poolOfList(list);
}

//===----------------------------------------------------------------------===//
// The torch op
//===----------------------------------------------------------------------===//

void opKernel(const std::optional<at::Tensor> &rpi,
              const std::optional<at::Tensor> &rtt,
              const std::optional<at::Tensor> &seq, const at::Tensor &ncd,
              const at::Tensor &acc, const at::Tensor &ocl,
              at::TensorList kvBuffers, bool check, c10::string_view targets) {
  try {
    std::vector<at::Tensor> list(kvBuffers.begin(), kvBuffers.end());
    moveImpl(poolOfList(list).get(), rpi, rtt, seq, ncd, acc, ocl,
             targetsCode(std::string(targets)), check);
  } catch (const ArgumentError &e) {
    if (e.type)
      TORCH_CHECK_TYPE(false, e.what());
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const RuntimeFailure &f) {
    // InputError is a ValueError: both path's callers catch it as one.
    TORCH_CHECK_VALUE(f.rc != SPECC_ERROR_INPUT &&
                          f.rc != SPECC_ERROR_EARLIER_INPUT,
                      "specc.InputError: ", f.what());
    TORCH_CHECK(false, "specc: ", f.what());
  }
}

/// The fake (meta) kernel: the op returns nothing and writes its buffers in
/// place, so tracing needs no more than a valid targets string.
void opMeta(const std::optional<at::Tensor> &,
            const std::optional<at::Tensor> &,
            const std::optional<at::Tensor> &, const at::Tensor &,
            const at::Tensor &, const at::Tensor &, at::TensorList, bool,
            c10::string_view targets) {
  TORCH_CHECK_VALUE(targets == "req_to_token" || targets == "window",
                    "targets must be 'req_to_token' or 'window'");
}

} // namespace

TORCH_LIBRARY(specc, m) {
  m.def("move_accept_tokens_to_target_kvcache(Tensor? req_pool_indices, "
        "Tensor? req_to_token, Tensor? seq_lens, Tensor num_correct_drafts, "
        "Tensor accept_index, Tensor out_cache_loc, Tensor(a!)[] kv_buffers, "
        "bool check=False, str targets=\"req_to_token\") -> ()");
}
TORCH_LIBRARY_IMPL(specc, CPU, m) {
  m.impl("move_accept_tokens_to_target_kvcache", &opKernel);
}
TORCH_LIBRARY_IMPL(specc, CUDA, m) {
  m.impl("move_accept_tokens_to_target_kvcache", &opKernel);
}
TORCH_LIBRARY_IMPL(specc, Meta, m) {
  m.impl("move_accept_tokens_to_target_kvcache", &opMeta);
}

PYBIND11_MODULE(_native, mod) {
  mod.doc() = "specc's native torch binding (see specc/api.py)";
  mod.def("set_errors", [](py::object input, py::object speccError,
                           py::object noDriver, py::object outOfMemory) {
    Errors &e = errors();
    e.input = input;
    e.speccError = speccError;
    e.noDriver = noDriver;
    e.outOfMemory = outOfMemory;
  });
  py::class_<PoolState, std::shared_ptr<PoolState>>(mod, "Pool")
      .def(py::init([](const std::vector<at::Tensor> &buffers) {
             return translated([&] { return makePool(buffers); });
           }),
           py::arg("buffers"))
      .def_property_readonly("device",
                             [](const PoolState &p) { return p.device; })
      .def("__len__", [](const PoolState &p) { return p.tensors.size(); })
      .def_property_readonly("buffers",
                             [](const PoolState &p) { return p.tensors; });
  mod.def(
      "move",
      [](py::handle buffers, std::optional<at::Tensor> rpi,
         std::optional<at::Tensor> rtt, std::optional<at::Tensor> seq,
         const at::Tensor &ncd, const at::Tensor &acc, const at::Tensor &ocl,
         int targets, bool check) {
        translated([&] {
          std::shared_ptr<PoolState> pool = poolArg(buffers);
          moveImpl(pool.get(), rpi, rtt, seq, ncd, acc, ocl, targets, check);
        });
      },
      py::arg("buffers"), py::arg("req_pool_indices"), py::arg("req_to_token"),
      py::arg("seq_lens"), py::arg("num_correct_drafts"),
      py::arg("accept_index"), py::arg("out_cache_loc"), py::arg("targets"),
      py::arg("check"));
  mod.def("prepare", [](int device, int64_t maxEntries, py::handle buffers) {
    translated([&] {
      specc_mover *m = moverFor(device, maxEntries);
      std::shared_ptr<PoolState> pool = poolArg(buffers);
      if (!pool->descs.empty())
        usePool(m, device, *pool, currentStream(device));
    });
  });
  mod.def("poll", [] {
    translated([] {
      for (auto &[device, m] : threadMovers().movers) {
        (void)device;
        if (int rc = specc_mover_poll(m.get(), nullptr))
          runtimeFailure(rc, m.get());
      }
    });
  });
  mod.def("devices", [] {
    std::vector<int> out;
    for (auto &[device, m] : threadMovers().movers)
      out.push_back(device);
    return out;
  });
  mod.def("last_status", [] {
    return translated([] {
      int64_t st[SPECC_STATUS_FIELDS] = {};
      ThreadMovers &t = threadMovers();
      if (t.last)
        if (int rc = specc_mover_read_status(t.last, t.lastStream, st))
          runtimeFailure(rc);
      return ints(st, SPECC_STATUS_FIELDS);
    });
  });
  mod.def("backend", [](int device) {
    return translated(
        [&] { return std::string(specc_mover_backend(moverFor(device, 0))); });
  });
  mod.def("set_trap", [](bool on) {
    trapMode = on;
    for (auto &[device, m] : threadMovers().movers) {
      (void)device;
      specc_mover_set_trap(m.get(), on);
    }
  });
  mod.def("reset", [] {
    ThreadMovers &t = threadMovers();
    t.last = nullptr;
    t.poolOf.clear();
    t.listPool.reset();
    t.listKey.clear();
    t.capacity.clear();
    t.movers.clear();
  });
}
