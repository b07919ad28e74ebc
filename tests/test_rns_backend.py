"""The ``rns`` backend through the hepkg.he protocol (small insecure CKKS ring, N = 2^12).

Tolerance: ``toy-ckks-4096-d11`` has scale 2^40, so a fresh slot error is about 2.6 N / scale
(see tests/test_rns_ckks.py); TOL = 256 N / scale ~ 1e-6 covers a few products and key switches.
"""
import numpy as np
import pytest

import hepkg.he as he
from conftest import received

PARAMS = he.get_params("toy-ckks-4096-d11")
TOL = 256 * PARAMS.n / 2.0 ** PARAMS.scale_bits
STEPS = [1, 2, 3, 100]


@pytest.fixture(scope="module")
def ctx():
    return he.context("rns", PARAMS, rotations=STEPS, policy="exact", insecure=True)


def test_registered_and_refuses_bfv():
    assert he.availability()["rns"]
    with pytest.raises(he.SchemeError):
        he.context("rns", "toy-bfv-1024", insecure=True)
    with pytest.raises(he.InsecureParameters):
        he.context("rns", PARAMS)


def test_built_modulus(ctx):
    b = ctx.built
    assert b.n == 4096 and len(b.q_bits) == 12 and b.q_bits[0] == 50 and b.log_pq > PARAMS.log_q
    assert b.security < 128


def test_arithmetic_against_numpy(ctx):
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 1, ctx.slots), rng.uniform(-1, 1, ctx.slots)
    cx, cy = ctx.encrypt(x), ctx.encrypt(y)
    np.testing.assert_allclose(ctx.decrypt(cx + cy), x + y, atol=TOL)
    np.testing.assert_allclose(ctx.decrypt(cx - cy), x - y, atol=TOL)
    np.testing.assert_allclose(ctx.decrypt(-cx), -x, atol=TOL)
    np.testing.assert_allclose(ctx.decrypt(ctx.add(cx, y)), x + y, atol=TOL)
    prod = ctx.mul(cx, cy)
    assert prod.level == 1
    np.testing.assert_allclose(ctx.decrypt(prod), x * y, atol=TOL)
    np.testing.assert_allclose(ctx.decrypt(ctx.mul(cx, y)), x * y, atol=TOL)
    np.testing.assert_allclose(ctx.decrypt(ctx.add(prod, cx)), x * y + x, atol=TOL)   # levels matched
    lazy = ctx.add(ctx.mul(cx, cx, rescale=False), ctx.mul(cy, cy, relin=False, rescale=False))
    out = ctx.rescale(ctx.relinearize(lazy))
    np.testing.assert_allclose(ctx.decrypt(out), x * x + y * y, atol=TOL)
    dropped = ctx.mod_switch(cx)
    assert dropped.level == 1
    np.testing.assert_allclose(ctx.decrypt(ctx.add(dropped, prod)), x + x * y, atol=TOL)
    np.testing.assert_allclose(ctx.decrypt(ctx.dot_plain([cx, cy], [y, x])), 2 * x * y, atol=TOL)


def test_depth_is_enforced(ctx):
    ct = ctx.encrypt(np.full(8, 0.9))
    for _ in range(PARAMS.depth):
        ct = ctx.mul(ct, ct)
    np.testing.assert_allclose(ctx.decrypt(ct, 8), 0.9 ** (2 ** PARAMS.depth), atol=TOL)
    with pytest.raises(he.DepthExhausted):
        ctx.mul(ct, ct)


def test_rotations_and_rotate_many(ctx):
    x = np.random.default_rng(1).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x)
    for s in STEPS:
        np.testing.assert_allclose(ctx.decrypt(ctx.rotate(ct, s)), np.roll(x, -s), atol=TOL)
    many = ctx.rotate_many(ct, STEPS + [4])                                  # 4 = 3 + 1 composed
    for s, c in many.items():
        np.testing.assert_allclose(ctx.decrypt(c), np.roll(x, -s), atol=TOL)
    with pytest.raises(he.MissingRotationKey):
        ctx.rotate(ct, 7)


def test_public_context_and_serialization(ctx):
    server = ctx.public()
    assert not server.has_secret
    v = np.linspace(-1, 1, 16)
    ct = server.deserialize(ctx.serialize(ctx.encrypt(v)))
    res = server.rotate(server.mul(ct, ct), 1)
    with pytest.raises(he.SecretKeyRequired):
        server.decrypt(res)
    back = ctx.decrypt(ctx.deserialize(server.serialize(res)), 15)
    np.testing.assert_allclose(back, (v * v)[1:16], atol=TOL)
    sizes = ctx.key_sizes()
    assert sizes["galois_keys"] > sizes["relin_key"] > sizes["public_key"] > 0
    enc_only = received(ctx.to_bytes(evaluation_keys=False))
    with pytest.raises(he.MissingKeyError):
        enc_only.relinearize(enc_only.mul(enc_only.encrypt(v), enc_only.encrypt(v), relin=False))


def test_corrupted_bytes(ctx):
    data = ctx.serialize(ctx.encrypt([1.0, 2.0]))
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    for bad in (bytes(flipped), data[:-10], b"garbage"):
        with pytest.raises(he.CorruptedData):
            ctx.deserialize(bad)
