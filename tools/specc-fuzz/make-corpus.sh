#!/bin/sh
# Writes the seed corpus of specc-fuzz: every .mlir under kernels/ and test/,
# split on `// -----` lines (as `-split-input-file` does), one seed per part.
# Seeds are named by their content's hash, so a rerun adds nothing twice.
#
#   tools/specc-fuzz/make-corpus.sh OUT_DIR [SOURCE_ROOT]
set -eu
out=${1:?usage: make-corpus.sh OUT_DIR [SOURCE_ROOT]}
root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$root/kernels" "$root/test" -name '*.mlir' | sort | while read -r f; do
  rm -f "$tmp"/part.*
  awk -v dir="$tmp" '
    BEGIN { n = 0; file = sprintf("%s/part.%04d", dir, n) }
    /^\/\/ -----/ { close(file); n++; file = sprintf("%s/part.%04d", dir, n); next }
    { print > file }
  ' "$f"
  for p in "$tmp"/part.*; do
    [ -s "$p" ] || continue
    # Skip parts that are nothing but comments and RUN lines.
    grep -qv '^[[:space:]]*\(//.*\)\{0,1\}$' "$p" || continue
    h=$(sha1sum "$p" | cut -c1-40)
    cp "$p" "$out/$h"
  done
done
echo "$(ls "$out" | wc -l) seeds in $out"
