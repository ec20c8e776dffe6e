#!/usr/bin/env bash
# Builds, here where the compiler is, everything the GPU tests need on a
# machine that has an NVIDIA GPU but no LLVM, MLIR or compiler, and copies it
# into one folder, the device pack (docs/testing-gpu.md):
#
#   bin/        kiln-run, KilnE2ETests (they link libkiln_runtime, no LLVM)
#   lib/        libkiln_runtime.so.0 (and libkiln_runtime.so, a copy)
#   bundles/    the e2e bundles, compiled for host, sm_80 and sm_90a
#   test/e2e/   the GPU lit tests (test/e2e/gpu) and Inputs/npy_ref.py
#   test/fuzz/kernelsmith.py, kernelsmith.tar.xz
#               random kernels (fresh seeds that pass on the host and the
#               emulators here), compiled for sm_80 and sm_90a, with the
#               host's outputs: replayed on cuda:0 there
#   tools/      FileCheck (a small one in Python: scripts/gpu-pack/FileCheck.py)
#   run-gpu-tests.sh, run-lit.py   the runners (scripts/gpu-pack/)
#   features    the lit features of the bundles (host-backend nvptx-backend)
#   MANIFEST    commit, build, sizes, what links what, checksums
#
# Usage: scripts/gpu-pack.sh [OUT_DIR]      (default: build/gpu-pack)
# Then, on the GPU machine, from the repository root: OUT_DIR/run-gpu-tests.sh
#
# Fails when a copied binary or library links LLVM, MLIR or clang, when one
# needs a library that is neither in the pack nor a system one, when a bundle
# lacks NVIDIA code objects (and the NVIDIA backend is built), or when the
# pack is over 40 MiB. KILN_PACK_KERNELSMITH: how many random kernels to
# pack (default 100, about four minutes; 0: none). A seed that fails here is reported and left
# out of the pack (kept in OUT_DIR.kernelsmith-failed).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
OUT=${1:-$BUILD_DIR/gpu-pack}
LIMIT=$((40 * 1024 * 1024))
fail() { echo "gpu-pack.sh: error: $*" >&2; exit 1; }

# KilnE2ETests depends on the bundles (KilnE2EBundles) and the runtime.
scripts/build.sh kiln kiln-run KilnE2ETests

case $OUT in /*|./*|../*) ;; *) OUT=./$OUT ;; esac
rm -rf "$OUT" "$OUT.kernelsmith-failed"
mkdir -p "$OUT"/{bin,lib,bundles,tools,test/e2e/gpu,test/e2e/Inputs}
cp "$BUILD_DIR/bin/kiln-run" "$BUILD_DIR/bin/KilnE2ETests" "$OUT/bin/"
# Plain files, no symbolic links (a carried folder keeps files only).
cp -L "$BUILD_DIR/lib/libkiln_runtime.so.0" "$OUT/lib/libkiln_runtime.so.0"
cp -L "$BUILD_DIR/lib/libkiln_runtime.so" "$OUT/lib/libkiln_runtime.so"
# The bundles of this configuration only (bundles.list): the folder can hold
# stale ones from an older one.
[ -f "$BUILD_DIR/test/e2e/bundles.list" ] || fail "$BUILD_DIR/test/e2e/bundles.list is missing (reconfigure the build)"
while IFS= read -r b; do
  [ -n "$b" ] && cp "$b" "$OUT/bundles/"
done <"$BUILD_DIR/test/e2e/bundles.list"
cp test/e2e/gpu/*.test "$OUT/test/e2e/gpu/"
cp test/e2e/Inputs/npy_ref.py "$OUT/test/e2e/Inputs/"
cp scripts/gpu-pack/run-gpu-tests.sh scripts/gpu-pack/run-lit.py "$OUT/"
cp scripts/gpu-pack/FileCheck.py "$OUT/tools/FileCheck"
chmod +x "$OUT/run-gpu-tests.sh" "$OUT/run-lit.py" "$OUT/tools/FileCheck"

# The lit features of this build's backends (lit.site.cfg.py's kiln_backends).
backends=$(sed -n 's/^config.kiln_backends = "\(.*\)"$/\1/p' "$BUILD_DIR/test/lit.site.cfg.py")
for b in ${backends//,/ }; do printf '%s-backend\n' "$b"; done >"$OUT/features"

# Random kernels (test/fuzz/kernelsmith.py, docs/testing.md): checked here on
# the host and the emulators of sm_80 and sm_90a, then compiled for the GPU.
KS_SEEDS=${KILN_PACK_KERNELSMITH:-100}
ks_note="none (KILN_PACK_KERNELSMITH=0)"
if [ "$KS_SEEDS" -gt 0 ] && grep -qx nvptx-backend "$OUT/features" && grep -qx emu-backend "$OUT/features"; then
  echo "gpu-pack.sh: kernelsmith: $KS_SEEDS fresh seeds, checked on the emulators, compiled for sm_80 and sm_90a"
  mkdir -p "$OUT/test/fuzz"
  cp test/fuzz/kernelsmith.py "$OUT/test/fuzz/"
  ks_tmp=$(mktemp -d)
  ks_rc=0
  python3 test/fuzz/kernelsmith.py --kiln "$BUILD_DIR/bin/kiln" --kiln-run "$BUILD_DIR/bin/kiln-run" \
    --count "$KS_SEEDS" --targets emu:sm_80,emu:sm_90a --pack "$ks_tmp/kernelsmith" \
    --pack-targets sm_80,sm_90a | tail -n 25 || ks_rc=$?
  if [ -d "$ks_tmp/kernelsmith.failed" ]; then
    rm -rf "$OUT.kernelsmith-failed"
    mv "$ks_tmp/kernelsmith.failed" "$OUT.kernelsmith-failed"
    echo "gpu-pack.sh: warning: kernelsmith seeds failed here (not packed; in $OUT.kernelsmith-failed): a compiler bug to fix" >&2
  elif [ "$ks_rc" -ne 0 ]; then
    fail "kernelsmith.py --pack failed (exit code $ks_rc)"
  fi
  ks_packed=$(find "$ks_tmp/kernelsmith" -name case.json | wc -l)
  # (Python's tarfile: no xz tool needed)
  python3 -c 'import sys, tarfile
with tarfile.open(sys.argv[1], "w:xz") as t:
    t.add(sys.argv[2], "kernelsmith")' "$OUT/kernelsmith.tar.xz" "$ks_tmp/kernelsmith"
  rm -rf "$ks_tmp"
  ks_note="$ks_packed seeds in kernelsmith.tar.xz"
elif [ "$KS_SEEDS" -gt 0 ]; then
  ks_note="none (the build has no NVIDIA or no emulator backend)"
fi

# Nothing in the pack links LLVM, MLIR or clang, and every library a binary
# needs is in the pack or the system's. (A sanitizer's runtime,
# libclang_rt.*, is not clang.)
links=""
for f in "$OUT"/bin/* "$OUT"/lib/libkiln_runtime.so.0; do
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  case " $needed" in
    *libLLVM*|*libMLIR*|*libclang.so*|*libclang-cpp*) fail "$f links LLVM, MLIR or clang: $needed" ;;
  esac
  missing=$(LD_LIBRARY_PATH="$OUT/lib" ldd "$f" | grep 'not found' || true)
  [ -z "$missing" ] || fail "$f: $missing"
  glibc=$(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
  glibcxx=$(objdump -T "$f" | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -n 1)
  links+="  ${f#"$OUT"/}: needs ${needed% }; symbols up to ${glibc:-no GLIBC}${glibcxx:+, $glibcxx}"$'\n'
done

# Every bundle has code objects for the targets it should have.
targets=""
for b in "$OUT"/bundles/*.kpack; do
  t=$("$BUILD_DIR/bin/kiln" inspect "$b" --json | python3 -c '
import json, sys
m = json.load(sys.stdin)
print(",".join(sorted({i["target"] for i in m["images"]})))')
  name=$(basename "$b" .kpack)
  if [ "${name#wg_}" != "$name" ]; then
    # sm_90a's wgmma/TMA shapes (test/e2e/gpu/wgmma-gpu.test).
    case ",$t," in *,sm_90a,*) ;; *) fail "$b has images for $t only (no sm_90a)" ;; esac
  elif grep -qx nvptx-backend "$OUT/features" && [ "$name" != builtins_host ]; then
    case ",$t," in *,sm_80,*sm_90a,*|*,sm_90a,*sm_80,*) ;; *) fail "$b has images for $t only (no sm_80/sm_90a)" ;; esac
  fi
  targets+="  $name: $t"$'\n'
done

size=$(du -sb "$OUT" | cut -f1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain 2>/dev/null | grep -vc '^??' || true)
{
  echo "Kiln device pack: commit $commit$([ "$dirty" = 0 ] || echo " with $dirty modified files"), built $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -srm)"
  echo "size: $size bytes ($(awk "BEGIN{printf \"%.1f\", $size/1048576}") MiB); features: $(tr '\n' ' ' <"$OUT/features")"
  echo "random kernels: $ks_note"
  echo
  echo "links (no LLVM, MLIR or clang; NEEDED entries and the newest symbol versions):"
  printf '%s' "$links"
  echo "bundles (targets of their code objects):"
  printf '%s' "$targets"
  echo "files (sha256):"
  (cd "$OUT" && find . -type f ! -name MANIFEST -print0 | sort -z | xargs -0 sha256sum | sed 's/^/  /')
} >"$OUT/MANIFEST"

[ "$size" -le "$LIMIT" ] || fail "the pack is $size bytes, over 40 MiB"
sed -n '1,/^$/p' "$OUT/MANIFEST"
printf '%s' "$links"
echo "gpu-pack.sh: $OUT ready ($(du -sh "$OUT" | cut -f1)). On a GPU machine, from the repository root:"
echo "  ${OUT#./}/run-gpu-tests.sh [--out DIR] [devices e2e-host e2e traps lit kernelsmith sanitizer]"
