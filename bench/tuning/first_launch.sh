#!/usr/bin/env bash
# First-launch tuning time of the matmul example's whole tune space: a
# `kiln-run tune` sweep into a fresh database (what the first launch of a
# new key bucket does), then the same sweep again (every time from the
# database). Needs only the runtime: run it where the GPU is.
#
#   bench/tuning/first_launch.sh BUNDLE [DEVICE] [SHAPES]
#
# BUNDLE: examples/matmul.tile compiled for the device (all variants), e.g.
#   kiln compile examples/matmul.tile --kernel matmul --targets=sm_90a -o matmul.kpack
#   kiln compile examples/matmul.tile --kernel matmul -o matmul-host.kpack
# DEVICE: auto (default), host, cuda, ...
# SHAPES: --shapes points (default: 4096^3 and 16 x 8192 x 8192).
# KILN_RUN: the kiln-run binary (default: build/bin/kiln-run).
set -euo pipefail
BUNDLE=${1:?usage: first_launch.sh BUNDLE [DEVICE] [SHAPES]}
DEVICE=${2:-auto}
SHAPES=${3:-M=4096,N=4096,K=4096,lda=4096,ldb=4096,ldc=4096;M=16,N=8192,K=8192,lda=8192,ldb=8192,ldc=8192}
KILN_RUN=${KILN_RUN:-build/bin/kiln-run}
DB=$(mktemp -d)/tuning.db
trap 'rm -rf "$(dirname "$DB")"' EXIT
for run in "first (measures)" "second (database)"; do
  echo "=== $run"
  "$KILN_RUN" tune "$BUNDLE" --kernel matmul --device "$DEVICE" --db "$DB" \
    --shapes "$SHAPES" --buffer a=M*K --buffer b=K*N --buffer c=M*N
done
