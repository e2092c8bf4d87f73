#!/usr/bin/env bash
# Builds and runs every test: the release build's ctest suite (unit, op, golden), the same
# suite under AddressSanitizer + UndefinedBehaviorSanitizer, and a bounded fuzz run.
# Usage: scripts/test.sh [--quick]   (--quick: release ctest only)
# Tests labelled `extended` (more several-device configurations) run with `ctest -L extended`.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
quick=0
[[ ${1:-} == --quick ]] && quick=1

step() { printf '\n=== %s (%s)\n' "$*" "$(date +%T)"; }

step "release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEXLLM_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
step "release tests"
(cd build && ctest -j "$jobs" --output-on-failure --timeout 900 -LE extended)
[[ $quick == 1 ]] && exit 0

step "sanitizer build (ASan + UBSan)"
# -O1 -g1 (line tables): sanitizer reports keep file:line, and the build takes half the time of -O2 -g.
# No Hexagon device here: its tests are left out below.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DHEXLLM_SANITIZE=ON -DHEXLLM_WERROR=ON -DHEXLLM_HEXAGON=OFF >/dev/null
cmake --build build-asan -j "$jobs"
step "sanitizer tests"
# Leaves out `slow` (forced ISA paths, more devices: the release run has them) and `hexagon`
# (the device code there is emulated Hexagon, which ASan does not see).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest -j "$jobs" --output-on-failure --timeout 1800 -LE "slow|extended|hexagon")

step "device sources compile for Hexagon (clang-19, compile only)"
scripts/check-hexagon-build.sh --werror --strict

step "fuzz (GGUF reader, bounded)"
scripts/fuzz.sh "${HEXLLM_FUZZ_SECONDS:-60}"

echo
echo "all tests passed ($((SECONDS / 60)) min $((SECONDS % 60)) s)"
