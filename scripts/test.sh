#!/usr/bin/env bash
# Builds Kiln and runs every test: lit (front end, dialect, passes, driver,
# examples, launchers), the GoogleTest unit tests, examples/downstream built
# against the installed package (scripts/downstream.sh), and bounded fuzzing
# runs of the front end and of the runtime's bundle reader, and random kernels
# on the GPU emulators against the host (test/fuzz/kernelsmith.py).
# Usage: scripts/test.sh            (KILN_FUZZ_SECONDS=N, KILN_KERNELSMITH_SECONDS=N
#                                    to change the fuzz times)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
FUZZ_SECONDS=${KILN_FUZZ_SECONDS:-60}

scripts/build.sh all

# scripts/deps.sh installs Debian's libamdhip64-5: the tests of the HIP
# device against the real library must run, not skip (HipTest.cpp,
# test/runtime/kiln-run/hip-real.test).
export KILN_EXPECT_HIP_RUNTIME=1

echo "== lit"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test"

echo "== unit tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure

echo "== downstream project against the installed, moved package"
scripts/downstream.sh

# fuzz TARGET SECONDS CORPUS [libFuzzer options...]: a bounded run of a
# libFuzzer target (built with clang only); new inputs go to a scratch folder.
fuzz() {
  local target=$1 seconds=$2 corpus=$3
  shift 3
  [ -x "$BUILD_DIR/bin/$target" ] && [ "$seconds" -gt 0 ] || return 0
  echo "== $target for ${seconds}s"
  local work
  work=$(mktemp -d)
  "$BUILD_DIR/bin/$target" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$work/" "$@" "$work" "$corpus" 2>&1 | tail -n 8
  local rc=${PIPESTATUS[0]}
  rm -rf "$work"
  return "$rc"
}
fuzz kiln-fuzz-frontend "$FUZZ_SECONDS" test/fuzz/corpus -dict=test/fuzz/tile.dict
fuzz kiln-fuzz-bundle "$((FUZZ_SECONDS / 2))" test/fuzz/bundle-corpus

# Random kernels on fresh seeds, the GPU emulators against the host, bit for
# bit (docs/testing.md, "Differential testing of the GPU stage"); needs the
# emulator and both GPU backends.
KERNELSMITH_SECONDS=${KILN_KERNELSMITH_SECONDS:-60}
backends=$("$BUILD_DIR/bin/kiln" --version | grep '^backends:')
if [ "$KERNELSMITH_SECONDS" -gt 0 ] && [[ $backends == *emu* ]] &&
   [[ $backends == *nvptx* ]] && [[ $backends == *amdgpu* ]]; then
  echo "== kernelsmith for ${KERNELSMITH_SECONDS}s"
  python3 test/fuzz/kernelsmith.py --kiln "$BUILD_DIR/bin/kiln" \
    --kiln-run "$BUILD_DIR/bin/kiln-run" --time-limit "$KERNELSMITH_SECONDS"
fi
echo "== all tests passed"
