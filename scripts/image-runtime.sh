# Sourced by scripts/ab.sh and scripts/stamps.sh (GPU host): the MLIR-free
# runtime built around one kernel image.
# image_runtime ROOT IMAGE_DIR NAME: /tmp/image-art-NAME holds
# build/artifacts with the image folder's files (kernels.sm_90.cubin,
# kernels.manifest) over them, and /tmp/image-rt-NAME the runtime built
# from it (lib/libspecc_runtime.so; log /tmp/image-rt-NAME.log). Returns
# nonzero when the build fails.
image_runtime() {
  local root=$1 img=$2 art=/tmp/image-art-$3 rt=/tmp/image-rt-$3
  rm -rf "$art" && mkdir -p "$art" && cp "$root"/build/artifacts/kernels.* "$art"/ &&
    cp "$img"/kernels.* "$art"/ &&
    cmake -S "$root" -B "$rt" -G Ninja -DSPECC_RUNTIME_ONLY=ON -DSPECC_KERNEL_ARTIFACTS="$art" \
      -DSPECC_TORCH_EXTENSION=OFF > "$rt.log" 2>&1 && cmake --build "$rt" >> "$rt.log" 2>&1
}
