#!/usr/bin/env bash
# Installs the Debian packages hexllm needs. Idempotent: quiet when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config xz-utils
  libcli11-dev nlohmann-json3-dev libcpp-httplib-dev libpcre2-dev
  libgtest-dev libbenchmark-dev
  clang-19 lld-19 llvm-19 libclang-rt-19-dev qemu-user python3
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "setup: missing packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
