"""Table 7 side by side: interleaved repetitions, every product checked, inapplicable methods named."""
from hepkg.gemm.bench import measure_shape, table7


def test_interleaved_runs_every_applicable_method_and_names_the_others():
    runs, skipped = measure_shape(5, 3, 4, ("hegmm-en", "e2dm-r", "huang"), backend="sim", reps=3)
    assert list(runs.method[:2]) == ["hegmm-en", "huang"] and len(runs) == 6
    assert (runs[["wall_s", "cpu_s", "he_s", "cloud_s"]] > 0).all().all()
    assert (runs.cloud_s < runs.wall_s).all()
    assert set(skipped) == {"e2dm-r"} and "NotApplicable" in skipped["e2dm-r"]


def test_table7_reports_spread_paper_and_verdicts():
    tab = table7([(16, 64, 64)], ("hegmm-en", "e2dm-r", "e2dm-s"), backend="sim", reps=3).set_index("method")
    assert (tab.status == "measured").all() and (tab.reps == 3).all()
    assert (tab.q1_s <= tab.wall_s).all() and (tab.wall_s <= tab.q3_s).all()
    assert tab.loc["e2dm-r", "paper_s"] == 3.10 and tab.loc["hegmm-en", "paper_s"] == 3.13
    assert tab.loc["e2dm-s", "verdict"] in ("faster than hegmm-en", "slower than hegmm-en", "inconclusive")
