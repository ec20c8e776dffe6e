#!/usr/bin/env bash
# Runs the GPU tests of a Kiln device pack (built by scripts/gpu-pack.sh where
# the compiler is) on a machine with an NVIDIA GPU and its driver. Needs no
# LLVM, MLIR, compiler, CMake, ctest or lit: bash, coreutils and python3.
# docs/testing-gpu.md has the whole workflow.
#
#   run-gpu-tests.sh [--out DIR] [STEP...]
#
# Steps (default: all of them, in this order):
#   devices    kiln-run --list-devices, nvidia-smi, compute-sanitizer; every
#              library the pack's binaries need is found
#   e2e-host   KilnE2ETests on the host device (the pack works on this machine)
#   e2e        KilnE2ETests on cuda:0: every host end-to-end test against the
#              same float64 references, and CrossDevice.*, the GPU's results
#              against the host's within kiln-run --check's tolerances
#   traps      each *Trap test of KilnE2ETests on cuda:0, one process each (a
#              trap leaves the CUDA context unusable)
#   lit        test/e2e/gpu/kiln-run-gpu.test: every example kernel through
#              kiln-run --device cuda --check, and float64 references;
#              wgmma-gpu.test: sm_90a's wgmma + TMA shapes (sm_90 only)
#   kernelsmith  the pack's random kernels (kernelsmith.tar.xz: checked on
#              the emulators where the pack was built) on cuda:0, their
#              sm_80 and sm_90a bundles each, every output compared with
#              the host's bit for bit; at most KILN_KERNELSMITH_GPU_SECONDS
#              (default 240) of seeds
#   sanitizer  test/e2e/gpu/sanitizer.test: compute-sanitizer memcheck,
#              racecheck and synccheck on kiln-run; wgmma-sanitizer.test:
#              the TMA fast paths (sm_90 only); memcheck and racecheck on
#              the first random kernels (KILN_KERNELSMITH_SANITIZER_SECONDS
#              each, default 60)
# Logs, GoogleTest XML and lit temporaries go to DIR (default: the pack's
# results/). KILN_GPU_STEP_TIMEOUT: seconds per step (default 1800).
#
# Exit code: 0 every step passed on a CUDA device (a sanitizer step without
# compute-sanitizer is SKIPPED, and the summary says so); 1 a step failed;
# 2 a usage error; 77 no CUDA device: the GPU steps were skipped (the
# summary says why) and what ran on the host passed.
set -uo pipefail
PACK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$PACK/results
ALL_STEPS=(devices e2e-host e2e traps lit kernelsmith sanitizer)
STEPS=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || { echo "run-gpu-tests.sh: error: --out needs a folder" >&2; exit 2; }
           OUT=$2; shift 2 ;;
    --out=*) OUT=${1#--out=}; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    devices|e2e-host|e2e|traps|lit|kernelsmith|sanitizer) STEPS+=("$1"); shift ;;
    *) echo "run-gpu-tests.sh: error: unknown argument '$1' (steps: ${ALL_STEPS[*]}; see --help)" >&2
       exit 2 ;;
  esac
done
[ ${#STEPS[@]} -gt 0 ] || STEPS=("${ALL_STEPS[@]}")
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
export PATH="$PACK/tools:$PACK/bin:$PATH"
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KILN_E2E_BUNDLE_DIR="$PACK/bundles"
TIMEOUT=${KILN_GPU_STEP_TIMEOUT:-1800}
E2E=$PACK/bin/KilnE2ETests

# The CUDA device, once: the GPU steps need it.
CUDA=$(kiln-run --list-devices 2>"$OUT/list-devices.err" | grep '^cuda:' | head -n 1)
NO_CUDA_WHY=$(tr -s ' \n' '  ' <"$OUT/list-devices.err" | sed 's/^kiln-run: note: //; s/ *$//')
[ -n "$NO_CUDA_WHY" ] || NO_CUDA_WHY="no CUDA device (kiln-run --list-devices lists none)"
SANITIZER=${KILN_COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}
if [ -z "$SANITIZER" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  SANITIZER=/usr/local/cuda/bin/compute-sanitizer
fi
export KILN_COMPUTE_SANITIZER=$SANITIZER

NAMES=() VERDICTS=() NOTES=() SECONDS_TAKEN=()
record() { NAMES+=("$1"); VERDICTS+=("$2"); NOTES+=("$3"); SECONDS_TAKEN+=("$4"); }

# run LOG FUNCTION [FILTER]: the step function's exit code; its output in
# LOG, and on the terminal (only the lines that match the regex FILTER, if
# given: GoogleTest's failure details can run to thousands of lines).
run() {
  local log=$1 fn=$2 filter=${3:-}
  timeout "$TIMEOUT" bash -o pipefail -c "$fn" 2>&1 | tee "$log" |
    if [ -n "$filter" ]; then grep -E --line-buffered "$filter"; else cat; fi
  local rc=${PIPESTATUS[0]}
  [ "$rc" -ne 124 ] || echo "run-gpu-tests.sh: $fn timed out after ${TIMEOUT}s" | tee -a "$log"
  return "$rc"
}

step_devices() {
  local bad=0
  [ -f "$PACK/MANIFEST" ] && sed -n '1,/^$/p' "$PACK/MANIFEST"
  echo "machine: $(uname -srm), $(ldd --version 2>/dev/null | head -n 1), $(python3 --version 2>&1)"
  command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  echo "kiln-run --list-devices:"
  kiln-run --list-devices || bad=1
  echo "compute-sanitizer: ${SANITIZER:-not found (PATH, /usr/local/cuda/bin, \$KILN_COMPUTE_SANITIZER)}"
  [ -z "$SANITIZER" ] || "$SANITIZER" --version | tail -n 2
  for f in "$PACK"/bin/* "$PACK"/lib/*.so*; do
    if ldd "$f" | grep -q 'not found'; then
      echo "error: $f: $(ldd "$f" | grep 'not found' | tr -s ' \t\n' ' ')"
      bad=1
    fi
  done
  return $bad
}

step_e2e_host() {
  KILN_E2E_DEVICE=host "$E2E" --gtest_output="xml:$OUT/e2e-host.xml"
}

step_e2e() {
  KILN_E2E_DEVICE=cuda "$E2E" --gtest_output="xml:$OUT/e2e-gpu.xml"
}

step_traps() {
  local suite='' line t bad=0 n=0
  local tests=()
  while IFS= read -r line; do
    case $line in
      [A-Za-z]*.) suite=${line%.} ;;
      "  "*Trap) tests+=("$suite.${line#  }") ;;
    esac
  done < <(KILN_E2E_DEVICE=host "$E2E" --gtest_list_tests)
  [ ${#tests[@]} -gt 0 ] || { echo "error: no *Trap tests in $E2E"; return 1; }
  for t in "${tests[@]}"; do
    echo "== $t (alone on cuda:0)"
    KILN_E2E_DEVICE=cuda "$E2E" --gtest_filter="$t" --gtest_output="xml:$OUT/e2e-gpu-$t.xml"
    local rc=$?
    n=$((n + 1))
    [ $rc -eq 0 ] || { echo "== $t: FAILED (exit $rc)"; bad=1; }
  done
  echo "== $n trap tests, $([ $bad -eq 0 ] && echo all passed || echo some FAILED)"
  return $bad
}

step_lit() {
  python3 "$PACK/run-lit.py" --keep-going --out "$OUT/lit" "$PACK/test/e2e/gpu/kiln-run-gpu.test" \
    "$PACK/test/e2e/gpu/wgmma-gpu.test"
}

# kernelsmith_replay NAME SECONDS [kernelsmith.py options]: the pack's random
# kernels on cuda:0 for at most SECONDS (the seeds' files and outputs in
# OUT/NAME).
kernelsmith_replay() {
  local name=$1 seconds=$2
  shift 2
  rm -rf "${OUT:?}/$name"
  python3 "$PACK/test/fuzz/kernelsmith.py" --replay "$PACK/kernelsmith.tar.xz" --kiln-run "$PACK/bin/kiln-run" \
    --device cuda:0 --keep "$OUT/$name" --time-limit "$seconds" "$@"
}

step_kernelsmith() {
  if [ ! -f "$PACK/kernelsmith.tar.xz" ]; then
    echo "UNSUPPORTED: the pack has no random kernels (KILN_PACK_KERNELSMITH=0, or a build without the emulator)"
    return 0
  fi
  kernelsmith_replay kernelsmith "${KILN_KERNELSMITH_GPU_SECONDS:-240}"
}

step_sanitizer() {
  local bad=0 tool
  python3 "$PACK/run-lit.py" --keep-going --out "$OUT/lit" "$PACK/test/e2e/gpu/sanitizer.test" \
    "$PACK/test/e2e/gpu/wgmma-sanitizer.test" || bad=1
  if [ -f "$PACK/kernelsmith.tar.xz" ]; then
    for tool in memcheck racecheck; do
      echo "== random kernels under compute-sanitizer --tool $tool"
      kernelsmith_replay "kernelsmith-$tool" "${KILN_KERNELSMITH_SANITIZER_SECONDS:-60}" \
        --wrapper "$SANITIZER --tool $tool --error-exitcode 1" || bad=1
    done
  fi
  return $bad
}

# first_failures LOG: "Suite.Test: message" for the first failure of each
# test in GoogleTest output (its last line before the trace: the message).
first_failures() {
  awk '
    /^\[ RUN      \] / { test = $4; infail = 0; done = 0; next }
    infail && (/^Google Test trace:/ || /^\[/ || /: Failure$/) {
      print test ": " last; infail = 0; done = 1
    }
    /: Failure$/ { if (!done) { infail = 1; last = "" } next }
    infail && !/^(Value of|  Actual|Expected|Which is)/ { last = $0 }
    infail && last == "" { last = $0 }
  ' "$1"
}

# The steps run under `timeout`, in a bash of their own.
export -f step_devices step_e2e_host step_e2e step_traps step_lit step_kernelsmith step_sanitizer kernelsmith_replay
export PACK OUT E2E SANITIZER
for step in "${STEPS[@]}"; do
  echo
  echo "=== $step"
  log=$OUT/$step.log
  start=$(date +%s)
  if [ "$step" != devices ] && [ "$step" != e2e-host ] && [ -z "$CUDA" ]; then
    echo "SKIPPED: $NO_CUDA_WHY" | tee "$log"
    record "$step" SKIPPED "$NO_CUDA_WHY" 0
    continue
  fi
  if [ "$step" = sanitizer ] && [ -z "$SANITIZER" ]; then
    why="compute-sanitizer not found (PATH, /usr/local/cuda/bin, \$KILN_COMPUTE_SANITIZER)"
    echo "SKIPPED: $why" | tee "$log"
    record "$step" SKIPPED "$why" 0
    continue
  fi
  filter=
  case $step in
    e2e*|traps) filter='^\[  (FAILED|SKIPPED|PASSED) |^\[==========\] [0-9]+ tests? from|^KilnE2ETests:|^[0-9]+ FAILED TESTS?|^== |^error' ;;
  esac
  run "$log" "step_${step//-/_}" "$filter"
  rc=$?
  if [ $rc -ne 0 ] && [ -n "$filter" ]; then
    echo "-- the first failure of each failing test (everything is in $log):"
    first_failures "$log" | cut -c1-400 | head -n 60
  fi
  took=$(($(date +%s) - start))
  case $step:$rc in
    *:0)
      if grep -q '^UNSUPPORTED: ' "$log"; then
        record "$step" SKIPPED "$(grep -m1 '^UNSUPPORTED: ' "$log")" "$took"
      else
        record "$step" PASS "" "$took"
      fi ;;
    e2e:77) record "$step" SKIPPED "$(grep -m1 'KilnE2ETests: no' "$log")" "$took" ;;
    *:124) record "$step" FAIL "timed out after ${TIMEOUT}s" "$took" ;;
    *) record "$step" FAIL "exit code $rc; log $log" "$took" ;;
  esac
done

echo
echo "=== summary (${CUDA:-no CUDA device}; logs in $OUT)"
failed=0
for i in "${!NAMES[@]}"; do
  printf '%-12s %-8s %5ss  %s\n' "${NAMES[$i]}" "${VERDICTS[$i]}" "${SECONDS_TAKEN[$i]}" "${NOTES[$i]}"
  [ "${VERDICTS[$i]}" != FAIL ] || failed=1
done
if [ $failed -ne 0 ]; then
  echo "run-gpu-tests.sh: FAILED"
  exit 1
fi
if [ -z "$CUDA" ]; then
  echo "run-gpu-tests.sh: no CUDA device: the GPU tests were skipped (exit code 77): $NO_CUDA_WHY"
  exit 77
fi
echo "run-gpu-tests.sh: every step passed"
exit 0
