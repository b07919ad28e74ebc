"""The OpenFHE backend: every op against numpy, BFV/BGV bit for bit against ``sim``."""
import functools
import os
import subprocess
import sys

import numpy as np
import pytest

ofhe = pytest.importorskip("openfhe")

import hepkg.he as he  # noqa: E402
from hepkg.he import ParamSet, envelope  # noqa: E402
from conftest import received, run_python  # noqa: E402

N = 4096
T = 65537
INT = {s: ParamSet(name=f"test-openfhe-{s}", scheme=s, n=N, plain_modulus=T, qi_bits=(60, 60, 60, 60), depth=2,
                   source="hepkg tests (HEStd_NotSet)") for s in ("bfv", "bgv")}
CKKS = ParamSet(name="test-openfhe-ckks", scheme="ckks", n=N, scale_bits=40, qi_bits=(60, 40, 40, 60), depth=2,
                source="hepkg tests (HEStd_NotSet)")
EXACT = [1, 5, 100, N // 2 - 1]


@functools.lru_cache(maxsize=None)
def ctx(backend, scheme, policy="pow2"):
    params = CKKS if scheme == "ckks" else INT[scheme]
    rotations = "all" if policy == "pow2" else EXACT
    return he.context(backend, params, rotations=rotations, policy=policy, swap=scheme != "ckks", insecure=True)


def center(x):
    x = np.asarray(x, dtype=object) % T
    return np.where(x > T // 2, x - T, x).astype(np.int64)


def rows(x, k):
    return np.roll(x.reshape(2, -1), -k, axis=1).reshape(-1)


def ckks_tol(magnitude=1.0):
    """2^20 ulps of the scale, times the size of the values involved."""
    return magnitude * 2.0 ** -(CKKS.scale_bits - 20)


@pytest.fixture(params=["bfv", "bgv"])
def scheme(request):
    return request.param


# ---------------------------------------------------------------- BFV / BGV
def test_integer_ops_match_numpy_and_sim(scheme):
    rng = np.random.default_rng(1)
    a, b = rng.integers(-(T // 2), T // 2, N), rng.integers(-(T // 2), T // 2, N)
    A, B = a.astype(object), b.astype(object)
    expected = {
        "add": center(A + B), "sub": center(A - B), "neg": center(-A), "mul": center(A * B),
        "mul_deferred": center(A * B + A * A), "mul_pt": center(A * B), "add_pt": center(A + B),
        "sub_pt": center(A - B), "rot3": center(rows(A, 3)), "rot-7": center(rows(A, -7)),
        "rot1000": center(rows(A, 1000)), "swap": center(np.concatenate([A[N // 2:], A[:N // 2]])),
        "depth2": center(A * B * A), "serialized": center(A * B),
        "mod_switch": center(A), "ms_add": center(A + B), "ms_mul": center(A * B), "ms_mul_pt": center(A * B),
    }
    for c in (ctx("openfhe", scheme), ctx("sim", scheme)):
        ca, cb = c.encrypt(a), c.encrypt(b)
        ms = c.mod_switch(ca)
        got = {
            "add": c.add(ca, cb), "sub": c.sub(ca, cb), "neg": c.negate(ca), "mul": c.mul(ca, cb),
            "mul_deferred": c.relinearize(c.add(c.mul(ca, cb, relin=False), c.mul(ca, ca, relin=False))),
            "mul_pt": c.mul_plain(ca, b), "add_pt": c.add(ca, c.encode(b)), "sub_pt": c.sub(ca, b),
            "rot3": c.rotate(ca, 3), "rot-7": c.rotate(ca, -7), "rot1000": c.rotate(ca, 1000),
            "swap": c.swap_columns(ca), "depth2": c.mul(c.mul(ca, cb), ca),
            "serialized": c.deserialize(c.serialize(c.mul(ca, cb))),
            "mod_switch": ms, "ms_add": c.add(ms, cb), "ms_mul": c.mul(ms, cb), "ms_mul_pt": c.mul_plain(ms, b),
        }
        for name, ct in got.items():
            np.testing.assert_array_equal(c.decrypt(ct), expected[name], err_msg=f"{c.backend} {scheme} {name}")
    assert ms.level == 1


def test_bindings_without_the_array_encoding_are_given_lists(scheme, monkeypatch):
    """Bindings that convert a sequence element by element (openfhe-python before 1.6) get plaintext values as a
    list, faster there than an array: the same products, a plaintext re-encoded at a lower level included."""
    from hepkg.he.backends import openfhe as backend
    passed, integers = [], backend._integers
    monkeypatch.setattr(backend, "_ARRAY_ENCODE", False)
    monkeypatch.setattr(backend, "_BUFFER_ENCODE", None)
    monkeypatch.setattr(backend, "_integers", lambda v: passed.append(type(integers(v))) or integers(v))
    _products_right(scheme)
    assert passed and set(passed) == {list}


def _products_right(scheme):
    """Plaintext products, a plaintext re-encoded at a lower level included, decrypt to numpy's."""
    c = ctx("openfhe", scheme)
    rng = np.random.default_rng(2)
    a, b = rng.integers(-(T // 2), T // 2, N), rng.integers(-(T // 2), T // 2, N)
    ca = c.encrypt(a)
    pt = c.encode(b)
    for ct in (c.mul_plain(ca, pt), c.mul_plain(c.mod_switch(ca), pt)):
        np.testing.assert_array_equal(c.decrypt(ct), center(a.astype(object) * b))


def test_the_buffer_encoder_gets_contiguous_int64_slots_at_the_level(scheme, monkeypatch):
    """Where hepkg_openfhe_encode was built for the bindings, it gets every packed plaintext's slots (a C-order
    int64 array, the level as given) and the bindings' own MakePackedPlaintext none."""
    from hepkg.he.backends import openfhe as backend
    calls = []

    def packed(cc, values, depth, level):
        calls.append((str(values.dtype), values.flags.c_contiguous, depth, level))
        return cc.MakePackedPlaintext(values.tolist(), depth, level)
    monkeypatch.setattr(backend, "_BUFFER_ENCODE", packed)
    monkeypatch.setattr(backend, "_integers", lambda v: pytest.fail("the bindings' encoding was called"))
    _products_right(scheme)
    assert {c[:3] for c in calls} == {("int64", True, 1)}
    assert {c[3] for c in calls} == ({0, 1} if scheme == "bfv" else {0})


def test_the_buffer_encoder_is_used_only_for_the_bindings_it_was_built_for(monkeypatch, tmp_path):
    """A hepkg_openfhe_encode built for another openfhe module (another ABI) is not loaded into this one's
    plaintexts; bindings that read buffers themselves need none."""
    import types
    from hepkg.he.backends import openfhe as backend
    binding = os.path.realpath(backend.ofhe.openfhe.__file__)
    for built_for, array, used in ((binding, False, True), (str(tmp_path / "other.so"), False, False),
                                   (binding, True, False)):
        module = types.SimpleNamespace(packed=object(), built_for=built_for)
        monkeypatch.setitem(sys.modules, "hepkg_openfhe_encode", module)
        monkeypatch.setattr(backend, "_ARRAY_ENCODE", array)
        assert (backend._buffer_encoder() is module.packed) is used, (built_for, array)
    monkeypatch.setitem(sys.modules, "hepkg_openfhe_encode", None)       # not built: ImportError
    monkeypatch.setattr(backend, "_ARRAY_ENCODE", False)
    assert backend._buffer_encoder() is None


def test_unlocked_calls_come_only_from_a_module_built_for_these_bindings_that_has_them(monkeypatch, tmp_path):
    """The calls that release the interpreter lock are taken from a hepkg_openfhe_encode built for the bindings
    imported here and holding all three; an older build (the encoder alone) or one for other bindings gives none."""
    import types
    from hepkg.he.backends import openfhe as backend
    binding = os.path.realpath(backend.ofhe.openfhe.__file__)
    calls = dict(parse_ciphertext=object(), mult_no_relin=object(), add=object())
    for built_for, names, used in ((binding, calls, True), (str(tmp_path / "other.so"), calls, False),
                                   (binding, dict(add=object()), False)):
        module = types.SimpleNamespace(packed=object(), built_for=built_for, **names)
        monkeypatch.setitem(sys.modules, "hepkg_openfhe_encode", module)
        assert (backend._unlocked_calls() is module) is used, (built_for, names)
    monkeypatch.setitem(sys.modules, "hepkg_openfhe_encode", None)
    assert backend._unlocked_calls() is None


def test_ciphertexts_are_parsed_multiplied_and_added_through_the_unlocked_calls(scheme, monkeypatch):
    """Where the unlocked calls exist, parsing, ciphertext products and sums go through them (stand-ins here that
    call the bindings: the module is compiled by make bench's builds), and the results decrypt to numpy's."""
    import types
    from hepkg.he.backends import openfhe as backend
    used = []

    def via(name, fn):
        return lambda *args: used.append(name) or fn(*args)
    monkeypatch.setattr(backend, "_UNLOCKED", types.SimpleNamespace(
        parse_ciphertext=via("parse", lambda data: backend.ofhe.DeserializeCiphertextString(bytes(data), backend._BIN)),
        mult_no_relin=via("mult", lambda cc, a, b: cc.EvalMultNoRelin(a, b)),
        add=via("add", lambda cc, a, b: cc.EvalAdd(a, b))))
    c = ctx("openfhe", scheme)
    rng = np.random.default_rng(4)
    a, b = rng.integers(-(T // 2), T // 2, N), rng.integers(-(T // 2), T // 2, N)
    ca, cb = c.encrypt(a), c.encrypt(b)
    got = c.add(c.mul(c.deserialize(c.serialize(ca)), cb), ca)
    np.testing.assert_array_equal(c.decrypt(got), center(a.astype(object) * b + a))
    assert set(used) == {"parse", "mult", "add"}


def test_parallel_rotations_come_only_from_a_module_built_for_these_bindings(monkeypatch, tmp_path):
    """fast_rotations is taken from a hepkg_openfhe_encode built for the bindings imported here; a build without it
    (before it was added) or for other bindings gives None, and hoisted rotations stay the bindings' own."""
    import types
    from hepkg.he.backends import openfhe as backend
    binding = os.path.realpath(backend.ofhe.openfhe.__file__)
    fast = object()
    for built_for, names, used in ((binding, dict(fast_rotations=fast), True),
                                   (str(tmp_path / "other.so"), dict(fast_rotations=fast), False), (binding, {}, False)):
        monkeypatch.setitem(sys.modules, "hepkg_openfhe_encode", types.SimpleNamespace(built_for=built_for, **names))
        assert (backend._parallel_rotations() is fast) is used, (built_for, names)


def test_hoisted_rotations_go_through_the_parallel_call(scheme, monkeypatch):
    """Where fast_rotations exists, a hoisted rotation hands it the ciphertext, its steps and the cyclotomic order
    (a stand-in here that calls the bindings: the module is compiled by make bench's builds); the rotations
    decrypt to sim's."""
    from hepkg.he.backends import openfhe as backend
    calls = []

    def stand_in(cc, ct, steps, order):
        calls.append(list(steps))
        digits = cc.EvalFastRotationPrecompute(ct)
        return [cc.EvalFastRotation(ct, s, order, digits) for s in steps]
    monkeypatch.setattr(backend, "_PARALLEL_ROTATIONS", stand_in)
    a = np.random.default_rng(5).integers(0, T, N)
    steps = [1, 5, 100, N // 2 - 1]
    fhe, sim = ctx("openfhe", scheme, "exact"), ctx("sim", scheme, "exact")
    got, ref = fhe.rotate_many(fhe.encrypt(a), steps), sim.rotate_many(sim.encrypt(a), steps)
    assert calls == [steps]
    for k in steps:
        np.testing.assert_array_equal(fhe.decrypt(got[k]), sim.decrypt(ref[k]))


def test_rotations_exact_and_hoisted_match_sim(scheme):
    rng = np.random.default_rng(2)
    a = rng.integers(0, T, N)
    steps = [1, 5, 100, -1, 0, N // 2 - 1]
    fhe, sim = ctx("openfhe", scheme, "exact"), ctx("sim", scheme, "exact")
    ct = fhe.encrypt(a)
    with fhe.counting() as ops:
        hoisted = fhe.rotate_many(ct, steps)
    assert ops["hoisted_precompute"] == 1 and ops["rotate"] == 5
    ref = sim.rotate_many(sim.encrypt(a), steps)
    for k in steps:
        got = fhe.decrypt(hoisted[k], signed=False)
        np.testing.assert_array_equal(got, rows(a, k))
        np.testing.assert_array_equal(got, sim.decrypt(ref[k], signed=False))
        if k % (N // 2):
            np.testing.assert_array_equal(got, fhe.decrypt(fhe.rotate(ct, k), signed=False))
    with pytest.raises(he.MissingRotationKey):
        fhe.rotate(ct, 2)


def test_sum_slots_and_swap(scheme):
    v = np.arange(1, 300)
    c = ctx("openfhe", scheme)
    assert np.all(c.decrypt(c.sum_slots(c.encrypt(v))) == center(v.sum()))
    no_swap = he.context("openfhe", INT[scheme], insecure=True)
    with pytest.raises(he.MissingKeyError):
        no_swap.swap_columns(no_swap.encrypt(v))


def test_depth_enforced_and_towers(scheme):
    c = ctx("openfhe", scheme)
    x = c.encrypt(np.arange(10))
    x2 = c.mul(c.mul(x, x), x)
    np.testing.assert_array_equal(c.decrypt(x2, 10), center(np.arange(10, dtype=object) ** 3))
    with pytest.raises(he.DepthExhausted):
        c.mul(x2, x)
    low = c.mod_switch(c.mod_switch(x))  # OpenFHE chose depth + 1 = 3 towers: two can go
    np.testing.assert_array_equal(c.decrypt(low, 10), np.arange(10))
    with pytest.raises(he.DepthExhausted):
        c.mod_switch(low)


def test_inputs_not_modified(scheme):
    c = ctx("openfhe", scheme)
    a = c.encrypt(np.arange(20))
    pt = c.encode(np.arange(20))
    before = c.serialize(a)
    for op in (lambda: c.add(a, a), lambda: c.mul(a, pt), lambda: c.rotate(a, 3), lambda: c.swap_columns(a),
               lambda: c.mod_switch(a), lambda: c.rotate_many(a, [1, 2]),
               lambda: c.relinearize(c.mul(a, a, relin=False)), lambda: c.add(c.mod_switch(a), pt)):
        op()
    assert c.serialize(a) == before
    np.testing.assert_array_equal(c.decrypt(c.encrypt(pt), 20), np.arange(20))


def test_public_context_evaluates_but_cannot_decrypt(scheme):
    c = ctx("openfhe", scheme)
    pub = c.public()
    assert not pub.has_secret and pub.built == c.built
    data = c.to_bytes()
    assert ofhe.Serialize(c._sk, ofhe.BINARY)[-4096:] not in data  # no secret-key material
    v = np.arange(1, 101)
    out = pub.swap_columns(pub.rotate(pub.mul(pub.encrypt(v), c.encrypt(v)), 1))
    expected = center(rows(np.pad(v.astype(object) ** 2, (0, N - v.size)), 1))
    np.testing.assert_array_equal(c.decrypt(c.deserialize(pub.serialize(out))),
                                  np.concatenate([expected[N // 2:], expected[:N // 2]]))
    with pytest.raises(he.SecretKeyRequired):
        pub.decrypt(out)


def test_public_context_in_a_fresh_process(tmp_path):
    c = ctx("openfhe", "bfv")
    (tmp_path / "ctx").write_bytes(c.to_bytes())
    (tmp_path / "ct").write_bytes(c.serialize(c.encrypt(np.arange(8))))
    script = ("import sys, pathlib, hepkg.he as he; d = pathlib.Path(sys.argv[1]); "
              "b = (d / 'ctx').read_bytes(); s = he.load_context(b, fingerprint=he.fingerprint(b)); x = s.deserialize((d / 'ct').read_bytes()); "
              "(d / 'out').write_bytes(s.serialize(s.rotate(s.mul(x, x), 1)))")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=60)
    out = c.deserialize((tmp_path / "out").read_bytes())
    np.testing.assert_array_equal(c.decrypt(out, 7), np.arange(1, 8) ** 2)


def _then_a_late_product(script: str, tmp_path, refusal: str) -> None:
    """``script`` in a fresh interpreter, then a new context of INT['bfv']'s parameters there squaring 0..7:
    ``script`` must print ``refusal`` and the squares must come back right."""
    p = INT["bfv"]
    out = run_python(script + f"""
p = ParamSet(name="p", scheme="bfv", n={p.n}, plain_modulus={p.plain_modulus}, qi_bits={p.qi_bits}, depth=2)
late = he.context("openfhe", p, insecure=True)
x = late.encrypt(np.arange(8))
print(late.decrypt(late.mul(x, x), 8).tolist())
""", tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert refusal in out.stdout
    assert out.stdout.strip().endswith(str((np.arange(8) ** 2).tolist()))


def test_a_ciphertext_of_parameters_new_to_the_process_leaves_no_broken_context(tmp_path):
    """OpenFHE keeps the first crypto context it meets per parameter set and hands it to every context built with
    them later; one met in a received ciphertext used to be kept without its CRT tables (parsed with their
    precomputation off), and a context built afterwards with those parameters crashed in Encrypt (SIGSEGV).
    Such a payload in an authenticated envelope (parsed without a guard's child) is now refused unparsed, and the
    later context computes right."""
    c = ctx("openfhe", "bfv")
    (tmp_path / "ct").write_bytes(ofhe.Serialize(c.encrypt(np.arange(8)).raw, ofhe.BINARY))
    script = """
import pathlib, sys
import numpy as np
import hepkg.he as he
from hepkg.he import ParamSet, envelope
other = he.context("openfhe", "toy-bfv-1024", insecure=True)
meta, _ = envelope.unpack(other.serialize(other.encrypt([1])), "ciphertext", key=other.session_key)
meta.pop("kind")
blob = envelope.pack("ciphertext", meta, (pathlib.Path(sys.argv[1]) / "ct").read_bytes(), key=other.session_key)
try:
    other.deserialize(blob)
except he.CorruptedData as exc:
    print("refused:", exc)
"""
    _then_a_late_product(script, tmp_path,
                         "refused: the ciphertext payload carries another crypto context than toy-bfv-1024's")


def test_keys_carrying_an_altered_crypto_context_are_refused_before_they_change_later_products(tmp_path):
    """Each OpenFHE key carries a copy of its crypto context. A Galois-key copy with a plaintext root of unity set
    (the field after t; fuzz_keys' mutation 208 wrote 52 there at N = 8192) was registered as a crypto context of
    its own and the forged context accepted; after a context of another ring was built, a new context of these
    parameters encrypted and decrypted right and multiplied wrong (81 here: order 2^14, not the 2N-th root the
    encoding needs). Such keys are refused (in the guard's child, before the receiver parses them), and the
    later context multiplies right."""
    p = INT["bfv"]
    maker = he.context("openfhe", p, rotations=[1], insecure=True)
    meta, payload = envelope.unpack(maker.to_bytes(), "context")
    parts = envelope.unframe(payload, 4)
    root = parts[3].index(p.plain_modulus.to_bytes(8, "little") + bytes(8)) + 8
    parts[3] = parts[3][:root] + (81).to_bytes(8, "little") + parts[3][root + 8:]
    meta.pop("kind")
    (tmp_path / "forged").write_bytes(envelope.pack("context", meta, envelope.frame(parts)))
    script = f"""
import pathlib, sys
import numpy as np
import hepkg.he as he
from hepkg.he import ParamSet
data = (pathlib.Path(sys.argv[1]) / "forged").read_bytes()
try:
    he.load_context(data, fingerprint=he.fingerprint(data))
    print("accepted")
except he.CorruptedData as exc:
    print("refused:", exc)
half = ParamSet(name="half", scheme="bfv", n={p.n // 2}, plain_modulus={p.plain_modulus}, qi_bits=(60, 60, 60), depth=1)
he.context("openfhe", half, insecure=True)
"""
    _then_a_late_product(script, tmp_path, "refused: parsing the OpenFHE public context's evaluation keys registered "
                                           "another crypto context")


@pytest.mark.parametrize("lists_maps", [True, False])
def test_in_process_public_context_shares_keys_and_refuses_when_absent(lists_maps, monkeypatch):
    """public() refers to the keys in OpenFHE's process-wide maps; the same payload where those keys are
    gone (another process, or every context of the tag closed) is refused by name, also where the bindings
    cannot list the maps (``lists_maps`` False, as before openfhe-python 1.6)."""
    from hepkg.he.backends import openfhe
    monkeypatch.setattr(openfhe, "_LISTS_MAPS", lists_maps)
    c = he.context("openfhe", INT["bgv"], rotations=EXACT, policy="exact", insecure=True)
    pub = c.public()
    c._in_process = True  # the payload public() builds
    try:
        shared = c.to_bytes()
    finally:
        c._in_process = False
    assert len(shared) < len(c.to_bytes()) // 4  # no serialized keys in it
    v = np.arange(1, 9)
    np.testing.assert_array_equal(c.decrypt(pub.rotate(pub.mul(pub.encrypt(v), pub.encrypt(v)), 5), 3),
                                  center(v[5:8] ** 2))
    assert c.key_sizes()["galois_keys"] == len(ofhe.SerializeEvalAutomorphismKeyString(ofhe.BINARY, c._tag))
    pub.close()
    c.close()
    with pytest.raises(he.CorruptedData, match="held in this process"):
        received(shared, guard=False)


# ---------------------------------------------------------------- CKKS
def test_ckks_ops_match_numpy():
    c = ctx("openfhe", "ckks")
    rng = np.random.default_rng(3)
    s = c.slots
    a = rng.uniform(-1, 1, s) + 1j * rng.uniform(-1, 1, s)
    b = rng.uniform(-1, 1, s)
    ca, cb = c.encrypt(a), c.encrypt(b)
    prod = c.mul(ca, cb)
    cases = {
        "enc": (ca, a), "add": (c.add(ca, cb), a + b), "sub": (c.sub(ca, cb), a - b), "neg": (-ca, -a),
        "mul": (prod, a * b), "mul_pt": (c.mul_plain(ca, b), a * b), "add_pt": (c.add(ca, b), a + b),
        "add_mixed_levels": (c.add(prod, ca), a * b + a), "sub_mixed_levels": (c.sub(ca, prod), a - a * b),
        "mul_mixed_levels": (c.mul(prod, ca), a * a * b),
        "pt_level0_on_level1": (c.mul_plain(prod, c.encode(b)), a * b * b),
        "deferred": (c.add(c.mul(ca, cb, rescale=False), c.mul(ca, ca, rescale=False)), a * b + a * a),
        "rot": (c.rotate(ca, 7), np.roll(a, -7)), "rot-3": (c.rotate(ca, -3), np.roll(a, 3)),
        "mod_switch": (c.mod_switch(ca), a), "serialized": (c.deserialize(c.serialize(prod)), a * b),
    }
    cases.update({f"hoisted{k}": (r, np.roll(a, -k)) for k, r in c.rotate_many(ca, [1, 2, -1, 64]).items()})
    for name, (ct, ref) in cases.items():
        err = np.max(np.abs(c.decrypt(ct, complex=True) - ref))
        assert err < ckks_tol(max(1.0, np.max(np.abs(ref)))), f"{name}: error {err:g}"
    # sum_slots adds the encoding error of all slots: sqrt(slots) times one slot's
    total = c.decrypt(c.sum_slots(cb))
    assert np.max(np.abs(total - b.sum())) < ckks_tol(np.sqrt(s))
    assert c.mod_switch(ca).level == 1 and prod.level == 1
    with pytest.raises(he.DepthExhausted):
        c.mul(c.mul(prod, prod), prod)


def test_ckks_public_context_and_exact_hoisting():
    c = ctx("openfhe", "ckks", "exact")
    v = np.linspace(-1, 1, c.slots)
    pub = c.public()
    ct = pub.encrypt(v)
    raws = pub._rotate_hoisted(ct.raw, [1, 5, 100])
    for k, raw in zip([1, 5, 100], raws):
        hoisted = c.decrypt(he.Ciphertext(raw, c, bound=ct.bound))  # a rotation keeps the bound
        np.testing.assert_allclose(hoisted, c.decrypt(pub.rotate(ct, k)), atol=ckks_tol())
        np.testing.assert_allclose(hoisted, np.roll(v, -k), atol=ckks_tol())
    with pytest.raises(he.SecretKeyRequired):
        pub.decrypt(ct)


# ---------------------------------------------------------------- parameters, keys, sizes
def test_parameters_openfhe_chooses_and_refuses():
    c = ctx("openfhe", "bfv")
    assert len(c.built.q_bits) == INT["bfv"].depth + 1 and c.built.p_bits == ()  # BV key switching: no P
    secure = he.context("openfhe", INT["bfv"].replace(name="bfv-8192-d2", n=8192, qi_bits=(43, 43, 44, 44, 44)))
    assert secure.built.log_pq <= 218 and secure.built.security == 128 and not secure.insecure
    with pytest.raises(he.ParameterError, match="8192"):
        he.context("openfhe", "bfv-4096-small")  # OpenFHE's BFV needs N = 8192 for 128 bits


def test_hybrid_p_is_read_from_the_library_and_the_authors_dnum_2_is_refused_by_the_wheel():
    """P's primes as this OpenFHE chooses them (the wheel, 1.6.1: one more for BFV than the largest digit needs,
    probed from a key's towers): the SophOMR set at dnum 3 builds log PQ 1620, their dnum 2 is refused."""
    from hepkg.he.backends import openfhe as backend

    assert backend._bfv_extra_p_primes() == 1
    soph = he.context("openfhe", "toy-bfv-omr-soph", insecure=True)
    assert soph.built.p_bits == (60,) * (-(-len(soph.built.q_bits) // 3) + 1)     # ceil(17 / 3) + 1 here
    with pytest.raises(he.ParameterError, match="bfv-omr-soph-d2"):
        he.context("openfhe", "bfv-omr-soph-d2")


def test_key_sizes_and_noise_budget():
    c, small = ctx("openfhe", "bfv", "exact"), he.context("openfhe", INT["bfv"], insecure=True)
    sizes = c.key_sizes()
    assert sizes["rotation_keys"] == len(EXACT) + 1
    assert abs(sizes["ciphertext"] - c.nbytes(c.encrypt([1]))) < 0.01 * sizes["ciphertext"]
    assert sizes["ciphertext"] > 2 * N * 8 * len(c.built.q_bits)
    assert sizes["galois_keys"] > len(EXACT) * sizes["public_key"] and small.key_sizes()["galois_keys"] == 0
    assert c.noise_budget(c.encrypt([1])) is None
    with pytest.raises(he.SchemeError, match="noise budget"):
        c._noise_budget(c.encrypt([1]).raw)


def test_ckks_level_drop_without_level_reduce_is_level_reduces_ciphertext(monkeypatch):
    """Bindings without LevelReduce (openfhe-python 1.5.1.0) drop a CKKS level by adding the zero plaintext of the
    level below: the very ciphertext LevelReduce gives, at every level, a pending product included."""
    from hepkg.he.backends import openfhe as backend
    assert backend._LEVEL_REDUCE                       # the wheel has it: the reference below is LevelReduce's
    c = ctx("openfhe", "ckks")
    a = np.random.default_rng(5).uniform(-1, 1, c.slots)
    ca = c.encrypt(a)
    for ct in (ca, c.mul(ca, ca, rescale=False), c.mod_switch(ca)):
        with monkeypatch.context() as m:
            m.setattr(backend, "_LEVEL_REDUCE", False)
            dropped = c.mod_switch(ct)
        reference = c.mod_switch(ct)
        assert dropped.level == reference.level == ct.level + 1 + ct.pending
        assert c.serialize(dropped) == c.serialize(reference)


def test_ckks_ciphertexts_are_read_with_one_parse_keeping_their_level_and_degree(monkeypatch):
    """A CKKS payload is not parsed: its coefficients go into this context's own ciphertext at the level and degree
    its authenticated metadata gives, which is parsed once; what it held comes back exactly."""
    from hepkg.he.backends import openfhe as backend
    c = ctx("openfhe", "ckks")
    ca = c.encrypt(np.random.default_rng(6).uniform(-1, 1, c.slots))
    cases = (ca, c.mul(ca, ca, rescale=False), c.mul(ca, ca), c.mod_switch(ca))
    blobs = [c.serialize(ct) for ct in cases]
    parses, real = [], backend._parse_ciphertext
    monkeypatch.setattr(backend, "_parse_ciphertext", lambda data: parses.append(len(data)) or real(data))
    for ct, blob in zip(cases, blobs):
        back = c.deserialize(blob)
        assert (back.raw.GetLevel(), back.raw.GetNoiseScaleDeg(), back.raw.GetScalingFactor()) == (
            ct.raw.GetLevel(), ct.raw.GetNoiseScaleDeg(), ct.raw.GetScalingFactor())
        np.testing.assert_array_equal(c.decrypt(back, complex=True), c.decrypt(ct, complex=True))
    assert len(parses) == len(cases)


def test_ckks_payloads_with_more_vectors_or_another_key_are_refused_unparsed():
    """What the metadata does not account for is refused: a third component, towers beyond the stated level, a
    payload encrypted under another key (each with the session's MAC: a party forging it)."""
    import openfhe as ofhe
    from hepkg.he import envelope
    c = ctx("openfhe", "ckks")
    ca = c.encrypt(np.ones(c.slots))
    meta, _ = envelope.unpack(c.serialize(ca), "ciphertext", key=c.session_key)
    meta.pop("kind")

    def forged(raw, **change):
        return envelope.pack("ciphertext", meta | change, ofhe.Serialize(raw, ofhe.BINARY), key=c.session_key)

    with pytest.raises(he.CorruptedData, match="third component"):
        c.deserialize(forged(c._cc.EvalMultNoRelin(ca.raw, ca.raw), pending=True))
    with pytest.raises(he.CorruptedData, match="beyond level 1"):
        c.deserialize(forged(ca.raw, level=1))
    other = he.context("openfhe", CKKS, insecure=True)
    with pytest.raises(he.ContextMismatch, match="another key"):
        c.deserialize(forged(other.encrypt(np.ones(4)).raw))
    other.close()


def test_only_bfv_and_bgv_ciphertexts_are_read_under_the_guard(monkeypatch):
    """A received CKKS payload never reaches OpenFHE's parser, so ``guard=True`` forks no child for it; BFV's still
    does (the forgeries that crash the parser: tests/test_hardening_round3.py)."""
    import importlib
    base = importlib.import_module("hepkg.he.context")
    forks = []
    monkeypatch.setattr(base, "probe", lambda fn, *args, **kw: forks.append(kw["what"]))
    for scheme in ("ckks", "bfv"):
        c = ctx("openfhe", scheme)
        c.deserialize(c.serialize(c.encrypt([1, 2])), guard=True)
    assert forks == ["openfhe ciphertext"]
