"""Prints what CMake needs to build the strata torch backend, one NAME=value per line; exits 1 when
this interpreter has no usable torch (no torch, no c10d headers, or no pybind11 headers)."""
import os
import sys
import sysconfig

try:
    import torch
except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
    sys.exit(f"no torch: {e}")

torch_dir = os.path.dirname(torch.__file__)
includes = [os.path.join(torch_dir, "include"), os.path.join(torch_dir, "include", "torch", "csrc", "api", "include")]
if not os.path.exists(os.path.join(includes[0], "torch", "csrc", "distributed", "c10d", "ProcessGroup.hpp")):
    sys.exit(f"torch {torch.__version__} at {torch_dir} has no c10d headers (Debian: apt-get install libtorch-dev)")

pybind_dirs = [includes[0]]
try:
    import pybind11

    pybind_dirs.insert(0, pybind11.get_include())
except ImportError:
    pass
pybind_dirs.append("/usr/include")
pybind = next((d for d in pybind_dirs if os.path.exists(os.path.join(d, "pybind11", "pybind11.h"))), None)
if pybind is None:
    sys.exit("no pybind11 headers (Debian: apt-get install pybind11-dev)")

py_include = sysconfig.get_paths()["include"]
if not os.path.exists(os.path.join(py_include, "Python.h")):
    sys.exit(f"no Python.h in {py_include} (Debian: apt-get install python3-dev)")

defs = [f"_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"]
# The same pybind11 ABI tags as torch itself, so that our module shares pybind11's type registry with
# torch._C (c10d::Store, ProcessGroup, Work cross the boundary).
for name in ("COMPILER_TYPE", "STDLIB", "BUILD_ABI"):
    value = getattr(torch._C, f"_PYBIND11_{name}", None)
    if value is not None:
        defs.append(f'PYBIND11_{name}="{value}"')

# The C++ standard torch's headers need: C++17 up to torch 2.x releases whose ATen.h demands C++20.
with open(os.path.join(includes[0], "ATen", "ATen.h")) as f:
    cxx_standard = 20 if "C++20 or later" in f.read() else 17

print(f"TORCH_VERSION={torch.__version__}")
print(f"TORCH_CXX_STANDARD={cxx_standard}")
print(f"TORCH_INCLUDE_DIRS={'|'.join(includes)}")
print(f"TORCH_LIBRARY_DIR={os.path.join(torch_dir, 'lib')}")
print(f"TORCH_DEFINITIONS={'|'.join(defs)}")
print(f"TORCH_PYBIND11_INCLUDE_DIR={pybind}")
print(f"TORCH_PYTHON_INCLUDE_DIR={py_include}")
print(f"TORCH_PYTHON_EXT_SUFFIX={sysconfig.get_config_var('EXT_SUFFIX')}")
