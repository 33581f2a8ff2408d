//===- Manifest.cpp - parse the launch manifest written by specc ----------===//
//
// Each line `kernel NAME block N grid RULE tile_bytes T smem S` (see
// lib/Target/Manifest.cpp) becomes a LaunchInfo; `#` lines are comments.
// Plain C parsing: the runtime is loaded into foreign processes (Python,
// servers) and keeps clear of iostreams' locale machinery.
//
//===----------------------------------------------------------------------===//

#include "KernelImages.h"

#include <cstdio>

std::vector<specc::LaunchInfo> specc::parseManifest(const EmbeddedFile &file,
                                                    std::string &error) {
  std::vector<LaunchInfo> result;
  std::string text(reinterpret_cast<const char *>(file.data), file.size);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#' || line[0] == '\0')
      continue;
    char name[256], grid[64];
    unsigned block = 0;
    long long tile = 0, smem = 0;
    if (std::sscanf(line.c_str(),
                    "kernel %255s block %u grid %63s tile_bytes %lld smem %lld",
                    name, &block, grid, &tile, &smem) != 5) {
      error = "malformed kernel manifest line: " + line;
      return {};
    }
    result.push_back(LaunchInfo{name, block, grid, tile, smem});
  }
  return result;
}
