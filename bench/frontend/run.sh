#!/usr/bin/env bash
# Front-end throughput: a 2,000-line file of kernels through parse + Sema
# (--emit=ast), through MLIRGen + verification (--emit=tile-generic), and
# through the whole tile pipeline (--emit=tile, every variant). Prints the
# median of 5 runs of each. Target: parse + verify under one second.
set -euo pipefail
cd "$(dirname "$0")/../.."
KILN=${KILN:-build/bin/kiln}
LINES=${1:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/frontend/gen_big.py "$LINES" > "$tmp/big.tile"
echo "input: $(wc -l < "$tmp/big.tile") lines, $(grep -c '^kernel' "$tmp/big.tile") kernels"
median() {
  local emit=$1 times=()
  for _ in 1 2 3 4 5; do
    local s=$(date +%s%N)
    "$KILN" compile "$tmp/big.tile" --emit="$emit" -o "$tmp/out.txt"
    times+=($(( ($(date +%s%N) - s) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
printf '%-40s %8s\n' stage "ms (median of 5)"
printf '%-40s %8s\n' "parse + check (--emit=ast)" "$(median ast)"
printf '%-40s %8s\n' "+ MLIRGen + verify (--emit=tile-generic)" "$(median tile-generic)"
printf '%-40s %8s\n' "+ specialize all variants (--emit=tile)" "$(median tile)"
