//===- Manifest.cpp - parse the launch manifest written by specc ----------===//
//
// Each line `kernel NAME block N grid RULE tile_bytes T smem S [KEY VALUE]...`
// (see lib/Target/Manifest.cpp) becomes a LaunchInfo; `abi V` gives the ABI
// version; `#` lines are comments. Plain C string handling: the runtime is
// loaded into foreign processes (Python, servers) and keeps clear of
// iostreams' locale machinery.
//
//===----------------------------------------------------------------------===//

#include "KernelImages.h"

#include <cstdlib>

namespace {
std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string::npos)
      end = s.size();
    if (end > pos)
      out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

bool toNumber(const std::string &s, long long &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0';
}

/// A comma list; "-" is the empty list.
std::vector<std::string> list(const std::string &s) {
  return s == "-" ? std::vector<std::string>() : split(s, ',');
}
} // namespace

bool specc::parseManifest(const EmbeddedFile &file, Manifest &out,
                          std::string &error) {
  std::string text(reinterpret_cast<const char *>(file.data), file.size);
  out = Manifest();
  for (const std::string &raw : split(text, '\n')) {
    std::string line = raw;
    while (!line.empty() && (line.back() == '\r' || line.back() == '\0'))
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    std::vector<std::string> tok = split(line, ' ');
    auto bad = [&] {
      error = "malformed kernel manifest line: " + line;
      return false;
    };
    if (tok.size() == 2 && tok[0] == "abi") {
      if (!toNumber(tok[1], out.abi))
        return bad();
      continue;
    }
    if (tok.size() < 10 || tok[0] != "kernel" || tok[2] != "block" ||
        tok[4] != "grid" || tok[6] != "tile_bytes" || tok[8] != "smem" ||
        tok.size() % 2 != 0)
      return bad();
    LaunchInfo info;
    long long block = 0;
    info.name = tok[1];
    info.grid = tok[5];
    if (!toNumber(tok[3], block) || block <= 0 || block > 1024 ||
        !toNumber(tok[7], info.tileBytes) ||
        !toNumber(tok[9], info.sharedMemory))
      return bad();
    info.block = static_cast<unsigned>(block);
    for (size_t i = 10; i + 1 < tok.size(); i += 2) {
      const std::string &key = tok[i], &value = tok[i + 1];
      if (key == "entry")
        info.entry = value;
      else if (key == "targets")
        info.targets = value;
      else if (key == "units")
        info.units = list(value);
      else if (key == "blocks_per_sm") {
        if (!toNumber(value, info.blocksPerSM))
          return bad();
      } else if (key == "params")
        info.params = list(value);
      else if (key == "host_args")
        info.hostArgs = list(value);
      else if (key == "types") {
        for (const std::string &t : list(value)) {
          size_t colon = t.find(':');
          if (colon == std::string::npos)
            return bad();
          info.types.emplace_back(t.substr(0, colon), t.substr(colon + 1));
        }
      } else {
        return bad();
      }
    }
    out.kernels.push_back(std::move(info));
  }
  return true;
}
