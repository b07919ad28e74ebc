"""The tenseal backend (SEAL CKKS through tenseal.sealapi) against numpy, op by op, on ckks-8192-small."""
import numpy as np
import pytest

pytest.importorskip("tenseal")

import hepkg.he as he  # noqa: E402
from hepkg.he import envelope  # noqa: E402
from conftest import received  # noqa: E402

CKKS = he.get_params("ckks-8192-small")
N = CKKS.slots
ROTATIONS = [1, 2, 3, 5, 7, 100, 1000, N - 1]
TOL = 2.0 ** -(CKKS.scale_bits - 20)  # |values| <= 1, depth <= 2
# One SEAL key switch (measured) adds a key-dependent error of up to about 2^-19.3 here,
# concentrated in slots 0 and 1 of its output, so results of rotations that are not
# rescaled afterwards get four times the tolerance.
KS_TOL = 4 * TOL
rng = np.random.default_rng(7)
A, B = rng.uniform(-1, 1, N), rng.uniform(-1, 1, N)


@pytest.fixture(scope="module")
def ctx():
    return he.context("tenseal", CKKS, rotations="all")


@pytest.fixture(scope="module")
def exact():
    return he.context("tenseal", CKKS, rotations=ROTATIONS, policy="exact")


@pytest.fixture(scope="module")
def cts(ctx):
    return ctx.encrypt(A), ctx.encrypt(B)


def close(ctx, ct, want, tol=TOL):
    np.testing.assert_allclose(ctx.decrypt(ct), want, atol=tol, rtol=0)


def test_encrypt_decrypt_real_and_complex(ctx, cts):
    close(ctx, cts[0], A)
    z = A[:10] + 1j * B[:10]
    got = ctx.decrypt(ctx.encrypt(z), 10, complex=True)
    np.testing.assert_allclose(got, z, atol=TOL, rtol=0)
    assert ctx.decrypt(cts[0]).dtype == np.float64 and ctx.decrypt(cts[0]).shape == (N,)


def test_linear_ops(ctx, cts):
    ca, cb = cts
    close(ctx, ctx.add(ca, cb), A + B)
    close(ctx, ctx.sub(ca, cb), A - B)
    close(ctx, ctx.negate(ca), -A)
    close(ctx, ctx.add(ca, B), A + B)
    close(ctx, ctx.sub(ca, 0.25), A - 0.25)


def test_exact_zero_results_are_encryptions(ctx, cts):
    ca, _ = cts
    # SEAL refuses transparent ciphertexts; x - x and x * 0 come back as encryptions of zero
    for ct in (ctx.sub(ca, ca), ctx.add(ca, ctx.negate(ca)), ctx.mul_plain(ca, 0.0),
               ctx.mul_plain(ca, 0.0, rescale=False)):
        close(ctx, ct, np.zeros(N))
        assert not ct.raw.is_transparent()
    close(ctx, ctx.add(ctx.mul_plain(ca, 0.0), ca), A)


def test_mul_relin_now_and_deferred(ctx, cts):
    ca, cb = cts
    now = ctx.mul(ca, cb)
    assert (now.size, now.level, now.depth) == (2, 1, 1)
    close(ctx, now, A * B)
    lazy = ctx.add(ctx.mul(ca, cb, relin=False, rescale=False), ctx.mul(ca, ca, relin=False, rescale=False))
    assert lazy.size == 3 and lazy.pending and lazy.level == 0
    close(ctx, ctx.rescale(ctx.relinearize(lazy)), A * B + A * A)
    # relin=False defers the rescale too (rescaling a 3-component ciphertext adds error)
    deferred = ctx.add(ctx.mul(ca, cb, relin=False), ctx.mul(ca, ca, relin=False))
    assert deferred.size == 3 and deferred.pending and deferred.level == 0
    close(ctx, ctx.relinearize(deferred), A * B + A * A)


def test_mul_plain_and_plain_ops_after_rescale(ctx, cts):
    ca, _ = cts
    prod = ctx.mul_plain(ca, B)
    close(ctx, prod, A * B)
    # after a rescale the scale is 2^80/q, not 2^40: plaintexts are encoded at that exact scale
    close(ctx, ctx.add(prod, B), A * B + B)
    close(ctx, ctx.sub(prod, ctx.encode(B)), A * B - B)
    pt = ctx.encode(B, level=1)
    close(ctx, ctx.mul_plain(prod, pt), A * B * B)
    close(ctx, ctx.mul_plain(ca, pt), A * B)  # a plaintext of another level is re-encoded
    with pytest.raises(he.EncodingError, match="level 5 does not exist"):
        ctx.encode(B, level=5)


@pytest.mark.parametrize("k", [1, 2, 3, 7, 100, 1000, 1365, N - 1, -1, -100, N, 0])
def test_rotate_pow2(ctx, cts, k):
    with ctx.counting() as ops:
        out = ctx.rotate(cts[0], k)
    close(ctx, out, np.roll(A, -k), tol=KS_TOL)
    assert ops["keyswitch"] == len(ctx.keys.plan(k))


def test_rotate_exact_and_many(exact):
    ca = exact.encrypt(A)
    with exact.counting() as ops:
        close(exact, exact.rotate(ca, 100), np.roll(A, -100), tol=KS_TOL)
    assert ops["keyswitch"] == 1
    with pytest.raises(he.MissingRotationKey):
        exact.rotate(ca, 4)
    steps = ROTATIONS + [-1, 0]
    with exact.counting() as ops:
        out = exact.rotate_many(ca, steps)
    assert list(out) == steps and ops["hoisted_precompute"] == 1
    for k, ct in out.items():
        close(exact, ct, np.roll(A, -k), tol=KS_TOL)


def test_sum_slots(ctx):
    v = A / N
    close(ctx, ctx.sum_slots(ctx.encrypt(v)), np.full(N, v.sum()), tol=12 * KS_TOL)  # 12 key switches


def test_mod_switch_and_add_across_levels(ctx, cts):
    ca, cb = cts
    low = ctx.mod_switch(ca)
    assert low.level == 1 and low.depth == 0
    close(ctx, low, A)
    close(ctx, ctx.add(ctx.mul(ca, cb), ca), A * B + A)
    close(ctx, ctx.sub(cb, ctx.mul(ca, cb)), B - A * B)
    close(ctx, ctx.mul(low, cb), A * B)
    deep = ctx.mul(ctx.mul(ca, cb), ca)
    assert deep.level == 2
    close(ctx, ctx.add(deep, ctx.drop_level(cb, 2)), A * B * A + B)
    close(ctx, ctx.add(cb, deep), B + A * B * A)
    with pytest.raises(he.DepthExhausted, match="no modulus left"):
        ctx.mod_switch(ctx.drop_level(ca, 2))


def test_inputs_are_not_modified(ctx, cts):
    ca, cb = cts
    low = ctx.mod_switch(cb)
    before = [ctx.serialize(c) for c in (ca, low)]
    prod = ctx.mul(ca, cb)
    ctx.add(prod, low), ctx.add(low, ca), ctx.sub(ca, prod), ctx.add(prod, B), ctx.rotate(ca, 3)
    assert [ctx.serialize(c) for c in (ca, low)] == before


def test_depth_exhausted(ctx, cts):
    ca, _ = cts
    sq = ctx.mul(ctx.mul(ca, ca), ca)
    assert sq.level == CKKS.depth
    close(ctx, sq, A ** 3)
    with pytest.raises(he.DepthExhausted, match="depth exhausted"):
        ctx.mul(sq, ca)
    with pytest.raises(he.DepthExhausted):
        ctx.mul_plain(sq, 2.0)


def test_serialize_round_trip_and_corruption(ctx, cts):
    data = ctx.serialize(ctx.mul(*cts))
    back = ctx.deserialize(data)
    assert back.level == 1 and back.depth == 1
    close(ctx, back, A * B)
    meta, payload = envelope.unpack(data, "ciphertext", key=ctx.session_key)  # a party forging a payload
    with pytest.raises(he.CorruptedData, match="could not parse"):
        ctx.deserialize(envelope.pack("ciphertext", meta, payload[:len(payload) // 2], key=ctx.session_key))


def test_public_context_evaluates_but_cannot_decrypt(exact):
    blob = exact.to_bytes()
    sizes = exact.key_sizes()
    assert len(blob) < sizes["public_key"] + sizes["relin_key"] + sizes["galois_keys"] + 4096  # no secret key
    server = received(blob)
    assert not server.has_secret and server.keys.steps == exact.keys.steps
    ct = server.deserialize(exact.serialize(exact.encrypt(A)))
    res = server.rotate(server.add(server.mul(ct, ct), server.encrypt(B)), 7)
    with pytest.raises(he.SecretKeyRequired):
        server.decrypt(res)
    close(exact, exact.deserialize(server.serialize(res)), np.roll(A * A + B, -7), tol=KS_TOL)


def test_key_sizes_are_measured(ctx, exact):
    big, small = ctx.key_sizes(), exact.key_sizes()
    assert "estimated" not in big
    for key in ("public_key", "relin_key"):  # SEAL compresses (zstd): sizes vary slightly
        assert big[key] == pytest.approx(small[key], rel=0.01)
    assert big["galois_keys"] > small["galois_keys"] * 2 and big["rotation_keys"] == len(ctx.keys) == 23  # +-2^i
    assert 0 < big["ciphertext"] < big["public_key"]
    assert ctx.nbytes(ctx.encrypt(A)) == pytest.approx(big["ciphertext"], rel=0.01)


def test_ckks_only_and_parameter_errors(ctx, cts):
    assert ctx.noise_budget(cts[0]) is None
    with pytest.raises(he.SchemeError):
        ctx.swap_columns(cts[0])
    with pytest.raises(he.SchemeError):
        he.context("tenseal", "bfv-4096-small")
    with pytest.raises(he.ParameterError, match="2..60 bits"):  # refused before SEAL sees it
        CKKS.replace(name="ckks-bad", qi_bits=(70, 40, 60))


def test_insecure_toy_set():
    toy = he.context("tenseal", "toy-ckks-1024", rotations=[1], insecure=True)
    ct = toy.encrypt([0.5, -0.25])
    np.testing.assert_allclose(toy.decrypt(toy.rotate(toy.mul(ct, ct), 1), 1), [0.0625], atol=1e-3)
