//===- HostKernels.cpp - find and call the host-compiled entry points -----===//
//
// The entry points of the host object are looked up by name in this very
// library (dladdr + dlsym), so the list of specializations lives in the
// manifest alone.
//
//===----------------------------------------------------------------------===//

#include "HostKernels.h"

#include <dlfcn.h>

using namespace specc::host;

Descriptor Descriptor::rank1(void *data, int64_t size) {
  Descriptor d;
  d.allocated = d.aligned = data;
  d.rest[0] = size;
  d.rest[1] = 1;
  return d;
}

Descriptor Descriptor::rank2(void *data, int64_t rows, int64_t cols) {
  Descriptor d;
  d.allocated = d.aligned = data;
  d.rest[0] = rows;
  d.rest[1] = cols;
  d.rest[2] = cols;
  d.rest[3] = 1;
  return d;
}

void *specc::host::findEntry(const std::string &name) {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&findEntry), &info) || !info.dli_fname)
    return nullptr;
  // RTLD_NOLOAD: this library is loaded already; only its handle is wanted.
  void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!self)
    return nullptr;
  void *sym = dlsym(self, ("_mlir_ciface_" + name).c_str());
  dlclose(self);
  return sym;
}

bool specc::host::callEntry(void *entry, Descriptor *const *a, size_t n) {
  using D = Descriptor *;
  switch (n) {
#define SPECC_CALL(N, ...)                                                     \
  case N: {                                                                    \
    using Fn = void (*)(__VA_ARGS__);                                          \
    auto fn = reinterpret_cast<Fn>(entry);
#define SPECC_END(...)                                                         \
  fn(__VA_ARGS__);                                                             \
  return true;                                                                 \
  }
    SPECC_CALL(6, D, D, D, D, D, D)
    SPECC_END(a[0], a[1], a[2], a[3], a[4], a[5])
    SPECC_CALL(7, D, D, D, D, D, D, D)
    SPECC_END(a[0], a[1], a[2], a[3], a[4], a[5], a[6])
    SPECC_CALL(8, D, D, D, D, D, D, D, D)
    SPECC_END(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
    SPECC_CALL(9, D, D, D, D, D, D, D, D, D)
    SPECC_END(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])
    SPECC_CALL(10, D, D, D, D, D, D, D, D, D, D)
    SPECC_END(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])
    SPECC_CALL(11, D, D, D, D, D, D, D, D, D, D, D)
    SPECC_END(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10])
    SPECC_CALL(12, D, D, D, D, D, D, D, D, D, D, D, D)
    SPECC_END(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
              a[11])
#undef SPECC_CALL
#undef SPECC_END
  default:
    return false;
  }
}
