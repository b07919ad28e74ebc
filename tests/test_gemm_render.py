"""Compute, then render, for gemm: configurations chosen from raw tables read back from CSV are the ones run
(the whole section rendering identically is tests/test_render.py)."""

def test_configs_from_a_frame_read_back_from_csv_are_the_configs_run(tmp_path):
    """What to measure is chosen from raw tables read back from CSV: NaN (blocking) must be
    None again and numbers plain, so the backend runs get the same configurations (and grid keys)."""
    import pandas as pd

    import hepkg.he as he
    from hepkg.bench import RawTables
    from hepkg.gemm import bench as gb
    from hepkg.gemm import experiments as ex
    from hepkg.grid import config_key, run_grid

    configs = [dict(m=2, l=5, n=7, method=m, baseline=b, preprocess="cloud", params="bfv-8192-default", seed=0)
               for m in ("hegmm-en", "e2dm-s") for b in ("authors", "hepkg")]
    fresh = run_grid(ex.run_config, configs, tmp_path / "grid", progress=False)
    back = RawTables("demo", tmp_path).table("sim", lambda: fresh)
    costs = {"bfv-8192-default": dict.fromkeys(he.KINDS, 1e-3)}  # any prices: only the choice matters
    want = ex.to_measure(ex.priced(fresh, costs), float("inf"))
    got = ex.to_measure(ex.priced(back, costs), float("inf"))
    assert got == want and len(got) == 4 and all(c["blocking"] is None for c in got)
    groups = [gb.groups(x, 3) for x in (want, got)]
    assert [config_key(gb.measure_group, g) for g in groups[0]] == [config_key(gb.measure_group, g) for g in groups[1]]
    assert all(type(c["m"]) is int for c in got)
    assert isinstance(back, pd.DataFrame) and len(back) == len(fresh)
