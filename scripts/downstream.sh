#!/usr/bin/env bash
# Installs Kiln (built in ./build or $KILN_BUILD_DIR) into a temporary
# prefix, moves the prefix elsewhere, then configures, builds and runs
# examples/downstream against the moved one: the installed package must be
# relocatable and complete (docs/cmake.md). The downstream project compiles
# for every backend the installed kiln has (TARGETS' default).
# Usage: scripts/downstream.sh        (scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$BUILD_DIR" --prefix "$work/first" >"$work/install.log"
mv "$work/first" "$work/moved"
# Nothing installed may name the first prefix (text or binary).
if grep -rl --binary-files=text "$work/first" "$work/moved"; then
  echo "downstream.sh: error: the files above name the install prefix; it cannot move" >&2
  exit 1
fi
"$work/moved/bin/kiln" --version

cmake -S "$work/moved/share/kiln/examples/downstream" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/moved" -DCMAKE_BUILD_TYPE=Release
cmake --build "$work/build"
ctest --test-dir "$work/build" --output-on-failure -V | grep -E "^[0-9]+: |tests passed|tests failed"
