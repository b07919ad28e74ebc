"""Parse time of one fresh CKKS ciphertext at ckks-32768-d11 (face search's set), openfhe backend, without and with
the guard: medians of 7 after a first parse. ``python scripts/parse_time.py CHECKOUT`` prints one JSON line.
"""
import json
import sys
import time

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402

from hepkg import he  # noqa: E402

ctx = he.context("openfhe", "ckks-32768-d11", rotations=[1], policy="exact")
data = ctx.serialize(ctx.encrypt(np.linspace(0, 1, 100)))
ctx.deserialize(data)
out = {}
for guard in (False, True):
    ts = []
    for _ in range(7):
        t0 = time.perf_counter(); ctx.deserialize(data, guard=guard); ts.append(time.perf_counter() - t0)
    out[f"guard={guard}"] = round(float(np.median(ts)) * 1e3, 2)
print(json.dumps(dict(checkout=sys.argv[1], bytes=len(data), **out)))
