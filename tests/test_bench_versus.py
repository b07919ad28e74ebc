"""hepkg beside the authors' code: the harness (checkouts, imports, timing, summaries), on a stand-in checkout."""
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from hepkg.bench import versus
from hepkg.bench.versus import MissingCheckout, find_checkout, import_script, summarize

pyfhel = pytest.importorskip("Pyfhel")

# A stand-in for the authors' main.py: a module-level context and cipherSize, a run() that preprocesses the
# matrix with a helper's process_matrix, halves cipherSize (as theirs does) and computes A @ v row by row with
# products, then rotations and a decryption in the helper's totalSum (as theirs).
STAND_IN = textwrap.dedent("""
    import numpy as np
    import ssgetpy_like_downloader   # stubbed: not installed
    from helper import process_matrix, totalSum
    HE = None
    cipherSize = 2 ** 13

    def run(matrix, vector):
        global cipherSize
        cipherSize = int(cipherSize / 2)
        assert cipherSize == HE.n // 2, "cipherSize was not reset"
        matrix = process_matrix(matrix)
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
    import time

    def process_matrix(matrix):
        time.sleep(0.01)
        return matrix

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
    assert 0.01 <= t["preprocess_s"] < t["total_s"] - t["cloud_s"]  # their process_matrix, timed apart
    assert mod.totalSum.__module__ == "helper" and mod.process_matrix.__module__ == "helper"  # put back


def test_authors_context_refuses_a_set_their_script_cannot_build():
    import hepkg.he as he
    from hepkg.spmv import authors

    with pytest.raises(ValueError, match="SEAL's default BFV modulus"):
        authors.authors_context(he.get_params("bfv-8192-spmv"))


def test_summarize_gives_ratios_with_their_spread_and_a_verdict():
    rows = [dict(case="m", side=s, rep=r, e2e_s=t, cloud_s=t / 2, correct=True)
            for r in range(5) for s, t in (("authors", 2.0 + 0.01 * r), ("hepkg", 1.0 + 0.01 * r))]
    s = summarize(pd.DataFrame(rows)).set_index("quantity")
    assert set(s.side) == {"hepkg"}
    assert s.loc["e2e_s", "ratio"] == pytest.approx(2.02 / 1.02) and (s.reference == "authors").all()
    assert s.loc["e2e_s", "verdict"] == "less" and s.loc["cloud_s", "verdict"] == "less"
    two = summarize(pd.DataFrame(rows + [dict(r, side="hepkg slow", e2e_s=4.0) for r in rows if r["side"] == "hepkg"]))
    slow = two[(two.side == "hepkg slow") & (two.quantity == "e2e_s")].iloc[0]
    assert slow.ratio == pytest.approx(2.02 / 4.0) and slow.verdict == "greater"
    alone = summarize(pd.DataFrame([r for r in rows if r["side"] == "hepkg"]))
    assert "ratio" not in alone and alone.side_correct.all()
    arms = pd.DataFrame(rows + [dict(r, side="hepkg base", e2e_s=3.0, lever="none")
                                for r in rows if r["side"] == "hepkg"])
    arms["lever"] = arms.lever.fillna("a lever")
    gain = summarize(arms, base="hepkg base").set_index(["side", "quantity"])
    assert gain.loc[("hepkg", "e2e_s"), "gain"] == pytest.approx(3.0 / 1.02)
    assert gain.loc[("hepkg", "e2e_s"), "lever"] == "a lever"
    assert gain.loc[("hepkg base", "e2e_s"), "gain"] == 1.0
    hydia = summarize(pd.DataFrame([dict(r, side="hydia" if r["side"] == "authors" else r["side"]) for r in rows]),
                      reference="hydia")
    assert hydia.set_index("quantity").loc["e2e_s", "ratio"] == pytest.approx(2.02 / 1.02)


def test_the_ratios_range_holds_it_and_reads_the_spread_the_verdict_reads():
    """The OMR bench's SophOMD k50 one-thread digests (49a6b50): the quartiles of the per-round ratios were
    0.995-1.004 beside a ratio of medians of 0.97; the range from the quartiles holds the ratio and 1."""
    theirs, ours = [53.225, 53.235, 53.705, 57.077, 56.530], [53.462, 53.485, 56.104, 56.848, 55.575]
    rows = [dict(case="m", side=s, rep=r, e2e_s=t[r], correct=True)
            for r in range(5) for s, t in (("authors", theirs), ("hepkg", ours))]
    row = summarize(pd.DataFrame(rows), ["e2e_s"]).iloc[0]
    assert row.ratio == pytest.approx(53.705 / 55.575)
    assert row.ratio_low == pytest.approx(53.235 / 56.104) and row.ratio_high == pytest.approx(56.530 / 53.485)
    assert row.ratio_low < 1 < row.ratio_high and row.verdict == "inconclusive"
    fast = summarize(pd.DataFrame([dict(r, e2e_s=r["e2e_s"] / 1.2) if r["side"] == "hepkg" else r for r in rows]),
                     ["e2e_s"]).iloc[0]
    assert fast.ratio_low > 1 and fast.verdict == "less"
    missing = summarize(pd.DataFrame([dict(r, e2e_s=None) if r["side"] == "authors" else r for r in rows]),
                        ["e2e_s"]).iloc[0]
    assert pd.isna(missing.get("ratio")) and pd.isna(missing.get("verdict"))


def test_the_spmv_section_runs_hepkg_alone_without_a_checkout():
    from hepkg.spmv import authors

    runs = authors.versus_run("arc130", None, reps=1)
    assert list(runs.side) == list(authors.VARIANTS) and runs.correct.all()
    by = runs.set_index("side")
    base, defaults = by.loc["hepkg authors' settings"], by.loc["hepkg"]  # the defaults: run_cssc(matrix, vector)
    assert (defaults.backend, defaults.policy, defaults.drop_primes) == ("pyfhel", "exact", 2)
    assert (base.policy, base.drop_primes, by.loc["hepkg prime dropping", "drop_primes"]) == ("pow2", 0, 2)
    # each lever lightens the keys or not; the defaults ship the fewest bytes
    assert by.loc["hepkg exact keys", "key_bytes_cloud"] < base.key_bytes_cloud
    assert by.loc["hepkg light keys", "key_bytes_cloud"] < 0.9 * base.key_bytes_cloud
    assert by.loc["hepkg light keys", "key_bytes_b"] < base.key_bytes_b
    assert by.loc["hepkg prime dropping", "key_bytes_cloud"] == base.key_bytes_cloud
    assert runs.key_bytes_cloud.min() == defaults.key_bytes_cloud
    assert (runs[["key_s_a", "key_s_cloud", "key_s_b"]] > 0).all().all()
    assert (runs.e2e_pre_s > runs.e2e_s).all() and (runs.e2e_s > runs.cloud_s).all() and (runs.overhead >= 1).all()
    exact = runs[runs.policy == "exact"]
    assert (exact.keyswitch == exact.rotate + exact.mul_ct).all()  # one key switch per rotation, per product
    assert (runs.rotate == runs.rotate.iloc[0]).all()


# A stand-in for one of the authors' HEGMM classes: its __init__ builds its own keys (skipped by the harness);
# matrixMul encrypts A column by column and B row by row and sums the outer products (ct x ct, unrelinearized).
GEMM_STAND_IN = textwrap.dedent("""
    import numpy as np

    class {cls}(object):
        def __init__(self, cipherSize):
            raise AssertionError("the harness must not run their constructor (it generates keys)")

        def matrixMul(self, matrixA, matrixB):
            assert matrixA.dtype == float and self.cipherSize == self.HE.n
            m, n = matrixA.shape[0], matrixB.shape[1]
            acc = None
            for k in range(matrixA.shape[1]):
                col = np.repeat(matrixA[:, k].astype(np.int64), n)
                row = np.tile(matrixB[k].astype(np.int64), m)
                prod = self.HE.encrypt(col) * self.HE.encrypt(row)
                acc = prod if acc is None else acc + prod
            return acc.decrypt()[:m * n].reshape(m, n)
""")


@pytest.fixture
def gemm_checkout(tmp_path):
    from hepkg.gemm import authors

    for module, cls in authors.MODULES.values():
        (tmp_path / f"{module}.py").write_text(GEMM_STAND_IN.format(cls=cls))
    return tmp_path


def test_gemm_runs_their_class_without_its_constructor_on_a_timed_context(gemm_checkout):
    from hepkg.gemm import authors

    runs = authors.versus_run("3-4-2 hegmm-en", gemm_checkout, reps=1, variants={})
    row = runs.set_index("side").loc["authors"]
    assert row.correct and row.status == "ok" and row.mul_ct == 4 and row.rotate == 0 and row.keyswitch == 0
    assert 0 < row.he_s <= row.e2e_s


def test_gemm_e2dm_r_runs_where_their_script_runs_it(gemm_checkout):
    from hepkg.gemm import authors

    A, B = np.ones((30, 50), dtype=np.int64), np.ones((50, 20), dtype=np.int64)
    pa, pb = authors._e2dm_r_operands(A, B)  # d = 30 ceil(50 / 30) = 60
    assert pa.shape == (30, 60) and pb.shape == (60, 60) and np.array_equal(pa @ pb, np.pad(A @ B, ((0, 0), (0, 40))))
    assert authors._e2dm_r_operands(np.ones((64, 16)), np.ones((16, 64))) is None  # m > l
    runs = authors.versus_run("5-3-2 e2dm-r", gemm_checkout, reps=1, variants={})
    assert list(runs.status) == ["N/A"] and "does not run E2DM-R" in runs.reason.iloc[0]
    assert summarize(runs).empty


def test_the_gemm_section_runs_hepkg_alone_without_a_checkout():
    from hepkg.gemm import authors

    runs = authors.versus_run("4-6-3 hegmm-en", None, reps=1)
    assert list(runs.side) == list(authors.VARIANTS) and runs.correct.all() and (runs.status == "ok").all()
    by = runs.set_index("side")
    low, exact, pow2, drop = (by.loc[s] for s in ("hepkg", "hepkg exact keys", "hepkg authors' settings",
                                                  "hepkg prime dropping"))
    assert exact.rotate == pow2.rotate and exact.keyswitch <= pow2.keyswitch and exact.mul_ct == 3
    assert (low.backend, low.policy, low.drop_primes) == ("pyfhel", "exact", 1)  # gemm_context + Client defaults
    assert exact.drop_primes == pow2.drop_primes == 0 and drop.drop_primes == 1 and low.rotate == exact.rotate
    assert exact.key_bytes < pow2.key_bytes  # 7 exact keys against 8 power-of-two ones here
    assert (runs.overhead >= 1).all()


def test_the_facesearch_section_alternates_processes_and_checks_both_answers(monkeypatch):
    from hepkg.facesearch import experiments, versus as fv

    calls = []

    def fake_measure(cfg):
        calls.append((cfg["method"], cfg["l"], cfg["K"], cfg["kappa"], cfg["identify"], cfg["reps"], cfg["warmup"]))
        err = 0.1 if cfg["method"] == "hydia" else 0.7
        return [dict(status="measured", rep=0, membership_s=2.0, membership_he_s=1.9, identify_s=3.0,
                     rss_peak_bytes=5e9, server_rss_peak_bytes=4e9, keygen_s=1.0, context_s=1.2, enroll_s=2.0,
                     identified=True, count_error=err, op_rotate=511, op_keyswitch=511, op_mul_ct=512, rotation_keys=516)]
    monkeypatch.setattr(experiments, "measure", fake_measure)
    runs = fv.versus_run("l512 K1024 kappa10", None, reps=2)
    h, e, b = ((m, 512, 1024, 10, True, 1, 0) for m in ("hydia", "hydia-lean", "bsgs-diagonal"))
    assert calls == [h, e, b, e, b, h, b, h, e]          # a warm-up round, then the order rotated round by round
    assert list(runs.rep[runs.side == "hydia"]) == [0, 1] and (runs.rss_gb == 5.0).all()
    assert runs.set_index("side").correct.groupby(level=0).all().to_dict() == {
        "bsgs-diagonal": False, "hydia": True, "hydia-lean": False}
    assert fv.REFERENCE not in set(runs.side)    # no checkout: hepkg's methods alone
    assert summarize(runs, fv.QUANTITIES, "hydia").ratio.tolist() == [1.0] * 2 * len(fv.QUANTITIES)


def test_render_only_rebuilds_each_summary_and_figure_from_the_runs(tmp_path):
    import shutil

    import matplotlib
    import pandas as pd

    from hepkg import paths
    from hepkg.bench import versus

    matplotlib.use("Agg")
    (tmp_path / "bench").mkdir()
    committed = paths.ROOT / "artifacts" / "bench"
    shutil.copy(committed / "versus_spmv.csv", tmp_path / "bench")
    versus.main(["--render-only", "--artifacts", str(tmp_path)])
    assert sorted(p.name for p in (tmp_path / "bench").iterdir()) == [
        "versus_spmv.csv", "versus_spmv.png", "versus_spmv_summary.csv", "versus_spmv_summary.md"]
    summary = pd.read_csv(tmp_path / "bench" / "versus_spmv_summary.csv")
    assert summary.equals(pd.read_csv(committed / "versus_spmv_summary.csv"))  # the committed summary is derived
    fig = versus.plot(summary, "t")
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert len(axes) == summary.quantity.nunique() == 4 and fig.legends
    assert fig.get_size_inches()[1] <= 11


def test_render_only_summarizes_the_quantities_committed_runs_record(tmp_path, capsys):
    import shutil

    import matplotlib

    from hepkg import paths

    matplotlib.use("Agg")
    (tmp_path / "bench").mkdir()
    committed = [p for p in sorted((paths.ROOT / "artifacts" / "bench").glob("versus_*.csv"))
                 if not p.stem.endswith("_summary")]
    for table in committed:
        shutil.copy(table, tmp_path / "bench")
    runs = pd.read_csv(tmp_path / "bench" / "versus_spmv.csv").drop(columns="cloud_s")
    runs.to_csv(tmp_path / "bench" / "versus_spmv.csv", index=False)
    versus.main(["--render-only", "--artifacts", str(tmp_path)])
    for table in committed:
        assert (tmp_path / "bench" / f"{table.stem}_summary.csv").is_file(), table.stem
    summary = pd.read_csv(tmp_path / "bench" / "versus_spmv_summary.csv")
    assert "cloud_s" not in set(summary.quantity) and "e2e_s" in set(summary.quantity)
    assert "spmv: the runs do not record cloud_s" in capsys.readouterr().err


def test_spmv_end_to_end_without_key_transfer_leaves_out_hepkg_key_seconds_only():
    from hepkg.spmv.authors import derive

    runs = pd.DataFrame([dict(side="authors", e2e_s=1.0), dict(side="hepkg", e2e_s=1.0, key_s_a=0.1,
                                                                 key_s_cloud=0.2, key_s_b=0.3)])
    assert derive(runs).e2e_nokeys_s.tolist() == pytest.approx([1.0, 0.4])


def test_an_interrupted_bench_resumes_at_the_case_it_stopped_in(tmp_path, monkeypatch):
    import types

    calls = []
    fake = types.ModuleType("hepkg_fake_section")
    fake.versus_cases = lambda scale: ["a", "b"]

    def versus_run(case, checkout, *, reps):
        calls.append(case)
        if case == "b" and len(calls) == 2:
            raise KeyboardInterrupt                       # the bench stopped inside case b
        return pd.DataFrame(dict(side=["authors", "hepkg"], rep=0, e2e_s=[2.0, 1.0], correct=True, case=case))
    fake.versus_run = versus_run
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(versus.SECTIONS, "fake", fake.__name__)
    with pytest.raises(KeyboardInterrupt):
        versus.measure("fake", None, reps=1, scale="default", artifacts=tmp_path)
    runs, _ = versus.measure("fake", None, reps=1, scale="default", artifacts=tmp_path)
    assert calls == ["a", "b", "b"] and list(runs.case) == ["a", "a", "b", "b"]


def test_a_section_kept_by_rounds_resumes_at_the_round_and_marks_its_warmup(tmp_path, monkeypatch):
    import types

    calls = []
    fake = types.ModuleType("hepkg_fake_rounds")
    fake.ROUND_RECORDS = True
    fake.versus_cases = lambda scale: ["a"]

    def versus_run(case, checkout, *, reps, warmup, seed, rotate):
        calls.append((case, reps, warmup, seed, rotate))
        if seed == 2 and len(calls) == 3:
            raise KeyboardInterrupt                       # the bench stopped inside round 2
        sides = ["authors", "hepkg"][rotate % 2:] + ["authors", "hepkg"][:rotate % 2]
        return pd.DataFrame(dict(side=sides, rep=0, e2e_s=[2.0 if s == "authors" else 1.0 for s in sides],
                                 correct=True, case=case))
    fake.versus_run = versus_run
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(versus.SECTIONS, "fake", fake.__name__)
    with pytest.raises(KeyboardInterrupt):
        versus.measure("fake", None, reps=3, scale="default", artifacts=tmp_path)
    runs, _ = versus.measure("fake", None, reps=3, scale="default", artifacts=tmp_path)
    assert [c[3] for c in calls] == [0, 1, 2, 2, 3] and {c[1:3] for c in calls} == {(1, 0)}
    assert list(runs.rep) == [-1, -1, 0, 0, 1, 1, 2, 2]
    assert list(runs.side[:4]) == ["authors", "hepkg", "hepkg", "authors"]             # rotated round by round
    assert list(runs.status) == ["warmup"] * 2 + ["measured"] * 6
    s = versus.summarize(runs, ["e2e_s"])
    assert s.reps.tolist() == [3] and s.ratio.tolist() == [2.0]


def test_a_bench_run_records_its_command_machine_and_store_beside_the_runs(tmp_path, monkeypatch):
    import json
    import types

    from hepkg.bench.sysinfo import cpu_model, machine_key

    fake = types.ModuleType("hepkg_fake_described")
    fake.REPO, fake.QUANTITIES = None, ("e2e_s",)
    fake.versus_cases = lambda scale: ["a"]
    fake.versus_run = lambda case, checkout, *, reps: pd.DataFrame(
        dict(side=["hepkg"] * reps, rep=range(reps), e2e_s=1.0, correct=True, case=case))
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(versus.SECTIONS, "fake", fake.__name__)
    versus.main(["fake", "--reps", "3", "--artifacts", str(tmp_path)])
    info = versus.load_run_info("fake", tmp_path)
    assert info == json.loads((tmp_path / "bench" / "versus_fake_run.json").read_text())
    assert versus.load_run_info("never_run", tmp_path) == {}
    assert info["command"] == f"python -m hepkg.bench.versus fake --reps 3 --artifacts {tmp_path}"
    assert (info["reps"], info["runs"], info["scale"]) == (3, 3, "default")
    assert info["machine_key"] == machine_key() and info["system"]["cpu"] == cpu_model()
    assert info["store"] == str(tmp_path / "bench" / "grid")


def test_the_bench_says_when_the_vm_reports_freed_memory(tmp_path, monkeypatch, capsys):
    from hepkg.bench import sysinfo

    param = tmp_path / "order"
    monkeypatch.setattr(sysinfo, "PAGE_REPORTING", str(param))
    for text, said in (("9", True), ("11", False)):
        param.write_text(text)
        versus._warn_page_reporting()
        assert ("page_reporting_order 9" in capsys.readouterr().err) is said


def test_a_round_keeps_the_status_of_a_side_left_out(monkeypatch):
    from hepkg.spmv import authors

    rows = pd.DataFrame([dict(side="theirs", e2e_s=1.0), dict(side="hepkg", status="measured", e2e_s=0.5),
                         dict(side="hepkg big", status="exceeds memory", estimated_rss_gb=30.0)]).assign(case="c", correct=True)
    monkeypatch.setattr(authors, "versus_run", lambda *a, **k: rows)
    for r, label in ((0, "warmup"), (3, "measured")):
        out = versus.run_case(dict(section="spmv", case="c", checkout=None, round=r))
        assert [(o["side"], o["status"], o["rep"]) for o in out] == [
            ("theirs", label, r - 1), ("hepkg", label, r - 1), ("hepkg big", "exceeds memory", r - 1)]
    assert list(summarize(pd.DataFrame(out), ["e2e_s"], reference="theirs").side) == ["hepkg"]
