"""Compute, then render, for gemm: configurations chosen from raw tables read back from CSV are the ones run
(the whole section rendering identically is tests/test_render.py)."""

def test_configs_from_a_frame_read_back_from_csv_are_the_configs_run(tmp_path):
    """What to measure is chosen from raw tables read back from CSV: NaN (max_abs, blocking) must be
    None again and numbers plain, so the backend runs get the same configurations (and grid keys)."""
    import pandas as pd

    import hepkg.he as he
    from hepkg.bench import RawTables
    from hepkg.gemm import experiments as ex
    from hepkg.grid import config_key, run_grid

    configs = [dict(m=2, l=5, n=7, method=m, preprocess="cloud", params="bfv-8192-default", seed=0)
               for m in ("hegmm-en", "e2dm-s")]
    fresh = run_grid(ex.run_config, configs, tmp_path / "grid", progress=False)
    back = RawTables("demo", tmp_path).table("sim", lambda: fresh)
    costs = {"bfv-8192-default": dict.fromkeys(he.KINDS, 1e-3)}  # any prices: only the choice matters
    want = ex.affordable(ex.priced(fresh, costs), float("inf"), "sim")
    got = ex.affordable(ex.priced(back, costs), float("inf"), "sim")
    assert got == want and all(c["max_abs"] is None and c["blocking"] is None for c in got)
    assert [config_key(ex.run_config, c) for c in got] == [config_key(ex.run_config, c) for c in want]
    assert all(type(c["m"]) is int and type(c["insecure"]) is bool for c in got)
    assert isinstance(back, pd.DataFrame) and len(back) == len(fresh)
