#!/usr/bin/env bash
# Installs Kiln's build and test dependencies: Debian 12 packages only.
# libamdhip64-5 (ROCm 5.2's HIP runtime) is for the tests only: the HIP
# device is tested against the real library on a machine without an AMD
# GPU (the runtime never links it: it is dlopen'ed).
set -euo pipefail
PACKAGES=(
  cmake ninja-build ccache git python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22 clang-22
  libclang-rt-22-dev
  libfmt-dev libsqlite3-dev nlohmann-json3-dev libgtest-dev
  libamdhip64-5
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
