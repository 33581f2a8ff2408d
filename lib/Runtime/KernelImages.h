//===- KernelImages.h - the kernels specc compiled, embedded ----*- C++ -*-===//
//
// The build runs `specc` over kernels/ and embeds what it produced (see
// cmake/EmbedFiles.cmake): cubin for sm_80 and sm_90, PTX for every other
// chip, and the launch manifest. The host object of the same kernels is
// linked in and reached through HostKernels.h.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_RUNTIME_KERNELIMAGES_H
#define SPECC_RUNTIME_KERNELIMAGES_H

#include <cstddef>
#include <string>
#include <vector>

namespace specc {

struct EmbeddedFile {
  const unsigned char *data;
  size_t size;
};

EmbeddedFile cubinSm80();
EmbeddedFile cubinSm90();
/// NUL-terminated PTX for sm_80, JIT-compiled by the driver on other chips.
EmbeddedFile ptx();
EmbeddedFile manifest();

/// One kernel of the launch manifest (lib/Target/Manifest.cpp writes it).
struct LaunchInfo {
  std::string name;
  unsigned block = 0;
  std::string grid;
  long long tileBytes = 0;
  long long sharedMemory = 0;
  /// Entry points only (see specc::KernelLaunch).
  std::string entry, targets;
  std::vector<std::string> units, params, hostArgs;
  std::vector<std::pair<std::string, std::string>> types;
  long long blocksPerSM = 0;
};

/// A parsed manifest: its kernels and the ABI version it was written for.
struct Manifest {
  std::vector<LaunchInfo> kernels;
  long long abi = -1;
};

/// Parses the manifest; false with `error` set when it is malformed.
bool parseManifest(const EmbeddedFile &file, Manifest &out, std::string &error);

} // namespace specc

#endif // SPECC_RUNTIME_KERNELIMAGES_H
