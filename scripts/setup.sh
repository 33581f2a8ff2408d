#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test specc:
# LLVM/MLIR 22 (libraries, tools, lit, FileCheck), the zstd headers the
# static MLIR libraries name, CMake, ninja, and the Python test tools.
# Idempotent: when everything is present it installs nothing.
set -euo pipefail

apt_packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libzstd-dev nlohmann-json3-dev
              cmake ninja-build python3-pip)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

py_modules=(pytest numpy)
py_missing=()
for m in "${py_modules[@]}"; do
  python3 -c "import $m" 2>/dev/null || py_missing+=("$m")
done
if ((${#py_missing[@]})); then
  echo "setup: pip installing ${py_missing[*]}"
  python3 -m pip install -q "${py_missing[@]}"
fi

command -v ptxas >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/ptxas ] ||
  echo "setup: note: ptxas not found; cubin emission and its tests are skipped (PTX still works)"
exit 0
