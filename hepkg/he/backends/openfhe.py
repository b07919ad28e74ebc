"""``openfhe``: OpenFHE (the openfhe-python bindings) behind the hepkg backend protocol.

Slots: a BFV/BGV packed plaintext of N values is two rows of N/2 (``EvalRotate`` by a
positive k rotates each row left); the row swap is the automorphism X -> X^(2N-1), keyed
by ``EvalAutomorphismKeyGen`` and applied by ``EvalAutomorphism``. CKKS holds N/2
complex slots (``CKKSDataType.COMPLEX``).

Parameters: OpenFHE picks its own moduli from (N, t, depth, scale, first prime) and
refuses a ring too small for 128-bit security at that depth; what it chose is recorded
in ``ctx.built`` (bits of Q and P). CKKS runs ``FIXEDMANUAL`` (hepkg rescales
explicitly); BGV runs ``FIXEDMANUAL`` too, each product (ct x ct or ct x pt) followed by
``ModReduce`` as OpenFHE's BGV moduli assume, so its towers are shared by products and
explicit ``mod_switch``. BFV has no ``ModReduce``/``LevelReduce`` (no-op / not
implemented for NORESCALE): ``mod_switch`` is ``Compress`` (BFV modulus switching) to one
tower fewer, the ciphertext level set to the towers dropped (what OpenFHE records itself
when it encrypts a BFV plaintext encoded at a level); of two operands at different levels
the one with more towers is compressed to match, and plaintexts are re-encoded to match.

Keys: OpenFHE keeps evaluation keys in process-wide maps keyed by the secret key's tag,
which outlive the Python objects. A public context deserializes the crypto context, public
key and evaluation keys; in the process that made them the keys are already in the maps
and are reused. Every context holding a tag is counted; when the last one is closed or
collected, that tag's keys leave the maps (the bindings clear the maps only as a whole, so
the other tags' keys are put back: they are shared pointers, nothing is copied). Bindings
before openfhe-python 1.6 cannot list the maps: there the tags this process put in are
looked up one by one and the indices of the rotation keys it made are remembered; a
payload's serialized evaluation keys are refused there (nothing could show that they hold
no keys of another tag: after a round trip OpenFHE's serialization is not byte-identical).

Moduli: the bindings expose neither the primes of Q (read here from the context's JSON
serialization) nor those of P, the hybrid key-switching modulus. With hybrid key
switching (CKKS's default) P is computed by OpenFHE's own rule: Q's towers are split into
dnum digits of ceil(towers/dnum), and P has ceil(max digit bits / 60) primes of 60 bits;
BV key switching (BFV's default) has no P.

Parsing: OpenFHE's deserializers crash (SIGSEGV, SIGFPE, SIGABRT) on some malformed
bytes, so public contexts are parsed in a forked child first (``fragile_parser``) and
ciphertexts are accepted only with the session's MAC (:mod:`hepkg.he.envelope`). Received BFV and BGV
ciphertexts are parsed in a forked child too; a received CKKS ciphertext is never handed to OpenFHE's
parser: its coefficients are range-checked and copied into a ciphertext of this context's own making.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import pathlib
import tempfile
import threading
import weakref
from collections import Counter

import numpy as np
import openfhe as ofhe

from ... import atomic, paths
from ..context import Context
from ..envelope import frame, unframe
from ..errors import BackendUnavailable, ContextMismatch, CorruptedData, DepthExhausted, ParameterError, SchemeError
from ..guard import in_child
from .. import subring
from ...rns.arith import Modulus, is_prime, ntt_primes
from ...rns.keys import SwitchKey
from ...rns.ntt import NTT

_BIN = ofhe.BINARY
#: levels whose ciphertext template (see OpenFHEContext._rebuilt) a context keeps
_TEMPLATES_KEPT = 4
_TEMPLATES_LOCK = threading.Lock()
#: payload part standing for evaluation keys already in this process's OpenFHE key maps
_IN_PROCESS = b"hepkg:openfhe:evaluation-keys-in-this-process"
_FEATURES = (ofhe.PKE, ofhe.KEYSWITCH, ofhe.LEVELEDSHE, ofhe.ADVANCEDSHE)  # ADVANCEDSHE: EvalChebyshevFunction
#: bindings whose MakePackedPlaintext reads a numpy array's buffer (the 1.6 wheel: 2.2 ms for 65,536 values at 2
#: towers, as for one value); older ones (openfhe-python 1.5.1.0) convert any sequence element by element, a list
#: faster than an array (on the wheel's sequence overload: 7.4 ms from a list, 9.5 from an int32 array)
_ARRAY_ENCODE = "numpy" in (ofhe.CryptoContext.MakePackedPlaintext.__doc__ or "")
#: bindings with CKKS's LevelReduce (openfhe-python 1.6); older ones drop a level through an addition (_drop_by_zero)
_LEVEL_REDUCE = hasattr(ofhe.CryptoContext, "LevelReduce")
_PARSING_LOCK = threading.Lock()
_PARSING = [0]     # ciphertexts being parsed, in all threads, with the CRT precomputation off
_CRT_TOGGLE = hasattr(ofhe, "DisablePrecomputeCRTTablesAfterDeserializaton")   # bindings that can turn it off


def _parse_ciphertext(data: bytes):
    """A serialized ciphertext parsed without recomputing its crypto context's CRT tables.

    OpenFHE recomputes them for every parsed object by default (0.2-0.6 s for one ciphertext at n = 2^16 and
    19 towers, most of a receiver's decoding). A ciphertext hepkg goes on with carries this process's own crypto
    context, built here with its tables (any other is refused, :meth:`OpenFHEContext._checked`), so parsing runs
    with the precomputation off while any thread parses one, and back on after the last.
    """
    with _PARSING_LOCK:
        if _CRT_TOGGLE and not _PARSING[0]:
            ofhe.DisablePrecomputeCRTTablesAfterDeserializaton()
        _PARSING[0] += 1
    try:
        return _UNLOCKED.parse_ciphertext(data) if _UNLOCKED else ofhe.DeserializeCiphertextString(data, _BIN)
    finally:
        with _PARSING_LOCK:
            _PARSING[0] -= 1
            if _CRT_TOGGLE and not _PARSING[0]:
                ofhe.EnablePrecomputeCRTTablesAfterDeserializaton()


def _find_vectors(data: bytes, moduli: list[int], n: int) -> list | None:
    """(start, stop, modulus) of the coefficients of the first vectors of n coefficients under these moduli, in this
    order, in serialized OpenFHE objects (a vector is written as its length n, the n coefficients, its modulus; the
    towers of other moduli in between are passed over), or None."""
    found, pos = [], 0
    length = n.to_bytes(8, "little")
    for q in moduli:
        modulus = q.to_bytes(8, "little")
        while True:
            pos = data.find(length, pos)
            if pos < 0:
                return None
            start, stop = pos + 8, pos + 8 + 8 * n
            if data[stop:stop + 8] == modulus:
                break
            pos += 1
        found.append((start, stop, q))
        pos = stop + 8
    return found


def _spliced(into: bytes, slots: list, data: bytes, found: list) -> bytes:
    """``into`` with the coefficients at ``slots`` replaced by those of ``data`` at ``found`` (both from
    :func:`_find_vectors` over the same moduli)."""
    out = bytearray(into)
    for (start, stop, _), (to, end, _) in zip(found, slots):
        out[to:end] = data[start:stop]
    return bytes(out)


@functools.lru_cache(maxsize=16)
def _ntt(q: int, n: int) -> NTT:
    """The NTT OpenFHE's evaluation form uses at prime q and degree n (bit-reversed order, its least root)."""
    return NTT(n, Modulus((q,)), psi=[subring.minimal_root(q, 2 * n)])


def _coefficients(data: bytes, found: list, n: int) -> np.ndarray:
    """(len(found), n) coefficients mod q of the evaluation-form vectors at ``found`` (:func:`_find_vectors`)."""
    return np.stack([_ntt(q, n).inverse(np.frombuffer(data, np.uint64, count=n, offset=start)[None])[0]
                     for start, _, q in found])


def _secret(sk, q: int, n: int) -> np.ndarray:
    """The signed coefficients of an OpenFHE secret key (its residues at prime q); RuntimeError unless ternary."""
    data = ofhe.Serialize(sk, _BIN)
    found = _find_vectors(data, [q], n)
    x = None if found is None else _coefficients(data, found, n)[0].astype(np.int64)
    if x is None or not np.all((x <= 1) | (x >= q - 1)):
        raise RuntimeError("OpenFHE's serialized secret key does not read as a ternary polynomial (its layout or "
                           "its NTT roots are not those hepkg expects)")
    return np.where(x > 1, x - q, x)


def _unframe(data: bytes, count: int, required: int) -> list[bytes]:
    parts = unframe(data, count, "OpenFHE public payload")
    if any(len(p) == 0 for p in parts[:required]):
        raise CorruptedData("OpenFHE public payload has the wrong layout")
    return parts


def _find(node, key: str):
    """The first value of ``key`` in a nested JSON document (depth first), or None."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        node = list(node.values())
    if isinstance(node, list):
        for child in node:
            hit = _find(child, key)
            if hit is not None:
                return hit
    return None


#: OpenFHEContext.primes_for_depth's answers by (parameter set, depth)
_PRIMES_FOR_DEPTH: dict = {}


@functools.lru_cache(maxsize=None)
def _library_key() -> str | None:
    """The OpenFHE this process runs: the bindings' version and the path, size and modification time of every file
    of OpenFHE's mapped into it (``/proc/self/maps``); None where that cannot be read."""
    try:
        fields = (line.split(maxsplit=5) for line in pathlib.Path("/proc/self/maps").read_text().splitlines())
        files = sorted({f[5] for f in fields if len(f) == 6 and "openfhe" in f[5].rsplit("/", 1)[-1].lower()})
        stats = [(f, os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files]
    except OSError:
        return None
    return json.dumps([getattr(ofhe, "__version__", None), stats]) if stats else None


def _kept_on_disk(request: str, compute) -> int:
    """``compute()``'s answer to ``request`` (a CCParams' text), kept in hepkg's cache under the OpenFHE this process
    runs (:func:`_library_key`; without one, computed every time). Building a context to count its primes takes
    0.2 s at N = 2^16, and a SophOMR detector's drop plan asks 28 depths: 6.0 of its 10.9 s key generation."""
    library = _library_key()
    if library is None:
        return compute()
    name = hashlib.sha256(f"{library}\n{request}".encode()).hexdigest()
    try:
        path = paths.cache("openfhe") / "primes_for_depth.json"
    except OSError:                               # no cache folder can be made here
        return compute()
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):                 # none yet, or not JSON (answered afresh, the file rewritten)
        kept = {}
    kept = kept if isinstance(kept, dict) else {}
    answer = kept.get(name)
    if type(answer) is not int or answer < 1:
        answer = kept[name] = compute()
        with contextlib.suppress(OSError):        # a cache that cannot be written keeps nothing
            atomic.write_text(path, json.dumps(kept))
    return answer


def _moduli(cc, scheme: str) -> tuple[list[int], tuple[int, ...]]:
    """(primes of Q, bit sizes of the primes of P) of ``cc``; Q is read from its JSON serialization."""
    doc = json.loads(ofhe.Serialize(cc, ofhe.JSON))
    primes = _q_primes(doc)
    if _find(doc, "ks") != int(ofhe.HYBRID):  # BV key switching (BFV's default) has no P
        return primes, ()
    return primes, _p_bits(primes, int(_find(doc, "dnum")), int(_find(doc, "ab")), scheme)


def _q_primes(doc) -> list[int]:
    """The primes of Q in a crypto context's JSON serialization."""
    return [int(t["ptr_wrapper"]["data"]["value0"]["cm"]["v"]) for t in _find(doc, "elp")["ptr_wrapper"]["data"]["p"]]


def _moduli_in(node) -> set[int]:
    """Every tower modulus (``"cm": {"v": ...}``) in a nested JSON document."""
    if isinstance(node, dict):
        cm = node.get("cm")
        found = {int(cm["v"])} if isinstance(cm, dict) and isinstance(cm.get("v"), (str, int)) else set()
        return found.union(*map(_moduli_in, node.values()))
    return set().union(*map(_moduli_in, node)) if isinstance(node, list) else set()


def _p_rule(primes: list[int], dnum: int, aux_bits: int) -> int:
    """Primes of P the largest hybrid digit of these Q primes needs."""
    per_digit = math.ceil(len(primes) / dnum)
    digit_bits = [math.prod(primes[i:i + per_digit]).bit_length() for i in range(0, len(primes), per_digit)]
    return math.ceil(max(digit_bits) / aux_bits)


@functools.lru_cache(maxsize=None)
def _bfv_extra_p_primes() -> int:
    """Primes OpenFHE's BFV takes for P beyond what the largest digit needs: 1.6.1 one, 1.5.1 none. Probed once
    per process on a toy ring, from the towers of a key-switching key (which enters no key map)."""
    cp = ofhe.CCParamsBFVRNS()
    cp.SetPlaintextModulus(65537)
    cp.SetMultiplicativeDepth(5)
    cp.SetRingDim(1024)
    cp.SetSecurityLevel(ofhe.HEStd_NotSet)
    cp.SetKeySwitchTechnique(ofhe.HYBRID)
    cp.SetNumLargeDigits(2)
    cc = ofhe.GenCryptoContext(cp)
    for feature in _FEATURES[:2]:
        cc.Enable(feature)
    sk = cc.KeyGen().secretKey
    doc = json.loads(ofhe.Serialize(cc, ofhe.JSON))
    q = _q_primes(doc)
    key = _moduli_in(json.loads(ofhe.Serialize(cc.KeySwitchGen(sk, sk), ofhe.JSON)))
    return len(key - set(q)) - _p_rule(q, 2, int(_find(doc, "ab")))


def _p_bits(primes: list[int], dnum: int, aux_bits: int, scheme: str) -> tuple[int, ...]:
    """Bit sizes of the hybrid key-switching primes OpenFHE chooses for these Q primes: what the largest digit
    needs, and for BFV the primes this OpenFHE adds (:func:`_bfv_extra_p_primes`)."""
    return (aux_bits,) * (_p_rule(primes, dnum, aux_bits) + (_bfv_extra_p_primes() if scheme == "bfv" else 0))


#: live hepkg contexts per key tag (their evaluation keys are in OpenFHE's process-wide maps)
_LIVE: Counter = Counter()
#: digest of the serialized evaluation keys loaded into the maps per key tag (tags whose keys were
#: deserialized here, not generated)
_LOADED: dict[str, bytes] = {}
#: whether the bindings list OpenFHE's key maps (GetAllEvalMultKeys, openfhe-python 1.6 and later)
_LISTS_MAPS = hasattr(ofhe.CryptoContext, "GetAllEvalMultKeys")
#: without that: the key tags this process put into the maps, and the rotation key indices it generated per tag
_KNOWN: dict[str, frozenset] = {}


def _release_tag(tag: str) -> None:
    """One context less uses ``tag``; the last one removes the tag's keys from OpenFHE's maps."""
    _LIVE[tag] -= 1
    if _LIVE[tag] > 0:
        return
    del _LIVE[tag]
    _LOADED.pop(tag, None)
    _drop_tags({tag})


def _key_maps() -> tuple[dict, dict]:
    """OpenFHE's process-wide relinearization and rotation keys, each a dict by key tag."""
    cc = ofhe.CryptoContext
    if _LISTS_MAPS:
        return cc.GetAllEvalMultKeys(), cc.GetAllEvalAutomorphismKeys()
    return _look_up(cc.GetEvalMultKeyVector), _look_up(cc.GetEvalAutomorphismKeyMap)


def _look_up(get) -> dict:
    found = {}
    for tag in _KNOWN:
        try:
            found[tag] = get(tag)
        except RuntimeError:  # OpenFHE holds no such keys for the tag
            pass
    return found


def _tags() -> set[str]:
    """Key tags that have relinearization or rotation keys in OpenFHE's maps."""
    mult, auto = _key_maps()
    return set(mult) | set(auto)


def _drop_tags(tags: set[str]) -> None:
    """Remove the keys of ``tags`` from OpenFHE's maps, keeping every other tag's (where the maps cannot be
    listed, only the tags this process knows are kept: keys of any other tag leave too)."""
    mult, auto = _key_maps()
    for tag in tags:
        _KNOWN.pop(tag, None)
    if _LISTS_MAPS and not tags & (set(mult) | set(auto)):
        return
    _clear_maps()
    _insert_maps({t: k for t, k in mult.items() if t not in tags}, {t: k for t, k in auto.items() if t not in tags})


@contextlib.contextmanager
def _no_new_context(what: str, name: str):
    """CorruptedData if parsing ``what`` inside the block made OpenFHE register another crypto context.

    Every key carries a copy of its crypto context; a copy that differs from the one the parameters build
    (altered bytes) is registered as a context of its own. One with a plaintext root of unity set left later
    contexts of its ring and t multiplying wrong (encrypting and decrypting right) once a context of another
    ring was built; OpenFHE hands a registered context's root to PackedEncoding's process-wide tables. So the
    keys are parsed first in a guard's child (load_context), which refuses them here.
    """
    known = len(ofhe.GetAllContexts())
    yield
    if len(ofhe.GetAllContexts()) != known:
        raise CorruptedData(f"parsing the OpenFHE public context's {what} registered another crypto context than "
                            f"the one {name} builds (the keys' copy of it is altered)")


def _clear_maps() -> None:
    """Empty OpenFHE's relinearization and rotation key maps."""
    ofhe.ClearEvalMultKeys()
    ofhe.CryptoContext.ClearEvalAutomorphismKeys()


def _insert_maps(mult: dict, auto: dict) -> None:
    """Put relinearization and rotation keys (dicts by key tag, as :func:`_key_maps` gives) into OpenFHE's maps."""
    for tag, keys in mult.items():
        ofhe.CryptoContext.InsertEvalMultKey(keys, tag)
    for tag, keys in auto.items():
        ofhe.CryptoContext.InsertEvalAutomorphismKey(keys, tag)


def _slots(pt, ckks: bool):
    """A plaintext's slot values: the array accessors of openfhe-python 1.6, else the older list ones."""
    if ckks:
        return pt.GetCKKSPackedValueArray() if hasattr(pt, "GetCKKSPackedValueArray") else pt.GetCKKSPackedValue()
    return pt.GetPackedValueArray() if hasattr(pt, "GetPackedValueArray") else pt.GetPackedValue()


def _native():
    """``hepkg_openfhe_encode`` (:func:`hepkg.bench.builds.openfhe_encode`) where it is importable and was built for
    the bindings imported here (one ABI), else None."""
    try:
        import hepkg_openfhe_encode as native
    except ImportError:
        return None
    binding = getattr(getattr(ofhe, "openfhe", None), "__file__", None)
    return native if binding and native.built_for == os.path.realpath(binding) else None


def _buffer_encoder():
    """:func:`_native`'s ``packed`` unless the bindings read numpy buffers themselves, else None (the bindings' own
    MakePackedPlaintext)."""
    native = None if _ARRAY_ENCODE else _native()
    return None if native is None else native.packed


def _unlocked_calls():
    """:func:`_native` where it has ``parse_ciphertext``, ``mult_no_relin`` and ``add``, which release the
    interpreter lock (the bindings hold it through every call, so Python threads that parse and multiply
    ciphertexts run one at a time), else None."""
    native = _native()
    return native if all(hasattr(native, f) for f in ("parse_ciphertext", "mult_no_relin", "add")) else None


def _parallel_rotations():
    """:func:`_native`'s ``fast_rotations`` (a hoisted rotation's steps as one OpenMP loop, a step per thread, the
    interpreter lock released), else None (the bindings' EvalFastRotation step by step, each spread over OpenMP's
    threads inside OpenFHE)."""
    return getattr(_native(), "fast_rotations", None)


_BUFFER_ENCODE = _buffer_encoder()
_UNLOCKED = _unlocked_calls()
_PARALLEL_ROTATIONS = _parallel_rotations()
#: how packed BFV/BGV plaintexts get their slot values (in each measurement row: ``encode_path``)
ENCODE_PATH = ("numpy buffer (bindings)" if _ARRAY_ENCODE else "numpy buffer (hepkg_openfhe_encode)"
               if _BUFFER_ENCODE else "Python list (bindings)")
#: whether ciphertext parsing, products and sums release the interpreter lock, and whether hoisted rotations run
#: as one parallel loop (each row: ``call_path``)
CALL_PATH = ("lock released" if _UNLOCKED else "lock held") + (
    ", rotations in parallel (hepkg_openfhe_encode)" if _PARALLEL_ROTATIONS else
    " (hepkg_openfhe_encode)" if _UNLOCKED else " (bindings)")


def binding() -> dict:
    """The folder of the ``openfhe`` package imported here, :data:`ENCODE_PATH` and :data:`CALL_PATH` (a
    measurement row's fields)."""
    return dict(openfhe_module=os.path.dirname(ofhe.__file__), encode_path=ENCODE_PATH, call_path=CALL_PATH)


def _integers(values: np.ndarray):
    """int64 slot values as the bindings' MakePackedPlaintext reads them fastest (:data:`_ARRAY_ENCODE`)."""
    return values if _ARRAY_ENCODE else values.tolist()


def _packed(cc, values: np.ndarray, level: int):
    """A packed plaintext of int64 slot values at ``level``, read as :data:`ENCODE_PATH` says."""
    if _BUFFER_ENCODE is not None:
        return _BUFFER_ENCODE(cc, np.ascontiguousarray(values, np.int64), 1, level)
    return cc.MakePackedPlaintext(_integers(values), 1, level)


def _digest(mult_b: bytes, galois_b: bytes) -> bytes:
    """A cryptographic digest of serialized evaluation keys."""
    h = hashlib.blake2b(digest_size=32)
    for part in (mult_b, galois_b):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def _generated_equals(tag: str, mult_b: bytes, galois_b: bytes) -> bool:
    """Whether the keys this process generated for ``tag`` serialize to exactly these bytes."""
    mult_keys, auto_keys = _key_maps()
    mult = ofhe.SerializeEvalMultKeyString(_BIN, tag) if tag in mult_keys else b""
    galois = ofhe.SerializeEvalAutomorphismKeyString(_BIN, tag) if tag in auto_keys else b""
    return (mult, galois) == (mult_b, galois_b)


class OpenFHEContext(Context):
    backend = "openfhe"
    schemes = ("bfv", "bgv", "ckks")
    has_noise_budget = False
    fragile_parser = True
    lowers = True
    subrings = True

    # ------------------------------------------------------------------ parameters
    def _cc_params(self, p=None):
        p = p or self.params
        if self.scheme == "ckks":
            cp = ofhe.CCParamsCKKSRNS()
            cp.SetScalingModSize(p.scale_bits)
            cp.SetFirstModSize(p.qi_bits[0])
            cp.SetScalingTechnique(ofhe.FIXEDMANUAL)
            cp.SetCKKSDataType(ofhe.COMPLEX)
        else:
            cp = ofhe.CCParamsBFVRNS() if self.scheme == "bfv" else ofhe.CCParamsBGVRNS()
            cp.SetPlaintextModulus(p.plain_modulus)
            if p.tower_bits:
                cp.SetScalingModSize(p.tower_bits)
            if self.scheme == "bgv":
                cp.SetScalingTechnique(ofhe.FIXEDMANUAL)
        cp.SetRingDim(p.n)
        cp.SetMultiplicativeDepth(p.depth)
        cp.SetBatchSize(self.slots)
        cp.SetSecurityLevel(ofhe.HEStd_NotSet if self.insecure else ofhe.HEStd_128_classic)
        if p.ks_digits:
            cp.SetKeySwitchTechnique(ofhe.HYBRID)
            cp.SetNumLargeDigits(p.ks_digits)
        return cp

    def _new_cc(self):
        cc = self._generated(self.params)
        self._bind(cc)
        return cc

    def _generated(self, p):
        """OpenFHE's crypto context of parameter set ``p``; ParameterError naming OpenFHE's reason if it refuses."""
        try:
            return ofhe.GenCryptoContext(self._cc_params(p))
        except RuntimeError as exc:
            reason = str(exc).rsplit("): ", 1)[-1]
            raise ParameterError(
                f"OpenFHE refuses {p.name} ({self.scheme.upper()}, N={p.n}, depth {p.depth}"
                f"{', 128-bit security' if not self.insecure else ''}): {reason}") from None

    def _bind(self, cc):
        for feature in _FEATURES:
            cc.Enable(feature)
        self._cc = cc
        self._order = cc.GetCyclotomicOrder()
        self._primes, self._p = _moduli(cc, self.scheme)
        self._q = tuple(q.bit_length() for q in self._primes)
        self._templates = {}
        if self.scheme != "ckks" and not in_child():
            # openfhe-python 1.6.1 (upstream defect): the first packed encoding of a parameter set sets up
            # its encoding tables with OpenFHE's PRNG, and when that first encoding runs in a thread other
            # than the one that built the context it never returns. One encoding here, in the building
            # thread, does that setup once (about a millisecond); every thread can encode afterwards.
            cc.MakePackedPlaintext([0])

    def _hold(self, tag: str) -> None:
        """Count this context as a user of ``tag``'s keys until it is closed or collected."""
        self._tag = tag
        _KNOWN.setdefault(tag, frozenset())
        _LIVE[tag] += 1
        self._finalizer = weakref.finalize(self, _release_tag, tag)

    def _release(self) -> None:
        if getattr(self, "_finalizer", None) is not None:
            self._finalizer()

    def _modulus(self) -> dict:
        return dict(n=self._cc.GetRingDimension(), q_bits=self._q, p_bits=self._p,
                    source="OpenFHE (Q read back; P by OpenFHE's hybrid key-switching rule)")

    @property
    def max_level(self) -> int:
        return self._towers - 1

    @property
    def _swap_index(self) -> int:
        return 2 * self.params.n - 1

    # ------------------------------------------------------------------ keys and roles
    def _keygen(self):
        cc = self._new_cc()
        with self._generating_keys():
            kp = cc.KeyGen()
            self._evaluation_keys(kp.secretKey, kp.publicKey)

    def _evaluation_keys(self, sk, pk) -> None:
        """Hold ``sk`` and ``pk`` and generate the evaluation keys this context declares under their tag."""
        if self.relin_key:
            self._cc.EvalMultKeyGen(sk)
        if self.keys.steps:
            self._cc.EvalRotateKeyGen(sk, sorted(self.keys.steps))
        if self.swap_key:
            self._cc.EvalAutomorphismKeyGen(sk, [self._swap_index])
        self._sk, self._pk = sk, pk
        _KNOWN[pk.GetKeyTag()] = frozenset(self._rotation_indices())
        self._hold(pk.GetKeyTag())

    # ------------------------------------------------------------------ the same secret at fewer primes
    # OpenFHE offers no key generation at a level for BFV (CryptoContext.SetKeyGenLevel is read nowhere in 1.5 or
    # 1.6). A BFV context asked for the least depth that builds the first primes of a deeper one builds the same
    # primes (OpenFHE takes 60-bit primes in one order): the secret and public keys' residues at those primes are a
    # secret and public key there. They are copied into the keys OpenFHE generates there (whose own secret is
    # discarded), and the lowered context makes its evaluation keys from them.
    def _lowered_params(self, limbs: int):
        base = super()._lowered_params(limbs)
        for depth in range(base.depth, self.params.depth + 1):      # the least depth with `limbs` primes
            p = base.replace(depth=depth)
            built = len(_moduli(self._generated(p), self.scheme)[0])
            if built >= limbs:
                break
        if built != limbs:
            raise ParameterError(f"OpenFHE builds no BFV context of {limbs} primes like {self.params.name}'s (depth "
                                 f"{p.depth} takes {built})")
        return p

    def _keygen_lowered(self, parent: "OpenFHEContext"):
        cc = self._new_cc()
        if self._primes != parent._primes[:len(self._primes)]:
            raise ParameterError(f"OpenFHE built {self.params.name} on other primes than the first "
                                 f"{len(self._primes)} of {parent.params.name}: it cannot hold that secret key")
        with self._generating_keys():
            kp = cc.KeyGen()
            keys = []
            for own, theirs, polys, load in ((kp.secretKey, parent._sk, 1, ofhe.DeserializePrivateKeyString),
                                             (kp.publicKey, parent._pk, 2, ofhe.DeserializePublicKeyString)):
                data, source = ofhe.Serialize(own, _BIN), ofhe.Serialize(theirs, _BIN)
                into = _find_vectors(data, self._primes * polys, self.params.n)
                found = _find_vectors(source, self._primes * polys, self.params.n)
                if into is None or found is None:
                    raise RuntimeError("OpenFHE's serialized keys are not laid out as hepkg reads them (vectors "
                                       "of length, coefficients, modulus)")
                keys.append(load(_spliced(data, into, source, found), _BIN))
            self._evaluation_keys(*keys)

    def _adopted(self, parent, raw):
        payload = ofhe.Serialize(raw, _BIN)
        found = _find_vectors(payload, self._primes * 2, self.params.n)
        if found is None:
            raise CorruptedData(f"the ciphertext does not hold 2 x {len(self._primes)} vectors under "
                                f"{self.params.name}'s primes")
        template, slots, _ = self._template(0)
        return _parse_ciphertext(_spliced(template, slots, payload, found))

    # ------------------------------------------------------------------ ring switching
    # The subring context's secret is OpenFHE's own; its lift and the parent's secret are read from the keys'
    # residues, and the switching key between them (one digit, a special prime P next to the parent's first prime)
    # is made by hepkg.rns. A ciphertext's residues at one prime go through hepkg.he.subring and are written back
    # into this context's one-prime ciphertext; its slots are read in the parent's order (subring.slot_map).
    def _keygen_subring(self, parent: "OpenFHEContext"):
        cc = self._new_cc()
        with self._generating_keys():
            kp = cc.KeyGen()
            self._evaluation_keys(kp.secretKey, kp.publicKey)
            q0 = parent._primes[0]
            self._switch_primes = (q0, ntt_primes(60, parent.params.n, 1, exclude=(q0,))[0])
            self._switch = subring.make_key(_secret(parent._sk, q0, parent.params.n),
                                            _secret(self._sk, self._primes[0], self.params.n), self._switch_primes)

    def _descended(self, parent, raw):
        q0, n = self._switch_primes[0], parent.params.n
        if parent._primes[0] != q0:
            raise ContextMismatch(f"this subring's switching key is at prime {q0}; the ciphertext's context "
                                  f"({parent.params.name}) starts at {parent._primes[0]}")
        payload = ofhe.Serialize(raw, _BIN)
        found = _find_vectors(payload, [q0, q0], n)
        if found is None:
            raise CorruptedData(f"the ciphertext does not hold 2 vectors of {n} coefficients at prime {q0}")
        c0, c1 = _coefficients(payload, found, n)
        q = self._primes[0]
        out = _ntt(q, self.params.n).forward(np.stack(subring.descend(c0, c1, self._switch, self._switch_primes,
                                                                       self.descent, q))[:, None, :])
        size = 8 * self.params.n
        template, slots, _ = self._template(self.max_level)
        return _parse_ciphertext(_spliced(template, slots, out.tobytes(), [(0, size, q), (size, 2 * size, q)]))

    def _slot_order(self, values: np.ndarray, inverse: bool) -> np.ndarray:
        """A subring context's slots in OpenFHE's order (``inverse``: back): big slot (r, j) descends to OpenFHE's
        (r xor flip, j + shift); elsewhere ``values``."""
        if self.descent == 1:
            return values
        flip, shift = subring.slot_map(self.plain_modulus, self.params.n * self.descent, self.descent)
        rows = np.asarray(values).reshape(2, -1)
        if inverse:
            rows = np.roll(rows[::-1] if flip else rows, -shift, axis=1)
        else:
            rows = np.roll(rows, shift, axis=1)
            rows = rows[::-1] if flip else rows
        return rows.reshape(-1)

    def _switch_bytes(self) -> bytes:
        return np.asarray(self._switch_primes, dtype=np.uint64).tobytes() + self._switch.b.tobytes() + \
            self._switch.a.tobytes()

    def _load_switch(self, data: bytes) -> None:
        """The switching key of a public subring context; CorruptedData unless its primes are the parent prime
        with the special prime hepkg picks beside it, and every residue lies below its prime."""
        n = self.params.n * self.descent
        if len(data) != 16 + 2 * 2 * n * 8:
            raise CorruptedData(f"the subring switching key has {len(data)} bytes, not {16 + 32 * n}")
        q0, p = (int(x) for x in np.frombuffer(data, np.uint64, count=2))
        if not (is_prime(q0) and (q0 - 1) % (2 * n) == 0 and p == ntt_primes(60, n, 1, exclude=(q0,))[0]):
            raise CorruptedData("the subring switching key names primes hepkg does not switch at")
        b, a = (np.frombuffer(data, np.uint64, count=2 * n, offset=16 + i * 16 * n).reshape(1, 2, n).copy()
                for i in range(2))
        if (b >= np.array([[q0], [p]], dtype=np.uint64)).any() or (a >= np.array([[q0], [p]], dtype=np.uint64)).any():
            raise CorruptedData("the subring switching key holds residues at or above their prime")
        self._switch_primes, self._switch = (q0, p), SwitchKey(b, a)

    def _rotation_indices(self) -> set[int]:
        """The automorphism indices of the rotation (and swap) keys this context declares."""
        need = set(self._cc.FindAutomorphismIndices(sorted(self.keys.steps))) if self.keys.steps else set()
        return need | ({self._swap_index} if self.swap_key else set())

    def _galois_bytes(self) -> bytes:
        if not (self.keys.steps or self.swap_key):
            return b""
        return ofhe.SerializeEvalAutomorphismKeyString(_BIN, self._tag)

    def _galois_nbytes(self) -> int:
        """Serialized size of the rotation keys, streamed to a scratch file (never whole in memory)."""
        if not (self.keys.steps or self.swap_key):
            return 0
        with tempfile.TemporaryDirectory(prefix="hepkg-keys-") as tmp:
            path = os.path.join(tmp, "galois.bin")
            if not ofhe.CryptoContext.SerializeEvalAutomorphismKey(path, _BIN, self._tag):
                raise ParameterError("OpenFHE could not serialize the rotation keys")
            return os.path.getsize(path)

    def public(self):
        """The evaluation-only context, in this process. OpenFHE keeps evaluation keys in process-wide
        maps per key tag, which every context of the tag uses: the public context refers to them
        instead of carrying a serialized copy (HyDia's 516 rotation keys at N = 2^15 are 13 GB, and
        the round trip held three copies at once). :meth:`to_bytes` carries them for other processes."""
        self._in_process = True
        try:
            return super().public()
        finally:
            self._in_process = False

    def _public_payload(self, evaluation_keys: bool) -> "bytes | list":
        if not evaluation_keys:
            keys = [b"", b""]
        elif getattr(self, "_in_process", False):
            keys = [_IN_PROCESS, _IN_PROCESS]
        else:
            keys = [ofhe.SerializeEvalMultKeyString(_BIN, self._tag) if self.relin_key else b"", self._galois_bytes()]
        switch = [self._switch_bytes()] if self.descent > 1 else []
        return frame([ofhe.Serialize(self._cc, _BIN), ofhe.Serialize(self._pk, _BIN), *keys, *switch])

    def _check_in_process_keys(self) -> None:
        """CorruptedData unless this process holds every evaluation key the context declares."""
        if not _LISTS_MAPS:
            held = set(_KNOWN.get(self._tag, ()))
        elif self._tag in _key_maps()[1]:
            held = set(self._cc.GetExistingEvalAutomorphismKeyIndices(self._tag))
        else:
            held = set()
        need = self._rotation_indices()
        if not need <= held:
            raise CorruptedData(f"the OpenFHE public context refers to evaluation keys held in this process, "
                                f"and {len(need - held)} of its {len(need)} rotation keys are not here")

    def _load_public(self, payload: bytes):
        cc_b, pk_b, mult_b, galois_b, *switch = _unframe(payload, 4 + (self.descent > 1), 2 + self.relin_key)
        if switch:
            self._load_switch(switch[0])
        # OpenFHE keeps one crypto context per parameter set for the whole process and hands it to every
        # later context of those parameters: a deserialized one that differs from what the parameters
        # build (altered bytes) would corrupt them all. Only the context the parameters build is taken.
        cc = self._new_cc()
        if ofhe.Serialize(cc, _BIN) != cc_b:
            raise CorruptedData(f"the OpenFHE crypto context in the payload is not the one {self.params.name} "
                                f"builds")
        with _no_new_context("public key", self.params.name):
            self._pk = ofhe.DeserializePublicKeyString(pk_b, _BIN)
        tag = self._pk.GetKeyTag()
        in_process = _IN_PROCESS in (mult_b, galois_b)
        if in_process and (mult_b, galois_b) != (_IN_PROCESS, _IN_PROCESS):
            raise CorruptedData("OpenFHE public payload mixes serialized and in-process evaluation keys")
        if not in_process and (mult_b or galois_b):
            self._insert_keys(tag, mult_b, galois_b)
        self._hold(tag)
        if in_process:
            self._check_in_process_keys()
        if self.relin_key and tag not in _key_maps()[0]:
            raise CorruptedData("the OpenFHE public context carries no relinearization key for its public key")

    def _insert_keys(self, tag: str, mult_b: bytes, galois_b: bytes) -> None:
        """Put the payload's evaluation keys into OpenFHE's process-wide maps, under ``tag`` only.

        The maps are keyed by the secret key's tag, and OpenFHE keeps the keys a tag already has:
        keys loaded first under a tag (a forged context that pairs another context's keys with this
        public key's tag) would serve every later context of that tag. So a tag already held must
        hold exactly these keys (a second load of the same context), and keys that arrive under any
        other tag than the public key's, one this process holds included, are refused: the payload's keys are
        read into emptied maps (every tag's keys put back afterwards, shared pointers: nothing is copied), so
        none of them reaches another tag's map.
        """
        held, digest = _tags(), _digest(mult_b, galois_b)
        if tag in held:
            same = _LOADED[tag] == digest if tag in _LOADED else _generated_equals(tag, mult_b, galois_b)
            if not same:
                raise CorruptedData(f"the OpenFHE public context's evaluation keys differ from those this process "
                                    f"already holds for its key tag {tag[:8]}: another context loaded here claims "
                                    f"the same secret key with other keys (a forged context)")
            return
        if not _LISTS_MAPS:
            raise BackendUnavailable(
                f"openfhe-python {getattr(ofhe, '__version__', '(this version)')} cannot list OpenFHE's key maps "
                f"(GetAllEvalMultKeys: 1.6 and later), so the evaluation keys in this payload cannot be checked for "
                f"keys of other tags: load it on openfhe-python 1.6 or later, or use public() in the process that "
                f"made the keys")
        kept = _key_maps()
        _clear_maps()
        try:
            with _no_new_context("evaluation keys", self.params.name):
                if mult_b:
                    ofhe.DeserializeEvalMultKeyString(mult_b, _BIN)
                if galois_b:
                    ofhe.DeserializeEvalAutomorphismKeyString(galois_b, _BIN)
            mult, auto = _key_maps()
        finally:
            _clear_maps()
            _insert_maps(*kept)
        foreign = (set(mult) | set(auto)) - {tag}
        if foreign:
            raise CorruptedData(f"the OpenFHE public context carries evaluation keys of another key tag than its "
                                f"public key's ({sorted(t[:8] for t in foreign)}, not {tag[:8]})")
        _insert_maps({tag: mult[tag]} if tag in mult else {}, {tag: auto[tag]} if tag in auto else {})
        _LOADED[tag] = digest

    def _galois_map(self):
        return self._cc.GetEvalAutomorphismKeyMap(self._tag)

    # ------------------------------------------------------------------ encoding
    def _encode(self, values: np.ndarray, level: int):
        if self.scheme == "ckks":
            try:
                return self._cc.MakeCKKSPackedPlaintext(values, 1, level, None, self.slots)
            except RuntimeError as exc:
                # OpenFHE refuses a vector whose every scaled coefficient rounds to zero ("Scaling factor
                # too small", e.g. one 1e-12 at a 2^40 scale); its encoding is the zero plaintext
                if "Scaling factor too small" not in str(exc):
                    raise
                return self._cc.MakeCKKSPackedPlaintext(np.zeros_like(values), 1, level, None, self.slots)
        # BGV plaintexts stay at level 0: OpenFHE adapts them to the ciphertext's level
        # (its BGV level also counts the ModReduce after each product, unknown here).
        return _packed(self._cc, self._slot_order(values, inverse=False), level if self.scheme == "bfv" else 0)

    def _encrypt(self, pt):
        return self._cc.Encrypt(self._pk, pt)

    def _decrypt(self, ct) -> np.ndarray:
        pt = self._cc.Decrypt(self._sk, ct)
        pt.SetLength(self.slots)
        out = np.asarray(_slots(pt, self.scheme == "ckks"), dtype=np.complex128 if self.scheme == "ckks" else np.int64)
        return self._slot_order(out, inverse=True)

    # ------------------------------------------------------------------ levels
    @property
    def _towers(self) -> int:
        return len(self._q)

    def _compress(self, x, level: int):
        """BFV modulus switch of ``x`` down to ``level`` towers dropped."""
        out = self._cc.Compress(x, self._towers - level)
        out.SetLevel(level)
        return out

    def _align(self, x, y):
        """BFV operands at one level (OpenFHE aligns BGV/CKKS levels itself)."""
        if self.scheme != "bfv" or x.GetLevel() == y.GetLevel():
            return x, y
        level = max(x.GetLevel(), y.GetLevel())
        return ((self._compress(x, level), y) if x.GetLevel() < level else (x, self._compress(y, level)))

    def _plain_at(self, x, p):
        """A BFV plaintext at the level of ``x`` (re-encoded if it was encoded at another)."""
        if self.scheme != "bfv" or p.GetLevel() == x.GetLevel():
            return p
        return _packed(self._cc, np.asarray(_slots(p, False), np.int64), x.GetLevel())

    def _room(self, *objs) -> None:
        """DepthExhausted unless a tower can still be dropped (BGV plaintexts sit at level 0)."""
        if max(o.GetLevel() for o in objs) + 1 >= self._towers:
            raise DepthExhausted(f"no modulus left to drop: the ciphertext is down to the last of the "
                                 f"{self._towers} towers OpenFHE chose for {self.params.name}"
                                 f"{' (each BGV product drops one)' if self.scheme == 'bgv' else ''}")

    def _product(self, x, y, op):
        """``op(x, y)``, then (BGV) ModReduce, as OpenFHE's FIXEDMANUAL BGV moduli assume."""
        if self.scheme != "bgv":
            return op(x, y)
        self._room(x, y)
        return self._cc.ModReduce(op(x, y))

    # ------------------------------------------------------------------ arithmetic
    def _add(self, x, y):
        x, y = self._align(x, y)
        return _UNLOCKED.add(self._cc, x, y) if _UNLOCKED else self._cc.EvalAdd(x, y)

    def _add_into(self, x, y):
        if self.scheme == "bfv" and x.GetLevel() != y.GetLevel():
            return self._add(x, y)
        self._cc.EvalAddInPlace(x, y)                 # no copy of x: about 16x faster than EvalAdd
        return x

    def _sub(self, x, y):
        return self._cc.EvalSub(*self._align(x, y))

    def _add_plain(self, x, p):
        return self._cc.EvalAdd(x, self._plain_at(x, p))

    def _sub_plain(self, x, p):
        return self._cc.EvalSub(x, self._plain_at(x, p))

    def _negate(self, x):
        return self._cc.EvalNegate(x)

    def _mul(self, x, y):
        return self._product(*self._align(x, y), functools.partial(_UNLOCKED.mult_no_relin, self._cc) if _UNLOCKED
                             else self._cc.EvalMultNoRelin)

    def _relin(self, x):
        return self._cc.Relinearize(x)

    def _mul_plain(self, x, p):
        return self._product(x, self._plain_at(x, p), self._cc.EvalMult)

    def _rotate(self, x, step: int):
        return self._cc.EvalRotate(x, step)

    def _rotate_hoisted(self, x, steps: list[int]) -> list:
        if _PARALLEL_ROTATIONS:
            return _PARALLEL_ROTATIONS(self._cc, x, list(steps), self._order)
        digits = self._cc.EvalFastRotationPrecompute(x)
        return [self._cc.EvalFastRotation(x, s, self._order, digits) for s in steps]

    def _swap(self, x):
        return self._cc.EvalAutomorphism(x, self._swap_index, self._galois_map())

    def _rescale(self, x):
        return self._cc.Rescale(x)

    def _mod_switch(self, x):
        self._room(x)
        if self.scheme == "bfv":
            return self._compress(x, x.GetLevel() + 1)
        if self.scheme == "bgv":
            return self._cc.ModReduce(x)
        return self._cc.LevelReduce(x, None, 1) if _LEVEL_REDUCE else self._drop_by_zero(x)

    def primes_for_depth(self, depth: int) -> int | None:
        """The primes of Q OpenFHE builds for ``depth`` at this ring, plaintext modulus and prime size. Asked with one
        key-switching digit and no security level, which choose P and check the ring but leave Q as it is (on
        rings 2^10 to 2^16, t = 12289 to 786433, the counts for 1, 2 and 3 digits agree wherever a set builds), so
        that every depth answers. The answers are kept on disk for the OpenFHE that gave them (:func:`_kept_on_disk`)."""
        if self.scheme != "bfv" or depth < 1:
            return None
        key = (self.params, depth)
        if key not in _PRIMES_FOR_DEPTH:
            cp = self._cc_params(self.params.replace(depth=depth, ks_digits=1))
            cp.SetSecurityLevel(ofhe.HEStd_NotSet)
            _PRIMES_FOR_DEPTH[key] = _kept_on_disk(str(cp), lambda: len(_q_primes(json.loads(
                ofhe.Serialize(ofhe.GenCryptoContext(cp), ofhe.JSON)))))
        return _PRIMES_FOR_DEPTH[key]

    def _mod_switch_many(self, x, levels: int):
        if self.scheme != "bfv":
            return super()._mod_switch_many(x, levels)
        if x.GetLevel() + levels >= self._towers:
            raise DepthExhausted(f"cannot drop {levels} towers: the ciphertext has {self._towers - x.GetLevel()} "
                                 f"of the {self._towers} OpenFHE chose for {self.params.name}")
        return self._compress(x, x.GetLevel() + levels)

    def _drop_by_zero(self, x):
        """CKKS's level drop where the bindings lack LevelReduce: ``x`` plus the zero plaintext encoded one level
        down. OpenFHE's FIXEDMANUAL addition first drops the operand with more towers to the other's
        (``AdjustLevelsInPlace``, LevelReduce itself), and the zeros add nothing: LevelReduce's ciphertext."""
        zero = self._cc.MakeCKKSPackedPlaintext([0.0] * self.slots, 1, x.GetLevel() + 1, None, self.slots)
        return self._cc.EvalAdd(x, zero)

    def _noise_budget(self, x) -> int:
        raise SchemeError("OpenFHE does not expose the BFV noise budget")

    # ------------------------------------------------------------------ bytes
    def _ser(self, x) -> bytes:
        return ofhe.Serialize(x, _BIN)

    def _deser(self, data: bytes):
        # OpenFHE keeps the first crypto context it meets for a set of parameters and hands it to every context
        # built with them later: one parsed here, without its CRT tables (_parse_ciphertext), would make those
        # compute garbage or crash. So bytes carrying another crypto context are refused before they are parsed.
        if not data.startswith(self._context_bytes):
            raise CorruptedData(f"the ciphertext payload carries another crypto context than {self.params.name}'s "
                                f"(its serialized parameters differ from this context's)")
        return _parse_ciphertext(data)

    @functools.cached_property
    def _context_bytes(self) -> bytes:
        """What every serialized ciphertext of this context starts with: its crypto context, up to the key tag.
        Made in this process before a guard's child parses (it cannot encrypt: libgomp's threads do not survive
        fork)."""
        data = self._template(0)[0]
        return data[:data.index(self._tag.encode())]

    def deserialize(self, data: bytes, *, guard: bool = False):
        if self.fragile_ciphertexts:
            self._context_bytes
        return super().deserialize(data, guard=guard)

    def vet(self, source, *, what: str, sizes=None) -> None:
        if self.fragile_ciphertexts:
            self._context_bytes
        super().vet(source, what=what, sizes=sizes)

    @property
    def fragile_ciphertexts(self) -> bool:
        # A received CKKS payload never reaches OpenFHE's parser here (_load), so it needs no guard's child.
        return self.scheme != "ckks"

    def _load(self, payload: bytes, meta: dict):
        # CKKS: the payload's level and noise scale degree come from its authenticated metadata (hepkg's CKKS
        # ciphertexts are at degree 2 exactly while a product waits for its rescale), so it is not parsed: only
        # its coefficients are read, range-checked, into this context's own ciphertext (_rebuilt), which is parsed
        # instead (one parse of OpenFHE's, not two: 4-5 ms of a 5 MB ciphertext each, and none of foreign bytes).
        if self.scheme != "ckks":
            return super()._load(payload, meta)
        if self._tag.encode() not in payload:
            raise ContextMismatch("the ciphertext payload was encrypted under another key than this context's")
        return self._rebuilt(payload, meta["level"], 2 if meta["pending"] else 1)

    def _checked(self, raw, meta: dict, payload: bytes):
        # An OpenFHE ciphertext carries its own copy of the crypto context. Deserializing one whose copy
        # differs from this context's (altered parameter bytes) yields a ciphertext of a new crypto
        # context that parses fine and then kills the process in Decrypt (SIGFPE, SIGABRT). _deser refuses
        # such bytes before parsing; OpenFHE hands back the one crypto context it holds for equal parameters,
        # so what parsed must be ours.
        if raw.GetCryptoContext() is not self._cc:
            raise CorruptedData(f"the ciphertext payload carries another crypto context than {self.params.name}'s "
                                f"(altered parameters): OpenFHE would crash decrypting it")
        components = raw.NumberCiphertextElements() if hasattr(raw, "NumberCiphertextElements") else len(
            raw.GetElements())                  # openfhe-python before 1.6
        if components != 2:
            raise CorruptedData(f"the ciphertext payload has {components} components, not 2")
        if raw.GetKeyTag() != self._tag:
            raise ContextMismatch("the ciphertext payload was encrypted under another key than this context's")
        if self.scheme != "bgv" and raw.GetLevel() != meta["level"]:
            raise CorruptedData(f"the ciphertext payload is at level {raw.GetLevel()}, its metadata says {meta['level']}")
        if in_child():                          # a guard's child only shows that parsing survives
            return raw
        return self._rebuilt(payload, raw.GetLevel(), raw.GetNoiseScaleDeg(), raw.GetScalingFactor())

    # ------------------------------------------------------------------ rebuilding a parsed ciphertext
    # A payload may carry this crypto context and still hold towers of another modulus, ring or length: it
    # parses, and the first operation on it dies in OpenFHE's parallel code (std::terminate: "ModAddEq(): Called
    # on NativeVectorT's with different parameters"). Its structure cannot be compared byte for byte (OpenFHE
    # writes shared parameter objects once or again depending on the operations that made it), and a forked
    # child cannot run an operation on it (libgomp's threads do not survive fork). So only its coefficients
    # are kept: they are copied into a ciphertext this context made at that level, which is parsed instead.
    def _rebuilt(self, payload: bytes, level: int, degree: int, factor: float | None = None):
        """The ciphertext of this context's own making at ``level`` with the coefficients in ``payload``, noise scale
        degree ``degree`` and scaling factor ``factor`` (None: the one this context gives that degree);
        CorruptedData where those are not what this context makes, or the payload holds other vectors."""
        template, slots, unit = self._template(level)
        degrees = range(1, 3) if self.scheme == "ckks" else range(0, 3) if self.scheme == "bgv" else \
            range(1, self.params.depth + 2)
        own = unit ** (degree if self.scheme == "ckks" else 1)
        if degree not in degrees or factor not in (None, own):
            raise CorruptedData(f"the ciphertext payload has noise scale degree {degree} and scaling factor {factor}; "
                                f"{self.params.name} makes degrees {degrees.start}-{degrees.stop - 1}, each with its "
                                f"power of {unit}")
        towers = self._towers - level
        found = self._vectors(payload, towers)
        if found is None:
            raise CorruptedData(f"the ciphertext payload does not hold 2 x {towers} vectors of "
                                f"{self.params.n} coefficients under {self.params.name}'s tower moduli at level {level}")
        extra = _find_vectors(payload[found[-1][1]:], self._primes[:1], self.params.n)
        if extra is not None or (towers < self._towers and _find_vectors(
                payload, self._primes[towers:towers + 1], self.params.n) is not None):
            raise CorruptedData(f"the ciphertext payload holds more vectors than 2 x {towers} (a third component, "
                                f"or towers beyond level {level})")
        for start, _, q in found:
            if np.frombuffer(payload, np.uint64, count=self.params.n, offset=start).max() >= q:
                raise CorruptedData(f"the ciphertext payload holds coefficients at or above their tower's modulus {q}")
        ct = _parse_ciphertext(_spliced(template, slots, payload, found))
        ct.SetNoiseScaleDeg(degree)
        ct.SetScalingFactor(own if factor is None else factor)
        return ct

    def _vectors(self, data: bytes, towers: int) -> list | None:
        """Where the 2 x ``towers`` vectors of a serialized ciphertext at that many towers lie
        (:func:`_find_vectors`)."""
        return _find_vectors(data, self._primes[:towers] * 2, self.params.n)

    def _template(self, level: int) -> tuple[bytes, list, float]:
        """A serialized ciphertext of this context at ``level``, where its coefficients lie, and its scaling factor
        (the few levels last used are kept)."""
        with _TEMPLATES_LOCK:
            hit = self._templates.get(level)
        if hit is not None:
            return hit
        if not 0 <= level < self._towers:
            raise CorruptedData(f"the ciphertext payload claims level {level}; {self.params.name} has "
                                f"{self._towers} towers")
        own = self._own_at(level)
        data = ofhe.Serialize(own, _BIN)
        slots = self._vectors(data, self._towers - level)
        if slots is None:
            raise RuntimeError(f"OpenFHE's serialized ciphertext ({self.params.name}, level {level}) is not laid out "
                               f"as hepkg reads it (2 x {self._towers - level} vectors: length, coefficients, modulus)")
        hit = (data, slots, own.GetScalingFactor())
        with _TEMPLATES_LOCK:
            while len(self._templates) >= _TEMPLATES_KEPT:
                self._templates.pop(next(iter(self._templates)))
            self._templates[level] = hit
        return hit

    def _own_at(self, level: int):
        """A fresh encryption of zero under this context at ``level`` (towers dropped)."""
        if self.scheme == "bfv":
            fresh = self._encrypt(self._encode(np.zeros(self.slots, dtype=np.int64), 0))
            return self._compress(fresh, level) if level else fresh
        if self.scheme == "bgv":
            return self._encrypt(self._cc.MakePackedPlaintext([0], 1, level))
        return self._encrypt(self._encode(np.zeros(self.slots), level))

    def _key_sizes(self) -> dict[str, int]:
        zero = self._encrypt(self._encode(np.zeros(self.slots, dtype=np.float64 if self.scheme == "ckks"
                                                   else np.int64), 0))
        return {"public_key": len(ofhe.Serialize(self._pk, _BIN)),
                "relin_key": len(ofhe.SerializeEvalMultKeyString(_BIN, self._tag)) if self.relin_key else 0,
                "galois_keys": self._galois_nbytes(),
                "ciphertext": len(ofhe.Serialize(zero, _BIN)),
                "switch_key": len(self._switch_bytes()) if self.descent > 1 else 0}
