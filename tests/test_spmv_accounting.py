"""Equal accounting: every method times the same phases with the same work in each, and reports the key
material each party receives."""
import functools
from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import hepkg.he as he
from hepkg.spmv import (PHASES, PhaseClock, diagonal, encoding, parties, result, rowwise, run_cssc, run_diagonal,
                        run_rowwise)

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose

RUNS = {"cssc": run_cssc, "diagonal": run_diagonal, "diagonal-dense": functools.partial(run_diagonal, dense=True),
        "rowwise": run_rowwise}
M = sp.random(120, 90, density=0.06, format="csr", random_state=4, data_rvs=lambda n: np.ones(n, int)).astype(int)
V = np.arange(90) % 7 - 3


def test_phase_clock_charges_nested_blocks_to_the_inner_phase(monkeypatch):
    ticks = iter(range(100))
    monkeypatch.setattr(result, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    clock = PhaseClock()
    with clock("cloud"):          # 0 .. 1, then 2 .. 3
        with clock("client_a"):   # 1 .. 2
            pass
    with clock("cloud"):          # 4 .. 5
        pass
    assert clock.timings() == dict(keygen=0, key_transfer=0, client_a=1, client_b=0, cloud=3, decrypt=0, total=4)


@pytest.fixture
def phase_log(monkeypatch):
    """(call, phase running) for key setup, encoding, encryption, (de)serialization and evaluation."""
    log, clocks = [], []

    class SpyClock(PhaseClock):
        def __init__(self):
            super().__init__()
            clocks.append(self)

    def spy(owner, name):
        fn = getattr(owner, name)

        def wrapper(*args, **kwargs):
            running = clocks[-1]._running if clocks else []
            log.append((name, running[-1][0] if running else None))
            return fn(*args, **kwargs)
        monkeypatch.setattr(owner, name, wrapper)

    for module in (parties, diagonal, rowwise):
        monkeypatch.setattr(module, "PhaseClock", SpyClock)
    for owner, names in [(he, ("context", "load_context")), (encoding, ("encode_values",)),
                         (parties, ("generate_chunks",)), (diagonal, ("_runs",)),
                         (he.Context, ("to_bytes", "encrypt", "decrypt", "serialize", "deserialize", "mul",
                                       "mul_plain", "rotate"))]:
        for name in names:
            spy(owner, name)
    return log


@pytest.mark.parametrize("method", RUNS)
def test_each_phase_holds_the_same_work(method, phase_log):
    res = RUNS[method](M, V)
    assert np.array_equal(res.y, M @ V)
    seen = defaultdict(set)
    for name, phase in phase_log:
        seen[name].add(phase)
    assert seen["context"] == {"keygen"}
    for name in ("load_context", "to_bytes"):  # serializing and loading keys
        assert seen[name] == {"key_transfer"}, (name, seen[name])
    assert seen["encrypt"] <= {"client_a", "client_b"} and "client_b" in seen["encrypt"]
    assert seen["encode_values"] <= {"client_a", "client_b", "cloud"}  # the row-wise server holds the matrix
    assert seen["generate_chunks"] | seen["_runs"] <= {"client_a"}  # Client A's preparation is timed
    assert seen["serialize"] <= {"client_a", "client_b", "cloud"}
    assert seen["deserialize"] <= {"cloud", "decrypt"}
    assert seen["mul"] | seen["mul_plain"] | seen["rotate"] <= {"cloud"}
    assert seen["decrypt"] == {"decrypt"}
    assert set(res.timings) == set(PHASES) | {"total"}
    assert res.timings["total"] == pytest.approx(sum(res.timings[p] for p in PHASES))


@pytest.mark.parametrize("method", RUNS)
def test_key_traffic_per_recipient(method):
    res = RUNS[method](M, V)
    assert res.traffic["keys_to_cloud"] > 0
    if method == "rowwise":  # Client B holds the keys; the server gets the evaluation keys
        assert res.traffic["keys_to_b"] == 0 and res.timings["client_a"] == 0
    else:
        assert 0 < res.traffic["keys_to_b"] < res.traffic["keys_to_cloud"]


def test_all_zero_matrix_reports_the_same_phases_and_keys():
    for method, run in RUNS.items():
        res = run(sp.csr_matrix((4, 3), dtype=np.int64), np.arange(3))
        assert res.y.tolist() == [0] * 4 and set(res.timings) == set(PHASES) | {"total"}, method
        assert res.traffic == dict(keys_to_cloud=0, keys_to_b=0) and res.method == method
