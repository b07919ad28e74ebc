"""Every party that parses a ciphertext another party sent, fed a session member's forgery (issue 59, item 2).

Each entry of :data:`PARTIES` runs one party's receiving path on OpenFHE, the backend whose parser can crash
the interpreter (the GPU server on the rns engine, which it runs on), with the bytes it receives replaced by ``forge(ctx, genuine)``: a forgery made with the
session's key, so that it passes the MAC and reaches the library's parser. It returns, per step that reads
them, the error raised (None where the forgery parsed: a changed coefficient is another valid ciphertext, which
decrypts to garbage by design, and the OMR decoder may then refuse the digest with its DecodeError). ``tests/test_fuzz.py`` forges at
random (a few mutations per party in ``make test``, 1,000 in ``make test-slow``); ``tests/test_hardening_round3.py``
with a forgery known to crash the parser (:func:`crashing`), in a child interpreter, for the parties on OpenFHE
(:data:`ON_OPENFHE`): a party that parsed it without the guard died there.
"""
import atexit
import contextlib
import functools
import os
import pathlib
import random
import shutil
import tempfile

import numpy as np

import hepkg.he as he
from hepkg.he import envelope


def forgery(ctx, data, change) -> bytes:
    """``data`` (a ciphertext of ``ctx``'s session) with ``change(payload)`` as its payload, tagged with the session
    key as a session member can."""
    meta, payload = envelope.unpack(data, "ciphertext", key=ctx.session_key)
    meta.pop("kind")
    return envelope.pack("ciphertext", meta, change(bytes(payload)), key=ctx.session_key)


#: what :func:`crashing` raises when none of its forgeries crashes the parser
NO_CRASH = "no forgery found that crashes the parser"


def crashing(ctx, data) -> bytes:
    """A forgery of ``data`` on which OpenFHE's parser crashes (found under the guard, which survives it, where the
    context reads such ciphertexts with one), among 3000 single-byte changes in its first 4096 bytes;
    AssertionError(:data:`NO_CRASH`) where none does."""
    rng = random.Random(59)
    for _ in range(3000):
        def change(payload):
            b = bytearray(payload)
            b[rng.randrange(min(len(b), 4096))] = rng.randrange(256)
            return bytes(b)
        forged = forgery(ctx, data, change)
        try:
            ctx.deserialize(forged, guard=True)
        except he.HEError as exc:
            if "crashed" in str(exc):
                return forged
    raise AssertionError(NO_CRASH)


def _outcome(step):
    """The HEError (or the OMR decoder's DecodeError) ``step()`` raised, or None."""
    from hepkg.omr.decode import DecodeError

    try:
        step()
    except (he.HEError, DecodeError) as exc:
        return exc
    return None


# ------------------------------------------------------------------ face search
@functools.lru_cache(maxsize=None)
def _faces():
    from hepkg.facesearch import Client, Enroller, key_steps

    ctx = he.context("openfhe", "toy-ckks-1024", rotations=key_steps("hydia", 8, 512), policy="exact",
                     insecure=True)
    public = ctx.public()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="hepkg-fuzz-faces-"))
    atexit.register(shutil.rmtree, folder, True)
    db = Enroller(public).enroll(np.random.default_rng(1).normal(size=(4, 8)), folder / "db")
    return ctx, public, db, Client(ctx)


def face_server_query(forge):
    from hepkg.facesearch import Server

    ctx, public, db, client = _faces()
    meta, ct = envelope.unseal(client.query(np.ones(8)), "face-query", key=ctx.session_key)
    meta.pop("kind")
    query = envelope.seal("face-query", meta, forge(ctx, bytes(ct)), key=ctx.session_key)
    return [_outcome(lambda: list(Server(public, db).compared(query, "hydia", None)))]


def face_server_diagonals(forge):
    """A diagonal file of the enrolled database replaced: the server vets them all when it starts (a forked child
    where the scheme's ciphertexts need one), a query reads each."""
    from hepkg.facesearch import EncryptedDatabase, Server

    ctx, public, db, _ = _faces()
    with tempfile.TemporaryDirectory(prefix="hepkg-fuzz-db-") as tmp:
        shutil.copytree(db.folder, pathlib.Path(tmp) / "db")
        copy = EncryptedDatabase(pathlib.Path(tmp) / "db")
        meta, ct = envelope.unseal(copy.path(0, 3).read_bytes(), "face-diagonal", key=ctx.session_key)
        meta.pop("kind")
        copy.path(0, 3).write_bytes(envelope.seal("face-diagonal", meta, forge(ctx, bytes(ct)), key=ctx.session_key))
        return [_outcome(lambda: Server(public, copy)), _outcome(lambda: copy.diagonal(public, 0, 3))]


def face_client_answers(forge):
    """A membership answer (counted, and aggregated per slot) and an identification answer, each forged."""
    ctx, public, db, client = _faces()
    answer = forge(ctx, public.serialize(public.encrypt([0.5])))
    lay = db.layout

    def membership(aggregate):
        meta = dict(aggregate=aggregate, K=lay.K, slots=lay.slots, groups=lay.groups)
        return envelope.seal("face-membership", meta, answer, key=ctx.session_key)

    return [_outcome(lambda: client.count(membership("count"))),
            _outcome(lambda: client.slot_values(membership("slots"))),
            _outcome(lambda: client.indicators([answer], lay))]


def face_server_fold(forge):
    from hepkg.facesearch import Server

    ctx, public, db, _ = _faces()
    answer = forge(ctx, public.serialize(public.encrypt([0.5])))
    return [_outcome(lambda: Server(public, db).fold([answer]))]


@functools.lru_cache(maxsize=None)
def _device_server():
    """The GPU pipeline's server (the rns engine on numpy), its database enrolled under the client's keys."""
    from hepkg.facesearch import Client, Enroller, gpu

    os.environ.setdefault("HEPKG_RNS_XP", "numpy")
    ctx = he.context("rns", "toy-ckks-4096-d11", rotations=gpu.key_plan("bsgs-tbs", 32, 2048)["generated"],
                     policy="exact", insecure=True)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="hepkg-fuzz-gpu-"))
    atexit.register(shutil.rmtree, folder, True)
    db = Enroller(ctx.public()).enroll(np.random.default_rng(2).normal(size=(8, 32)), folder / "db")
    public = ctx.to_bytes()
    return ctx, gpu.DeviceServer(public, db, "bsgs-tbs", fingerprint=he.fingerprint(public)), Client(ctx)


def gpu_server_query(forge):
    """The query's first step, where the server parses it (the rest of a query is the comparison's work)."""
    ctx, server, client = _device_server()
    meta, ct = envelope.unseal(client.query(np.ones(32)), "face-query", key=ctx.session_key)
    meta.pop("kind")
    return [_outcome(lambda: server._table(envelope.seal("face-query", meta, forge(ctx, bytes(ct)),
                                                         key=ctx.session_key)))]


# ------------------------------------------------------------------ OMR
@functools.lru_cache(maxsize=None)
def _omr(perf: bool):
    from hepkg.omr import detector as D, perfomr as PF
    from hepkg.omr.signaling import PSParams, keygen

    if perf:
        ps = PSParams("toy", q=65537, h=4, r=6, n=16, l=2)
        lay = PF.perf_layout(ps, 4096, scheme="perfomd", k=4, nu=2, repetitions=4, buckets=64, seed=1)
        params, receiver = "toy-bfv-omr-perf", PF.PerfReceiver
    else:
        ps = PSParams("toy", q=12289, h=4, r=6, n=16, l=2)
        lay = D.layout(ps, 1024, scheme="sophomd", k=4, payload_bytes=8)
        params, receiver = "toy-bfv-omr", D.Receiver
    ctx = he.context("openfhe", params, rotations=lay.steps, policy="exact", swap=True, insecure=True)
    return lay, receiver(ctx, keygen(ps, np.random.default_rng(0))[0], lay)


@contextlib.contextmanager
def _sending(ctx, forge):
    """``ctx`` sends ``forge(ctx, what it would send)`` for every ciphertext it serializes in the block (the
    parties of OMR hand each other ciphertext objects, serialized and parsed on the way)."""
    ctx.serialize = lambda ct: forge(ctx, type(ctx).serialize(ctx, ct))
    try:
        yield
    finally:
        del ctx.serialize


def omr_detector_key(forge):
    """The detector's key: Enc(sk) from the receiver (Receiver.detection_key)."""
    _, receiver = _omr(False)
    with _sending(receiver.ctx, forge):
        return [_outcome(receiver.detection_key)]


def omr_receiver_digest(forge):
    from hepkg.omr import detector as D

    lay, receiver = _omr(False)
    pub = receiver.digest_context.public()             # the compression's lowered context: the digest's
    ct = pub.encrypt([0])
    with _sending(pub, forge):
        return [_outcome(lambda: receiver.retrieve(D.Digest(ct, 100, lay)))]


def perfomr_receiver_digest(forge):
    from hepkg.omr import perfomr as PF

    lay, receiver = _omr(True)
    pub = receiver.ctx.public()
    ct = pub.encrypt([0])
    with _sending(pub, forge):
        return [_outcome(lambda: receiver.retrieve(PF.PerfDigest(ct, None, 100, lay, {})))]


# ------------------------------------------------------------------ spmv baselines
#: a small BFV ring with the row-wise method's depth 2
SPMV = he.ParamSet(name="test-bfv-1024-d2", scheme="bfv", n=1024, plain_modulus=65537, qi_bits=(30, 30, 30, 30),
                   depth=2)


def _spmv(run, direction: str, forge):
    """``run`` on OpenFHE with every message sent in ``direction`` forged."""
    from hepkg.spmv import transport

    send = transport.Channel.send

    def forged(self, where, ct):
        data = send(self, where, ct)
        return forge(ct.ctx, data) if where == direction else data

    transport.Channel.send = forged
    try:
        return [_outcome(lambda: run(np.array([[1, 0, 2], [0, 3, 0], [4, 0, 5]]), np.array([1, 2, 3]),
                                     backend="openfhe", params=SPMV, insecure=True))]
    finally:
        transport.Channel.send = send


def spmv_diagonal_cloud(forge):
    from hepkg.spmv import run_diagonal
    return _spmv(run_diagonal, "b_to_cloud", forge)


def spmv_diagonal_client_a(forge):
    from hepkg.spmv import run_diagonal
    return _spmv(run_diagonal, "cloud_to_a", forge)


def spmv_rowwise_server(forge):
    from hepkg.spmv import run_rowwise
    return _spmv(run_rowwise, "b_to_cloud", forge)


def spmv_rowwise_client_b(forge):
    from hepkg.spmv import run_rowwise
    return _spmv(run_rowwise, "cloud_to_b", forge)


PARTIES = {f.__name__: f for f in (
    face_server_query, face_server_diagonals, face_client_answers, face_server_fold, gpu_server_query,
    omr_detector_key, omr_receiver_digest, perfomr_receiver_digest, spmv_diagonal_cloud, spmv_diagonal_client_a,
    spmv_rowwise_server, spmv_rowwise_client_b)}

#: the parties whose parser (OpenFHE's) can crash; the rns engine's numpy parser bounds what it reads
ON_OPENFHE = [name for name in PARTIES if name != "gpu_server_query"]
