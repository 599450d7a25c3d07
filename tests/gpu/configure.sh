# Sourced by tests/gpu/run_*.sh (from the repository root): configures build-dev
# with CUDA on the GPU machine. That image cannot install packages, so libjansson
# (model files) may come as Debian packages (apt-get download libjansson-dev
# libjansson4) in one of the folders given; they are unpacked under /tmp.
# Usage: hb_gpu_configure OUT_DIR [DEB_DIR...]
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
  cmake -S . -B build-dev -DHB_MPI=OFF -DHB_CUDA=ON -DCMAKE_BUILD_TYPE=Release "${extra[@]}" \
    > "$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; return 1; }
}
