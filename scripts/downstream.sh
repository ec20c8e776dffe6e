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
# Nothing installed may name the first prefix, the build folder or the
# sources (text or binary): the package must work without them.
for path in "$work/first" "$(cd "$BUILD_DIR" && pwd)" "$PWD/"; do
  if grep -rl --binary-files=text -F "$path" "$work/moved"; then
    echo "downstream.sh: error: the files above name $path; the installed package depends on it" >&2
    exit 1
  fi
done
"$work/moved/bin/kiln" --version

cmake -S "$work/moved/share/kiln/examples/downstream" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/moved" -DCMAKE_BUILD_TYPE=Release
cmake --build "$work/build"
ctest --test-dir "$work/build" --output-on-failure -V | grep -E "^[0-9]+: |tests passed|tests failed"
