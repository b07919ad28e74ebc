"""The Pyfhel backend against numpy and, bit for bit for BFV, against ``sim``."""
import numpy as np
import pytest

pytest.importorskip("Pyfhel")

import hepkg.he as he  # noqa: E402
from hepkg.he.params import SEAL_DEFAULT_QI  # noqa: E402
from hepkg.linalg.rotsum import rotation_steps_for_sum  # noqa: E402

T = 65537
BFV_SETS = ("bfv-8192-default", "bfv-8192-spmv")
STEPS = [1, 2, 5, -3, 100]
KEYS = STEPS + rotation_steps_for_sum(4096)  # sum_slots over a row of N/2 = 4096 slots


def pair(params, **kw):
    return he.context("pyfhel", params, **kw), he.context("sim", params, **kw)


@pytest.fixture(scope="module", params=BFV_SETS)
def bfv(request):
    return pair(request.param, rotations=KEYS, swap=True)


@pytest.fixture(scope="module")
def ckks():
    return he.context("pyfhel", "ckks-8192-small", rotations=KEYS)


def ints(seed, n):
    return np.random.default_rng(seed).integers(-300, 300, n)


def reals(seed, n):
    return np.random.default_rng(seed).uniform(-1, 1, n)


def same(ctx, sim, build):
    """``build(ctx)`` decrypts identically on pyfhel and sim; returns the slots."""
    got, want = ctx.decrypt(build(ctx)), sim.decrypt(build(sim))
    np.testing.assert_array_equal(got, want)
    return got


def centered(x):
    x = np.asarray(x) % T
    return np.where(x > T // 2, x - T, x)


# ---------------------------------------------------------------- BFV
def test_bfv_arithmetic_matches_sim_and_numpy(bfv):
    ctx, sim = bfv
    a, b = ints(0, ctx.slots), ints(1, ctx.slots)
    cases = {
        "encrypt": (lambda c: c.encrypt(a), a),
        "add": (lambda c: c.encrypt(a) + c.encrypt(b), a + b),
        "sub": (lambda c: c.encrypt(a) - c.encrypt(b), a - b),
        "negate": (lambda c: -c.encrypt(a), -a),
        "mul": (lambda c: c.encrypt(a) * c.encrypt(b), a * b),
        "mul_deferred_relin": (lambda c: c.relinearize(c.mul(c.encrypt(a), c.encrypt(b), relin=False)), a * b),
        "mul_plain": (lambda c: c.mul_plain(c.encrypt(a), b), a * b),
        "mul_scalar": (lambda c: c.encrypt(a) * 7, 7 * a),
        "add_plain": (lambda c: c.add(c.encrypt(a), c.encode(b)), a + b),
        "sub_plain": (lambda c: c.sub(c.encrypt(a), b), a - b),
        "square_twice": (lambda c: (lambda x: x * x)(c.encrypt(a) * c.encrypt(a)), a ** 4),
        "x_minus_x": (lambda c: (lambda x: x - x)(c.encrypt(a)), 0 * a),
        "x_plus_neg_x": (lambda c: (lambda x: x + (-x))(c.encrypt(a)), 0 * a),
        "mul_plain_zero": (lambda c: c.mul_plain(c.encrypt(a), np.zeros(c.slots, dtype=np.int64)), 0 * a),
    }
    for name, (build, expected) in cases.items():
        np.testing.assert_array_equal(same(ctx, sim, build), centered(expected), err_msg=name)


def test_bfv_slot_layout_and_rotation_direction(bfv):
    ctx, sim = bfv
    half = ctx.slots // 2
    v = np.arange(ctx.slots) % 1000
    rows = v.reshape(2, half)
    for k in STEPS + [4, half, half + 1, 0]:
        got = same(ctx, sim, lambda c: c.rotate(c.encrypt(v), k))
        np.testing.assert_array_equal(got, np.roll(rows, -k, axis=1).reshape(-1), err_msg=f"k={k}")
    got = same(ctx, sim, lambda c: c.swap_columns(c.encrypt(v)))
    np.testing.assert_array_equal(got, rows[::-1].reshape(-1))
    got = same(ctx, sim, lambda c: c.sum_slots(c.encrypt(v)))
    np.testing.assert_array_equal(got, centered(np.full(ctx.slots, v.sum())))


def test_bfv_rotate_many_matches_sim(bfv):
    ctx, sim = bfv
    v = ints(2, ctx.slots)
    steps = [1, 5, -3, 8]
    got = ctx.rotate_many(ctx.encrypt(v), steps)
    want = sim.rotate_many(sim.encrypt(v), steps)
    for s in steps:
        np.testing.assert_array_equal(ctx.decrypt(got[s]), sim.decrypt(want[s]))


def test_bfv_exact_policy_holds_exactly_the_requested_keys():
    ctx, sim = pair("bfv-8192-spmv", rotations=[3, 7, -1000], policy="exact")
    assert ctx.keys.steps == {3, 7, 4096 - 1000} and ctx.key_sizes()["rotation_keys"] == 3
    v = ints(3, ctx.slots)
    for k in (3, 7, -1000):
        same(ctx, sim, lambda c: c.rotate(c.encrypt(v), k))
    with pytest.raises(he.MissingRotationKey):
        ctx.rotate(ctx.encrypt(v), 1)
    with pytest.raises(ValueError, match="Galois key not present"):  # the library itself has no other key
        ctx._he.rotate(ctx.encrypt(v).raw, 1, in_new_ctxt=True)
    with pytest.raises(he.MissingKeyError):
        ctx.swap_columns(ctx.encrypt(v))


def test_bfv_mod_switch_keeps_values_and_aligns_levels(bfv):
    ctx, sim = bfv
    a, b = ints(4, ctx.slots), ints(5, ctx.slots)
    x = ctx.mod_switch(ctx.encrypt(a))
    assert x.level == 1 and ctx._level(x.raw) == 1
    assert ctx.noise_budget(x) < ctx.noise_budget(ctx.encrypt(a))
    np.testing.assert_array_equal(same(ctx, sim, lambda c: c.mod_switch(c.encrypt(a)) + c.encrypt(b)), centered(a + b))
    np.testing.assert_array_equal(same(ctx, sim, lambda c: c.encrypt(b) * c.mod_switch(c.encrypt(a))), centered(a * b))
    np.testing.assert_array_equal(same(ctx, sim, lambda c: c.rotate(c.mod_switch(c.encrypt(a)), 1) - b),
                                  centered(np.roll(a.reshape(2, -1), -1, axis=1).reshape(-1) - b))
    low = ctx.encrypt(ctx.encode(a, level=2))
    assert low.level == 2 and ctx._level(low.raw) == 2
    np.testing.assert_array_equal(ctx.decrypt(low), a)
    with pytest.raises(he.DepthExhausted):
        ctx.drop_level(ctx.encrypt(a), len(ctx.params.qi_bits) - 1)


def test_bfv_noise_budget_decreases_until_decryption_is_refused():
    ctx = he.context("pyfhel", "bfv-8192-spmv")
    x, budgets = ctx.encrypt([3, 2, 1]), []
    with pytest.raises(he.NoiseBudgetExhausted):
        for _ in range(10):
            budgets.append(ctx.noise_budget(x))
            assert list(ctx.decrypt(x, 3)) == list(centered(np.array([3, 2, 1]) ** (2 ** (len(budgets) - 1))))
            x = x * x
    assert len(budgets) >= 4 and all(a > b for a, b in zip(budgets, budgets[1:]))
    assert ctx.noise_budget(x) == 0


def test_bfv_serialization_round_trip(bfv):
    ctx, _ = bfv
    a = ints(6, ctx.slots)
    for ct in (ctx.encrypt(a), ctx.mod_switch(ctx.encrypt(a)), ctx.rotate(ctx.encrypt(a) * 2, 5)):
        back = ctx.deserialize(ctx.serialize(ct))
        assert (back.level, back.depth) == (ct.level, ct.depth) and ctx._level(back.raw) == ct.level
        np.testing.assert_array_equal(ctx.decrypt(back), ctx.decrypt(ct))
        np.testing.assert_array_equal(ctx.decrypt(back + ctx.encrypt(a)), ctx.decrypt(ct + ctx.encrypt(a)))
    data = bytearray(ctx.serialize(ctx.encrypt(a)))
    data[-10] ^= 1
    with pytest.raises(he.CorruptedData):
        ctx.deserialize(bytes(data))


def test_bfv_public_context_evaluates_but_cannot_decrypt(bfv):
    ctx, sim = bfv
    pub = ctx.public()
    assert not pub.has_secret and pub._he.is_secret_key_empty() and not pub._he.is_rotate_key_empty()
    a, b = ints(7, ctx.slots), ints(8, ctx.slots)

    def evaluate(c, y):
        x = c.encrypt(a)
        return c.mod_switch(c.sum_slots(c.swap_columns(c.rotate(x * y + b, 5) - x)))

    out = evaluate(pub, pub.deserialize(ctx.serialize(ctx.encrypt(b))))
    got = ctx.decrypt(ctx.deserialize(pub.serialize(out)))
    np.testing.assert_array_equal(got, sim.decrypt(evaluate(sim, sim.encrypt(b))))
    with pytest.raises(he.SecretKeyRequired):
        pub.decrypt(out)
    with pytest.raises(he.SecretKeyRequired):
        pub.noise_budget(out)
    assert pub.key_sizes() == ctx.key_sizes()


def test_bfv_inputs_are_not_modified(bfv):
    ctx, _ = bfv
    x, y = ctx.encrypt(ints(9, ctx.slots)), ctx.mod_switch(ctx.encrypt(ints(10, ctx.slots)))
    p = ctx.encode(ints(11, ctx.slots))
    before = (ctx.serialize(x), ctx.serialize(y), ctx.decrypt(ctx.encrypt(p)))
    for op in (lambda: x + y, lambda: y - x, lambda: x * y, lambda: ctx.mul(x, y, relin=False),
               lambda: ctx.mul_plain(x, p), lambda: ctx.add(x, p), lambda: ctx.sub(x, p), lambda: -x,
               lambda: ctx.rotate(x, 1), lambda: ctx.swap_columns(x), lambda: ctx.mod_switch(x),
               lambda: x - x, lambda: ctx.mul_plain(x, 0)):
        op()
    assert (ctx.serialize(x), ctx.serialize(y)) == before[:2]
    np.testing.assert_array_equal(ctx.decrypt(ctx.encrypt(p)), before[2])


def test_bfv_key_and_ciphertext_sizes(bfv):
    ctx, _ = bfv
    sizes = ctx.key_sizes()
    n, primes = ctx.params.n, len(ctx.params.qi_bits)
    assert sizes["ciphertext"] == len(ctx._ser(ctx.encrypt([1]).raw))
    assert 2 * n * (primes - 1) * 8 < sizes["ciphertext"] < 2 * n * (primes - 1) * 8 + 1024
    assert 2 * n * primes * 8 < sizes["public_key"] < 2 * n * primes * 8 + 1024
    assert sizes["relin_key"] > (primes - 1) * 2 * n * primes * 8
    assert sizes["rotation_keys"] == len(ctx.keys) + 1
    assert sizes["galois_keys"] > sizes["rotation_keys"] * sizes["relin_key"] * 0.99
    small = he.context("pyfhel", "bfv-4096-small")
    assert small.key_sizes()["galois_keys"] == 0 and small.key_sizes()["rotation_keys"] == 0
    pub = small.public()  # no Galois keys in the payload
    np.testing.assert_array_equal(small.decrypt(small.deserialize(pub.serialize(pub.encrypt([2, 3]) * 5)), 2), [10, 15])


def test_parameters_reach_seal():
    default = he.context("pyfhel", "bfv-8192-default")
    assert [q.bit_length() for q in default._he.qi] == list(SEAL_DEFAULT_QI[8192]) and default._he.sec == 128
    spmv = he.context("pyfhel", "bfv-8192-spmv")
    assert [q.bit_length() for q in spmv._he.qi] == [60, 40, 40, 60] and spmv._he.t == T
    with pytest.raises(he.ParameterError, match="2..60 bits"):  # refused before SEAL sees it
        he.get_params("bfv-8192-spmv").replace(name="bad-qi", qi_bits=(70, 40, 60))
    wrong = he.get_params("bfv-8192-default").replace(name="wrong-default", qi_bits=(50, 50, 50, 60))
    with pytest.raises(he.ParameterError, match="SEAL chose moduli"):
        he.context("pyfhel", wrong)
    with pytest.raises(he.SchemeError):
        he.context("pyfhel", "bgv-omr-perf", insecure=True)


# ---------------------------------------------------------------- CKKS
def tol(ctx, switches=0):
    """Error bound for values of magnitude <= 1: 2^-(scale_bits-20), plus as much per key switch
    (SEAL's key switching adds about 2^-(scale_bits-18) at N=8192 with a 60-bit special prime)."""
    return (1 + switches) * 2.0 ** -(ctx.params.scale_bits - 20)


def test_ckks_arithmetic_against_numpy(ckks):
    ctx = ckks
    a, b, c = reals(0, ctx.slots), reals(1, ctx.slots), reals(2, ctx.slots)
    x, y = ctx.encrypt(a), ctx.encrypt(b)
    xy = x * y
    assert (xy.level, xy.depth, xy.size) == (1, 1, 2)
    cases = {
        "encrypt": (x, a), "add": (x + y, a + b), "sub": (x - y, a - b), "negate": (-x, -a),
        "add_plain": (x + c, a + c), "sub_plain": (ctx.sub(x, ctx.encode(c)), a - c),
        "mul": (xy, a * b), "mul_plain": (ctx.mul_plain(x, c), a * c), "mul_scalar": (x * 0.5, 0.5 * a),
        "depth_2": (xy * ctx.mul_plain(x, c), a * a * b * c),
        "level_1_add_plain": (xy + c, a * b + c), "level_1_mul_plain": (ctx.mul_plain(xy, c), a * b * c),
        "levels_aligned": (xy + x, a * b + a), "levels_aligned_sub": (ctx.mod_switch(y) - xy, b - a * b),
        "deferred_rescale": (ctx.mul(x, y, rescale=False) + ctx.mul(y, x, rescale=False), 2 * a * b),
        "deferred_relin": (ctx.rescale(ctx.relinearize(ctx.mul(x, y, relin=False, rescale=False))), a * b),
        "x_minus_x": (x - x, 0 * a), "mul_plain_zero": (ctx.mul_plain(x, np.zeros(ctx.slots)), 0 * a),
        "mod_switch": (ctx.drop_level(x, 2), a),
    }
    for name, (ct, expected) in cases.items():
        assert np.max(np.abs(ctx.decrypt(ct) - expected)) < tol(ctx), name
    z = a + 1j * b
    assert np.max(np.abs(ctx.decrypt(ctx.encrypt(z), complex=True) - z)) < tol(ctx)
    with pytest.raises(he.DepthExhausted):
        xy * xy * xy


def test_ckks_rotations(ckks):
    ctx = ckks
    a = reals(3, ctx.slots)
    x = ctx.encrypt(a)
    for k in STEPS + [4, 12, -4]:
        with ctx.counting() as ops:
            got = ctx.decrypt(ctx.rotate(x, k))
        assert np.max(np.abs(got - np.roll(a, -k))) < tol(ctx, ops["keyswitch"]), k
    got = ctx.decrypt(ctx.rotate(x * x, 2))
    assert np.max(np.abs(got - np.roll(a * a, -2))) < tol(ctx, 1)
    with pytest.raises(he.SchemeError):
        ctx.swap_columns(x)
    with ctx.counting() as ops:
        total = ctx.decrypt(ctx.sum_slots(x))
    assert np.max(np.abs(total - a.sum())) < tol(ctx, ops["keyswitch"]) * ctx.slots


def test_ckks_serialization_and_public_context(ckks):
    ctx = ckks
    a, b = reals(4, ctx.slots), reals(5, ctx.slots)
    pub = ctx.public()
    x = pub.deserialize(ctx.serialize(ctx.encrypt(a)))
    out = pub.rotate(pub.mul_plain(x * pub.encrypt(b), b) + a, 1)
    assert (out.level, pub._level(out.raw)) == (2, 2)
    back = ctx.deserialize(pub.serialize(out))
    assert back.level == 2 and ctx._level(back.raw) == 2
    assert np.max(np.abs(ctx.decrypt(back) - np.roll(a * b * b + a, -1))) < tol(ctx, 1)
    with pytest.raises(he.SecretKeyRequired):
        pub.decrypt(out)
    sizes = ctx.key_sizes()
    assert sizes["ciphertext"] == len(ctx._ser(ctx.encrypt(a).raw)) and sizes["galois_keys"] > 0
    assert pub.noise_budget(out) is None


def test_ckks_inputs_are_not_modified(ckks):
    ctx = ckks
    x, y = ctx.encrypt(reals(6, ctx.slots)), ctx.mul(ctx.encrypt(reals(7, ctx.slots)), 0.5, rescale=False)
    p = ctx.encode(reals(8, ctx.slots))
    before = (ctx.serialize(x), ctx.serialize(y), p.raw.scale, p.raw.mod_level)
    for op in (lambda: x + y, lambda: y - x, lambda: ctx.rescale(y), lambda: ctx.mod_switch(x), lambda: x + p,
               lambda: ctx.mul_plain(x, p), lambda: ctx.rotate(x, 1), lambda: x * x, lambda: -y):
        op()
    assert (ctx.serialize(x), ctx.serialize(y), p.raw.scale, p.raw.mod_level) == before
