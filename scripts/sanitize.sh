#!/usr/bin/env bash
# Builds Kiln with sanitizers in a folder of its own and runs the tests
# under them; every report is fatal (the process aborts, the test fails).
#
#   scripts/sanitize.sh [address,undefined]   the whole tree in build-asan:
#                                             every lit test (the variant
#                                             sweeps of sm_90a and gfx942
#                                             only) and every ctest
#   scripts/sanitize.sh thread                the runtime in build-tsan: its
#                                             unit tests (concurrency, tuning,
#                                             launchers) under ThreadSanitizer
#
# KILN_ASAN_BUILD_DIR / KILN_TSAN_BUILD_DIR choose the folders. Needs clang
# and its sanitizer runtimes (libclang-rt-22-dev, scripts/deps.sh).
# docs/testing.md says what runs and how to read a report.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-address,undefined}
case "$MODE" in
  address,undefined|undefined,address|address|undefined)
    BUILD_DIR=${KILN_ASAN_BUILD_DIR:-build-asan} ;;
  thread)
    BUILD_DIR=${KILN_TSAN_BUILD_DIR:-build-tsan} ;;
  *)
    echo "usage: scripts/sanitize.sh [address,undefined|thread]" >&2
    exit 2 ;;
esac
export KILN_BUILD_DIR=$BUILD_DIR KILN_CMAKE_ARGS="-DKILN_SANITIZE=$MODE"
if [ -f "$BUILD_DIR/CMakeCache.txt" ] &&
   ! grep -qx "KILN_SANITIZE:STRING=$MODE" "$BUILD_DIR/CMakeCache.txt"; then
  echo "error: $BUILD_DIR was configured without KILN_SANITIZE=$MODE; remove it" >&2
  exit 2
fi

# Reports abort the process (a crash, which lit's `not` and GoogleTest
# count as failures, unlike an exit code of 1), with symbolized stacks.
SYMBOLIZER=/usr/lib/llvm-22/bin/llvm-symbolizer
export ASAN_SYMBOLIZER_PATH=$SYMBOLIZER
export ASAN_OPTIONS=abort_on_error=1:halt_on_error=1:detect_leaks=1:strict_init_order=1:check_initialization_order=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=abort_on_error=1:halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/test/sanitizers/lsan.supp:print_suppressions=0
export TSAN_OPTIONS=abort_on_error=1:halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/sanitizers/tsan.supp
export KILN_EXPECT_HIP_RUNTIME=1

if [ "$MODE" = thread ]; then
  scripts/build.sh KilnRuntimeTests
  echo "== runtime unit tests under ThreadSanitizer"
  # The emulator's tests run under AddressSanitizer + UBSan only: TSan does
  # not follow its fibers across launches (runtime/lib/FiberSanitizer.h).
  "$BUILD_DIR/bin/KilnRuntimeTests" --gtest_filter='-Emu*:ThreadsOnEmulator.*'
  echo "== ThreadSanitizer: no report"
  exit 0
fi

scripts/build.sh all
echo "== lit under $MODE"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test"
echo "== unit tests under $MODE"
ctest --test-dir "$BUILD_DIR" --output-on-failure
echo "== $MODE: no report"
