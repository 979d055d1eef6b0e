"""Loads a kernel obsidian exported as PTX (with its JSON sidecar) through CuPy's RawModule and
checks its result. Exit 77 (skipped) where CuPy or a GPU is missing."""
import json
import pathlib
import sys

try:
    import cupy
    import numpy
    cupy.cuda.runtime.getDeviceCount()
except Exception as e:  # no CuPy, no driver or no device
    print(f"SKIPPED: {e}")
    sys.exit(77)

directory = pathlib.Path(sys.argv[1])
meta = json.loads((directory / "red5.json").read_text())
module = cupy.RawModule(code=(directory / "red5.ptx").read_text(), backend="nvcc") \
    if False else cupy.RawModule(path=str(directory / "red5.ptx"))
kernel = module.get_function(meta["entry"])

chunk, blocks = 512, 300
rng = numpy.random.default_rng(3)
host = rng.integers(1, 1 << 20, size=chunk * blocks, dtype=numpy.uint32)
data = cupy.asarray(host)
out = cupy.zeros(blocks, dtype=numpy.uint32)
kinds = [p["kind"] for p in meta["params"]]
assert kinds == ["input", "length", "output"], kinds
kernel((blocks,), (meta["threadsPerBlock"],), (data, numpy.uint32(data.size), out),
       shared_mem=meta["sharedBytes"])
expected = host.reshape(blocks, chunk).sum(axis=1, dtype=numpy.uint64).astype(numpy.uint32)
ok = bool((out.get() == expected).all())
print("CuPy RawModule on the exported PTX:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
