# Sourced by tests/gpu/run_*.sh (from the repository root): configures a build
# with CUDA on the GPU machine (build-dev). That image cannot install packages, so libjansson
# (model files) may come as Debian packages (apt-get download libjansson-dev
# libjansson4) in one of the folders given; they are unpacked under /tmp.
# Usage: hb_gpu_configure OUT_DIR [DEB_DIR...]
# HB_GPU_BUILD names the build folder (default build-dev); HB_GPU_CMAKE_ARGS adds to the
# configuration (e.g. -DCMAKE_CUDA_FLAGS=-lineinfo for source lines in sanitizer reports).
hb_gpu_configure() {
  local out=$1 dir deb
  shift
  local extra=()
  if ! pkg-config --exists jansson 2>/dev/null; then
    for dir in "$@"; do
      ls "$dir"/libjansson-dev_*.deb >/dev/null 2>&1 || continue
      rm -rf /tmp/hb-jansson && mkdir -p /tmp/hb-jansson
      for deb in "$dir"/libjansson*.deb; do dpkg -x "$deb" /tmp/hb-jansson; done
      extra=(-DHB_JANSSON_INCLUDE=/tmp/hb-jansson/usr/include
             -DHB_JANSSON_LIB=/tmp/hb-jansson/usr/lib/x86_64-linux-gnu/libjansson.a)
      break
    done
  fi
  # shellcheck disable=SC2086  # HB_GPU_CMAKE_ARGS: words
  cmake -S . -B "${HB_GPU_BUILD:-build-dev}" -DHB_MPI=OFF -DHB_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
    "${extra[@]}" ${HB_GPU_CMAKE_ARGS:-} \
    > "$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; return 1; }
}
