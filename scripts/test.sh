#!/usr/bin/env bash
# Builds Kiln and runs every test: lit (front end, dialect, passes, driver,
# examples), the GoogleTest unit tests, and bounded fuzzing runs of the front
# end and of the runtime's bundle reader.
# Usage: scripts/test.sh            (KILN_FUZZ_SECONDS=N to change the fuzz time)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
FUZZ_SECONDS=${KILN_FUZZ_SECONDS:-60}

scripts/build.sh all

echo "== lit"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test"

echo "== unit tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure

if [ -x "$BUILD_DIR/bin/kiln-fuzz-frontend" ] && [ "$FUZZ_SECONDS" -gt 0 ]; then
  echo "== fuzzing the front end for ${FUZZ_SECONDS}s"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$BUILD_DIR/bin/kiln-fuzz-frontend" -max_total_time="$FUZZ_SECONDS" \
    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -dict=test/fuzz/tile.dict -artifact_prefix="$work/" "$work" test/fuzz/corpus 2>&1 | tail -n 15
fi
if [ -x "$BUILD_DIR/bin/kiln-fuzz-bundle" ] && [ "$FUZZ_SECONDS" -gt 0 ]; then
  echo "== fuzzing the runtime's bundle reader for $((FUZZ_SECONDS / 2))s"
  bundle_work=$(mktemp -d)
  trap 'rm -rf "${work:-}" "$bundle_work"' EXIT
  "$BUILD_DIR/bin/kiln-fuzz-bundle" -max_total_time="$((FUZZ_SECONDS / 2))" \
    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$bundle_work/" "$bundle_work" test/fuzz/bundle-corpus 2>&1 | tail -n 5
fi
echo "== all tests passed"
