#!/usr/bin/env bash
# Installs the Debian packages strata builds and tests with, when any is missing.
# Usage: scripts/install_deps.sh [--with-peers]   (--with-peers adds what ../shared/bench needs)
set -euo pipefail

pkgs=(build-essential cmake ninja-build pkg-config libgtest-dev libgmock-dev libbenchmark-dev
      libhwloc-dev libibverbs-dev libopenmpi-dev openmpi-bin python3-torch libtorch-dev pybind11-dev
      python3-dev iproute2)
if [[ "${1:-}" == "--with-peers" ]]; then
  pkgs+=(libgloo-dev iperf3 iputils-ping hyperfine)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q "${missing[@]}"
