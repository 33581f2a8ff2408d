//===- Manifest.cpp - parse the launch manifest written by specc ----------===//
//
// Each line `kernel NAME block N grid RULE tile_bytes T smem S` (see
// lib/Target/Manifest.cpp) becomes a LaunchInfo; `#` lines are comments.
//
//===----------------------------------------------------------------------===//

#include "KernelImages.h"

#include <sstream>

std::vector<specc::LaunchInfo>
specc::parseManifest(const EmbeddedFile &file, std::string &error) {
  std::vector<LaunchInfo> result;
  std::istringstream in(std::string(reinterpret_cast<const char *>(file.data),
                                    file.size));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    std::string k, b, g, t, s;
    LaunchInfo info;
    if (!(fields >> k >> info.name >> b >> info.block >> g >> info.grid >> t >>
          info.tileBytes >> s >> info.sharedMemory) ||
        k != "kernel" || b != "block" || g != "grid" || t != "tile_bytes" ||
        s != "smem") {
      error = "malformed kernel manifest line: " + line;
      return {};
    }
    result.push_back(info);
  }
  return result;
}
