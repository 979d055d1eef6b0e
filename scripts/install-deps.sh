#!/usr/bin/env bash
# Installs the Debian packages obsidian needs (only those missing) and checks for the CUDA
# toolkit's NVRTC, which is not a Debian package here. Safe to run repeatedly.
set -euo pipefail

packages=(cmake g++ ninja-build libboost-dev doctest-dev nlohmann-json3-dev libcli11-dev)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "install-deps: installing missing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo_cmd=(sudo)
    else
      echo "install-deps: not root and sudo is not available; as root run:" >&2
      echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
if [[ ! -f "$cuda_root/include/nvrtc.h" ]]; then
  echo "install-deps: $cuda_root/include/nvrtc.h not found: the CUDA toolkit (with NVRTC) must" \
       "be installed at /usr/local/cuda (or set CUDAToolkit_ROOT to another toolkit)." >&2
  exit 1
fi
