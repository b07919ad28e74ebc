"""hepkg.bench.rns_ops on a tiny insecure ring (N = 2^12, one repetition): the table's shape and values."""
import numpy as np
import pandas as pd
import pytest

import hepkg.he as he
from hepkg.bench import rns_ops
from hepkg.rns.params import fitted

TOY = he.get_params("toy-ckks-4096-d11")


def _check_measured(rows):
    assert (rows.reps == 1).all() and (rows.median_ms > 0).all()
    assert (rows.q1_ms <= rows.median_ms).all() and (rows.median_ms <= rows.q3_ms).all()


def test_engine_alone_names_the_missing_openfhe_set():
    table = rns_ops.measure_config("rns-test-4096-d3", None, reps=1, paths=["numpy"])
    assert list(table.columns) == rns_ops.COLUMNS and len(table) == 2 * len(rns_ops.OPS)
    assert set(table.backend) == {"rns-numpy", "openfhe"} and (table.N == 4096).all() and (table.depth == 3).all()
    mine = table[table.backend == "rns-numpy"]
    assert list(mine.op) == list(rns_ops.OPS)
    _check_measured(mine)
    theirs = table[table.backend == "openfhe"]
    assert theirs.median_ms.isna().all() and theirs.note.str.contains("no OpenFHE set").all()
    assert table.vs_openfhe.isna().all()


def test_engine_alone_where_openfhe_is_not_installed(monkeypatch):
    monkeypatch.setattr(he, "availability", lambda: {"openfhe": False})
    table = rns_ops.measure_config("rns-test-4096-d3", "toy-ckks-4096-d11", reps=1, paths=["numpy"])
    theirs = table[table.backend == "openfhe"]
    assert len(theirs) == len(rns_ops.OPS) and theirs.median_ms.isna().all()
    assert theirs.note.str.contains("OpenFHE is not installed").all() and table.vs_openfhe.isna().all()
    _check_measured(table[table.backend == "rns-numpy"])


def test_main_saves_tagged_tables_of_the_named_array_module(tmp_path, monkeypatch):
    monkeypatch.setenv("HEPKG_ARTIFACTS", str(tmp_path))
    monkeypatch.setattr(rns_ops, "engine_sets", lambda n, d: ("rns-test-4096-d3", None))
    rns_ops.main(["--n", "12", "--depth", "3", "--reps", "1", "--paths", "numpy", "--save", "--tag", "probe"])
    saved = sorted(p.name for p in (tmp_path / "bench").iterdir())
    assert saved == sorted(f"{t}_probe.{e}" for t in ("rns_ops", "rns_ops_published", "rns_bandwidth")
                           for e in ("csv", "md"))
    table = pd.read_csv(tmp_path / "bench" / "rns_ops_probe.csv")
    assert set(table.backend) == {"rns-numpy", "openfhe"} and (table.N == 4096).all()


@pytest.mark.skipif(not he.availability()["openfhe"], reason="needs openfhe")
def test_engine_beside_openfhe_on_the_same_moduli_sizes():
    """numpy, numba at 1 and 2 threads and OpenFHE at 1 and 2 threads in one run, op by op; ratios over
    single-threaded OpenFHE."""
    pytest.importorskip("numba")
    mine = fitted(TOY.name, TOY.n, TOY.scale_bits, TOY.qi_bits[:-1])
    table = rns_ops.measure_config(mine, TOY.name, reps=1, insecure=True, paths=["numpy", "numba"], threads=[1, 2])
    sides = {("rns-numpy", 1), ("rns-numba", 1), ("rns-numba", 2), ("openfhe", 1), ("openfhe", 2)}
    assert list(table.columns) == rns_ops.COLUMNS and len(table) == len(sides) * len(rns_ops.OPS)
    assert set(zip(table.backend, table.threads)) == sides and (table.depth == 11).all()
    measured = table[table.median_ms.notna()]
    assert len(measured) == len(sides) * len(rns_ops.OPS) - 2           # OpenFHE's NTT is not exposed
    _check_measured(measured)
    ratio = table.set_index(["backend", "threads", "op"]).vs_openfhe.sort_index()
    assert (ratio["openfhe", 1].drop("ntt") == 1).all()
    for side in sides - {("openfhe", 1)}:
        assert np.isfinite(ratio[side].drop("ntt")).all() and (ratio[side].drop("ntt") > 0).all(), side
    assert table.query("backend == 'openfhe' and op == 'ntt'").note.str.contains("not exposed").all()


def test_openfhe_runs_each_thread_count_in_a_process_of_its_own():
    """OpenFHE fixes its threads when it loads (omp_set_num_threads later changes nothing): each side is a process
    started with its OMP_NUM_THREADS, and says how many threads its OpenMP runtime has."""
    pytest.importorskip("openfhe")
    for count in (1, 2):
        side = rns_ops.OpenfheSide(TOY.name, count, insecure=True)
        try:
            assert side.omp_threads == count
            assert side.time("rotate") > 0 and side.time("ntt") is None
        finally:
            side.close()
        assert not side.proc.is_alive()


def test_sets_and_array_modules():
    mine, theirs = rns_ops.engine_sets(15, 9)
    assert (mine.n, mine.depth, mine.secure, theirs) == (32768, 9, True, "ckks-32768-d9")
    mine, theirs = rns_ops.engine_sets(16, 11)
    base = he.get_params("ckks-32768-d11")
    assert (mine.n, mine.depth, theirs.n, theirs.depth, theirs.ks_digits) == (65536, 11, 65536, 11, mine.dnum)
    assert theirs.qi_bits == base.qi_bits and theirs.scale_bits == base.scale_bits and theirs.secure
    assert rns_ops.array_modules()[0] == "numpy" and rns_ops.default_threads()[0] == 1


def test_beside_published_divides_ours_by_the_papers_figures():
    table = rns_ops.measure_config("rns-test-4096-d3", None, reps=1, paths=["numpy"]).assign(N=32768)
    out = rns_ops.beside_published(table)
    assert set(out.op) == {"hoist_step", "rotate", "ntt", "baby_steps"} and (out.backend == "rns-numpy").all()
    assert (out.threads == 1).all()
    np.testing.assert_allclose(out.ratio, out.median_ms / out.published_ms)
    assert out.query("op == 'rotate'").published_ms.iloc[0] == pytest.approx(40 / 22)


def test_kernel_bandwidth_counts_bytes_against_a_copy():
    table = rns_ops.kernel_bandwidth("rns-test-4096-d3", reps=1).set_index("kernel")
    assert list(table.index) == list(rns_ops.KERNEL_BYTES) and (table.path == "numpy").all()
    residues = 4 * 4096                                                     # depth 3: four Q limbs
    assert (table.limbs == 4).all()
    assert table.bytes["copy"] == 16 * residues and table.bytes["ntt"] == 16 * 12 * residues
    np.testing.assert_allclose(table.gb_per_s, table.bytes / (table.median_ms * 1e6))
    assert table.of_copy["copy"] == 1 and (table.of_copy > 0).all()


def test_floor_model_counts_bytes_and_multiplies():
    """The floor of rns-ckks-32768-d9 (N = 2^15, k = 10, p = 4, digits 4 + 4 + 2) on an H100 SXM's peaks."""
    from hepkg.bench import rns_floor
    from hepkg.rns import get_params

    p = get_params("rns-ckks-32768-d9")
    assert (len(p.q_primes), len(p.p_primes), p.dnum) == (10, 4, 3)
    peaks = rns_floor.device_peaks(dict(memoryClockRate=2619000, memoryBusWidth=5120, multiProcessorCount=132,
                                        clockRate=1980000))
    assert peaks["bandwidth"] == pytest.approx(3.352e12, rel=1e-3)
    assert peaks["imads"] == pytest.approx(132 * 1.98e9 * 64)
    work = rns_floor.work(p)
    n = 32768
    assert work["ntt"] == (8 * n * 60, 20 * n / 2 * 15 * 10)
    assert work["rotate"][0] == 8 * n * (40 + 2 * 3 * 14 + 4 * 14)
    assert work["hoist_step"][0] == 8 * n * (3 * 14 + 2 * 3 * 14 + 20)
    assert work["mul_relin_rescale"][1] > work["rotate"][1] > work["hoist_step"][1] > work["ntt"][1]
    assert work["baby_steps"][0] == 8 * n * (20 + 4 * 14) + 22 * work["hoist_step"][0]
    assert work["rotate"][1] + 21 * work["hoist_step"][1] == pytest.approx(work["baby_steps"][1])
    floors = rns_floor.floor_us(p, peaks)
    for op, f in floors.items():
        assert f["floor_us"] == max(f["memory_us"], f["compute_us"]) > 0, op
    assert 2 < floors["ntt"]["floor_us"] < 10 and 10 < floors["rotate"]["floor_us"] < 40


def test_gpu_rows_carry_floor_batch_and_host_times_on_the_standin():
    from hepkg.rns import standin

    standin.install()
    try:
        table = rns_ops.measure_config("rns-test-4096-d3", None, reps=1, paths=["cupy"])
    finally:
        standin.uninstall()
    mine = table[table.backend == "rns-cupy"].set_index("op")
    assert list(mine.index) == list(rns_ops.OPS) and mine.threads.isna().all()
    assert (mine.floor_us > 0).all() and (mine.batch32_ms.notna()).all() and (mine.host_ms.notna()).all()
    np.testing.assert_allclose(mine.of_floor, 1e3 * mine.median_ms / mine.floor_us)
    assert table[table.backend == "openfhe"].floor_us.isna().all()
