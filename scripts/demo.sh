#!/usr/bin/env bash
# The demo: compiles every kernel of examples/ through the tile pipeline and
# prints each kernel's pruned tune space and a summary of the specialized IR
# of every variant (const params, op counts per dialect); runs the examples
# on the host; compiles them for NVIDIA GPUs and runs them on one if there
# is one.
set -euo pipefail
cd "$(dirname "$0")/.."
KILN=${KILN:-build/bin/kiln}
for f in examples/*.tile; do
  echo "=== $f"
  start=$(date +%s%N)
  "$KILN" compile "$f" --summary > /tmp/kiln-demo-summary.txt
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  "$KILN" compile "$f" --list-variants | grep -v '^  [a-z_0-9]*_v[0-9]'
  variants=$(wc -l < /tmp/kiln-demo-summary.txt)
  echo "  $variants variants specialized and verified in ${ms} ms; the first three:"
  head -n 3 /tmp/kiln-demo-summary.txt | sed 's/^/    /'
done
rm -f /tmp/kiln-demo-summary.txt
echo
echo "=== the row softmax, one variant, as kiln IR:"
"$KILN" compile examples/softmax.tile --kernel softmax -D BLOCK=1024 -D warps=4

# Every example kernel compiled for the host (at build time, test/e2e) and
# run on fresh random inputs at ragged sizes, against float64 references.
E2E=${KILN_E2E:-build/bin/KilnE2ETests}
if [ -x "$E2E" ]; then
  echo
  echo "=== the examples on the host: time of all launches, largest relative error vs float64"
  printf '%-20s %-14s %-60s %9s %10s\n' test kernel "variant (last launch)" ms "max error"
  KILN_E2E_DEVICE=host KILN_E2E_TABLE=1 "$E2E" --gtest_filter='Examples.*-*Trap' --gtest_brief=1 | grep -E ' (ok|FAIL)$'
fi

# Tuning on the host (docs/tuning.md): the softmax tune space (every BLOCK
# at warps=4) swept over two shapes into a fresh database; the first sweep
# measures every candidate, the second finds them all in the database.
echo
echo "=== tuning softmax on the host: the first sweep measures, the second reuses the database"
TUNE=$(mktemp -d)
for run in first second; do
  echo "--- $run sweep"
  "$KILN" tune examples/softmax.tile --kernel softmax -D warps=4 --db "$TUNE/tuning.db" \
    --shapes "rows=512,cols=1000;rows=128,cols=4000" --set stride=4096 \
    --buffer x=rows*stride --buffer y=rows*stride 2>/dev/null
done
rm -rf "$TUNE"

# The GPU path: every example at one variant compiled for NVIDIA (sm_80,
# sm_90a) and the host into one bundle each, with what ptxas says of the
# code objects; then, when this machine has a CUDA GPU, the examples run on
# it (the same end-to-end tests, KILN_E2E_DEVICE=cuda).
echo
echo "=== the examples for sm_80, sm_90a and host: one bundle each"
DEMO=$(mktemp -d)
trap 'rm -rf "$DEMO"' EXIT
while read -r file pins; do
  # shellcheck disable=SC2086
  "$KILN" compile "examples/$file.tile" --targets=sm_80,sm_90a,host $pins -o "$DEMO/$file.kpack"
  "$KILN" inspect "$DEMO/$file.kpack" | python3 -c '
import json, re, sys
for line in sys.stdin:
    m = re.match(r"\s+(sm_90a): .*entry (\S+), (ptx|cubin).*resources (\{.*?\})", line)
    if m and m.group(3) == "cubin":
        r = json.loads(m.group(4))
        print("  %-28s sm_90a: %3s registers, %6s B shared, %s B spilled" % (
            m.group(2), r.get("registers", "?"), r.get("shared_bytes", 0),
            r.get("spill_store_bytes", 0)))
'
done <<'LIST'
vector_add -D BLOCK=1024 -D warps=4
softmax -D BLOCK=1024 -D warps=4
layer_norm -D BLOCK=1024 -D warps=4
row_reduce -D BLOCK=512 -D warps=4
matmul -D BM=64 -D BN=64 -D BK=32 -D warps=4 -D stages=3
attention -D BLOCK_M=64 -D BLOCK_N=32 -D HEAD_DIM=64 -D warps=4 -D stages=2
LIST
KILN_RUN=${KILN_RUN:-build/bin/kiln-run}
if [ -x "$E2E" ] && "$KILN_RUN" --list-devices 2>/dev/null | grep -q '^cuda:'; then
  echo
  echo "=== the examples on the GPU: time of all launches, largest relative error vs float64"
  printf '%-20s %-14s %-60s %9s %10s\n' test kernel "variant (last launch)" ms "max error"
  KILN_E2E_DEVICE=cuda KILN_E2E_TABLE=1 "$E2E" --gtest_filter='Examples.*-*Trap' --gtest_brief=1 | grep -E ' (ok|FAIL)$'
else
  echo "(no CUDA GPU here: the bundles above run on one with kiln-run --device cuda)"
fi
