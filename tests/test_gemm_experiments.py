"""gemm experiment helpers: shapes, groups, one configuration -> one picklable row, grid execution."""
import pickle

import hepkg.gemm as gm
from hepkg.grid import run_grid


def test_random_shapes_are_reproducible_and_in_range():
    shapes = gm.random_shapes(200, 1, 64, seed=3)
    assert shapes == gm.random_shapes(200, 1, 64, seed=3) != gm.random_shapes(200, 1, 64, seed=4)
    assert all(1 <= x <= 64 for s in shapes for x in s) and {x for s in shapes for x in s} >= {1, 64}


def test_shape_groups():
    assert gm.shape_group(5, 5, 5) == "square"
    assert gm.shape_group(4, 12, 12) == "e2dm-r favourable"
    assert [gm.shape_group(*s) for s in [(2, 5, 7), (5, 2, 7), (7, 5, 2), (3, 3, 5)]] == \
        ["m=min", "l=min", "n=min", "m=min"]
    assert set(gm.GROUPS) >= {gm.shape_group(*s) for s in gm.random_shapes(50, 1, 9)}


def test_run_config_rows():
    row = gm.run_config(dict(m=3, l=5, n=4, method="hegmm-en", preprocess="client", policy="exact"))
    assert row["status"] == "ok" and row["correct"] and row["mul_ct"] == 3 and row["depth"] == 2
    assert row["upload_ciphertexts"] == 2 and row["key_bytes"] > 0 and row["rotation_keys"] > 0
    assert row["seconds_total"] > 0 and row["group"] == "m=min"
    na = gm.run_config(dict(m=5, l=2, n=5, method="e2dm-r"))
    assert na["status"] == "N/A" and "inner dimension" in na["reason"]
    big = gm.run_config(dict(m=100, l=100, n=100, method="e2dm-s"))
    assert big["status"] == "too large" and "4096" in big["reason"]
    blocked = gm.run_config(dict(m=70, l=20, n=30, method="uscore", blocking=16))
    assert blocked["correct"] and blocked["mul_ct"] == 5 * 2 * 2 * 16
    pickle.loads(pickle.dumps(gm.run_config))


def test_run_config_on_the_grid_executor(tmp_path):
    configs = [dict(m=m, l=l, n=n, method=meth) for (m, l, n) in gm.random_shapes(3, 1, 8, seed=1)
               for meth in ("hegmm-en", "huang")]
    df = run_grid(gm.run_config, configs, tmp_path, progress=False)
    assert len(df) == 6 and df["correct"].all()
