"""Tall and wide MatMul (SophOMR Alg. 1, 7, 8) against numpy, with Tables 1-2's costs."""
import numpy as np
import pytest

import hepkg.he as he
from hepkg.linalg import rectangular as R
from conftest import BFV_BACKENDS

T, N_SLOTS = 12289, 1024


def _context(backend, steps):
    return he.context(backend, "toy-bfv-1024", rotations=steps, policy="exact", swap=True, insecure=True)


@pytest.mark.parametrize("backend", BFV_BACKENDS)
@pytest.mark.parametrize("b", [1, 4, 5, 16])         # b = k = 16 is Alg. 7 (one key); 5 does not divide 16
def test_tall_matches_numpy_and_table2(backend, b):
    rng = np.random.default_rng(b)
    k, N = 16, 2500                                   # three blocks, the last one partial
    ctx = _context(backend, R.tall_steps(k, b))
    pub = ctx.public()
    v, mats = rng.integers(0, T, k), [rng.integers(0, T, (N, k)) for _ in range(2)]
    ct = pub.deserialize(ctx.serialize(ctx.encrypt(R.sparse_pack(v, N_SLOTS))))
    with pub.counting() as ops:
        outs = R.tall_matvec(pub, ct, mats, N, k, b=b)
    for m, blocks in zip(mats, outs):
        got = np.concatenate([ctx.decrypt(ctx.deserialize(pub.serialize(c)), signed=False) for c in blocks])
        np.testing.assert_array_equal(got[:N] % T, R.tall_numpy(m, v, N, k, T).astype(np.int64))
    want = R.tall_counts(N, k, N_SLOTS, b, matrices=2)
    assert (ops["mul_pt"], ops["rotate"]) == (want["mul_pt"], want["rotate"])
    assert want["rotation_keys"] == (1 if b in (1, k) else 2)


@pytest.mark.parametrize("backend", BFV_BACKENDS)
@pytest.mark.parametrize("K,b", [(4, 2), (32, 4), (32, 6), (512, 32)])
def test_wide_matches_numpy_and_table1(backend, K, b):
    rng = np.random.default_rng(K)
    N = 2100
    ctx = _context(backend, R.wide_steps(K, b, N_SLOTS))
    v = rng.integers(0, 2, N)
    entries = lambda r, c: (r * 7919 + c * c) % T       # a matrix given by its entries, never materialised
    cts = [ctx.encrypt(np.pad(v, (0, 3 * N_SLOTS - N))[i * N_SLOTS:(i + 1) * N_SLOTS]) for i in range(3)]
    with ctx.counting() as ops:
        out = R.wide_matvec(ctx, cts, entries, K, N, b=b)
    got = ctx.decrypt(out, signed=False)[:K] % T
    np.testing.assert_array_equal(got, R.wide_numpy(entries, v, K, N, T).astype(np.int64))
    want = R.wide_counts(K, N, N_SLOTS, b)
    assert (ops["mul_pt"], ops["rotate"], ops["swap"]) == (want["mul_pt"], want["rotate"], 1)


@pytest.mark.parametrize("backend", BFV_BACKENDS)
def test_wide_plains_encoded_once_give_the_same_product(backend):
    """The diagonals encoded once (wide_plains) serve any vector: the product is numpy's, and encodes nothing."""
    rng = np.random.default_rng(3)
    K, N, b = 32, 2100, 4
    ctx = _context(backend, R.wide_steps(K, b, N_SLOTS))
    entries = lambda r, c: (r * 7919 + c * c) % T
    plains = R.wide_plains(ctx, entries, K, N, level=0, b=b)
    for _ in range(2):
        v = rng.integers(0, T, N)
        cts = [ctx.encrypt(np.pad(v, (0, 3 * N_SLOTS - N))[i * N_SLOTS:(i + 1) * N_SLOTS]) for i in range(3)]
        with ctx.counting() as ops:
            out = R.wide_matvec(ctx, cts, None, K, N, b=b, plains=plains)
        np.testing.assert_array_equal(ctx.decrypt(out, signed=False)[:K] % T,
                                      R.wide_numpy(entries, v, K, N, T).astype(np.int64))
        assert ops["encode"] == 0 and ops["mul_pt"] == R.wide_counts(K, N, N_SLOTS, b)["mul_pt"]
    with pytest.raises(ValueError, match="plains holds 7 giant steps, the product has 8"):
        R.wide_matvec(ctx, cts, None, K, N, b=b, plains=plains[:-1])


@pytest.mark.parametrize("backend", BFV_BACKENDS)
@pytest.mark.parametrize("b", [1, 16, 512])
def test_square_matches_numpy(backend, b):
    rng = np.random.default_rng(b)
    ctx = _context(backend, R.tall_steps(N_SLOTS // 2, b))
    pub = ctx.public()
    v = rng.integers(0, T, N_SLOTS)
    entries = lambda r, c: (r * 31 + c * (c + 5) + r * c) % T   # a dense map mixing both rows
    ct = pub.deserialize(ctx.serialize(ctx.encrypt(v)))
    with pub.counting() as ops:
        out = R.square_matvec(pub, ct, entries, b=b)
    got = ctx.decrypt(ctx.deserialize(pub.serialize(out)), signed=False) % T
    np.testing.assert_array_equal(got, R.square_numpy(entries, v, N_SLOTS, T).astype(np.int64))
    want = R.square_counts(N_SLOTS, b)
    assert (ops["mul_pt"], ops["rotate"], ops["swap"]) == (want["mul_pt"], want["rotate"], 1)


def test_default_baby_steps_and_steps():
    assert R.tall_steps(1024, 32) == [1, 32] and R.tall_steps(16, 16) == [1] and R.tall_steps(16, 1) == [1]
    assert R.wide_steps(16384, 128, 65536) == [1, 128, 16384]
    # Table 1 at SophOMR's compression: 16,384 products and 257 rotations plus the swap (the paper's count)
    assert R.wide_counts(16384, 65536, 65536, 128) == {"mul_pt": 16384, "rotate": 255, "swap": 1, "rotation_keys": 4}
    # the authors' baby steps where no power of two is as cheap: affine at N = 2^16 (b1 = 46, g1 = 23: 45 + 2 x 22),
    # compression at N = 2^19 (s = 8, b2 = 46, g2 = 357); a power of two on a tie (b2 = 128 at N = 2^16)
    assert R.cheapest_b(1024, 1, 2) == 46 and R.tall_counts(65536, 1024, 65536, 46, matrices=2)["rotate"] == 89
    assert R.tall_steps(1024, 46) == [1, 46] and R.cheapest_b(1024, 1, 16) == 128 and R.cheapest_b(16384, 1, 1) == 128
    assert R.cheapest_b(16384, 8, 1) == 46 and R.wide_counts(16384, 2 ** 19, 65536, 46)["rotate"] == 8 * 45 + 356 + 1
    # PerfOMR's SlotToCoeff at n = 2^15 with the authors' 128 baby steps: 2 x 127 + 127 rotations, 2^15 products
    assert R.square_counts(32768, 128) == {"mul_pt": 32768, "rotate": 381, "swap": 1, "rotation_keys": 3}


def test_bad_shapes_raise():
    ctx = _context("sim", [1, 4])
    ct = ctx.encrypt(R.sparse_pack(np.arange(16), N_SLOTS))
    with pytest.raises(ValueError, match="must divide n/2"):
        R.tall_matvec(ctx, ct, [np.zeros((10, 24), np.int64)], 10, 24)
    with pytest.raises(ValueError, match="expected \\(N, k\\)"):
        R.tall_matvec(ctx, ct, [np.zeros((10, 16), np.int64)], 11, 16)
    with pytest.raises(ValueError, match="b must be an integer in \\[1, k = 16\\]"):
        R.tall_matvec(ctx, ct, [np.zeros((10, 16), np.int64)], 10, 16, b=17)
    with pytest.raises(ValueError, match="needs 2 ciphertexts"):
        R.wide_matvec(ctx, [ct], np.zeros((4, 1500), np.int64), 4, 1500)
    with pytest.raises(ValueError, match="2-D integer array"):
        R.wide_matvec(ctx, [ct], np.zeros((4, 1000)), 4, 1000)
    with pytest.raises(ValueError, match="must divide n/2"):
        R.sparse_pack(np.arange(3), N_SLOTS)
