#!/usr/bin/env bash
# The demo: compiles every kernel of examples/ through the tile pipeline and
# prints each kernel's pruned tune space and a summary of the specialized IR
# of every variant (const params, op counts per dialect).
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
