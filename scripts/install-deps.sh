#!/usr/bin/env bash
# Installs the Debian packages obsidian needs (only those missing) and checks for the CUDA
# toolkit's NVRTC, which is not a Debian package here. Safe to run repeatedly.
set -euo pipefail

# doxygen builds the API reference (the test docs.api_reference).
packages=(cmake g++ ninja-build libboost-dev doctest-dev nlohmann-json3-dev libcli11-dev doxygen)
# The Python module (python/): an interpreter with its headers and pip, from Debian when the
# python3 on PATH lacks them.
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  packages+=(python3 python3-dev python3-pip)
  python=python3
elif ! "$python" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  packages+=(python3-dev)
fi
"$python" -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)

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

# The module's build and tests from PyPI (only what is missing): nanobind (the bindings),
# pytest (its tests), Optuna (with cmaes, its CMA-ES) and Kernel Tuner (the searches of
# obsidian_tune.search).
pymissing=()
for mod in nanobind pytest optuna cmaes kernel_tuner; do
  "$python" -c "import $mod" >/dev/null 2>&1 || pymissing+=("$mod")
done
if ((${#pymissing[@]} > 0)); then
  echo "install-deps: installing missing Python packages from PyPI: ${pymissing[*]}"
  # Debian's own python3 refuses pip outside a virtual environment (PEP 668); there the
  # packages go to the user's site instead.
  "$python" -m pip install --quiet "${pymissing[@]}" ||
    "$python" -m pip install --quiet --user --break-system-packages "${pymissing[@]}"
fi
