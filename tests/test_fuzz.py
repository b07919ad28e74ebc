"""Fuzzing every backend's deserializers: ciphertexts, contexts and the keys inside them.

Each mutated input must either parse (a mutation inside coefficient data is a valid
ciphertext or key of something else) or raise CorruptedData / ContextMismatch, and the
interpreter must survive: OpenFHE's parsers crash on some inputs, which the forked guard
turns into CorruptedData. Two attackers: an outsider alters the authenticated bytes (every
attempt must fail the MAC or the pinned fingerprint), and an insider, a session member, re-tags
altered payloads with the session key (or a context's maker publishes the fingerprint of an
altered context) so that they reach the library.
Every party that parses what another party sent is fuzzed the same way through its own entry point
(``tests/fuzz_parties.py``). The smoke run is part of ``make test``; ``slow`` runs HEPKG_FUZZ_TRIALS
(default 1000) per target.
"""
import os
import random

import pytest

import hepkg.he as he
from hepkg.he import envelope
import fuzz_parties
from conftest import BFV, BFV_BACKENDS, CKKS, CKKS_BACKENDS, received, run_python

BACKENDS = sorted(set(BFV_BACKENDS) | set(CKKS_BACKENDS))
TRIALS = int(os.environ.get("HEPKG_FUZZ_TRIALS", "1000"))
SMOKE = 25
PARTY_SMOKE = 2
REJECTED = (he.CorruptedData, he.ContextMismatch)
HERE = os.path.dirname(os.path.abspath(__file__))


def mutate(data: bytes, rng: random.Random) -> bytes:
    """Byte flips (mostly in the first 4 KiB, where the structure is), truncation, or a spliced block;
    never ``data`` itself."""
    b = bytearray(data)
    kind = rng.random()
    if kind < 0.1 and b:
        return bytes(b[:rng.randrange(len(b))])
    if kind < 0.2 and b:
        i, n = rng.randrange(len(b)), rng.randrange(1, 64)
        spliced = b[:i] + rng.randbytes(n) + b[i + rng.randrange(0, 64):]
        return bytes(spliced) if spliced != data else data[1:]
    for _ in range(rng.choice((1, 1, 2, 4, 8))):
        if b:
            i = rng.randrange(min(len(b), 4096)) if rng.random() < 0.7 else rng.randrange(len(b))
            b[i] ^= rng.randrange(1, 256)
    if b == data:  # two flips of one byte cancelled
        b[0] ^= 1
    return bytes(b)


def params_of(backend):
    return BFV if backend in BFV_BACKENDS else CKKS


def _context(backend):
    return he.context(backend, params_of(backend), rotations=[1, 2])


def _strip(meta: dict) -> dict:
    return {k: v for k, v in meta.items() if k != "kind"}


def fuzz_ciphertexts(backend: str, trials: int, seed: int = 1) -> None:
    ctx = _context(backend)
    data = ctx.serialize(ctx.encrypt([1, 2, 3]))
    meta, payload = envelope.unpack(data, "ciphertext", key=ctx.session_key)
    rng = random.Random(seed)
    for _ in range(trials):
        with pytest.raises(REJECTED):  # outsider: the MAC holds
            ctx.deserialize(mutate(data, rng))
        forged = envelope.pack("ciphertext", _strip(meta), mutate(payload, rng), key=ctx.session_key)
        try:  # insider: reaches the library's parser
            ctx.deserialize(forged, guard=True)
        except REJECTED:
            pass


def _payload_parts(backend: str):
    ctx = _context(backend)
    meta, payload = envelope.unpack(ctx.to_bytes(), "context")
    parts = envelope.unframe(payload, 4) if payload else []
    return _strip(meta), payload, parts


def fuzz_contexts(backend: str, trials: int, seed: int = 2) -> None:
    meta, payload, _ = _payload_parts(backend)
    rng = random.Random(seed)
    good = envelope.pack("context", meta, payload)
    for _ in range(trials):
        with pytest.raises(REJECTED):  # outsider: the pinned fingerprint holds
            he.load_context(mutate(good, rng), fingerprint=he.fingerprint(good))
        try:  # the context's maker, publishing the fingerprint of what it altered
            received(envelope.pack("context", meta, mutate(payload, rng)))
        except REJECTED:
            pass


def fuzz_keys(backend: str, trials: int, seed: int = 3) -> None:
    """Mutations inside one key at a time: public key, relinearization key, Galois keys."""
    meta, _, parts = _payload_parts(backend)
    rng = random.Random(seed)
    for t in range(trials):
        which = 1 + t % 3
        altered = list(parts)
        altered[which] = mutate(parts[which], rng)
        try:
            received(envelope.pack("context", meta, envelope.frame(altered)))
        except REJECTED:
            pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_fuzz_smoke(backend):
    fuzz_ciphertexts(backend, SMOKE)
    if backend != "sim":  # sim's context payload is empty
        fuzz_contexts(backend, SMOKE)
        fuzz_keys(backend, SMOKE)


def in_a_fresh_process(call: str) -> None:
    """``call`` (on this module, as F) in a fresh interpreter. The guard forks once or more per trial, and a fork
    costs with the memory of the process that forks: 3 ms at 31 MB, 15 ms beside one 2^16 OpenFHE context (0.3 GB,
    where one spmv party's trial took 0.33 s instead of 0.11), so that in a test worker which earlier tests left
    holding gigabytes, 1,000 trials took over 15 minutes."""
    out = run_python(f"import sys; sys.path.insert(0, {HERE!r}); import test_fuzz as F; F.{call}", timeout=3600)
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("target", [fuzz_ciphertexts, fuzz_contexts, fuzz_keys], ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", BACKENDS)
def test_fuzz(backend, target):
    if backend == "sim" and target is not fuzz_ciphertexts:
        pytest.skip("sim's context payload is empty: nothing to parse")
    in_a_fresh_process(f"{target.__name__}({backend!r}, {TRIALS})")


def fuzz_party(name: str, trials: int, seed: int = 4) -> None:
    """A session member's random forgeries, delivered to one party's entry point: each parses or is refused with
    an error naming the problem (any other exception fails the test), and the interpreter survives."""
    rng = random.Random(seed)
    for _ in range(trials):
        fuzz_parties.PARTIES[name](lambda ctx, data: fuzz_parties.forgery(ctx, data, lambda p: mutate(p, rng)))


needs_openfhe = pytest.mark.skipif(not he.availability()["openfhe"], reason="the parties are fuzzed on OpenFHE")


@needs_openfhe
@pytest.mark.parametrize("party", fuzz_parties.PARTIES)
def test_fuzz_parties_smoke(party):
    fuzz_party(party, PARTY_SMOKE)


@pytest.mark.slow
@needs_openfhe
@pytest.mark.parametrize("party", fuzz_parties.PARTIES)
def test_fuzz_parties(party):
    in_a_fresh_process(f"fuzz_party({party!r}, {TRIALS})")
