"""The safetensors layout the reference generators write, in one place:
an 8-byte little-endian header length, the JSON header (an optional
"__metadata__" first, then each tensor's dtype, shape and data offsets in
file order, compact separators) padded with spaces to a multiple of 8
bytes, then the tensors' bytes in that order, as the safetensors library
lays a file out. No NumPy or torch: each generator turns its own tensors
into bytes."""
import json
import struct


def write_safetensors_bytes(path, entries, metadata=None):
    """entries: (name, dtype, shape, blob) in file order, blob the tensor's
    little-endian bytes; a name given twice is an error."""
    header, at = {}, 0
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, blob in entries:
        if name in header:
            raise ValueError("duplicate tensor %s" % name)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + len(blob)]}
        at += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, blob in entries:
            f.write(blob)
