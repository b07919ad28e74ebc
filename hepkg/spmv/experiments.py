"""Experiment helpers for the spmv notebook: one configuration -> one result row (no plotting).

:func:`run_config` is a picklable top-level function (for process pools and Dask): it loads
or takes a matrix, draws a vector, runs one method on one backend and returns a flat dict
with times, op counts (all parties: ``op_*``; cloud only: ``cloud_*``), bytes per
direction (``bytes_*``), optional peak memory and a correctness flag against numpy.
Counts are the same on every backend, so ``run_config(..., backend="sim")`` gives the op
counts of runs too large for a real backend; :func:`predict_ops` gives the cloud's counts
from the sparsity pattern alone, without any ciphertext, for the largest matrices.

Notebook grid. :func:`grid_row` is the one function the notebook's resumable grid runs: a
configuration's ``mode`` is ``estimate`` (every party's counts from the pattern alone,
:func:`predict_all_ops`), ``time``, ``memory`` (a separate run sampling peak memory) or
``noise`` (the result's noise budget, :func:`cssc_noise_budget`). Besides CSSC and its
baselines it knows ``hegmm`` (HEGMM from :mod:`hepkg.gemm`, blocked, the matrix taken as
dense) and ``diagonal-dense``: the paper's diagonal method, every diagonal of every block
encrypted (zero ones too), as the paper's Table 5 times imply its baseline did; it is
measured, like the other methods, where its priced floor fits the time limit. The timed
runs themselves are interleaved repetitions (:mod:`hepkg.spmv.bench`); the tables are shaped
by :mod:`hepkg.spmv.report`.

Values. BFV is exact on integers: ``values="auto"`` keeps an integer matrix and replaces a
real one by its pattern (all ones), since op counts and times do not depend on the values
and the paper's own code truncated reals silently (use :class:`~hepkg.spmv.FixedPoint` for
real values on BFV). The vector is drawn uniformly within the largest magnitude the
matrix allows (at most 8 on BFV, 1 on CKKS), which the run takes as the parties' pre-agreed
public vector bound (``FixedPoint(vector_bound=...)``).
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
import subprocess
import sys
from collections import Counter
from itertools import product

import numpy as np

import hepkg.he as he
from hepkg.he.counting import KINDS

from . import messages
from .chunks import generate_chunks
from .costs import predicted_ops as cssc_predicted_ops
from .costs import table2_rows, table3_rows
from .cssc import CSSC, as_csr
from .diagonal import diagonal_block_size, diagonal_predicted_ops, run_diagonal
from .encoding import FixedPoint, capacity
from .parties import ClientA, ClientB, Cloud, run_cssc
from .rowwise import rowwise_predicted_ops, run_rowwise

__all__ = ["METHODS", "run_config", "predict_ops", "make_operands", "default_params", "GRID_METHODS",
           "hegmm_unavailable", "predict_all_ops", "cssc_noise_budget", "grid_row", "table2", "table3",
           "loglog_fit"]

METHODS = ("cssc", "diagonal", "rowwise")
_RUN = {"cssc": run_cssc, "diagonal": run_diagonal, "rowwise": run_rowwise,
        "diagonal-dense": functools.partial(run_diagonal, dense=True)}


def default_params(scheme: str = "bfv") -> str:
    """The paper's BFV set, or the smallest 128-bit CKKS set with depth 2."""
    return {"bfv": "bfv-8192-spmv", "ckks": "ckks-8192-small"}[scheme]


def _method(method: str):
    if method not in _RUN:
        raise ValueError(f"unknown method {method!r}; use one of {METHODS}")
    return _RUN[method]


def make_operands(matrix, params, values: str = "auto", seed: int = 0):
    """(matrix, vector, values used, encoding) for an exactly checkable run (see the module docstring);
    ``encoding`` agrees on the bound the vector was drawn within."""
    params = he.get_params(params)
    csr = as_csr(matrix)
    integral = csr.dtype.kind in "biu" or bool(np.all(csr.data == np.round(csr.data)))
    if values == "auto":
        values = "original" if integral or params.scheme == "ckks" else "pattern"
    if values == "pattern":
        csr.data = np.ones(csr.nnz, dtype=np.int64)
    elif values == "original":
        if params.scheme != "ckks" and integral:
            csr.data = csr.data.astype(np.int64)
    else:
        raise ValueError(f"values must be 'auto', 'original' or 'pattern', got {values!r}")
    rng = np.random.default_rng(seed)
    row_l1 = float(np.max(abs(csr).sum(axis=1)))
    if params.scheme == "ckks":
        bound = min(1.0, capacity(params) / row_l1 / 2)
        vector = rng.uniform(-bound, bound, csr.shape[1])
    else:  # at least 1: a matrix that allows no vector is refused by the run, with the reason
        bound = max(1, min(8, int(capacity(params) // row_l1)))
        vector = rng.integers(-bound, bound + 1, csr.shape[1])
    return csr, vector, values, FixedPoint(vector_bound=bound)


def _reference(csr, vector) -> np.ndarray:
    if csr.dtype.kind in "biu" and np.asarray(vector).dtype.kind in "biu":
        return csr.astype(np.int64) @ np.asarray(vector, dtype=np.int64)
    return csr.astype(np.float64) @ np.asarray(vector, dtype=np.float64)


def run_config(matrix, method: str = "cssc", backend: str = "sim", params=None, *, layout: str = "row",
               policy: str = "pow2", values: str = "auto", seed: int = 0, memory: bool = False,
               insecure: bool = False, name: str | None = None) -> dict:
    """One (matrix, method, backend) run as a flat result row.

    ``matrix``: a name for :func:`hepkg.datasets.load_matrix` or a sparse matrix (then
    ``name`` labels the row). ``memory=True`` samples peak RSS and tracemalloc's Python
    peak (slower: time and measure memory in separate runs).
    """
    run = _method(method)
    if isinstance(matrix, str):
        from hepkg.datasets import load_matrix
        name, matrix = name or matrix, load_matrix(matrix)
    params = he.get_params(params or default_params())
    csr, vector, used, encoding = make_operands(matrix, params, values, seed)
    kwargs = dict(backend=backend, params=params, encoding=encoding, policy=policy, insecure=insecure)
    if method == "cssc":
        kwargs |= dict(layout=layout, drop_primes=0)  # the paper's setting: no primes dropped
    if memory:
        from hepkg.bench import PeakMemory
        with PeakMemory() as mem:
            res = run(csr, vector, **kwargs)
        mem_row = dict(peak_rss=mem.peak_rss, delta_rss=mem.delta_rss, py_peak=mem.py_peak)
    else:
        res = run(csr, vector, **kwargs)
        mem_row = dict(peak_rss=None, delta_rss=None, py_peak=None)
    ref = _reference(csr, vector)
    err = float(np.max(np.abs(res.y - ref)))
    tol = 0.0 if params.scheme != "ckks" else 1e-6 * max(1.0, float(np.max(np.abs(ref))))
    row = dict(matrix=name or "matrix", rows=csr.shape[0], cols=csr.shape[1], nnz=csr.nnz, method=method,
               backend=backend, params=params.name, scheme=params.scheme,
               layout=layout if method == "cssc" else None, policy=policy, values=used, seed=seed,
               n_ct=res.info.get("n_ct"), vector_ciphertexts=res.info.get("vector_ciphertexts"),
               result_ciphertexts=res.info.get("result_ciphertexts"), correct=err <= tol, max_abs_err=err,
               estimated=False)
    row.update({f"time_{k}": v for k, v in res.timings.items()})
    row.update({f"bytes_{k}": v for k, v in res.traffic.items()})
    total, cloud = res.total_ops(), res.cloud_ops
    row.update({f"op_{k}": int(total.get(k, 0)) for k in KINDS + ("depth",)})
    row.update({f"cloud_{k}": int(cloud.get(k, 0)) for k in KINDS + ("depth",)})
    row.update(mem_row)
    return row


def predict_ops(matrix, method: str = "cssc", params=None, *, layout: str = "row", policy: str = "pow2") -> dict:
    """The cloud's op counts from the sparsity pattern alone (no encryption), as ``cloud_*`` would be.

    Exact for every method (tests check it against ``sim``); fast enough for the paper's
    largest matrices, where even ``sim`` runs of the baselines take long.
    """
    _method(method)
    period = he.get_params(params or default_params()).n // 2
    if method == "cssc":
        plan = generate_chunks(CSSC.from_sparse(matrix), period, layout)
        out = cssc_predicted_ops(plan, policy)
        out.update(n_ct=plan.n_ct, c_max=plan.c_max, blocks=len(plan.blocks))
        return out
    if method in ("diagonal", "diagonal-dense"):
        return diagonal_predicted_ops(matrix, period, policy, dense=method == "diagonal-dense")
    return rowwise_predicted_ops(matrix, period, policy)


#: What :func:`grid_row` runs: hepkg.spmv's methods, HEGMM, and the estimate-only dense diagonal method.
GRID_METHODS = METHODS + ("hegmm", "diagonal-dense")
_GEMM_API = ("run_config", "plan_blocking", "expected_counts")


def hegmm_unavailable() -> str | None:
    """Why HEGMM cannot run here, or None when :mod:`hepkg.gemm` offers its blocked product."""
    try:
        import hepkg.gemm as gm
    except Exception as exc:  # another section's package: whatever breaks its import makes it unavailable
        return f"hepkg.gemm does not import ({type(exc).__name__}: {exc})"
    missing = [name for name in _GEMM_API if not hasattr(gm, name)]
    return f"hepkg.gemm lacks {', '.join(missing)}" if missing else None


def _hegmm_counts(shape, period: int, method: str) -> tuple[Counter, int, int, int]:
    """HEGMM's cloud counts for the (rows x cols) x (cols x 1) product blocked as ``hepkg.gemm`` blocks it,
    and its A uploads, vector uploads and results. Each block product counts its own preprocessing (an upper
    bound where blocks share it)."""
    import hepkg.gemm as gm

    b = gm.plan_blocking(method, shape[0], shape[1], 1, period)
    total = Counter()
    for (mi, a), (lk, k), (nj, c) in product(*(Counter(p).items() for p in (b.rows, b.inner, b.cols))):
        total.update({op: n * a * k * c for op, n in gm.expected_counts(method, mi, lk, nj, "cloud", period).items()})
    qm, ql, qn = len(b.rows), len(b.inner), len(b.cols)
    total["add"] += qm * qn * (ql - 1)
    return total, qm * ql, ql * qn, qm * qn


def predict_all_ops(matrix, method: str = "cssc", params=None, *, policy: str = "pow2", hegmm: str = "hegmm") -> dict:
    """Every party's op counts (``op_*``), the cloud's (``cloud_*``) and the ciphertexts moved, from the pattern.

    The cloud's counts are :func:`predict_ops`' (exact); the clients encode and encrypt each
    uploaded ciphertext once and decrypt each result ciphertext. ``method``: one of
    ``GRID_METHODS``. For ``hegmm`` (the ``hepkg.gemm`` method named by ``hegmm``) the
    counts come from ``hepkg.gemm.expected_counts`` per block product, with one key switch
    per rotation (exact keys: a lower bound under ``pow2``); its depth is not predicted.
    """
    params = he.get_params(params or default_params())
    csr, period = as_csr(matrix), params.n // 2
    if method == "hegmm":
        cloud, up_a, up_b, results = _hegmm_counts(csr.shape, period, hegmm)
        cloud.update(relinearize=cloud["mul_ct"], keyswitch=cloud["rotate"] + cloud["mul_ct"])
        n_ct = up_a
    elif method in ("diagonal", "diagonal-dense"):
        cloud = predict_ops(csr, method, params, policy=policy)
        up_a, up_b = cloud["mul_ct"], math.ceil(csr.shape[1] / diagonal_block_size(csr.shape, period))
        results = cloud["mul_ct"] - cloud["add"]  # one addition per diagonal but the first of each row block
        n_ct = up_a
    elif method == "rowwise":
        cloud = predict_ops(csr, "rowwise", params, policy=policy)
        cloud["encode"] = cloud["mul_pt"]  # the server encodes each plaintext row part and mask
        up_a, up_b = 0, math.ceil(csr.shape[1] / period)
        results = np.unique(np.flatnonzero(np.diff(csr.indptr)) // period).size
        n_ct = 0
    else:
        _method(method)
        cloud = predict_ops(csr, "cssc", params, policy=policy)
        n_ct = up_a = up_b = cloud["n_ct"]
        results = cloud["blocks"]
    kinds = [k for k in KINDS + ("depth",) if method != "hegmm" or k != "depth"]
    total = {k: int(cloud.get(k, 0)) for k in kinds}
    total.update(encode=total["encode"] + up_a + up_b, encrypt=total["encrypt"] + up_a + up_b,
                 decrypt=total["decrypt"] + results)
    return dict(n_ct=int(n_ct), uploads_a=int(up_a), uploads_b=int(up_b), results=int(results),
                **{f"op_{k}": v for k, v in total.items()}, **{f"cloud_{k}": int(cloud.get(k, 0)) for k in kinds})


def cssc_noise_budget(matrix, backend: str = "pyfhel", params=None, *, seed: int = 0, policy: str = "pow2") -> dict:
    """Table 4 for CSSC: noise budget (bits) of a fresh ciphertext and of the result ciphertexts, and the depth.

    Runs the three parties as :func:`run_cssc` does, keeping the result ciphertexts; needs a
    backend that reports the BFV noise budget (pyfhel).
    """
    params = he.get_params(params or default_params())
    csr, vector, _, encoding = make_operands(matrix, params, seed=seed)
    a = ClientA(csr, backend=backend, params=params, encoding=encoding, policy=policy, drop_primes=0)
    if not a.ctx.has_noise_budget:
        raise ValueError(f"backend {backend!r} does not report a noise budget")
    to_b, to_cloud = a.encryption_context(), a.public_context()  # with the fingerprints A publishes
    b = ClientB(vector, to_b, a.column_index_message(), fingerprint=he.fingerprint(to_b), backend=backend)
    cloud = Cloud(to_cloud, fingerprint=he.fingerprint(to_cloud), backend=backend)
    with cloud.ctx.counting() as ops:
        reply = cloud.evaluate(a.matrix_message(), b.vector_message())
    bits = [a.ctx.noise_budget(a.ctx.deserialize(blob, guard=True)) for blob in messages.unpack(reply, "spmv/result")[2]]
    return dict(fresh_bits=a.ctx.noise_budget(a.ctx.encrypt(np.zeros(1, dtype=np.int64))),
                result_bits_min=min(bits), result_bits_max=max(bits), depth=ops.as_dict()["depth"])


def _run_hegmm(csr, cfg: dict, memory: bool) -> dict:
    """HEGMM on the matrix taken as dense times a vector, through ``hepkg.gemm.run_config`` (blocking 'auto')."""
    import hepkg.gemm as gm
    from hepkg.bench import PeakMemory

    gcfg = dict(m=csr.shape[0], l=csr.shape[1], n=1, method=cfg["hegmm"], blocking="auto", backend=cfg["backend"],
                params=cfg["params"], policy=cfg["policy"], seed=cfg["seed"])
    with PeakMemory() if memory else contextlib.nullcontext() as mem:
        out = gm.run_config(gcfg)
    if out["status"] != "ok":
        raise ValueError(f"HEGMM did not run on {csr.shape}: {out['status']} ({out['reason']})")
    cloud = {k: out[k] for k in ("mul_ct", "mul_pt", "rotate", "keyswitch", "add", "depth")}
    cloud["relinearize"] = cloud["mul_ct"]
    ops = dict(cloud, encode=out["upload_ciphertexts"], encrypt=out["upload_ciphertexts"],
               decrypt=out["download_ciphertexts"])
    return dict(n_ct=out["upload_ciphertexts"], correct=out["correct"], time_keygen=out["seconds_keygen"],
                time_cloud=out["seconds_cloud"], time_total=out["seconds_keygen"] + out["seconds_total"],
                **{f"op_{k}": v for k, v in ops.items()}, **{f"cloud_{k}": v for k, v in cloud.items()},
                **(mem.as_dict() if memory else dict(peak_rss=None, delta_rss=None, py_peak=None)))


def grid_row(config: dict) -> dict:
    """One grid configuration -> one row (top-level and picklable, for ``hepkg.grid.run_grid``).

    Keys: ``matrix`` (a name for :func:`hepkg.datasets.load_matrix`), ``method`` (one of
    ``GRID_METHODS``), ``mode`` ('estimate', 'time', 'memory' or 'noise'); optional
    ``backend`` ('sim'), ``params``, ``seed`` (0), ``policy`` ('pow2'), ``hegmm`` (the
    ``hepkg.gemm`` method, 'hegmm'). Measured rows add ``time_s``: the run without key
    generation (encryption, cloud, decryption), as the paper timed it. A memory run executes
    in a new interpreter (``fresh``, default True), so that the peak RSS it reports is its own
    and not left over from earlier runs of the same process.
    """
    from hepkg.datasets import load_matrix

    cfg = dict(backend="sim", params=default_params(), seed=0, policy="pow2", hegmm="hegmm", fresh=True) | dict(config)
    name, method, mode = cfg["matrix"], cfg["method"], cfg["mode"]
    if mode == "memory" and cfg["fresh"]:
        return _in_new_interpreter(dict(config, fresh=False))
    csr = as_csr(load_matrix(name))
    row = dict(matrix=name, rows=csr.shape[0], cols=csr.shape[1], nnz=csr.nnz, method=method, mode=mode)
    if mode == "estimate":
        return row | predict_all_ops(csr, method, cfg["params"], policy=cfg["policy"], hegmm=cfg["hegmm"])
    if mode == "noise":
        return row | cssc_noise_budget(csr, cfg["backend"], cfg["params"], seed=cfg["seed"], policy=cfg["policy"])
    if mode not in ("time", "memory"):
        raise ValueError(f"mode must be 'estimate', 'time', 'memory' or 'noise', got {mode!r}")
    if method == "hegmm":
        out = _run_hegmm(csr, cfg, mode == "memory")
    else:
        out = run_config(csr, method, cfg["backend"], cfg["params"], policy=cfg["policy"], seed=cfg["seed"],
                         memory=mode == "memory", name=name)
    return out | row | dict(time_s=out["time_total"] - out["time_keygen"] - out.get("time_key_transfer", 0.0))


def _in_new_interpreter(config: dict) -> dict:
    """:func:`grid_row` of ``config`` run by a new Python process (stdout: the row as JSON)."""
    code = ("import json, sys; from hepkg.spmv.experiments import grid_row; "
            "print(json.dumps(grid_row(json.loads(sys.argv[1])), default=lambda o: o.item()))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(config)], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"grid_row({config}) failed in a new interpreter:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table3(config: dict) -> list[dict]:
    """Table 3 for one matrix (``config``: ``matrix``, optional ``backend`` 'sim', ``params``, ``policy``):
    the cloud's counts measured, hepkg's exact prediction and the paper's formula, one row per op."""
    from hepkg.datasets import load_matrix

    cfg = dict(backend="sim", params=default_params(), policy="pow2") | dict(config)
    csr = as_csr(load_matrix(cfg["matrix"]))
    run = run_config(csr, "cssc", cfg["backend"], cfg["params"], policy=cfg["policy"])
    plan = generate_chunks(CSSC.from_sparse(csr), he.get_params(cfg["params"]).n // 2)
    measured = {k[len("cloud_"):]: v for k, v in run.items() if k.startswith("cloud_")}
    return [dict(matrix=cfg["matrix"], nnz=csr.nnz, n_ct=plan.n_ct, c_max=plan.c_max, **r)
            for r in table3_rows(plan, measured, cfg["policy"])]


def table2(config: dict) -> list[dict]:
    """Table 2 (Algorithm 2's complexity) for one matrix (``config``: ``matrix``, optional ``params``):
    hepkg's count of each step against the paper's bound, one row per step."""
    from hepkg.datasets import load_matrix

    cfg = dict(params=default_params()) | dict(config)
    cssc = CSSC.from_sparse(as_csr(load_matrix(cfg["matrix"])))
    plan = generate_chunks(cssc, he.get_params(cfg["params"]).n // 2)
    return [dict(matrix=cfg["matrix"], nnz=cssc.nnz, n_ct=plan.n_ct, **r) for r in table2_rows(cssc, plan)]


def loglog_fit(x, y) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line through (log x, log y): y ~ exp(intercept) x^slope. In closed
    form with libm's log and exactly rounded sums, so the committed figures are the same bytes on every CPU
    (np.polyfit's least squares, on OpenBLAS's CPU-dispatched kernels, gave other last bits on a Zen 5 than on the
    Zen 4 that committed them)."""
    lx, ly = [math.log(float(v)) for v in x], [math.log(float(v)) for v in y]
    n = len(lx)
    mx, my = math.fsum(lx) / n, math.fsum(ly) / n
    slope = math.fsum((a - mx) * (b - my) for a, b in zip(lx, ly)) / math.fsum((a - mx) ** 2 for a in lx)
    return slope, my - slope * mx
