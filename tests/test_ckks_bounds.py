"""CKKS magnitude bounds (issue 27, item 1): every ciphertext carries a bound on its values from the
encrypted inputs, and what can outgrow the modulus of its level is refused before it wraps.

A value that wrapped modulo q lands back inside the capacity, so the decrypted magnitude alone could
not tell (Pyfhel, TenSEAL, OpenFHE and rns returned wrong answers with no error; sim raised)."""
import json

import numpy as np
import pytest

import hepkg.he as he
from hepkg.he import envelope
from conftest import CKKS, CKKS_BACKENDS, make_context


@pytest.mark.parametrize("backend", CKKS_BACKENDS)
def test_the_issue_reproduction_raises_on_every_backend(backend):
    """836.66^2 = 7e5 at level 1 is fine (2^59 fits); dropped to the last level (2^19) it wrapped to -348576."""
    c = he.context(backend, "ckks-16384-small")
    x = c.encrypt(np.full(c.slots, 836.66))
    sq = c.mul(x, x)
    assert sq.bound == pytest.approx(836.66 ** 2)
    np.testing.assert_allclose(c.decrypt(sq, 1), [836.66 ** 2], rtol=1e-6)   # level 1 holds it, rns included
    with pytest.raises(he.ScaleOverflow, match=r"700000.*524288 = 2\^19.*level 2 of 2"):
        c.decrypt(c.drop_level(sq, 1), 1)
    with pytest.raises(he.ScaleOverflow, match=r"2\^19.*level 2"):
        c.mul_plain(sq, 1.0)                                                  # a product lands there too
    np.testing.assert_allclose(c.decrypt(c.mul_plain(sq, 1e-3), 1), [836.66 ** 2 * 1e-3], rtol=1e-5)


def test_depth9_sum_of_25000_raises():
    """At ckks-32768-d9 the last level holds 2^14: 25000 decrypted as -7768 there."""
    backend = "openfhe" if he.availability()["openfhe"] else "rns"
    c = he.context(backend, "ckks-32768-d9")
    x = c.encrypt(np.full(4, 12500.0))
    y = c.add(x, x)
    assert c.decrypt(y, 1)[0] == pytest.approx(25000, rel=1e-6)
    low = c.drop_level(y, 8)
    with pytest.raises(he.ScaleOverflow, match=r"25000.*16384 = 2\^14.*level 9 of 9"):
        c.drop_level(low, 1)
    c.close()


@pytest.mark.parametrize("backend", ["sim"] + [b for b in ("openfhe",) if he.availability()[b]])
def test_face_search_membership_of_all_matches_at_kappa_10_is_counted_or_refused(tmp_path, backend):
    """Every entry matching at kappa 10 (toy-ckks-4096-d11: the last level holds 2^9): the count of 1024
    decrypted as about 0 ("no match") on OpenFHE. The unweighted sum is now refused; the server's membership
    weights each comparison by 1 / slots (free) and counts all 1024."""
    from hepkg.datasets.faces import synthetic_database
    from hepkg.facesearch.chebyshev import compare
    from hepkg.facesearch.protocol import Client, Enroller, Server, key_steps
    from hepkg.linalg.rotsum import rotate_and_sum

    l, K, kappa = 128, 1024, 10
    ctx = he.context(backend, "toy-ckks-4096-d11", rotations=key_steps("hydia", l, 2048), policy="exact",
                     insecure=True)
    inst = synthetic_database(K, K, l, seed=3)
    db = Enroller(ctx.public()).enroll(inst.database, tmp_path / "db")
    server, client = Server(ctx.public(), db), Client(ctx)
    q = client.query(inst.query)
    values = client.indicators(server.identify(q, "hydia", kappa), db.layout)
    assert (values > 0.5).all()
    assert client.count(server.membership(q, "hydia", kappa)) == pytest.approx(values.sum(), abs=0.05)
    scores = next(server.compared(q, "hydia", None))
    with pytest.raises(he.ScaleOverflow, match=r"2\^9 that a ciphertext at level 11 of 11"):
        rotate_and_sum(server.ctx, compare(server.ctx, scores, kappa), 2048)


@pytest.mark.parametrize("params, kappa", [("ckks-32768-d9", 8), ("ckks-32768-d11", 10)])
def test_chebyshev_comparison_of_unit_scores_fits_at_the_face_search_sets(params, kappa):
    """Scores in [-1, 1] through the comparison at the paper's sets: the proven bounds (|T_i| <= 1, the
    polynomials' maxima) keep the result well inside the last level's 2^14, at the depth it needs."""
    from hepkg.facesearch.chebyshev import compare, compare_numpy

    ctx = he.context("sim", params)
    x = np.linspace(-1, 1, ctx.slots)
    half = ctx.mul_plain(ctx.encrypt(x / 2), 1.0)
    sums = ctx.sub(ctx.add(ctx.mul_plain(ctx.encrypt(x), 1.0), half), half)   # scores at level 1, as a sum leaves them
    assert sums.bound == 2.0                                                   # interval arithmetic: 1 + 1/2 + 1/2
    out = compare(ctx, sums, kappa)
    exact = compare_numpy(x, kappa)
    assert np.abs(exact).max() <= out.bound <= 1.1 * np.abs(exact).max()
    np.testing.assert_allclose(ctx.decrypt(out), exact, atol=1e-6)


@pytest.mark.parametrize("backend", CKKS_BACKENDS)
def test_bounds_follow_the_operations(backend):
    ctx = make_context(backend, "ckks")
    a, b = ctx.encrypt([0.5, -3.0]), ctx.encrypt([2.0, 1.0])
    assert (a.bound, b.bound) == (3.0, 2.0)
    assert ctx.add(a, b).bound == ctx.sub(a, b).bound == 5.0
    assert ctx.add(a, [0.25, -4.0]).bound == 7.0
    assert ctx.negate(a).bound == ctx.rotate(a, 1).bound == ctx.relinearize(a).bound == 3.0
    assert ctx.mul(a, b).bound == 6.0 and ctx.mul(a, b, rescale=False).bound == 6.0
    assert ctx.mul_plain(a, [0.5, -2.0]).bound == 6.0
    assert ctx.dot_plain([a, b], [2.0, 3.0]).bound == 12.0
    assert ctx.drop_level(a, 1).bound == 3.0
    assert ctx.sum_slots(a).bound == 3.0 * ctx.slots


@pytest.mark.parametrize("backend", CKKS_BACKENDS)
def test_a_sum_within_capacity_decrypts_correctly(backend):
    """sum_slots multiplies the bound by the slots summed: 0.01 x 8192 slots = 82 fits at the last level."""
    ctx = make_context(backend, "ckks")
    v = np.random.default_rng(0).uniform(-0.01, 0.01, ctx.slots)
    total = ctx.drop_level(ctx.sum_slots(ctx.encrypt(v)), ctx.max_level)
    assert total.bound == pytest.approx(0.01 * ctx.slots, rel=1e-2)
    assert ctx.decrypt(total, 1)[0] == pytest.approx(v.sum(), abs=ctx.slots * CKKS.ckks_tolerance)


def _repack(ctx, blob, **change):
    meta, payload = envelope.unpack(blob, "ciphertext", key=ctx.session_key)
    meta.pop("kind")
    meta.update(change)
    meta = {k: v for k, v in meta.items() if v is not _DROP}
    return envelope.pack("ciphertext", meta, bytes(payload), key=ctx.session_key)


_DROP = object()


@pytest.mark.parametrize("backend", CKKS_BACKENDS)
def test_the_bound_travels_with_serialized_ciphertexts_and_is_authenticated(backend):
    ctx = make_context(backend, "ckks")
    pub = ctx.public()
    ct = pub.mul(pub.encrypt([836.66]), pub.encrypt([836.66]))     # a server's result at level 1
    blob = pub.serialize(ct)
    back = ctx.deserialize(blob)
    assert back.bound == ct.bound == pytest.approx(836.66 ** 2)
    with pytest.raises(he.ScaleOverflow, match=r"2\^19"):
        ctx.drop_level(back, 1)                                     # the client still refuses the drop
    head = json.dumps(envelope.peek(blob), sort_keys=True).encode()
    at = blob.index(head) + head.index(b'"bound"')
    with pytest.raises(he.CorruptedData, match="authentication failed"):
        ctx.deserialize(blob[:at + 9] + b"1" + blob[at + 10:])    # a digit of the bound altered in transit
    for change, problem in [(dict(bound=_DROP), "'bound' is missing"), (dict(bound=None), "'bound'"),
                            (dict(bound=-1.0), "'bound'"), (dict(bound="1"), "'bound'"), (dict(bound=True), "'bound'"),
                            (dict(bound=1e300), "'bound'"), (dict(bound=1e6, level=ctx.max_level), "'bound'")]:
        with pytest.raises(he.CorruptedData, match=problem):
            ctx.deserialize(_repack(ctx, blob, **change))


def test_a_bfv_ciphertext_carries_no_bound():
    ctx = make_context("sim", "bfv")
    blob = ctx.serialize(ctx.encrypt([1, 2]))
    assert ctx.deserialize(blob).bound is None
    with pytest.raises(he.CorruptedData, match="'bound'"):
        ctx.deserialize(_repack(ctx, blob, bound=1.0))
    with pytest.raises(he.SchemeError, match="CKKS only"):
        ctx.tighten_bound(ctx.encrypt([1]), 1.0)


def test_tighten_bound_only_tightens_and_takes_a_number():
    ctx = make_context("sim", "ckks")
    ct = ctx.encrypt([0.5, -3.0])
    assert ctx.tighten_bound(ct, 1.0).bound == 1.0 and ctx.tighten_bound(ct, 5.0).bound == 3.0
    assert ctx.tighten_bound(ct, float("inf")) is ct
    assert ctx.tighten_bound(ct, 1.0).raw is ct.raw
    for bad in (-1.0, float("nan"), "1", True, None):
        with pytest.raises(ValueError, match="non-negative number"):
            ctx.tighten_bound(ct, bad)


def test_a_weighted_comparison_lets_a_membership_sum_fit_at_the_last_level():
    """ckks-32768-d9, kappa 8 from level 1: the comparison ends at the last level (2^14), where the sum of
    16384 comparisons (bounded by 1.02 each) cannot be proven to fit; weight = 1/16384 makes it fit."""
    from hepkg.facesearch.chebyshev import compare, compare_numpy

    ctx = he.context("sim", "ckks-32768-d9", rotations="all")
    x = np.random.default_rng(1).uniform(-1, 1, ctx.slots)
    scores = ctx.mul_plain(ctx.encrypt(x), 1.0)
    with pytest.raises(he.ScaleOverflow, match=r"2\^14 that a ciphertext at level 9 of 9"):
        ctx.sum_slots(compare(ctx, scores, 8))
    w = 1.0 / ctx.slots
    total = ctx.sum_slots(compare(ctx, scores, 8, weight=w))
    assert total.level == ctx.max_level and total.bound < 2
    assert ctx.decrypt(total, 1)[0] / w == pytest.approx(compare_numpy(x, 8).sum(), abs=1e-3)
    for path in ("cpu", "gpu"):
        np.testing.assert_allclose(compare_numpy(x, 8, path=path, weight=w), w * compare_numpy(x, 8, path=path))
        np.testing.assert_allclose(ctx.decrypt(compare(ctx, scores, 8, path=path, weight=w)),
                                   w * compare_numpy(x, 8, path=path), atol=1e-9)
    for bad in (0, -1.0, float("inf"), True, "1"):
        with pytest.raises(ValueError, match="weight"):
            compare(ctx, scores, 8, weight=bad)


def test_a_ciphertext_built_without_a_bound_is_refused():
    ctx = make_context("sim", "ckks")
    ct = ctx.encrypt([1.0])
    with pytest.raises(he.ScaleOverflow, match="no magnitude bound"):
        ctx.decrypt(he.Ciphertext(ct.raw, ctx))
    assert ctx.decrypt(he.Ciphertext(ct.raw, ctx, bound=1.0), 1)[0] == pytest.approx(1.0)
