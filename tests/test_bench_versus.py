"""hepkg beside the authors' code: the harness (checkouts, imports, timing, summaries), on a stand-in checkout."""
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from hepkg.bench import versus
from hepkg.bench.versus import MissingCheckout, find_checkout, import_script, summarize

pyfhel = pytest.importorskip("Pyfhel")

# A stand-in for the authors' main.py: a module-level context and cipherSize, a run() that halves cipherSize
# (as theirs does) and computes A @ v row by row with products, then rotations and a decryption in a helper
# module's totalSum (as theirs).
STAND_IN = textwrap.dedent("""
    import numpy as np
    import ssgetpy_like_downloader   # stubbed: not installed
    from helper import totalSum
    HE = None
    cipherSize = 2 ** 13

    def run(matrix, vector):
        global cipherSize
        cipherSize = int(cipherSize / 2)
        assert cipherSize == HE.n // 2, "cipherSize was not reset"
        width = 1 << (matrix.shape[1] - 1).bit_length()
        v = HE.encrypt(np.array(list(vector) + [0] * (width - len(vector)), dtype=np.int64))
        out = []
        for row in matrix:
            prod = HE.encrypt(np.array(list(row) + [0] * (width - len(row)), dtype=np.int64)) * v
            HE.relinearize(prod)
            out.append(int(totalSum(HE, prod, width)[0]))
        return out
""")
HELPER = textwrap.dedent("""
    def totalSum(HE, ct, width):
        step = 1
        while step < width:
            ct += HE.rotate(ct, step, in_new_ctxt=True)
            step *= 2
        return ct.decrypt()
""")


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "main.py").write_text(STAND_IN)
    (tmp_path / "helper.py").write_text(HELPER)
    return tmp_path


def test_find_checkout_names_the_repository_and_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("HEPKG_AUTHORS_X", raising=False)
    with pytest.raises(MissingCheckout, match=r"git clone https://github.com/who/X.*HEPKG_AUTHORS_X"):
        find_checkout(None, "HEPKG_AUTHORS_X", "who/X")
    monkeypatch.setenv("HEPKG_AUTHORS_X", str(tmp_path))
    with pytest.raises(MissingCheckout, match="main.py"):
        find_checkout(None, "HEPKG_AUTHORS_X", "who/X", files=("main.py",))
    (tmp_path / "main.py").write_text("")
    assert find_checkout(None, "HEPKG_AUTHORS_X", "who/X", files=("main.py",)) == tmp_path


def test_import_script_restores_sys_path_and_modules(checkout):
    sys.modules["helper"] = marker = type(sys)("helper")
    try:
        mod = import_script(checkout, "main", files=("main.py",), stubs=("ssgetpy_like_downloader",))
        assert sys.modules["helper"] is marker and "main" not in sys.modules
        assert "ssgetpy_like_downloader" not in sys.modules and str(checkout) not in sys.path
        assert mod.totalSum.__module__ == "helper" and mod.cipherSize == 2 ** 13
    finally:
        del sys.modules["helper"]


def test_import_script_without_a_stub_fails_on_the_missing_module(checkout):
    with pytest.raises(ImportError, match="ssgetpy_like_downloader"):
        import_script(checkout, "main")


def test_run_authors_times_their_cloud_and_checks_their_result(checkout):
    import hepkg.he as he
    from hepkg.spmv import authors

    mod = import_script(checkout, "main", stubs=("ssgetpy_like_downloader",))
    lib = authors.authors_context(he.get_params("bfv-8192-default"))
    A, v = np.arange(12).reshape(3, 4) - 5, np.array([3, -1, 2, 7])
    for _ in range(2):  # their run halves cipherSize: it is reset before each call
        y, t = authors.run_authors(mod, lib, A, v)
        assert np.array_equal(y, (A @ v) % 65537)
    assert lib.calls["multiply"] == 6 and lib.calls["relinearize"] == 6 and lib.calls["decrypt"] == 6
    assert lib.rotations == {1: 6, 2: 6}
    assert 0 < t["cloud_s"] < t["total_s"] and 0 < t["he_s"] < t["total_s"]
    assert mod.totalSum.__module__ == "helper"  # their function is put back


def test_authors_context_refuses_a_set_their_script_cannot_build():
    import hepkg.he as he
    from hepkg.spmv import authors

    with pytest.raises(ValueError, match="SEAL's default BFV modulus"):
        authors.authors_context(he.get_params("bfv-8192-spmv"))


def test_summarize_gives_speedups_with_their_spread_and_a_verdict():
    rows = [dict(case="m", side=s, rep=r, e2e_s=t, cloud_s=t / 2, correct=True)
            for r in range(5) for s, t in (("authors", 2.0 + 0.01 * r), ("hepkg", 1.0 + 0.01 * r))]
    s = summarize(pd.DataFrame(rows)).set_index("quantity")
    assert set(s.side) == {"hepkg"}
    assert s.loc["e2e_s", "speedup"] == pytest.approx(2.02 / 1.02)
    assert s.loc["e2e_s", "verdict"] == "less" and s.loc["cloud_s", "verdict"] == "less"
    two = summarize(pd.DataFrame(rows + [dict(r, side="hepkg slow", e2e_s=4.0) for r in rows if r["side"] == "hepkg"]))
    slow = two[(two.side == "hepkg slow") & (two.quantity == "e2e_s")].iloc[0]
    assert slow.speedup == pytest.approx(2.02 / 4.0) and slow.verdict == "greater"
    alone = summarize(pd.DataFrame([r for r in rows if r["side"] == "hepkg"]))
    assert "speedup" not in alone and alone.hepkg_correct.all()


def test_the_spmv_section_runs_hepkg_alone_without_a_checkout():
    from hepkg.spmv import authors

    runs = authors.versus_run("arc130", None, reps=1)
    assert list(runs.side) == list(authors.VARIANTS) and runs.correct.all()
    assert runs.set_index("side").loc["hepkg", "drop_primes"] == 2
    assert (runs.e2e_s > runs.cloud_s).all() and (runs.overhead >= 1).all()
    exact = runs[runs.policy == "exact"]
    assert (exact.keyswitch == exact.rotate + exact.mul_ct).all()  # one key switch per rotation, per product
    assert (runs.rotate == runs.rotate.iloc[0]).all()
