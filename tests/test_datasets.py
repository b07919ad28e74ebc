"""Dataset loaders: search order, SuiteSparse downloads from a local HTTP server, SNAP lists, Mycielski graphs."""
import functools
import gzip
import http.server
import io
import json
import subprocess
import sys
import tarfile
import threading

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from hepkg import paths
from hepkg.datasets import (ChecksumError, CorruptDownload, CorruptMatrixFile, DatasetError, MatrixNotFound,
                            list_matrices, load_matrix, mycielski_step, mycielskian, mycielskian_size, read_edge_list,
                            sha256_file)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HEPKG_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HEPKG_DATA", raising=False)
    monkeypatch.delenv("HEPKG_SUITESPARSE_URL", raising=False)


SHARED = paths.shared_data()
SUITESPARSE = SHARED / "suitesparse" if SHARED else None
needs_shared = pytest.mark.skipif(SUITESPARSE is None or not SUITESPARSE.is_dir(), reason="shared data absent")


def write_mtx(path, matrix):
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, sp.coo_matrix(matrix))
    path.write_bytes(buf.getvalue())


# ------------------------------------------------------------------ Mycielski
def test_mycielskian_small_cases():
    np.testing.assert_array_equal(mycielskian(2).toarray(), [[0, 1], [1, 0]])
    c5 = mycielskian(3).toarray()
    assert c5.sum(axis=1).tolist() == [2] * 5 and np.array_equal(c5, c5.T)  # the 5-cycle
    for k in range(2, 10):
        m = mycielskian(k)
        assert (m.shape[0], m.nnz) == mycielskian_size(k) and (m != m.T).nnz == 0 and m.diagonal().sum() == 0
    assert mycielskian_size(13) == (6143, 1227742) and mycielskian_size(12) == (3071, 407200)
    np.testing.assert_array_equal(mycielski_step(mycielskian(3)).toarray(), mycielskian(4).toarray())
    with pytest.raises(ValueError, match="k >= 2"):
        mycielskian(1)


@needs_shared
@pytest.mark.parametrize("k", [12, 13])
def test_mycielskian_matches_shipped_regenerated_files(k):
    path = SUITESPARSE / f"mycielskian{k}_regenerated.mtx.gz"
    if not path.exists():
        pytest.skip(f"{path.name} absent")
    ref = sp.csr_matrix(scipy.io.mmread(path))
    got = load_matrix(f"mycielskian{k}")
    assert got.shape == ref.shape and (got != ref).nnz == 0


# ------------------------------------------------------------------ local search
@needs_shared
def test_shared_data_and_list():
    m = load_matrix("arc130", download=False)
    assert m.shape == (130, 130) and m.nnz == 1282 and sp.isspmatrix_csr(m)
    table = list_matrices().set_index("name")
    assert table.loc["arc130", "rows"] == 130 and table.loc["arc130", "nnz"] == 1282
    assert table.loc["cca", "nnz"] == 139264 and table.loc["cca", "symmetry"] == "symmetric"
    assert table.loc["mycielskian13", "source"] == "generated"
    assert "mycielskian13_regenerated" not in table.index


def test_search_order_path_data_dir_env(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    write_mtx(first / "tiny.mtx", sp.eye(3))
    write_mtx(second / "tiny.mtx", 2 * sp.eye(4))
    monkeypatch.setenv("HEPKG_DATA", str(second))
    assert load_matrix("tiny", data_dir=first).shape == (3, 3)  # data_dir before $HEPKG_DATA
    assert load_matrix("tiny").shape == (4, 4)
    assert load_matrix(str(first / "tiny.mtx")).shape == (3, 3)  # an explicit path
    sp.save_npz(first / "x.npz", sp.csr_matrix(np.eye(2)))
    assert load_matrix(str(first / "x.npz")).nnz == 2
    with gzip.open(second / "g.mtx.gz", "wb") as fh:
        buf = io.BytesIO()
        scipy.io.mmwrite(buf, sp.coo_matrix(np.ones((2, 5))))
        fh.write(buf.getvalue())
    assert load_matrix("g").shape == (2, 5)
    assert set(list_matrices(data_dir=first)["name"]) >= {"tiny", "g"}
    with pytest.raises(MatrixNotFound, match="no matrix file at"):
        load_matrix(str(first / "absent.mtx"))


def test_offline_error_names_every_place(tmp_path):
    with pytest.raises(MatrixNotFound) as err:
        load_matrix("Grp/absent", data_dir=tmp_path, base_url="http://127.0.0.1:9", progress=False)
    msg = str(err.value)
    assert str(tmp_path) in msg and str(paths.cache("matrices")) in msg and "absent.mtx.gz" in msg
    assert "http://127.0.0.1:9/Grp/absent.tar.gz" in msg and "failed" in msg
    with pytest.raises(MatrixNotFound, match="no SuiteSparse group known"):
        load_matrix("absent_matrix_name")
    with pytest.raises(MatrixNotFound, match="download disabled"):
        load_matrix("Grp/absent", download=False)


# ------------------------------------------------------------------ SNAP edge lists
def test_edge_list_conversion(tmp_path):
    text = "# Directed graph\n# FromNodeId\tToNodeId\n10\t30\n30\t10\n10\t20\n10\t20\n"
    (tmp_path / "g.txt").write_text(text)
    m, ids = read_edge_list(tmp_path / "g.txt", return_ids=True)
    assert ids.tolist() == [10, 20, 30]
    np.testing.assert_array_equal(m.toarray(), [[0, 1, 1], [0, 0, 0], [1, 0, 0]])
    with gzip.open(tmp_path / "w.txt.gz", "wt") as fh:
        fh.write("# weighted\n1 2 -1\n2 1 1\n2 3 0\n")
    w = read_edge_list(tmp_path / "w.txt.gz")
    assert w.dtype.kind == "i" and w[0, 1] == -1 and w[1, 0] == 1
    assert load_matrix("g", data_dir=tmp_path).shape == (3, 3)
    (tmp_path / "bad.txt").write_text("# nothing\n")
    with pytest.raises(ValueError, match="no edges"):
        read_edge_list(tmp_path / "bad.txt")


@needs_shared
def test_snap_raw_matches_converted_matrix():
    raw = SUITESPARSE / "snap_raw" / "ca-GrQc.txt"
    if not raw.exists():
        pytest.skip("raw ca-GrQc absent")
    assert (read_edge_list(raw) != load_matrix("ca-GrQc")).nnz == 0


# ------------------------------------------------------------------ downloads
@pytest.fixture
def suitesparse_server(tmp_path):
    """A local HTTP server with <root>/Grp/tiny.tar.gz (a SuiteSparse-style tarball)."""
    root = tmp_path / "www"
    (root / "Grp").mkdir(parents=True)
    matrix = sp.random(20, 15, density=0.2, format="coo", random_state=0)
    mtx = io.BytesIO()
    scipy.io.mmwrite(mtx, matrix)
    with tarfile.open(root / "Grp" / "tiny.tar.gz", "w:gz") as tar:
        for name, data in [("tiny/tiny.mtx", mtx.getvalue()), ("tiny/tiny_b.mtx", b"%%MatrixMarket\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root / "Grp" / "tiny.tar.gz", sp.csr_matrix(matrix)
    server.shutdown()
    server.server_close()


def test_download_cache_and_checksum(suitesparse_server, capsys):
    url, tarball, expected = suitesparse_server
    m = load_matrix("Grp/tiny", base_url=url)
    assert (m != expected).nnz == 0
    assert "tiny.tar.gz" in capsys.readouterr().err  # the progress bar
    cached = paths.cache("matrices") / "tiny.tar.gz"
    record = json.loads((paths.cache("matrices") / "checksums.json").read_text())["tiny.tar.gz"]
    assert record == {"sha256": sha256_file(tarball), "url": f"{url}/Grp/tiny.tar.gz"}
    tarball.unlink()  # served no more: the cache answers
    assert (load_matrix("tiny", download=False) != expected).nnz == 0
    cached.write_bytes(cached.read_bytes()[:-5])  # altered cache: detected, not parsed
    with pytest.raises(ChecksumError, match="does not match"):
        load_matrix("tiny")


def test_download_pinned_checksum_and_env_url(suitesparse_server, monkeypatch):
    url, tarball, expected = suitesparse_server
    with pytest.raises(ChecksumError):
        load_matrix("Grp/tiny", base_url=url, sha256="0" * 64, progress=False)
    assert not (paths.cache("matrices") / "tiny.tar.gz").exists()  # nothing half-written left behind
    assert not any(p.name.endswith(".tmp") for p in paths.cache("matrices").iterdir())
    monkeypatch.setenv("HEPKG_SUITESPARSE_URL", url)
    m = load_matrix("Grp/tiny", sha256=sha256_file(tarball), progress=False)
    assert (m != expected).nnz == 0
    assert list_matrices().set_index("name").loc["tiny", "source"] == "cache"


# ------------------------------------------------------------------ bad downloads and bad files (issue 8, defect 5)
def cache_is_clean():
    cache = paths.cache("matrices")
    registry = cache / "checksums.json"
    return not [p for p in cache.iterdir() if p != registry] and \
        (not registry.exists() or "bad" not in json.loads(registry.read_text()))


def _tarball(name: str, mtx: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(f"{name}/{name}.mtx")
        info.size = len(mtx)
        tar.addfile(info, io.BytesIO(mtx))
    return out.getvalue()


@pytest.mark.parametrize("served, reason", [
    (b"<!DOCTYPE html><html><body>Not found</body></html>", "an HTML page, not a gzip tarball"),
    ("truncated", "truncated"),
    ("wrong member", "no member bad/bad.mtx"),
    # issue 27, item 2: a valid tarball whose .mtx body is cut short passed the header-only check and was cached
    # (the body cut inside a number, which crashed scipy, is test_truncated_download_does_not_kill_the_interpreter)
    (_tarball("bad", b"%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n"), "does not parse whole"),
])
def test_bad_download_never_enters_the_cache(suitesparse_server, served, reason):
    url, tarball, expected = suitesparse_server
    good = tarball.read_bytes()
    bad = tarball.with_name("bad.tar.gz")
    bad.write_bytes(good[: len(good) // 2] if served == "truncated" else good if served == "wrong member" else served)
    with pytest.raises(CorruptDownload, match=f"{url}/Grp/bad.tar.gz is not the expected file: .*{reason}"):
        load_matrix("Grp/bad", base_url=url, progress=False)
    assert cache_is_clean()
    with tarfile.open(bad, "w:gz") as tar:  # the server is fixed and serves the real tarball: nothing was poisoned
        with tarfile.open(tarball) as src:
            for member in src.getmembers():
                data = src.extractfile(member).read()
                member.name = member.name.replace("tiny", "bad")
                tar.addfile(member, io.BytesIO(data))
    assert (load_matrix("Grp/bad", base_url=url, progress=False) != expected).nnz == 0


@pytest.mark.parametrize("ending", ["1.5E-", "1.5E", "1.5e+", "2 ", "1 1"])
def test_truncated_mtx_does_not_kill_the_interpreter(tmp_path, ending):
    """Issue 27, item 2: scipy 1.15.3's mmread segfaults on a last line cut short without its newline.
    Run in a subprocess, so that a regression fails this test instead of killing pytest."""
    path = tmp_path / "cut.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 {ending}")
    code = ("import sys; from hepkg.datasets import load_matrix, CorruptMatrixFile\n"
            "try:\n    load_matrix(sys.argv[1])\nexcept CorruptMatrixFile as exc:\n    print('refused:', exc)\n"
            "print(load_matrix('mycielskian4').nnz)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"refused: {path} does not parse as a matrix" in out.stdout and "crashed (SIGSEGV)" in out.stdout
    assert out.stdout.strip().endswith("40")  # the interpreter lives on and loads the next matrix


def test_truncated_download_does_not_kill_the_interpreter(suitesparse_server):
    """Issue 27, item 2: a tarball whose .mtx ends inside a number (``1.5E-``) passed the header-only check,
    was cached, and crashed every load. In a subprocess, so that a regression cannot kill pytest."""
    url, tarball, _ = suitesparse_server
    tarball.with_name("bad.tar.gz").write_bytes(
        _tarball("bad", b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2 1.5E-"))
    code = ("import sys; from hepkg.datasets import load_matrix, CorruptDownload\n"
            "try:\n    load_matrix('Grp/bad', base_url=sys.argv[1], progress=False)\n"
            "except CorruptDownload as exc:\n    print('refused:', exc)\n")
    out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused:" in out.stdout and "bad/bad.mtx does not parse whole" in out.stdout and "SIGSEGV" in out.stdout
    assert cache_is_clean()


def test_corrupt_cached_file_names_itself_and_the_fix(suitesparse_server):
    url, _, _ = suitesparse_server
    load_matrix("Grp/tiny", base_url=url, progress=False)
    cached = paths.cache("matrices") / "tiny.tar.gz"
    cached.write_bytes(b"<html>poisoned by an older version</html>")
    registry = paths.cache("matrices") / "checksums.json"
    reg = json.loads(registry.read_text())
    reg["tiny.tar.gz"]["sha256"] = sha256_file(cached)  # its checksum was recorded too
    registry.write_text(json.dumps(reg))
    with pytest.raises(CorruptMatrixFile, match=f"{cached} does not parse.*delete it"):
        load_matrix("tiny", download=False)


def test_corrupt_checksum_record_names_itself(suitesparse_server):
    url, _, _ = suitesparse_server
    load_matrix("Grp/tiny", base_url=url, progress=False)
    registry = paths.cache("matrices") / "checksums.json"
    for text in ('{"tiny.tar.gz": {"sha', "[1, 2]", '{"tiny.tar.gz": "abc"}'):
        registry.write_text(text)
        with pytest.raises(DatasetError, match=f"{registry}: the checksum record is corrupt.*delete it"):
            load_matrix("tiny", download=False)


def test_pinned_checksum_checks_local_files(tmp_path, monkeypatch):
    write_mtx(tmp_path / "tiny.mtx", sp.eye(3))
    digest = sha256_file(tmp_path / "tiny.mtx")
    assert load_matrix("tiny", data_dir=tmp_path, sha256=digest).shape == (3, 3)
    with pytest.raises(ChecksumError, match=f"{tmp_path / 'tiny.mtx'}: sha256 .* does not match"):
        load_matrix("tiny", data_dir=tmp_path, sha256="0" * 64)
    monkeypatch.setenv("HEPKG_DATA", str(tmp_path))
    with pytest.raises(ChecksumError, match="tiny.mtx"):
        load_matrix("tiny", sha256="0" * 64)
    with pytest.raises(ChecksumError, match="tiny.mtx"):
        load_matrix(str(tmp_path / "tiny.mtx"), sha256="0" * 64)


def test_corrupt_local_file_names_itself(tmp_path):
    (tmp_path / "broken.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1\n")
    with pytest.raises(CorruptMatrixFile, match="broken.mtx does not parse"):
        load_matrix("broken", data_dir=tmp_path)
