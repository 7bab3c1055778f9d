#!/usr/bin/python3
"""Writes the small tensor files in tests/reference/tensors/ that the reader tests open, as NumPy
(python3-numpy) and a hand-written safetensors writer produce them, with expected.json giving each
tensor's values as float64. Run: /usr/bin/python3 tests/reference/make_tensor_files.py"""
import json
import os
import struct

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tensors")
rng = np.random.default_rng(7)
a = rng.standard_normal((3, 4))
expected = {}


def note(name, values):
    expected[name] = [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


np.save(os.path.join(HERE, "c_f4.npy"), a.astype("<f4"))
note("c_f4.npy", a.astype("<f4"))
np.save(os.path.join(HERE, "fortran_f8.npy"), np.asfortranarray(a))
note("fortran_f8.npy", a)
np.save(os.path.join(HERE, "big_f2.npy"), a.astype(">f2"))
note("big_f2.npy", a.astype(">f2"))
v = rng.standard_normal(5)
np.save(os.path.join(HERE, "vector_f8.npy"), v)
note("vector_f8.npy", v)
np.savez(os.path.join(HERE, "stored.npz"), W=a, b=v)
np.savez_compressed(os.path.join(HERE, "deflated.npz"), W=a.astype("<f4"), b=v)
note("npz:W", a)
note("npz:b", v)
note("npz:W32", a.astype("<f4"))

# safetensors: an 8-byte little-endian header length, the JSON header, the data.
tensors = [("w64", "F64", a.astype("<f8")), ("w32", "F32", a.astype("<f4")), ("w16", "F16", a.astype("<f2"))]
bf16 = (a.astype("<f4").view("<u4") >> 16).astype("<u2")  # truncated to bfloat16
blobs, header, offset = [], {"__metadata__": {"format": "pt", "tokens": "a b c"}}, 0
for name, dtype, arr in tensors:
    blob = arr.tobytes()
    header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
    note("st:" + name, arr)
blob = bf16.tobytes()
header["wbf16"] = {"dtype": "BF16", "shape": [3, 4], "data_offsets": [offset, offset + len(blob)]}
blobs.append(blob)
note("st:wbf16", (bf16.astype("<u4") << 16).view("<f4"))
text = json.dumps(header).encode()
with open(os.path.join(HERE, "layer.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")
