#!/usr/bin/env bash
# Compiles every device source (src/htp, minus the host platform layer and host-only SIMD files,
# plus src/htp-device/main.cpp) for Hexagon and links them into a static, freestanding
# hexllm-htp with ld.lld-19 -- the same build cmake/hexagon.cmake makes, without CMake. The link
# has no libc, so any symbol the device runtime needs from outside (libc, libm, a compiler-rt
# helper platform/hexagon does not provide) is an undefined symbol: listed, and with --strict the
# check fails. With QEMU (qemu-hexagon) present the linked binary is run once: without arguments
# it must print its usage and exit with status 2.
# Usage: scripts/check-hexagon-build.sh [--werror] [--strict]   (CLANG=clang++-19, LLD=ld.lld-19)
set -euo pipefail
cd "$(dirname "$0")/.."

clang=${CLANG:-clang++-19}
lld=${LLD:-ld.lld-19}
qemu=${QEMU:-qemu-hexagon}
flags=(--target=hexagon -mv67 -mhvx -mhvx-length=128b -ffreestanding -fno-exceptions -fno-rtti
       -std=c++20 -O2 -ffp-contract=off -Wall -Wextra -Wshadow -Isrc)
strict=0
for arg in "$@"; do
  case "$arg" in
    --werror) flags+=(-Werror) ;;
    --strict) strict=1 ;;
    *) echo "usage: $0 [--werror] [--strict]" >&2; exit 2 ;;
  esac
done

for tool in "$clang" "$lld"; do
  if ! command -v "$tool" >/dev/null; then
    echo "check-hexagon-build: $tool not found (scripts/setup.sh installs clang-19 and lld-19)" >&2
    exit 1
  fi
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Host-only: the POSIX platform layer and x86 / Arm SIMD implementations.
mapfile -t sources < <( (find src/htp -name '*.cpp' \
  -not -path 'src/htp/platform/host/*' -not -name '*x86*' -not -name '*avx*' -not -name '*neon*';
  echo src/htp-device/main.cpp) | sort)

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

if ! "$lld" -static -e _start --gc-sections "$out"/*.o -o "$out/hexllm-htp" 2>"$out/link.err"; then
  echo "check-hexagon-build: the static link failed; symbols from outside the device runtime:" >&2
  grep -E 'undefined symbol|error' "$out/link.err" | sed 's/^/  /' >&2
  [[ $strict -eq 1 ]] && exit 1
  exit 0
fi
echo "check-hexagon-build: hexllm-htp links static and freestanding ($(stat -c %s "$out/hexllm-htp") bytes)"

if command -v "$qemu" >/dev/null; then
  set +e
  "$qemu" "$out/hexllm-htp" 2>"$out/run.err"
  rc=$?
  set -e
  if [[ $rc -ne 2 ]] || ! grep -q '^usage: hexllm-htp' "$out/run.err"; then
    echo "check-hexagon-build: under $qemu the binary exited with $rc instead of printing its usage:" >&2
    sed 's/^/  /' "$out/run.err" >&2
    exit 1
  fi
  echo "check-hexagon-build: it starts under $qemu"
fi
