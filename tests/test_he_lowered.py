"""Lowered contexts (Context.lowered / adopt): the same BFV secret at a context's first primes, with keys there."""
import numpy as np
import pytest

import hepkg.he as he
from hepkg.he.errors import ContextMismatch, SchemeError, SecretKeyRequired
from conftest import BFV_BACKENDS

HP = "toy-bfv-omr-soph"                     # 19 data primes of 60 bits, t = 786433, N = 4096
LOWERING = [b for b in BFV_BACKENDS if he.backend_class(b).lowers]


def _pair(backend, steps=(1, 5), swap=True):
    ctx = he.context(backend, HP, rotations=[1], policy="exact", insecure=True)
    return ctx, ctx.lowered(2, rotations=list(steps), policy="exact", swap=swap)


@pytest.mark.parametrize("backend", LOWERING)
def test_a_ciphertext_moved_to_the_lowered_context_computes_and_decrypts_there(backend):
    ctx, low = _pair(backend)
    t, rng = ctx.plain_modulus, np.random.default_rng(1)
    x, w = rng.integers(0, t, ctx.slots), rng.integers(0, t, ctx.slots)
    assert low.max_level == 1 and low.built.q_bits == ctx.built.q_bits[:2]
    moved = low.adopt(ctx.drop_level(ctx.encrypt(x), ctx.max_level - 1))
    out = low.swap_columns(low.rotate(low.mul_plain(moved, w), 5))
    want = (x * w % t).reshape(2, -1)
    want = np.roll(want, -5, axis=1)[::-1].reshape(-1)
    np.testing.assert_array_equal(low.decrypt(out, signed=False), want)
    digest = low.drop_level(out, 1)                               # the digest goes out at one prime
    pub = low.public()
    back = low.deserialize(pub.serialize(pub.deserialize(low.serialize(digest), guard=True)), guard=True)
    np.testing.assert_array_equal(low.decrypt(back, signed=False), want)


@pytest.mark.skipif("openfhe" not in LOWERING, reason="OpenFHE not installed")
def test_openfhe_lowered_keys_span_only_the_lowered_primes():
    ctx = he.context("openfhe", HP, rotations=[1, 5], policy="exact", insecure=True)
    low = ctx.lowered(2, rotations=[1, 5], policy="exact")
    top, small = ctx.key_sizes()["galois_keys"], low.key_sizes()["galois_keys"]
    assert small * 4 < top                    # 2 primes and one digit's P against 19 primes and 3 digits' P
    assert low.params.ks_digits == 1 and low.built.p_bits and len(low.built.q_bits) == 2
    # the public lowered context carries the parent's key id: a server moves the parent's ciphertexts there
    pub_ctx, pub_low = ctx.public(), low.public()
    assert pub_low.parent_key_id == ctx.key_id == pub_ctx.key_id
    x = np.arange(ctx.slots) % ctx.plain_modulus
    moved = pub_low.adopt(pub_ctx.drop_level(pub_ctx.encrypt(x), ctx.max_level - 1))
    np.testing.assert_array_equal(low.decrypt(low.deserialize(pub_low.serialize(pub_low.rotate(moved, 1))),
                                              signed=False), np.roll(x.reshape(2, -1), -1, axis=1).reshape(-1))


@pytest.mark.parametrize("backend", LOWERING)
def test_lowering_and_adopting_refuse_what_they_cannot_do(backend):
    ctx, low = _pair(backend)
    with pytest.raises(SecretKeyRequired):
        ctx.public().lowered(2)
    for limbs in (0, ctx.max_level + 1, 2.0, True):
        with pytest.raises(ValueError, match="limbs must be an integer"):
            ctx.lowered(limbs)
    x = ctx.encrypt(np.arange(8))
    with pytest.raises(ValueError, match=r"has \d+ primes left"):
        low.adopt(x)                                               # not dropped to the lowered primes
    with pytest.raises(ContextMismatch, match="was not lowered"):
        ctx.adopt(x)
    other = he.context(backend, HP, rotations=[1], policy="exact", insecure=True)
    with pytest.raises(ContextMismatch, match="lowered from keys"):
        low.adopt(other.drop_level(other.encrypt(np.arange(8)), other.max_level - 1))
    with pytest.raises(ContextMismatch, match="lowered from keys"):
        low.adopt(low.encrypt(np.arange(8)))                         # its own ciphertexts are no parent's
    with pytest.raises(TypeError):
        low.adopt(np.arange(8))
    ckks = he.context(backend, "toy-ckks-1024", insecure=True)
    with pytest.raises(SchemeError, match="cannot hold a CKKS secret key"):
        ckks.lowered(1)


@pytest.mark.skipif("pyfhel" not in BFV_BACKENDS, reason="Pyfhel not installed")
def test_a_backend_that_cannot_lower_says_so():
    ctx = he.context("pyfhel", "toy-bfv-1024", insecure=True)
    with pytest.raises(SchemeError, match="backend 'pyfhel' cannot hold a BFV secret key at fewer moduli"):
        ctx.lowered(1)


@pytest.mark.parametrize("backend", LOWERING)
def test_a_lowered_context_made_without_a_relinearization_key_holds_none_and_says_so(backend):
    ctx = he.context(backend, HP, rotations=[1], policy="exact", insecure=True)
    with_relin = ctx.lowered(2, rotations=[1], policy="exact")
    linear = ctx.lowered(2, rotations=[1], policy="exact", relin=False)
    assert with_relin.key_sizes()["relin_key"] > 0 and linear.key_sizes()["relin_key"] == 0
    assert linear.key_sizes()["galois_keys"] == with_relin.key_sizes()["galois_keys"] > 0
    x = np.arange(ctx.slots) % ctx.plain_modulus
    for low in (linear, linear.public()):                          # the public form holds none either
        moved = low.adopt(ctx.drop_level(ctx.encrypt(x), ctx.max_level - 1))
        np.testing.assert_array_equal(linear.decrypt(low.rotate(moved, 1), signed=False),
                                      np.roll(x.reshape(2, -1), -1, axis=1).reshape(-1))
        square = low.mul(moved, moved, relin=False)
        with pytest.raises(he.MissingKeyError, match=r"lowered without one \(lowered\(relin=False\)\)"):
            low.relinearize(square)
    sq = with_relin.mul(with_relin.adopt(ctx.drop_level(ctx.encrypt(x), ctx.max_level - 1)),
                        with_relin.adopt(ctx.drop_level(ctx.encrypt(x), ctx.max_level - 1)))
    assert sq.size == 2                                            # the default still relinearizes
