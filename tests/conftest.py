"""Shared fixtures: one context per (backend, scheme), built once per session (per xdist worker);
and :data:`LONG`, the cases ``make test`` leaves to ``make test-long``.

``HEPKG_TEST_CKKS`` names another CKKS set for the protocol suites and ``HEPKG_TEST_CKKS_BACKENDS``
(comma-separated) restricts their CKKS backends, e.g. ``make test-rns`` (rns at ckks-32768-d9).
"""
import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hepkg.he as he

BFV = he.get_params("bfv-8192-d2")
CKKS = he.get_params(os.environ.get("HEPKG_TEST_CKKS", "ckks-16384-small"))
ROTATIONS = [1, 2, 3, 5, 7, 100, 1000, 4095]

BFV_BACKENDS = [b for b in ("sim", "pyfhel", "openfhe") if he.availability()[b]]
CKKS_BACKENDS = [b for b in os.environ.get("HEPKG_TEST_CKKS_BACKENDS", "sim,pyfhel,openfhe,tenseal,rns").split(",")
                 if he.availability()[b]]


#: the rns engine's circuit that the kernel paths must agree on bit for bit (tests/test_rns_cpu.py: numba against
#: numpy; tests/test_rns_launches.py: CuPy on the stand-in against numpy): op -> (engine, ciphertext) -> ciphertext,
#: with rotation keys for steps 1 and 5
RNS_CIRCUIT = {
    "encrypt": lambda e, a: a,
    "mul_relin_rescale": lambda e, a: e.rescale(e.relinearize(e.mul(a, a))),
    "relin_rescale_folded": lambda e, a: e.relinearize(e.mul(a, a), rescale=True),
    "rotate": lambda e, a: e.rotate(a, 5),
    "hoisted": lambda e, a: e.rotate_hoisted(a, [1, 5])[5],
    "level1": lambda e, a: e.rotate_hoisted(e.rotate(e.relinearize(e.mul(a, a), rescale=True), 1), [5])[5],
    "add_sub_neg": lambda e, a: e.negate(e.sub(e.add(a, a), e.rotate(a, 1))),
    "mul_plain": lambda e, a: e.rescale(e.mul_plain(a, e.encode(np.full(8, 0.5)))),
    "drop_level": lambda e, a: e.drop_level(a, 2),
}


#: test ids (prefixes) that take minutes on 2 cores and repeat what a quicker case of make test already covers:
#: they carry the ``long`` marker and run in ``make test-long`` (CI runs both)
LONG = (
    "tests/test_hardening.py::test_3_contexts_made_and_dropped_keep_rss_flat",  # 100 contexts per backend
    "tests/test_render.py::test_render_only_rebuilds_a_section_identically[gemm]",  # quickstart's stays
    "tests/test_section_inputs.py::test_spmv_result_records_backend_and_params[openfhe-",  # pyfhel's stay
    # a whole digest at depth 28 on OpenFHE; sim's and pyfhel's stay, and 40_omr runs OpenFHE's at quick scale
    "tests/test_omr_detector.py::test_digest_retrieves_the_pertinent_messages[sophomr-openfhe]",
    "tests/test_omr_detector.py::test_digest_retrieves_the_pertinent_messages[sophomd-openfhe]",
    # SophOMR's 2048 rows descending on OpenFHE (the row swap); sim's stays, and OpenFHE's SophOMD descent
    "tests/test_omr_detector.py::test_the_digest_descends_to_the_subring_that_holds_its_rows[sophomr-5-openfhe]",
    # each method's whole query on OpenFHE at depth 11; sim's stay, and 30_facesearch measures all three on
    # OpenFHE at quick scale, every query checked (tests/test_notebooks.py::check_facesearch)
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[hydia-openfhe]",
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[bsgs-diagonal-openfhe]",
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[bsgs-textbook-openfhe]",
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[bsgs-streamed-openfhe]",
    "tests/test_linalg_rectangular.py::test_square_matches_numpy[512-openfhe]",  # the smaller squares stay
    # rns: each method's whole query; 31_facesearch_gpu and test_facesearch_gpu.py run its queries in make test
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[hydia-rns]",
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[bsgs-textbook-rns]",
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[bsgs-streamed-rns]",
    "tests/test_facesearch.py::test_membership_and_identification_end_to_end[bsgs-diagonal-rns]",
    # PerfOMR's unpacking on OpenFHE: sim's stays, and 40_omr runs PerfOMR's digests on OpenFHE at quick scale,
    # each decoded against the board (tests/test_notebooks.py::check_omr)
    "tests/test_omr_perfomr.py::test_unpack_puts_each_slot_in_its_own_ciphertext[openfhe]",
    # PerfOMR's digest of N = 8192 on OpenFHE: sim's stays (and at 6000 and 12000), and 40_omr's PerfOMR and PerfOMD
    # digests on OpenFHE are decoded against the board
    "tests/test_omr_perfomr.py::test_perf_digest_retrieves_the_pertinent_bundles[openfhe-",
    # PerfOMD's noise trace on the toy set: 40_omr traces it at quick scale, checked as this test checks it
    # (tests/test_omr_perfomr.py::check_noise_trace)
    "tests/test_omr_perfomr.py::test_the_noise_trace_falls_stage_by_stage",
    # the device pipelines on numpy at K = 2100: 31_facesearch_gpu runs them at K = 4096 at quick scale, checked as
    # these check them (tests/test_facesearch_gpu.py::check_pipeline_rows)
    "tests/test_facesearch_gpu.py::test_pipelines_agree_with_numpy_and_count_table2",
    "tests/test_facesearch_gpu.py::test_report_without_gpu",
    # the membership decisions for 0, 1, 2 matches, and rns beside OpenFHE on 0 and 3: sim's stays, 30_facesearch
    # decides planted and absent (no-match) queries on OpenFHE by the slot rule (tests/test_notebooks.py::
    # check_facesearch), and the rns engine decides 0 and 2 matches in test_facesearch_gpu.py
    "tests/test_facesearch.py::test_membership_decisions_for_0_1_2_matches_under_encryption[rns]",
    "tests/test_facesearch.py::test_membership_decisions_for_0_1_2_matches_under_encryption[openfhe]",
    "tests/test_facesearch.py::test_rns_and_openfhe_reach_the_same_decisions",
    # hepkg's digest on an openfhe module at another path: prepare's check runs one in
    # test_prepare_offers_the_openfhe_python_checkout_that_puts_both_sides_on_one_openfhe
    "tests/test_omr_authors.py::test_hepkg_runs_the_openfhe_module_built_beside_their_openfhe",
    # rns's precision at the 128-bit set measured again against the committed table (the table's own checks stay);
    # make test-rns runs the protocol suites on rns at that set
    "tests/test_rns_precision.py::test_precision_at_32768_d9_from_the_table",
    # the 9000 x 5000 matrix; the five smaller shapes stay
    "tests/test_spmv_fidelity.py::test_diagonal_method_is_exact_and_counted[False-shape5-0.0005]",
    "tests/test_spmv_fidelity.py::test_diagonal_method_is_exact_and_counted[True-shape5-0.0005]",
)


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.startswith(LONG):
            item.add_marker(pytest.mark.long)


@functools.lru_cache(maxsize=None)
def make_context(backend: str, scheme: str, policy: str = "pow2"):
    """A cached secret context; `pow2` gets all power-of-two keys, `exact` the ROTATIONS steps."""
    params = BFV if scheme == "bfv" else CKKS
    rotations = "all" if policy == "pow2" else ROTATIONS
    return he.context(backend, params, rotations=rotations, policy=policy, swap=scheme == "bfv")


def run_python(code: str, *args, timeout: float = 300) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (hepkg from this checkout); its exit code tells a crash apart."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def received(data, **kw):
    """``he.load_context(data)`` by a party that pinned the fingerprint of exactly these bytes (what their maker,
    honest or not, published)."""
    return he.load_context(data, fingerprint=he.fingerprint(data), **kw)


def pinned(data, backend: str | None = None) -> dict:
    """The keyword arguments of a party that receives the context ``data`` pinned to its fingerprint (``backend``
    named: 'sim' must be)."""
    return dict(fingerprint=he.fingerprint(data), backend=backend)


def cupy_or_skip():
    """The cupy module where a CUDA device is present; the test is skipped otherwise (also where CuPy is
    installed but sees no device: its device count raises then)."""
    cp = pytest.importorskip("cupy")
    if not cp.cuda.is_available():
        pytest.skip("no CUDA device")
    return cp


def rotate_ref(x: np.ndarray, k: int, scheme: str) -> np.ndarray:
    """numpy reference of a left rotation (BFV: each row of N/2 on its own)."""
    if scheme == "bfv":
        return np.roll(x.reshape(2, -1), -k, axis=1).reshape(-1)
    return np.roll(x, -k)


def ckks_tol(params) -> float:
    """Absolute error allowed for CKKS results of magnitude <= 1 (see ParamSet.ckks_tolerance)."""
    return params.ckks_tolerance


@pytest.fixture(scope="session", params=BFV_BACKENDS)
def bfv(request):
    return make_context(request.param, "bfv")


@pytest.fixture(scope="session", params=CKKS_BACKENDS)
def ckks(request):
    return make_context(request.param, "ckks")
