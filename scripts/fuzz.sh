#!/usr/bin/env bash
# Builds the GGUF libFuzzer target with clang-19 (ASan + UBSan) in build-fuzz/, writes the seed
# corpus and fuzzes for SECONDS (default 60). Exits non-zero when the fuzzer finds a crash.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-fuzz

if ! command -v clang++-19 >/dev/null; then
  echo "fuzz.sh: clang++-19 not found (scripts/setup.sh installs it)" >&2
  exit 1
fi

CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHEXLLM_FUZZ=ON -DHEXLLM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target gguf_fuzz make_gguf_seeds -j2

seeds=$build/fuzz/seeds
corpus=$build/fuzz/corpus       # grows across runs
artifacts=$build/fuzz/artifacts
rm -rf "$seeds"
mkdir -p "$corpus" "$artifacts"
"$build/fuzz/make_gguf_seeds" "$seeds"

echo "fuzz.sh: fuzzing for ${seconds}s (crash inputs go to $artifacts/)"
status=0
"$build/fuzz/gguf_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -dict="$root/fuzz/gguf.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$corpus" "$seeds" || status=$?
if [[ $status -ne 0 ]]; then
  echo "fuzz.sh: FAILED (exit $status); reproduce with: $build/fuzz/gguf_fuzz $artifacts/<crash-file>" >&2
  exit "$status"
fi
echo "fuzz.sh: no crash in ${seconds}s"
