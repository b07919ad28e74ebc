"""hepkg.he.noise: the BFV noise budget probed by scalar doublings on a backend that does not report it."""
import numpy as np
import pytest

import hepkg.he as he
from hepkg.he.noise import _doubled, probed_budget

pytestmark = pytest.mark.skipif(not he.availability()["openfhe"], reason="OpenFHE not installed")
T = 65537


@pytest.fixture(scope="module")
def ctx():
    with he.context("openfhe", "toy-bfv-omr-perf", rotations=[1], insecure=True) as c:
        yield c


def test_the_budget_is_the_last_doubling_that_decrypts(ctx):
    """2^b ct decrypts to 2^b m, 2^(b+1) ct does not; fresh below log2(q / t), a product about 28 bits less."""
    m = np.arange(50)
    x = ctx.encrypt(m)
    fresh = probed_budget(ctx, x, m)
    room = sum(ctx.built.q_bits) - np.log2(T)
    assert room - 40 < fresh < room
    for ct, b in ((x, fresh), (ctx.mul(x, x), probed_budget(ctx, ctx.mul(x, x)))):
        decrypted = ctx.decrypt(ct, signed=False)
        assert np.array_equal(ctx.decrypt(_doubled(ctx, ct, b, 16), signed=False), decrypted * pow(2, b, T) % T)
        assert not np.array_equal(ctx.decrypt(_doubled(ctx, ct, b + 1, 16), signed=False),
                                  decrypted * pow(2, b + 1, T) % T)
    assert 20 < fresh - b < 40


def test_a_switched_ciphertext_keeps_its_budget_until_the_modulus_runs_short(ctx):
    """Dropping primes keeps the relative noise while the budget stays below the smaller modulus' floor
    (about log2(q / t) less the rounding); a fresh ciphertext, far above it, loses the difference."""
    x = ctx.encrypt([3])
    for _ in range(16):
        x = ctx.mul(x, x)
    before = probed_budget(ctx, x, [pow(3, 2 ** 16, T)])
    assert 200 < before < 400
    assert abs(probed_budget(ctx, ctx.drop_level(x, 4)) - before) <= 2                   # 9 primes: 540 bits
    low = probed_budget(ctx, ctx.drop_level(x, ctx.max_level - 1))                     # 2 primes: 120 bits
    assert 120 - 17 - 30 < low < 120 - 17
    fresh = ctx.encrypt([3])
    assert probed_budget(ctx, ctx.drop_level(fresh, 4)) < probed_budget(ctx, fresh) - 200


def test_a_wrong_ciphertext_and_the_wrong_contexts(ctx):
    x = ctx.encrypt([1, 2, 3])
    assert probed_budget(ctx, x, [1, 2, 4]) == -1
    with pytest.raises(he.SecretKeyRequired, match="no secret key"):
        probed_budget(ctx.public(), ctx.public().deserialize(ctx.serialize(x)))
    with he.context("openfhe", "ckks-16384-small", rotations=[1]) as ck:
        with pytest.raises(he.SchemeError, match="BFV/BGV notion"):
            probed_budget(ck, ck.encrypt([1.0]))
