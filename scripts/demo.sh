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
