"""Products side by side: interleaved repetitions, every product checked, inapplicable ones named, memory traced."""
import math

import pandas as pd
import pytest

from hepkg.gemm import bench

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose


def runs_of(products, reps=3, **kw):
    return pd.DataFrame([r for g in bench.groups(products, reps, backend="sim", **kw) for r in bench.measure_group(g)])


def test_a_group_interleaves_its_products_and_names_those_that_do_not_apply():
    prods = [bench.product(m=5, l=3, n=4, method=meth, baseline=b) for b in ("authors", "hepkg")
             for meth in ("hegmm-en", "e2dm-r", "huang")]
    assert len(bench.groups(prods, 3)) == 1
    runs = runs_of(prods)
    na = runs[runs.status != "ok"]
    assert set(zip(na.method, na.baseline)) == {("e2dm-r", "authors"), ("e2dm-r", "hepkg")}
    assert (na.status == "N/A").all() and na.reason.str.contains("E2DM-R").all()
    ok = runs[runs.status == "ok"]
    assert len(ok) == 4 * 3 and list(ok.rep.unique()) == [0, 1, 2]
    assert (ok[["wall_s", "cpu_s", "he_s", "cloud_s", "trace_peak_bytes"]] > 0).all().all()
    assert (ok.cloud_s < ok.wall_s).all()
    if not math.isnan(ok.rss_peak_bytes.iloc[0]):
        assert (ok.rss_peak_bytes > 10e6).all()
    # both sum Huang's 3 products unrelinearized and relinearize once
    relin = ok.groupby(["baseline", "method"]).relinearize.first()
    assert relin["authors", "huang"] == 1 and relin["hepkg", "huang"] == 1 and (ok.mul_ct == 3).all()


def test_stats_report_spread_and_verdicts_per_baseline():
    prods = [bench.product(m=16, l=64, n=64, method=meth, baseline=b) for b in ("authors", "hepkg")
             for meth in ("hegmm-en", "e2dm-r", "e2dm-s")]
    tab = bench.stats(runs_of(prods)).set_index(["baseline", "method"])
    assert (tab.status == "measured").all() and (tab.reps == 3).all()
    assert (tab.q1_s <= tab.wall_s).all() and (tab.wall_s <= tab.q3_s).all()
    assert tab.loc[("authors", "e2dm-s"), "verdict"] in ("faster than hegmm-en", "slower than hegmm-en",
                                                         "inconclusive")
    assert pd.isna(tab.loc[("authors", "hegmm-en"), "verdict"])
    # the authors' E2DM-S: one masked rotation per diagonal of phi and psi, 3 (d - 1) rotations when d^2 fills the row
    assert tab.loc[("authors", "e2dm-s"), "rotate"] == 3 * 63


def test_a_wrong_product_is_an_error(monkeypatch):
    from hepkg.gemm import protocol

    real = protocol.Client.decrypt
    monkeypatch.setattr(protocol.Client, "decrypt", lambda self, plan, reply: real(self, plan, reply) + 1)
    with pytest.raises(AssertionError, match="wrong 4 x 4 x 4 product"):
        runs_of([bench.product(m=4, l=4, n=4, method="hegmm-en")], reps=1)


def test_cli_prints_table7(capsys):
    bench.main(["8-8-8", "--reps", "2", "--backend", "sim", "--methods", "hegmm-en,e2dm-s"])
    out = capsys.readouterr().out
    assert "authors" in out and "hepkg" in out and "e2dm-s" in out
