"""Ring switching at the OMR ring: ``bfv-omr-soph`` lowered to its 2 compression primes, switched to the
subrings of degree 2^14 (d = 4, SophOMR's digest) and 2^13 (d = 8, SophOMD's), at 128 bits as OpenFHE builds them.

    python scripts/omr_subring.py [REPS]

Per d: the subring's built moduli and security, the seconds of ``descend`` on the public subring context (min and
max over REPS, default 5), the digest's bytes before and after, the switching key's bytes; every descended
ciphertext decrypted and checked against :func:`hepkg.he.subring.descended_slots`. One JSON line per d.
"""
import json
import sys
import time

import numpy as np

import hepkg.he as he
from hepkg.he.subring import descended_slots

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
ctx = he.context("openfhe", "bfv-omr-soph", rotations=[1], policy="exact")
low = ctx.lowered(2, rotations=[1], policy="exact", relin=False)
x = np.arange(ctx.slots) % ctx.plain_modulus
ct = low.drop_level(low.adopt(ctx.drop_level(ctx.encrypt(x), ctx.max_level - 1)), 1)
for d in (4, 8):
    small = low.subring(d)
    pub, seconds, ok = small.public(), [], True
    for _ in range(reps):
        t0 = time.perf_counter()
        out = pub.descend(ct)
        seconds.append(time.perf_counter() - t0)
        ok &= bool(np.array_equal(small.decrypt(out, signed=False), descended_slots(x, d, ctx.plain_modulus)))
    print(json.dumps(dict(d=d, n=small.params.n, q_bits=list(small.built.q_bits), p_bits=list(small.built.p_bits),
                          security=small.security, insecure=small.insecure, descend_s=[min(seconds), max(seconds)],
                          correct=ok, digest_bytes=len(pub.serialize(out)), before_bytes=len(low.serialize(ct)),
                          switch_key_bytes=small.key_sizes()["switch_key"])), flush=True)
    small.close()
