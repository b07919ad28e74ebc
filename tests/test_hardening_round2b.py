"""Hardening, second round (issue 27): items 6, 8, 10, 11, 12 and 13, each from its reproduction."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import psutil
import pytest

import hepkg.he as he
from conftest import BFV_BACKENDS, received
from test_grid import running
from hepkg.bench.child import SCRATCH_PREFIX, in_child
from hepkg.datasets.faces import synthetic_database
from hepkg.facesearch.chebyshev import compare_numpy
from hepkg.facesearch.packing import normalize, scores_from_slots
from hepkg.facesearch.protocol import Client, EncryptedDatabase, Enroller, Server, key_steps
from hepkg.omr import board as BB, detector as D
from hepkg.omr.signaling import PSParams

OMR_PS = PSParams("toy", q=12289, h=4, r=6, n=16, l=2)

TESTS = pathlib.Path(__file__).parent


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


# ------------------------------------------------------------------ 6. measurement children die with their parent
def scratch_and_sleep(config):
    """A trial's shape: a temporary folder with data in it (a face database), then a long computation."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="hepkg-faces-"))
    (folder / "d0000.ct").write_bytes(b"x" * 1000)
    (pathlib.Path(config["pids"]) / str(os.getpid())).write_text(str(folder))
    time.sleep(120)
    return []


def no_rows(config):
    return []


def trial_in_child(config):
    return in_child(scratch_and_sleep, config, need_bytes=0)


PARENT = """
import sys
from hepkg.bench.child import in_child
from hepkg.grid import run_grid
from test_hardening_round2b import scratch_and_sleep, trial_in_child
pids, store, mode = sys.argv[1:]
if mode == "inline":
    in_child(scratch_and_sleep, {"pids": pids}, need_bytes=0)
else:
    run_grid(trial_in_child, [{"i": i, "pids": pids} for i in range(2)], store, executor="process", workers=2,
             progress=False)
"""


@pytest.mark.parametrize("mode,trials", [("inline", 1), ("process pool", 2)])
def test_6_measurement_children_die_with_a_killed_parent(tmp_path, monkeypatch, mode, trials):
    """SIGKILL of the process running in_child (directly, or in run_grid's process workers): every
    descendant (workers, trials, resource trackers) exits; the next in_child removes the trials' scratch."""
    pids, scratch = tmp_path / "pids", tmp_path / "tmp"
    pids.mkdir()
    scratch.mkdir()
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pids), str(tmp_path / "store"), mode], cwd=TESTS,
                              env=os.environ | {"TMPDIR": str(scratch)})
    family = []
    try:
        deadline = time.monotonic() + 120
        while len(list(pids.iterdir())) < trials:
            assert parent.poll() is None and time.monotonic() < deadline, "the trials did not start"
            time.sleep(0.1)
        family = psutil.Process(parent.pid).children(recursive=True)
        assert len(family) >= trials
        folders = [pathlib.Path(p.read_text()) for p in pids.iterdir()]
        assert all(f.is_dir() for f in folders)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 15
        while running(family) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(family), f"{len(running(family))} of {len(family)} descendants outlived the parent"
        assert all(f.parent.name.startswith(SCRATCH_PREFIX) for f in folders)  # left by the killed parent
        monkeypatch.setattr(tempfile, "tempdir", str(scratch))
        assert in_child(no_rows, {}, need_bytes=0) == []
        assert not any(f.exists() for f in folders) and list(scratch.iterdir()) == []
    finally:
        parent.kill()
        for proc in running(family):
            proc.kill()


# ------------------------------------------------------------------ 12. an enrollment killed mid-write
KILLED_ENROLLMENT = """
import os, signal, sys
import numpy as np
import hepkg.he as he
from hepkg.facesearch import Enroller
public = he.context("sim", "toy-ckks-1024", insecure=True).public()
written, serialize = [], public.serialize
def dies_at_the_fifth(ct):
    written.append(1)
    if len(written) == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return serialize(ct)
public.serialize = dies_at_the_fifth
Enroller(public).enroll(np.random.default_rng(0).normal(size=(600, 8)), sys.argv[1])
"""


def test_12_an_enrollment_killed_mid_write_is_cleaned_by_the_next(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", KILLED_ENROLLMENT, str(tmp_path / "db")])
    assert proc.wait(timeout=120) == -signal.SIGKILL
    [stale] = tmp_path.glob(".db.enrolling-*")
    assert stale.name == f".db.enrolling-{proc.pid}" and len(list(stale.rglob("*.ct"))) == 4
    live = tmp_path / f".other.enrolling-{os.getpid()}"  # a running enrollment's (this process)
    live.mkdir()
    ctx = he.context("sim", TOY, insecure=True)
    db = Enroller(ctx.public()).enroll(np.ones((600, 8)), tmp_path / "db")
    assert not stale.exists() and live.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "db"] and db.layout.groups == 2


# ------------------------------------------------------------------ 10. face search: dimension, kappa, roles, files
TOY = "toy-ckks-1024"  # 512 slots, insecure: tests only
FACE_BACKENDS = ["sim"] + (["openfhe"] if he.availability()["openfhe"] else []) + ["rns"]


def _face_parties(tmp_path, backend, l=128, K=600):
    ctx = he.context(backend, TOY, rotations=key_steps("bsgs-diagonal", l, 512), policy="exact", insecure=True)
    inst = synthetic_database(K, 2, l, seed=5)
    db = Enroller(ctx.public()).enroll(inst.database, tmp_path / "db")
    return ctx, inst, db, Server(ctx.public(), db), Client(ctx)


@pytest.mark.parametrize("backend", FACE_BACKENDS)
def test_10_a_query_of_another_dimension_is_refused(tmp_path, backend):
    """Client.query(q[:64]) against an l = 128 database returned counts and a false match."""
    ctx, inst, db, server, client = _face_parties(tmp_path, backend)
    short = client.query(inst.query[:64])
    with pytest.raises(ValueError, match="the query has 64 dimensions; the database's vectors have l=128"):
        next(server.compared(short, "bsgs-diagonal", None))
    for run in (server.identify, server.membership):
        with pytest.raises(ValueError, match="64 dimensions"):
            run(short, "bsgs-diagonal", 7)
    with pytest.raises(he.CorruptedData, match="expected a serialized face-query"):  # a bare ciphertext: no l
        next(server.compared(ctx.serialize(ctx.encrypt(np.ones(512))), "bsgs-diagonal", None))
    scores = [ctx.decrypt(s).real for s in server.compared(client.query(inst.query), "bsgs-diagonal", None)]
    want = normalize(inst.database) @ normalize(inst.query)
    assert np.abs(scores_from_slots(scores, db.layout) - want).max() < (1e-12 if backend == "sim" else 1e-3)


@pytest.mark.parametrize("kappa", [8.0, None, True, "8", 3])
def test_10_membership_kappa_must_be_an_integer_depth(tmp_path, kappa):
    ctx, inst, db, server, client = _face_parties(tmp_path, "sim")
    q = client.query(inst.query)
    for run in (server.membership, server.identify):
        with pytest.raises(ValueError, match="kappa must be an integer, one of \\[7, 8, 9, 10\\]"):
            run(q, "bsgs-diagonal", kappa)
    with pytest.raises(ValueError, match="kappa must be an integer"):
        compare_numpy(np.zeros(3), kappa)


def test_10_the_enroller_refuses_a_secret_context(tmp_path):
    ctx = he.context("sim", TOY, insecure=True)
    with pytest.raises(he.SecretContextRefused, match="enroller"):
        Enroller(ctx)
    assert not list(tmp_path.iterdir())


def _swap(a: pathlib.Path, b: pathlib.Path) -> None:
    tmp = a.with_name("swap")
    os.replace(a, tmp)
    os.replace(b, a)
    os.replace(tmp, b)


@pytest.mark.parametrize("backend", FACE_BACKENDS)
def test_10_swapped_files_and_an_edited_manifest_are_refused(tmp_path, backend):
    """Swapped diagonal files went undetected; so did another enrollment's file and an edited manifest."""
    ctx, inst, db, server, client = _face_parties(tmp_path, backend, l=8)
    q = client.query(inst.query)

    def scores(server, method="bsgs-diagonal"):
        return scores_from_slots([ctx.decrypt(s).real for s in server.compared(q, method, None, n1=3)], db.layout)

    want = scores(server)
    _swap(db.path(0, 1), db.path(0, 2))                               # two diagonals of one group
    with pytest.raises(he.CorruptedData, match="is not diagonal 1 of group 0 .*index=2 \\(expected 1\\)"):
        scores(server)
    _swap(db.path(0, 1), db.path(0, 2))
    _swap(db.path(0, 3), db.path(1, 3))                               # one diagonal across groups
    with pytest.raises(he.CorruptedData, match="group=1 \\(expected 0\\)"):
        scores(server)
    _swap(db.path(0, 3), db.path(1, 3))
    np.testing.assert_array_equal(scores(server), want)
    other = Enroller(ctx.public()).enroll(inst.database, tmp_path / "other")  # the same data, the same session
    shutil.copy(other.path(1, 0), db.path(1, 0))
    with pytest.raises(he.CorruptedData, match="enrollment="):
        scores(server)
    for field, value, method in (("key_id", "ab" * 16, "bsgs-diagonal"), ("K", 599, "bsgs-diagonal"),
                                 ("prerotate_n1", 3, "bsgs-textbook")):  # claims the textbook pre-rotation
        edited = tmp_path / f"edited-{field}"
        shutil.copytree(other.folder, edited)
        meta = json.loads((edited / "manifest.json").read_text())
        (edited / "manifest.json").write_text(json.dumps(meta | {field: value}))
        with pytest.raises(he.CorruptedData, match=f"{field}="):
            scores(Server(ctx.public(), EncryptedDatabase(edited)), method)
    assert meta["key_id"] == ctx.key_id


# ------------------------------------------------------------------ 11. OMR payload slots outside [0, p)
@pytest.mark.parametrize("backend", BFV_BACKENDS)
def test_11_sophomr_payload_slots_outside_the_plaintext_space_are_refused(backend):
    lay = D.layout(OMR_PS, 1024, scheme="sophomr", k=4, payload_bytes=8)
    ctx = he.context(backend, "toy-bfv-omr", rotations=lay.steps, policy="exact", swap=True, insecure=True)
    board = BB.bulletin_board(100, 2, OMR_PS, payload_bytes=8, seed=1)
    det = D.Detector(D.Receiver(ctx, board.sk, lay).detection_key())
    p = OMR_PS.q
    for value, dtype in ((p + 5, np.int64), (-1, np.int64), (2 ** 64 - 1, np.uint64), (p, np.int32)):
        slots = board.slots.astype(dtype)
        slots[board.pertinent[0], 1] = value
        with pytest.raises(ValueError, match=f"payload slot 1 of message {board.pertinent[0]} is {value}, "
                                             f"outside \\[0, p\\) for p = {p}"):
            det.digest(board.clues, slots)


def test_11_perfomr_payload_slots_outside_the_plaintext_space_are_refused():
    from hepkg.omr import perfomr as PF

    ps = PSParams("toy", q=65537, h=4, r=6, n=16, l=2)
    lay = PF.perf_layout(ps, 4096, scheme="perfomr", k=4, payload_bytes=32, nu=2, repetitions=4, buckets=64, seed=1)
    board = BB.bulletin_board(4096, 2, ps, payload_bytes=32, others=0, seed=2)
    ctx = he.context("sim", "toy-bfv-omr-perf", rotations=lay.steps, policy="exact", swap=True, insecure=True)
    det = PF.PerfDetector(PF.PerfReceiver(ctx, board.sk, lay).detection_key())
    for value, dtype in ((ps.q + 5, np.int64), (-1, np.int64), (2 ** 64 - 1, np.uint64)):
        slots = board.slots.astype(dtype)
        slots[7, 0] = value
        with pytest.raises(ValueError, match=f"PerfOMR: payload slot 0 of message 7 is {value}, outside"):
            det.digest(board.clues, slots)


# ------------------------------------------------------------------ 8. rns archives that inflate
BOMB_BYTES = 256 * 2 ** 20


def deflated_zeros(name: str, nbytes: int = BOMB_BYTES) -> bytes:
    """An np.savez-like archive whose one member, ``name``, is a uint64 .npy of ``nbytes`` zeros, deflated
    (about a thousandth of its size)."""
    import io
    import zipfile

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<u8", "fortran_order": False, "shape": (nbytes // 8,)})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open(name + ".npy", "w", force_zip64=True) as f:
            f.write(header.getvalue())
            chunk = bytes(2 ** 20)
            for _ in range(nbytes // len(chunk)):
                f.write(chunk)
    return buf.getvalue()


LOAD_AND_MEASURE = """
import resource, sys
import hepkg.he as he
blob = open(sys.argv[1], "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    he.load_context(blob, fingerprint=he.fingerprint(blob))
    print("loaded")
except he.CorruptedData as exc:
    print(f"CorruptedData: {exc}")
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


def _rns_public_with(ctx, part: int, data: bytes) -> bytes:
    from hepkg.he import envelope

    meta, payload = envelope.unpack(ctx.to_bytes(), "context")
    parts = envelope.unframe(payload, 4)
    parts[part] = data
    return envelope.pack("context", meta, envelope.frame(parts))


def test_8_rns_context_that_inflates_is_refused_before_inflating(tmp_path):
    """A relinearization key member of 256 MB deflated into about 256 KB cost its full size in RSS before it
    was rejected; now it is refused, as any member the parameters do not imply, before it is inflated."""
    ctx = he.context("rns", TOY, rotations=[1], policy="exact", insecure=True)
    bomb = _rns_public_with(ctx, 2, deflated_zeros("b"))
    assert len(bomb) < BOMB_BYTES // 200
    (tmp_path / "bomb").write_bytes(bomb)
    out = subprocess.run([sys.executable, "-c", LOAD_AND_MEASURE, str(tmp_path / "bomb")], capture_output=True,
                         text=True, timeout=300, check=True).stdout.splitlines()
    assert "the rns relinearization key: array 'b.npy' is compressed" in out[0]
    assert int(out[1]) < 32 * 2 ** 20, f"loading cost {int(out[1]) / 2 ** 20:.0f} MB of RSS"


def test_8_rns_members_beyond_what_the_parameters_imply_are_refused():
    import io
    import zipfile

    ctx = he.context("rns", TOY, rotations=[1], policy="exact", insecure=True)

    def stored(**arrays):
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    big = stored(b=np.zeros(2 ** 20, np.uint64), a=np.zeros(1, np.uint64))  # N = 1024: keys of 12288 words
    with pytest.raises(he.CorruptedData, match="relinearization key: array 'b.npy' has .* bytes; its parameters"):
        received(_rns_public_with(ctx, 2, big))
    header, liar = io.BytesIO(), io.BytesIO()  # a header claiming 10^12 words over 32 bytes of data
    np.lib.format.write_array_header_1_0(header, {"descr": "<u8", "fortran_order": False, "shape": (10 ** 12,)})
    with zipfile.ZipFile(liar, "w") as z:
        z.writestr("b.npy", header.getvalue() + bytes(32))
    with pytest.raises(he.CorruptedData, match="public key: array 'b.npy' claims shape \\(1000000000000,\\)"):
        received(_rns_public_with(ctx, 1, liar.getvalue()))
    many = stored(**{f"x{i}": np.zeros(1, np.uint64) for i in range(3)})
    with pytest.raises(he.CorruptedData, match="public key holds 3 arrays; its parameters allow 2"):
        received(_rns_public_with(ctx, 1, many))
    # a session member's ciphertext whose data member inflates: refused the same way
    from hepkg.he import envelope

    meta, _ = envelope.unpack(ctx.serialize(ctx.encrypt([1.0])), "ciphertext", key=ctx.session_key)
    forged = envelope.pack("ciphertext", meta, deflated_zeros("data", 2 ** 24), key=ctx.session_key)
    with pytest.raises(he.CorruptedData, match="the rns ciphertext: array 'data.npy' is compressed"):
        ctx.deserialize(forged)
    assert received(ctx.to_bytes()).decrypt  # the genuine context still loads


# ------------------------------------------------------------------ 13. results record that sim encrypts nothing
@pytest.mark.parametrize("backend", BFV_BACKENDS)
def test_13_results_record_insecure_where_nothing_is_encrypted(backend):
    """sim results recorded insecure=False at 128-bit parameters: they encrypt nothing."""
    import scipy.sparse as sp

    import hepkg.gemm as gm
    from hepkg.spmv import run_cssc, run_diagonal

    m = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [4, 0, -5]]))
    for run in (run_cssc, run_diagonal):
        res = run(m, np.array([1, 2, 3]), backend=backend, params="bfv-8192-d2")
        np.testing.assert_array_equal(res.y, m @ np.array([1, 2, 3]))
        assert res.insecure is (backend == "sim")
        assert run(sp.csr_matrix((3, 3), dtype=np.int64), np.ones(3, np.int64), backend=backend,
                   params="bfv-8192-d2").insecure is (backend == "sim")  # the all-zero matrix: no HE work
    ctx = gm.gemm_context("huang", 2, 2, 2, backend=backend, params="bfv-8192-d2")  # depth 2, 128 bits
    res = gm.matmul(ctx, np.ones((2, 2), int), np.ones((2, 2), int), method="huang")
    np.testing.assert_array_equal(res.C, np.full((2, 2), 2))
    assert (res.backend, res.insecure) == (backend, backend == "sim") and ctx.insecure is (backend == "sim")
