"""Ring switching (Context.subring / descend): a BFV ciphertext at one prime taken to the ring of degree n/d."""
import numpy as np
import pytest

import hepkg.he as he
from hepkg.he.errors import ContextMismatch, CorruptedData, SchemeError, SecretKeyRequired
from hepkg.he.subring import descended_slots, slot_map
from conftest import BFV_BACKENDS

HP = "toy-bfv-omr-soph"                     # 19 data primes of 60 bits, t = 786433, N = 4096
SUBRINGS = [b for b in BFV_BACKENDS if he.backend_class(b).subrings]


def _chain(backend, d=4):
    ctx = he.context(backend, HP, rotations=[1], policy="exact", insecure=True)
    low = ctx.lowered(2, rotations=[1], policy="exact", relin=False)
    return ctx, low, low.subring(d)


def _at_one_prime(ctx, low, values):
    return low.drop_level(low.adopt(ctx.drop_level(ctx.encrypt(values), ctx.max_level - 1)), 1)


def test_descended_slots_sum_each_coset_and_divide_by_d():
    t, d = 786433, 4
    x = np.zeros(4096, dtype=np.int64)
    x[[5, 5 + 512, 2048 + 7]] = [3, 4, 9]          # row 0: slot 5 and its coset partner; row 1: slot 7
    out = descended_slots(x, d, t)
    assert out.shape == (1024,)
    assert out[5] == 7 * pow(d, -1, t) % t and out[512 + 7] == 9 * pow(d, -1, t) % t
    assert np.count_nonzero(out) == 2


@pytest.mark.parametrize("d", [2, 4])
@pytest.mark.parametrize("backend", SUBRINGS)
def test_a_ciphertext_descends_and_decrypts_in_the_subring(backend, d):
    ctx, low, small = _chain(backend, d)
    t, rng = ctx.plain_modulus, np.random.default_rng(d)
    assert small.slots == ctx.slots // d and small.descent == d and small.parent_key_id == low.key_id
    assert small.max_level == 1 and not small.relin_key and small.key_sizes()["galois_keys"] == 0
    x = rng.integers(0, t, ctx.slots)
    want = descended_slots(x, d, t)
    ct = _at_one_prime(ctx, low, x)
    np.testing.assert_array_equal(small.decrypt(small.descend(ct), signed=False), want)
    pub = small.public()                                         # the detector's side: no secret
    assert not pub.has_secret and pub.descent == d
    out = pub.descend(low.public().deserialize(low.serialize(ct), guard=True))
    back = small.deserialize(pub.serialize(out), guard=True)
    np.testing.assert_array_equal(small.decrypt(back, signed=False), want)
    if backend == "openfhe":                                      # sim's bytes are its slots
        words = 2 * small.params.n * 8                             # two polynomials of n/d words at one prime
        assert words <= small.nbytes(back) <= words + 4096 < low.nbytes(ct)


@pytest.mark.parametrize("backend", SUBRINGS)
def test_ring_switching_refuses_what_it_cannot_do(backend):
    ctx, low, small = _chain(backend)
    with pytest.raises(SecretKeyRequired):
        low.public().subring(2)
    for d in (1, 3, 8, 2.0, True):
        with pytest.raises(ValueError, match="d must be a power of two"):
            low.subring(d)
    x = np.arange(ctx.slots) % ctx.plain_modulus
    two = low.adopt(ctx.drop_level(ctx.encrypt(x), ctx.max_level - 1))
    with pytest.raises(ValueError, match="2 primes left"):
        small.descend(two)                                         # not dropped to one prime
    with pytest.raises(ContextMismatch, match="switching key is from keys"):
        small.descend(ctx.drop_level(ctx.encrypt(x), ctx.max_level))   # the top context's, not the lowered one's
    other_ctx, other_low, _ = _chain(backend)
    with pytest.raises(ContextMismatch, match="switching key is from keys"):
        small.descend(_at_one_prime(other_ctx, other_low, x))
    with pytest.raises(ContextMismatch, match="descends nothing"):
        low.descend(_at_one_prime(ctx, low, x))
    with pytest.raises(TypeError):
        small.descend(x)
    ckks = he.context(backend, "toy-ckks-1024", insecure=True)
    with pytest.raises(SchemeError, match="cannot switch CKKS"):
        ckks.subring(2)


@pytest.mark.skipif("openfhe" not in SUBRINGS, reason="OpenFHE not installed")
def test_openfhe_slot_order_and_switching_key_checks():
    ctx, low, small = _chain("openfhe", 2)
    assert slot_map(ctx.plain_modulus, ctx.params.n, 2) == slot_map(786433, 4096, 2)
    x = np.arange(small.slots) % ctx.plain_modulus              # the subring's own encryptions keep their order
    np.testing.assert_array_equal(small.decrypt(small.encrypt(x), signed=False), x)
    pub = small.public()
    good = small._switch_bytes()
    for bad, why in ((good[:-8], "has"), (b"\x07" * 16 + good[16:], "names primes"),
                     (good[:16] + b"\xff" * 8 + good[24:], "at or above")):
        with pytest.raises(CorruptedData, match=why):
            pub._load_switch(bad)


@pytest.mark.skipif("pyfhel" not in BFV_BACKENDS, reason="Pyfhel not installed")
def test_a_backend_without_ring_switching_says_so():
    with pytest.raises(SchemeError, match="backend 'pyfhel' cannot switch BFV"):
        he.context("pyfhel", "toy-bfv-1024", insecure=True).subring(2)
