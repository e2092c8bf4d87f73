#!/usr/bin/env bash
# Compiles every device source (src/htp, minus the host platform layer and host-only SIMD files)
# for Hexagon, compile only, to prove the device runtime stays freestanding NPU code.
# Then lists the symbols the objects need from outside the device runtime: only the freestanding
# runtime set (memcpy/memmove/memset/memcmp, which the hexagon platform layer will provide) and
# compiler-rt helpers (__hexagon_*) are expected, plus what the startup code takes from the
# linker (init array bounds, the GOT symbol) and from the program (main); anything else (libc,
# libm) is reported, and fails the check with --strict.
# Usage: scripts/check-hexagon-build.sh [--werror] [--strict]   (CLANG=clang-19 by default)
set -euo pipefail
cd "$(dirname "$0")/.."

clang=${CLANG:-clang-19}
flags=(--target=hexagon -mv67 -mhvx -mhvx-length=128b -ffreestanding -fno-exceptions -fno-rtti
       -std=c++20 -O2 -Wall -Wextra -Isrc)
strict=0
for arg in "$@"; do
  case "$arg" in
    --werror) flags+=(-Werror) ;;
    --strict) strict=1 ;;
    *) echo "usage: $0 [--werror] [--strict]" >&2; exit 2 ;;
  esac
done
nm=${NM:-llvm-nm-19}

if ! command -v "$clang" >/dev/null; then
  echo "check-hexagon-build: $clang not found (scripts/setup.sh installs clang-19)" >&2
  exit 1
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Host-only: the POSIX platform layer and x86 / Arm SIMD implementations.
mapfile -t sources < <(find src/htp -name '*.cpp' \
  -not -path 'src/htp/platform/host/*' -not -name '*x86*' -not -name '*avx*' -not -name '*neon*' | sort)

failed=0
for src in "${sources[@]}"; do
  obj="$out/$(echo "$src" | tr '/' '_').o"
  if ! "$clang" "${flags[@]}" -c "$src" -o "$obj"; then
    echo "check-hexagon-build: FAILED $src" >&2
    failed=$((failed + 1))
  fi
done

if [[ $failed -ne 0 ]]; then
  echo "check-hexagon-build: $failed of ${#sources[@]} sources failed" >&2
  exit 1
fi
echo "check-hexagon-build: ${#sources[@]} sources compile for hexagon"

if command -v "$nm" >/dev/null; then
  # Undefined symbols minus those some object defines (ours) and the expected runtime set.
  "$nm" --defined-only "$out"/*.o | awk 'NF == 3 {print $3}' | sort -u >"$out/defined"
  "$nm" --undefined-only "$out"/*.o | awk 'NF == 2 {print $2}' | sort -u >"$out/undefined"
  foreign=$(comm -23 "$out/undefined" "$out/defined" |
    grep -v -E '^(memcpy|memmove|memset|memcmp|__hexagon_.*)$' |
    grep -v -E '^(__(pre)?init_array_(start|end)|__fini_array_(start|end)|_GLOBAL_OFFSET_TABLE_|main)$' |
    grep -v -E '^_ZN6hexllm3htp' || true)
  if [[ -n "$foreign" ]]; then
    echo "check-hexagon-build: symbols from outside the device runtime:" >&2
    echo "$foreign" | sed 's/^/  /' >&2
    [[ $strict -eq 1 ]] && exit 1
  fi
fi
