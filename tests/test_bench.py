"""hepkg.bench: timers, memory, system info, the cost model and artifact writers."""
import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest

import hepkg.he as he
from hepkg.atomic import TMP_MARK
from hepkg.bench import (PRICED_AS, PeakMemory, Timer, breakdown, costmodel, estimate, floor_ratio, op_costs,
                         paper_vs_ours, report, save_figure, save_table, system_info, write_run_json)

TOY = "toy-bfv-1024"
#: fixed latencies (ms) standing in for a measurement
FAKE_MS = dict(encode=7.0, encrypt=1.0, decrypt=2.0, add=3.0, mul_ct=4.0, mul_pt=5.0, rotate=6.0, mod_switch=8.0)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HEPKG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "costmodel"


def no_tmp_left(root):
    return not [p for p in root.rglob("*") if TMP_MARK in p.name]


def test_timer_measures_a_sleep():
    with Timer() as t:
        time.sleep(0.1)
    assert t.wall >= 0.1
    assert 0 <= t.cpu < 0.05


def test_peak_memory_sees_a_transient_numpy_array_in_rss():
    import mmap

    with PeakMemory(interval=0.002) as m:
        # 200 MB on fresh pages (an anonymous map: memory the process freed earlier and kept cannot stand in)
        buf = mmap.mmap(-1, 200_000_000)
        a = np.frombuffer(buf, dtype=np.uint8)
        a[:] = 1              # freed before the block ends: only the sampler sees it
        time.sleep(0.05)
        del a
        buf.close()
    assert m.delta_rss > 150e6
    assert m.peak_rss == m.baseline_rss + m.delta_rss
    assert set(m.as_dict()) == {"peak_rss", "delta_rss", "py_peak"}


def test_peak_memory_sees_a_python_list_in_tracemalloc():
    with PeakMemory() as m:
        big = list(range(1_000_000))  # ~36 MB of list and int objects
        del big
    assert 30e6 < m.py_peak < 100e6


def test_peak_memory_rejects_a_bad_interval():
    with pytest.raises(ValueError):
        PeakMemory(interval=0)


def test_system_info_keys_and_json():
    info = system_info()
    assert {"cpu", "physical_cores", "logical_cores", "ram_bytes", "gpu", "os", "python", "versions",
            "git"} <= set(info)
    assert info["logical_cores"] >= 1 and info["ram_bytes"] > 0
    assert info["versions"]["numpy"] == np.__version__
    assert {"scipy", "pandas", "Pyfhel", "openfhe", "tenseal", "cupy"} <= set(info["versions"])
    assert set(info["git"]) == {"revision", "dirty", "changed"}
    assert json.loads(json.dumps(info)) == info


@pytest.mark.parametrize("text, want", [("9\n", 9), ("0", 0), ("11", None), ("junk", None), (None, None)])
def test_page_reporting_is_the_order_a_vm_reports_from_or_none(tmp_path, monkeypatch, text, want):
    from hepkg.bench import sysinfo

    param = tmp_path / "page_reporting_order"
    if text is not None:
        param.write_text(text)
    monkeypatch.setattr(sysinfo, "PAGE_REPORTING", str(param))
    assert sysinfo.page_reporting() == want
    assert sysinfo.system_info()["page_reporting_order"] == want


def test_every_counted_kind_has_a_price():
    assert set(PRICED_AS) == set(he.KINDS)


def test_op_costs_measured_once_then_cached(cache, monkeypatch):
    costs = op_costs("sim", TOY, reps=2, insecure=True)
    assert set(costs) == set(he.KINDS) and all(v >= 0 for v in costs.values())
    [entry] = cache.glob("sim_toy-bfv-1024_*.json")
    assert json.loads(entry.read_text())["machine"]["cpu"] == system_info()["cpu"]

    def fail(*a, **k):
        raise AssertionError("measured again instead of reading the cache")

    monkeypatch.setattr(costmodel, "measure_latencies", fail)
    assert op_costs("sim", TOY, insecure=True) == costs
    monkeypatch.setattr(costmodel, "measure_latencies", lambda *a, **k: dict(FAKE_MS))
    fresh = op_costs("sim", TOY, refresh=True)
    assert fresh["keyswitch"] == pytest.approx(6e-3) and fresh["sub"] == fresh["add_pt"] == pytest.approx(3e-3)
    assert fresh["relinearize"] == fresh["rescale"] == fresh["rotate"] == 0.0
    assert op_costs("sim", TOY) == fresh  # the refreshed entry replaced the old one
    assert no_tmp_left(cache)


def test_estimate_rotation_by_7_and_one_product():
    ctx = he.context("sim", TOY, rotations=[7], policy="pow2", insecure=True)
    a, b = ctx.encrypt([1, 2, 3]), ctx.encrypt([4, 5, 6])
    with ctx.counting() as ops:
        ctx.mul(ctx.rotate(a, 7), b)
    assert ops["keyswitch"] == 3 and ops["relinearize"] == 1  # 7 = 8 - 1, plus relinearization
    costs = {kind: 0.0 if op is None else FAKE_MS[op] / 1e3 for kind, op in PRICED_AS.items()}
    floor = 2 * 6e-3 + 4e-3  # two key switches at the rotate latency + one relinearized mul_ct
    assert estimate(ops, costs) == pytest.approx(floor)
    assert estimate(ops.as_dict(), costs) == pytest.approx(floor)
    assert breakdown(ops, costs) == pytest.approx({"keyswitch": 12e-3, "mul_ct": 4e-3})
    assert floor_ratio(3 * floor, ops, costs) == pytest.approx(3)
    assert math.isnan(floor_ratio(1.0, he.OpCounts(), costs))
    with pytest.raises(KeyError, match="mul_ct"):
        estimate(ops, {"keyswitch": 1.0})


def test_sim_counts_priced_with_measured_costs(cache):
    ctx = he.context("sim", TOY, rotations=[1], insecure=True)
    costs = op_costs("sim", TOY, reps=2, insecure=True)
    a = ctx.encrypt([1, 2])
    with ctx.counting() as ops:
        with Timer() as t:
            for _ in range(20):
                ctx.add(ctx.rotate(a, 1), a)
    assert estimate(ops, costs) == pytest.approx(20 * (costs["keyswitch"] + costs["add"]))
    assert floor_ratio(t.wall, ops, costs) > 0


def test_save_table_writes_csv_and_markdown(tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"op": ["add", "mul|ct"], "ms": [0.5, 1 / 3]}).set_index("op")
    csv, md = save_table(df, "spmv", "tab1_ops", base=tmp_path)
    assert csv == tmp_path / "spmv" / "tab1_ops.csv" and md.suffix == ".md"
    pd.testing.assert_frame_equal(pd.read_csv(csv), df.reset_index())
    assert "add" in md.read_text() and "0.333333" in md.read_text()
    assert no_tmp_left(tmp_path)


def test_markdown_tables_are_tabulates_with_cells_that_cannot_break_a_row():
    pd = pytest.importorskip("pandas")
    text = report.to_markdown(pd.DataFrame({"op": ["a|b", "c\nd"], "ms": [2 / 3, 12.0]}))
    assert text.splitlines() == ["| op   |        ms |", "|:-----|----------:|", "| a\\|b |  0.666667 |",
                                 "| c d  | 12        |"]


def test_save_figure_png_and_atomic_on_failure(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = Figure()
    fig.add_subplot().plot([0, 1], [1, 0])
    path = save_figure(fig.axes[0], "gemm", "fig1_line", base=tmp_path)
    assert path == tmp_path / "gemm" / "fig1_line.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    class Broken:
        def savefig(self, *a, **k):
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        save_figure(Broken(), "gemm", "fig2_broken", base=tmp_path)
    assert not (tmp_path / "gemm" / "fig2_broken.png").exists()
    assert no_tmp_left(tmp_path)


def test_write_run_json(tmp_path):
    started = time.time()
    params = dict(SCALE="quick", BACKEND="sim", SEED=0, ARTIFACT_DIR=tmp_path)
    path = write_run_json("omr", params, base=tmp_path, started=started, extra={"estimated": False})
    run = json.loads(path.read_text())
    assert path == tmp_path / "omr" / "run.json"
    assert (run["scale"], run["backend"], run["estimated"]) == ("quick", "sim", False)
    assert run["parameters"]["ARTIFACT_DIR"] == str(tmp_path)
    assert run["started"] <= run["finished"] and run["system"]["cpu"]
    assert run["resumed_s"] >= 0 and run["peak_rss_bytes"] > 10 * 2 ** 20  # this process's largest resident set
    assert no_tmp_left(tmp_path)


def test_paper_vs_ours():
    pd = pytest.importorskip("pandas")
    ours = pd.DataFrame({"op": ["add", "mul_ct", "rotate"], "ms": [0.2, 8.0, 3.0]})
    out = paper_vs_ours(ours, {"add": 0.1, "mul_ct": 4.0}, on="op", value="ms")
    assert list(out.columns) == ["op", "paper", "ours", "ratio"]
    assert out["ratio"].tolist()[:2] == pytest.approx([2.0, 2.0]) and math.isnan(out["ratio"].iloc[2])

    ours2 = pd.DataFrame({"n": [8, 8, 16], "method": ["a", "b", "a"], "s": [1.0, 3.0, 5.0]})
    paper = pd.DataFrame({"n": [8, 8, 16], "method": ["a", "b", "a"], "seconds": [2.0, 3.0, 10.0]})
    out2 = paper_vs_ours(ours2, paper, on=["n", "method"], value="s", paper_value="seconds")
    assert out2["ratio"].tolist() == pytest.approx([0.5, 1.0, 0.5])
    assert paper_vs_ours(ours2, {(8, "a"): 4.0}, on=["n", "method"], value="s")["ratio"].iloc[0] == 0.25
    with pytest.raises(ValueError, match="duplicate"):
        paper_vs_ours(ours, pd.DataFrame({"op": ["add", "add"], "ms": [1.0, 2.0]}), on="op", value="ms")


def test_import_is_light():
    code = ("import sys; [sys.modules.__setitem__(m, None) for m in ('pandas', 'seaborn', 'matplotlib', 'scipy')]; "
            "import hepkg.bench as b; assert b.Timer and b.op_costs")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ interleaved repetitions, time inside the library
def test_time_inside_the_library_is_counted_once_per_hook():
    import hepkg.he as he
    from hepkg.he.counting import library_seconds
    ctx = he.context("sim", "bfv-8192-d2", rotations=[1])
    before = library_seconds()
    with ctx.counting() as ops:
        ctx.decrypt(ctx.rotate(ctx.encrypt([1, 2]), 1))
    grown = library_seconds() - before
    assert set(ops.seconds) == {"encode", "encrypt", "rotate", "decrypt"} and ops.he_s > 0
    assert sum(grown.values()) == pytest.approx(ops.he_s)
    assert ctx.counts.he_s >= ops.he_s


def test_interleaved_runs_rounds_in_order_and_reports_spread():
    from hepkg.bench import INCONCLUSIVE, compare, interleaved, spread
    from hepkg.bench.repeat import GREATER, LESS
    order = []
    runs = interleaved({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, reps=3, warmup=1,
                       progress=False)
    assert order == ["a", "b"] * 4 and runs["rep"].tolist() == [0, 0, 1, 1, 2, 2]
    assert set(runs.columns) == {"method", "rep", "wall_s", "cpu_s", "he_s", "overhead"}
    table = spread(runs).set_index("method")
    assert (table["n"] == 3).all() and (table["min"] <= table["median"]).all() and (table["q3"] <= table["max"]).all()
    assert compare([1, 1.1, 1.2], [2, 2.1, 2.2]) == LESS and compare([2, 2.1], [1, 1.1]) == GREATER
    assert compare([1, 2, 3], [1.5, 2.5, 3.5]) == INCONCLUSIVE
    with pytest.raises(ValueError):
        interleaved({"a": lambda: None}, reps=0)


def test_inconclusive_claim_status():
    from hepkg.reference import INCONCLUSIVE, NOT_REPRODUCIBLE, Claim, evaluate, tally
    table = evaluate([Claim("x", "a is faster than b", "paper", lambda r: (INCONCLUSIVE, "IQRs overlap")),
                      Claim("y", "holds", "paper", lambda r: (True, "")),
                      Claim("z", "one Ice Lake thread", "paper", lambda r: (NOT_REPRODUCIBLE, "2 EPYC cores"))], {})
    assert table.status.tolist() == ["inconclusive", "holds", "not reproducible here"]
    assert tally(table.to_dict("records")) == {"holds": 1, "fails": 0, "fails: below": 0, "fails: above": 0,
                                                "inconclusive": 1, "not measured": 0, "not reproducible here": 1}
    with pytest.raises(ValueError, match="claim w: a check returns"):
        Claim("w", "s", "paper", lambda r: ("fails: sideways", "")).evaluate({})


@pytest.mark.parametrize("backend, params", [("sim", "bfv-8192-d2"), ("pyfhel", "bfv-8192-d2"), ("sim", "ckks-16384-small")])
def test_in_run_costs_price_a_run_at_its_own_library_time(backend, params):
    import hepkg.he as he
    from hepkg.bench import estimate, observed_costs
    if not he.availability()[backend]:
        pytest.skip(f"{backend} absent")
    ctx = he.context(backend, params, rotations=[1, 3])
    with ctx.counting() as ops:
        x = ctx.encrypt([1, 2, 3])
        y = ctx.rotate(ctx.mul(x, x), 3)
        ctx.decrypt(ctx.add(ctx.mul_plain(y, [2, 2, 2]), x))
    costs = observed_costs(ops)
    assert set(costs) == {"encode", "encrypt", "decrypt", "add", "mul_ct", "mul_pt", "keyswitch"}
    assert estimate(ops, costs) == pytest.approx(ops.he_s, rel=1e-9)
