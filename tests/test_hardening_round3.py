"""Regression tests for the third hardening round (issue 59): one test (or more) per defect, named after its
item; each failed before its fix. See docs/hardening.md."""
import os
import pathlib
import random
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import hepkg.he as he
from hepkg.he import envelope
from conftest import BFV, BFV_BACKENDS, CKKS, CKKS_BACKENDS, received, run_python

REAL = sorted((set(BFV_BACKENDS) | set(CKKS_BACKENDS)) - {"sim"})
needs_openfhe = pytest.mark.skipif(not he.availability()["openfhe"], reason="needs openfhe")


def params_of(backend: str):
    return BFV if backend in BFV_BACKENDS else CKKS


def relabelled_sim(data: bytes) -> bytes:
    """The issue's forgery of a public context: backend 'sim', an empty payload, the moduli sim builds, the
    checksum recomputed (which anyone on the path can do)."""
    meta, _ = envelope.unpack(data, "context")
    params = he.get_params(meta["params"]["name"])
    meta = {k: v for k, v in meta.items() if k != "kind"} | dict(
        backend="sim", built=dict(q_bits=list(params.qi_bits[:-1]),
                                  p_bits=list(params.qi_bits[-1:]) + ([params.special_bits] if params.special_bits
                                                                     else [])))
    return envelope.pack("context", meta, b"")


# ------------------------------------------------------------------ 1. a context nobody can relabel
@pytest.mark.parametrize("backend", REAL)
def test_1_a_context_relabelled_sim_does_not_load(backend):
    """It loaded without error or warning: Client B then sent its vector in the clear, and the face-search
    Enroller wrote the database in the clear to the server's disk."""
    sent = he.context(backend, params_of(backend), rotations=[1]).to_bytes(evaluation_keys=False)
    forged = relabelled_sim(sent)
    with pytest.raises(he.HEError):
        he.load_context(forged)  # no fingerprint pinned: refused whatever the bytes
    with pytest.raises(he.CorruptedData, match="not the one its maker published"):
        he.load_context(forged, fingerprint=he.fingerprint(sent))
    with pytest.raises(he.ContextMismatch, match="encrypts nothing"):  # even where its maker vouches for it
        he.load_context(forged, fingerprint=he.fingerprint(forged))
    with pytest.raises(he.ContextMismatch, match="encrypts nothing"):
        he.load_context(forged, fingerprint=he.fingerprint(forged), backend=backend)
    with pytest.raises(he.ContextMismatch, match=f"expected a sim context, got a {backend} one"):
        received(sent, backend="sim")
    assert received(sent, backend=backend).backend == backend


def test_1_client_b_refuses_a_relabelled_or_unnamed_sim_context():
    from hepkg.spmv import ClientA, ClientB

    backend = "openfhe" if "openfhe" in REAL else REAL[0]
    a = ClientA(np.eye(4, dtype=np.int64), backend=backend, params=BFV)  # the ClientA defaults otherwise
    sent = a.encryption_context()
    forged = relabelled_sim(sent)
    with pytest.raises(he.UnauthenticatedContext):
        ClientB(np.arange(4), forged, a.column_index_message())
    with pytest.raises(he.CorruptedData, match="not the one its maker published"):
        ClientB(np.arange(4), forged, a.column_index_message(), fingerprint=he.fingerprint(sent))
    b = ClientB(np.arange(4), sent, a.column_index_message(), fingerprint=he.fingerprint(sent))
    assert b.ctx.backend == backend
    with pytest.warns(he.errors.NoPrivacyWarning):
        plain = ClientA(np.eye(4, dtype=np.int64), backend="sim", params=BFV)
    data = plain.encryption_context()
    with pytest.raises(he.ContextMismatch, match="encrypts nothing"):  # B never agreed to send in the clear
        ClientB(np.arange(4), data, plain.column_index_message(), fingerprint=he.fingerprint(data))
    assert ClientB(np.arange(4), data, plain.column_index_message(), fingerprint=he.fingerprint(data),
                   backend="sim").ctx.backend == "sim"


@needs_openfhe
def test_1_a_changed_context_is_refused_before_anything_is_encrypted():
    """8 of 80 random one-byte changes to an OpenFHE context (checksum recomputed) loaded and encrypted to wrong
    results; against the fingerprint its maker published, every one is refused before it is parsed."""
    ctx = he.context("openfhe", "toy-bfv-1024", insecure=True, rotations=[1])
    sent = ctx.to_bytes()
    pin = he.fingerprint(sent)
    meta, payload = envelope.unpack(sent, "context")
    meta.pop("kind")
    rng = random.Random(59)
    for _ in range(80):
        changed = bytearray(payload)
        changed[rng.randrange(len(changed))] ^= rng.randrange(1, 256)
        with pytest.raises(he.CorruptedData, match="not the one its maker published"):
            he.load_context(envelope.pack("context", meta, bytes(changed)), fingerprint=pin)
    with pytest.raises(he.UnauthenticatedContext, match="fingerprint its maker published"):
        he.load_context(sent)
    with pytest.raises(TypeError, match="64 hex digits"):
        he.load_context(sent, fingerprint=pin[:16])
    pub = he.load_context(sent, fingerprint=pin.upper())
    assert ctx.decrypt(ctx.deserialize(pub.serialize(pub.rotate(pub.encrypt([1, 2, 3]), 1))), 2).tolist() == [2, 3]


def test_1_public_and_the_spmv_protocol_pin_their_contexts(monkeypatch):
    """ctx.public() and run_cssc load every context against the fingerprint of what its maker sent."""
    calls = []
    load = he.load_context

    def spy(data, **kw):
        calls.append((he.fingerprint(data), kw.get("fingerprint"), kw.get("backend")))
        return load(data, **kw)

    monkeypatch.setattr(he, "load_context", spy)
    monkeypatch.setattr(sys.modules["hepkg.he.context"], "load_context", spy)
    from hepkg.spmv import run_cssc

    with pytest.warns(he.errors.NoPrivacyWarning):
        res = run_cssc(np.eye(3, dtype=np.int64), np.arange(3), backend="sim", params=BFV)
    assert np.array_equal(res.y, np.arange(3))
    he.context("sim", BFV).public()
    assert len(calls) == 3 and all(got == pinned and backend == "sim" for got, pinned, backend in calls)


@pytest.mark.skipif(not he.availability()["pyfhel"], reason="needs pyfhel (the noise budget)")
def test_1_the_noise_budget_run_pins_its_contexts():
    import scipy.sparse as sp

    from hepkg.spmv.experiments import cssc_noise_budget

    m = sp.random(40, 40, density=0.1, format="csr", random_state=1, data_rvs=lambda n: np.ones(n, np.int64))
    row = cssc_noise_budget(m, backend="pyfhel", params="bfv-8192-spmv")
    assert row["fresh_bits"] > row["result_bits_min"] > 0 and row["depth"] == 2


# ------------------------------------------------------------------ 11. sim says it is insecure
def test_11_sim_records_that_it_encrypts_nothing():
    """A sim context and its bytes recorded insecure=False, and he.built_table reported 128-bit security for sim."""
    ctx = he.context("sim", BFV)
    assert ctx.insecure is True and ctx.security == 0.0
    assert envelope.unpack(ctx.to_bytes(), "context")[0]["insecure"] is True
    assert ctx.public().insecure is True
    table = he.built_table(names=[BFV.name])
    sim = table.query("backend == 'sim'").iloc[0]
    assert sim.built_security == 0.0 and sim.status == "cleartext (encrypts nothing)"
    real = table.query("backend != 'sim'")
    assert (real.status == "built").all() and (real.built_security >= 128).all()
    with pytest.raises(he.InsecureParameters):  # sim still refuses a modulus below 128 bits unless told
        he.context("sim", "toy-bfv-1024")


# ------------------------------------------------------------------ 12. a truncated .npz matrix
@pytest.mark.parametrize("damage", ["truncated", "no matrix inside"])
def test_12_a_damaged_npz_matrix_names_itself(tmp_path, damage):
    """A truncated .npz raised a bare BadZipFile without the path."""
    import scipy.sparse as sp

    from hepkg.datasets import CorruptMatrixFile, read_matrix

    path = tmp_path / "m.npz"
    if damage == "truncated":
        sp.save_npz(path, sp.random(40, 40, 0.1, format="csr", random_state=1))
        path.write_bytes(path.read_bytes()[:-40])
    else:
        np.savez(path, x=np.arange(3))
    with pytest.raises(CorruptMatrixFile, match=f"{path} does not parse as a matrix"):
        read_matrix(path)


# ------------------------------------------------------------------ 9. key-map poisoning, a variant
@needs_openfhe
def test_9_rotation_keys_under_a_tag_this_process_holds_are_refused(tmp_path):
    """A forged context (its own public key, rotation keys re-tagged with a victim's tag that the process already
    holds) loaded without error, and the victim's key map gained the forged key."""
    from hepkg.he.envelope import frame, unframe

    victim = he.context("openfhe", "toy-bfv-1024", insecure=True, rotations=[1], policy="exact")
    forger = he.context("openfhe", "toy-bfv-1024", insecure=True, rotations=[1, 2], policy="exact")
    meta, payload = envelope.unpack(forger.to_bytes(), "context")
    meta.pop("kind")
    cc_b, pk_b, mult_b, galois_b = unframe(payload, 4, "test")
    forged = envelope.pack("context", meta, frame([cc_b, pk_b, mult_b, galois_b.replace(
        forger._tag.encode(), victim._tag.encode())]))
    files = dict(victim=victim.to_bytes(), forged=forged, ct=victim.serialize(victim.encrypt(np.arange(1, 9))))
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    out = run_python("""
        import sys, pathlib
        import hepkg.he as he
        folder = pathlib.Path(sys.argv[1])

        def load(name):
            data = (folder / name).read_bytes()
            return he.load_context(data, fingerprint=he.fingerprint(data))

        victim = load("victim")
        before = sorted(victim._cc.GetExistingEvalAutomorphismKeyIndices(victim._tag))
        try:
            load("forged")
            print("loaded")
        except he.CorruptedData as exc:
            print("refused:", exc)
        after = sorted(victim._cc.GetExistingEvalAutomorphismKeyIndices(victim._tag))
        print("victim's keys unchanged:", before == after, before, after)
        out = victim.rotate(victim.deserialize((folder / "ct").read_bytes()), 1)
        (folder / "out").write_bytes(victim.serialize(out))
    """, tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused: the OpenFHE public context carries evaluation keys of another key tag" in out.stdout, out.stdout
    assert "victim's keys unchanged: True" in out.stdout
    assert victim.decrypt(victim.deserialize((tmp_path / "out").read_bytes()), 8).tolist() == [2, 3, 4, 5, 6, 7, 8, 0]


# ------------------------------------------------------------------ 4. children die with a killed parent
def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``within`` seconds."""
    import psutil

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def _kill_parent_and_watch(script: str, tmp_path, running, *args) -> tuple[int, list[int]]:
    """Start ``script``, wait for a descendant whose command line satisfies ``running``, SIGKILL the script; return
    that descendant's pid and every descendant's (for the caller to kill should they survive)."""
    import psutil

    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
                            env=os.environ | dict(TMPDIR=str(tmp_path)))
    deadline, found = time.monotonic() + 60, None
    while found is None and time.monotonic() < deadline and proc.poll() is None:
        children = psutil.Process(proc.pid).children(recursive=True)
        found = next((c.pid for c in children if running(_cmdline(c.pid))), None)
        time.sleep(0.05)
    pids = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    proc.kill()
    proc.wait()
    assert found is not None, "the child never started"
    return found, pids


def _cmdline(pid: int) -> list[str]:
    import psutil

    try:
        return psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return []


def _reap(pids) -> None:
    import psutil

    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.NoSuchProcess:
            pass


def test_4_a_guarded_parse_dies_with_its_killed_parent(tmp_path):
    """The guard's forked child kept running (99.5% CPU on a hanging parse) after its parent's SIGKILL."""
    child, pids = _kill_parent_and_watch("""
        from hepkg.he.guard import isolated

        def hang():
            while True:
                pass

        isolated(hang, what="a parse that hangs", timed=False)
    """, tmp_path, lambda cmdline: cmdline[:2] == [sys.executable, "-c"])
    try:
        assert _gone(child), "the guard's child outlived its parent"
    finally:
        _reap(pids)


def test_4_a_program_run_dies_with_its_killed_parent_and_leaves_no_scratch_folder(tmp_path):
    """Programs started by bench.builds.run (the authors' runs: hours, GBs) kept running, their scratch folders
    left behind."""
    program = tmp_path / "program.sh"
    program.write_text("#!/bin/sh\ntouch made-here\nexec sleep 600\n")
    program.chmod(0o755)
    child, pids = _kill_parent_and_watch("""
        import sys
        from hepkg.bench import builds

        builds.run(sys.argv[1], [], libdir=".", threads=1)
    """, tmp_path, lambda cmdline: cmdline == ["sleep", "600"], program)
    try:
        assert _gone(child), "the program outlived its parent"
        deadline = time.monotonic() + 10
        while list(tmp_path.glob("hepkg-*")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not list(tmp_path.glob("hepkg-*")), "the scratch folder was left behind"
    finally:
        _reap(pids)


# ------------------------------------------------------------------ 5. enroll(overwrite=True) is atomic
ENROLL_KILLED_WHILE_REMOVING = """
import os, pathlib, shutil, signal, sys
import numpy as np
import hepkg.he as he
from hepkg.facesearch import Enroller

folder = pathlib.Path(sys.argv[1])
enroller = Enroller(he.context("sim", "toy-ckks-4096-d11", insecure=True).public())
enroller.enroll(np.eye(8, 16) + 1, folder)
remove = shutil.rmtree

def killed_half_way(path, *args, **kwargs):
    path = pathlib.Path(path)
    if (path / "manifest.json").exists():  # a database is being removed: half its diagonals go, then the kill
        files = sorted(path.rglob("*.ct"))
        for f in files[:len(files) // 2]:
            f.unlink()
        os.kill(os.getpid(), signal.SIGKILL)
    return remove(path, *args, **kwargs)

shutil.rmtree = killed_half_way
enroller.enroll(np.eye(24, 16) + 2, folder, overwrite=True)
"""


def test_5_an_overwriting_enrollment_killed_midway_loses_nothing(tmp_path):
    """Killed between deleting the old database and moving the new one in, it left an old database that still
    opened with files missing; the next enrollment then deleted the complete new one as stale."""
    from hepkg.facesearch import EncryptedDatabase, Enroller

    folder = tmp_path / "db"
    out = run_python(ENROLL_KILLED_WHILE_REMOVING, folder)
    assert out.returncode == -9, out.stderr[-2000:]
    db = EncryptedDatabase(folder)
    assert db.layout.K == 24 and len(list(folder.rglob("*.ct"))) == db.layout.groups * db.layout.l == 16
    ctx = he.context("sim", "toy-ckks-4096-d11", insecure=True)
    Enroller(ctx.public()).enroll(np.eye(4, 16), tmp_path / "another")  # cleans the stale folders beside it
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    db = EncryptedDatabase(folder)
    assert db.layout.K == 24 and len(list(folder.rglob("*.ct"))) == 16


def test_5_a_database_with_diagonal_files_missing_does_not_open(tmp_path):
    from hepkg.facesearch import EncryptedDatabase, Enroller

    db = Enroller(he.context("sim", "toy-ckks-4096-d11", insecure=True).public()).enroll(np.eye(8, 16), tmp_path / "db")
    db.path(0, 5).unlink()
    with pytest.raises(he.CorruptedData, match=r"1 of the 16 diagonal files are missing \(first g00000/d0005.ct\)"):
        EncryptedDatabase(tmp_path / "db")


# ------------------------------------------------------------------ 7. CKKS spmv: one rule for admission and tracking
CKKS_SPMV = "ckks-8192-small"


def _ckks_case(seed: int, density: float, margin: float):
    """A real matrix and a vector at the public bound, which admits max row L1 x bound = margin x capacity."""
    import scipy.sparse as sp

    from hepkg.spmv import FixedPoint, capacity

    rng = np.random.default_rng(seed)
    m = sp.random(64, 64, density=density, format="csr", random_state=seed,
                  data_rvs=lambda n: rng.uniform(-100, 100, n))
    bound = capacity(he.get_params(CKKS_SPMV)) / float(abs(m).sum(axis=1).max()) * margin
    return m, rng.choice([-bound, bound], 64), FixedPoint(vector_bound=bound)


def test_7_ckks_spmv_refuses_before_sending_what_the_cloud_would_refuse():
    """Client A admitted a matrix (max row L1 x vector bound 3.9e5 under 2^19); the cloud raised ScaleOverflow
    (tracked bound 7.06e5) after keys and ciphertexts were sent."""
    from hepkg.spmv import ClientA, run_cssc
    from hepkg.spmv.encoding import EncodingError

    m, v, enc = _ckks_case(1, 0.3, 0.75)
    with pytest.warns(he.errors.NoPrivacyWarning), \
            pytest.raises(EncodingError, match="with CSSC: the cloud tracks a bound .* one result block reaches"):
        ClientA(m, backend="sim", params=CKKS_SPMV, encoding=enc)
    with pytest.warns(he.errors.NoPrivacyWarning), pytest.raises(EncodingError, match="with CSSC"):
        run_cssc(m, v, backend="sim", params=CKKS_SPMV, encoding=enc)


@pytest.mark.parametrize("method", ["cssc", "diagonal", "rowwise"])
@pytest.mark.parametrize("seed", range(4))
def test_7_what_a_ckks_method_admits_it_computes(method, seed):
    """Every matrix a method admits is computed (within CKKS tolerance), never refused by the cloud halfway."""
    import warnings

    from hepkg.spmv import run_cssc, run_diagonal, run_rowwise
    from hepkg.spmv.encoding import EncodingError

    run = dict(cssc=run_cssc, diagonal=run_diagonal, rowwise=run_rowwise)[method]
    m, v, enc = _ckks_case(seed, [0.02, 0.1, 0.3, 0.6][seed], [0.02, 0.2, 0.5, 0.9][seed])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", he.errors.NoPrivacyWarning)
        try:
            res = run(m, v, backend="sim", params=CKKS_SPMV, encoding=enc)
        except EncodingError as exc:
            assert "the cloud tracks a bound" in str(exc)
            return
    assert np.abs(res.y - m @ v).max() <= 1e-6 * max(1.0, np.abs(m @ v).max())


def test_7_client_a_predicts_the_bound_the_cloud_tracks():
    """The admission rule is the tracking's: Client A's prediction equals the bound the result ciphertexts carry."""
    import warnings

    from hepkg.spmv import ClientA, ClientB, Cloud, messages
    from hepkg.spmv.aggregate import tracked_bounds
    from hepkg.spmv.chunks import chunk_values

    m, v, enc = _ckks_case(2, 0.3, 0.02)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", he.errors.NoPrivacyWarning)
        a = ClientA(m, backend="sim", params=CKKS_SPMV, encoding=enc)
    sent = a.public_context()
    b = ClientB(v, a.encryption_context(), a.column_index_message(), fingerprint=he.fingerprint(a.encryption_context()),
                backend="sim")
    reply = Cloud(sent, fingerprint=he.fingerprint(sent), backend="sim").evaluate(a.matrix_message(),
                                                                                b.vector_message())
    carried = [a.ctx.deserialize(blob).bound for blob in messages.unpack(reply, "spmv/result")[2]]
    peaks = [np.max(np.abs(x)) for x in chunk_values(a.cssc.CP, a._values, a.plan)]
    assert np.allclose(carried, tracked_bounds(a.plan, peaks, a.vector_bound), rtol=1e-12)


# ------------------------------------------------------------------ 2. every parser of foreign bytes guarded
@pytest.mark.long  # a forgery that crashes the parser is searched for each of 11 parties (a few minutes)
@needs_openfhe
def test_2_every_party_survives_a_forgery_that_crashes_the_parser():
    """One changed byte in an OpenFHE ciphertext killed the interpreter (SIGFPE, SIGSEGV, SIGABRT) in the face-search
    server and client, the OMR receiver and detector, PerfOMR and the spmv baseline clouds; the same bytes under the
    guard give CorruptedData. Each party is given such a forgery where it reads what another party sent. On the BFV
    parties (OMR, spmv) no single-byte forgery crashes the parser any more since it skips OpenFHE's CRT
    precomputation, where those crashes were (d8872f2): the search there comes back empty. On the CKKS parties (face
    search) a received payload no longer reaches OpenFHE's parser at all, so they read it without the guard: the
    search's 3000 forgeries each run in this interpreter, which must survive them, and none crashes anything."""
    out = run_python("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import fuzz_parties as F
        for name in F.ON_OPENFHE:
            try:
                outcomes = F.PARTIES[name](F.crashing)
            except AssertionError as exc:
                print(name, "no-crash" if str(exc) == F.NO_CRASH else exc, flush=True)
                continue
            print(name, all(o is not None and "the library's parser crashed" in str(o) for o in outcomes), flush=True)
    """, pathlib.Path(__file__).parent, timeout=1500)
    import fuzz_parties

    assert out.returncode == 0, f"{out.stdout}\n{out.stderr[-3000:]}"
    want = [x for name in fuzz_parties.ON_OPENFHE for x in (name, "no-crash")]
    assert out.stdout.split() == want, out.stdout


@needs_openfhe
@pytest.mark.parametrize("change, refused", [
    ("modulus", "refused: the ciphertext payload does not hold 2 x 3 vectors"),
    ("coefficient", "refused: the ciphertext payload holds coefficients at or above"),
    ("value", "parsed"),
])
def test_2_a_forgery_that_parses_and_crashes_the_first_operation(change, refused):
    """A payload whose second vector names another modulus parsed (in the guard's child too) and then killed the
    interpreter in the first addition (std::terminate: "ModAddEq(): Called on NativeVectorT's with different
    parameters"; found by the slow fuzz run, face-search server and spmv row-wise server). The parsed coefficients
    are now copied into a ciphertext of the context's own making; a changed coefficient below its modulus is another
    valid ciphertext."""
    out = run_python(f"""
        import numpy as np
        import hepkg.he as he
        from hepkg.he import envelope
        c = he.context("openfhe", "bfv-8192-d2", rotations=[1], insecure=True)
        ct = c.encrypt([1, 2, 3])
        meta, payload = envelope.unpack(c.serialize(ct), "ciphertext", key=c.session_key)
        meta.pop("kind")
        p = bytearray(payload)
        start, stop, q = c._vectors(bytes(p), 3)[1]
        if "{change}" == "modulus":
            p[stop:stop + 8] = (q - 2 ** 40).to_bytes(8, "little")
        else:
            p[start:start + 8] = (q if "{change}" == "coefficient" else 7).to_bytes(8, "little")
        try:
            got = c.add(c.deserialize(envelope.pack("ciphertext", meta, bytes(p), key=c.session_key), guard=True), ct)
            c.rotate(got, 1)
            print("parsed")
        except he.CorruptedData as exc:
            print("refused:", exc)
        print(c.decrypt(c.add(c.deserialize(c.serialize(ct), guard=True), ct), 3))
    """, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith(refused), out.stdout
    assert out.stdout.strip().endswith("[2 4 6]")
