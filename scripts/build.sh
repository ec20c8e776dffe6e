#!/usr/bin/env bash
# Configure (once) and build Kiln in ./build (or $KILN_BUILD_DIR).
# Builds are serialized through a lock file: the machine has two cores and
# two concurrent MLIR builds only slow each other down.
# Usage: scripts/build.sh [ninja targets...]
#   KILN_CMAKE_ARGS: more arguments for the first configure of the folder
#   (scripts/sanitize.sh: -DKILN_SANITIZE=...).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
BUILD_TYPE=${KILN_BUILD_TYPE:-Release}
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
exec 9>/tmp/kiln-build.lock
flock 9
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit ${KILN_CMAKE_ARGS:-}
fi
if [ $# -eq 0 ]; then set -- all; fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target "$@"
