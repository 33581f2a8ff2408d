//===- CudaDriver.cpp - the CUDA driver API, loaded at run time -----------===//
//
// dlopen of libcuda.so.1 and resolution of the entry points (see CudaDriver.h).
// The versioned names (_v2) are the ones cuda.h maps the plain names to.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <dlfcn.h>
#include <mutex>

using namespace specc::cuda;

namespace {
struct Loaded {
  Driver driver{};
  std::string error;
  bool ok = false;
};

Loaded load() {
  Loaded l;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    l.error = std::string("no CUDA driver: cannot load libcuda.so.1 (") +
              (why ? why : "unknown reason") + ")";
    return l;
  }
  bool missing = false;
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(lib, name));
    if (!fn && !missing) {
      missing = true;
      l.error = std::string("libcuda.so.1 lacks ") + name +
                " (driver too old for specc)";
    }
  };
  Driver &d = l.driver;
  bind(d.cuInit, "cuInit");
  bind(d.cuDeviceGet, "cuDeviceGet");
  bind(d.cuDeviceGetCount, "cuDeviceGetCount");
  bind(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(d.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  bind(d.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  bind(d.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  bind(d.cuModuleUnload, "cuModuleUnload");
  bind(d.cuModuleGetFunction, "cuModuleGetFunction");
  bind(d.cuFuncSetAttribute, "cuFuncSetAttribute");
  bind(d.cuLaunchKernel, "cuLaunchKernel");
  bind(d.cuMemAlloc, "cuMemAlloc_v2");
  bind(d.cuMemFree, "cuMemFree_v2");
  bind(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(d.cuMemsetD8, "cuMemsetD8_v2");
  bind(d.cuMemsetD8Async, "cuMemsetD8Async");
  bind(d.cuMemHostAlloc, "cuMemHostAlloc");
  bind(d.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
  bind(d.cuMemFreeHost, "cuMemFreeHost");
  bind(d.cuStreamSynchronize, "cuStreamSynchronize");
  bind(d.cuStreamIsCapturing, "cuStreamIsCapturing");
  bind(d.cuGetErrorName, "cuGetErrorName");
  bind(d.cuGetErrorString, "cuGetErrorString");
  if (missing)
    return l;
  if (CUresult rc = d.cuInit(0); rc != CUDA_SUCCESS) {
    l.error = describe(d, rc, "cuInit", "no usable GPU");
    return l;
  }
  l.ok = true;
  return l;
}
} // namespace

const Driver *specc::cuda::getDriver(std::string &error) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}

std::string specc::cuda::describe(const Driver &d, CUresult rc,
                                  const char *call, const std::string &what) {
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(rc, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(rc, &text);
  return std::string(call) + "(" + what +
         "): " + (name ? name : ("CUDA error " + std::to_string(rc)).c_str()) +
         (text ? std::string(" (") + text + ")" : std::string());
}
