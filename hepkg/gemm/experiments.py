"""Experiment helpers for the gemm notebook: shapes, operands, and one configuration -> one row.

:func:`run_config` is top-level and takes a plain dict, so ``hepkg.grid.run_grid`` can run
it in worker processes.
"""
from __future__ import annotations

import math
import time

import numpy as np

import hepkg.he as he

from .errors import NotApplicable, ShapeTooLarge
from .protocol import Client, Cloud, centered, gemm_context, matmul

#: The paper's shape groups (Tables 5 and 6).
GROUPS = ("square", "e2dm-r favourable", "m=min", "l=min", "n=min")


def random_shapes(n_pairs: int, low: int = 1, high: int = 64, seed: int = 0) -> list[tuple[int, int, int]]:
    """``n_pairs`` shapes (m, l, n), each dimension uniform in [low, high] (Sec. 4.3: [1, 64])."""
    rng = np.random.default_rng(seed)
    return [tuple(int(x) for x in row) for row in rng.integers(low, high + 1, size=(n_pairs, 3))]


def shape_group(m: int, l: int, n: int) -> str:
    """The paper's group of a shape: 'square'; 'e2dm-r favourable' ((m x l)(l x l), l mod m = 0);
    else which dimension is the smallest ('m=min', 'l=min', 'n=min'; ties go to the first)."""
    if m == l == n:
        return "square"
    if l == n and l % m == 0:
        return "e2dm-r favourable"
    p = min(m, l, n)
    return "m=min" if p == m else "l=min" if p == l else "n=min"


def random_operands(m: int, l: int, n: int, t: int, seed: int = 0, max_abs: int | None = None):
    """Random integer A (m x l), B (l x n) whose exact product fits t (|entries| <= sqrt(t/2 / l))."""
    v = max_abs if max_abs is not None else max(1, math.isqrt(t // 2 // l))
    rng = np.random.default_rng(seed)
    return rng.integers(-v, v + 1, size=(m, l)), rng.integers(-v, v + 1, size=(l, n))


def run_config(config: dict) -> dict:
    """Run one configuration and return a result row.

    Keys: m, l, n, method; optional preprocess ('cloud'), backend ('sim'), params
    ('bfv-8192-default'), policy ('pow2'), blocking (None), order ('F'), seed (0),
    max_abs (auto), insecure (False). The row repeats the configuration and adds ``status``
    ('ok', 'N/A' where the method does not apply, 'too large' where it does not fit),
    seconds (keygen, encrypt, cloud, decrypt), the cloud's op counts and depth, bytes
    uploaded/downloaded, key bytes and count, and ``correct`` (equal to numpy mod t).
    """
    cfg = dict(preprocess="cloud", backend="sim", params="bfv-8192-default", policy="pow2", blocking=None,
               order="F", seed=0, max_abs=None, insecure=False) | dict(config)
    m, l, n, method = cfg["m"], cfg["l"], cfg["n"], cfg["method"]
    params = he.get_params(cfg["params"])
    row = dict(cfg, slots=params.n // 2, group=shape_group(m, l, n), status="ok", reason="")
    t0 = time.perf_counter()
    try:
        ctx = gemm_context(method, m, l, n, backend=cfg["backend"], params=params, policy=cfg["policy"],
                           preprocess=cfg["preprocess"], blocking=cfg["blocking"], order=cfg["order"],
                           insecure=cfg["insecure"])
    except (NotApplicable, ShapeTooLarge) as exc:
        return row | dict(status="N/A" if isinstance(exc, NotApplicable) else "too large", reason=str(exc))
    keygen = time.perf_counter() - t0
    A, B = random_operands(m, l, n, params.plain_modulus, cfg["seed"], cfg["max_abs"])
    res = matmul((Client(ctx), Cloud(ctx.public())), A, B, method, preprocess=cfg["preprocess"],
                 blocking=cfg["blocking"], order=cfg["order"], on_overflow="ignore")
    keys = ctx.key_sizes()
    return row | dict(
        seconds_keygen=keygen, seconds_encrypt=res.seconds["encrypt"], seconds_cloud=res.seconds["cloud"],
        seconds_decrypt=res.seconds["decrypt"], seconds_total=sum(res.seconds.values()),
        **{k: res.ops[k] for k in ("mul_ct", "mul_pt", "rotate", "keyswitch", "add", "depth")},
        upload_bytes=res.upload_bytes, download_bytes=res.download_bytes, upload_ciphertexts=res.upload_ciphertexts,
        download_ciphertexts=res.download_ciphertexts, key_bytes=keys.get("galois_keys", 0) + keys.get("relin_key", 0),
        rotation_keys=keys["rotation_keys"],
        correct=bool(np.array_equal(res.C, centered(A @ B, params.plain_modulus))))
