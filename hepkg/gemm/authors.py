"""The authors' HEGMM code (github.com/EchizenG/HEGMM), run from a checkout beside hepkg on the same inputs.

Nothing of theirs is copied into hepkg: :func:`load` imports their module of a method from the
checkout. Each of their classes builds its own Pyfhel context in ``__init__`` (``contextGen(scheme=
'bfv', n=8192, t=65537, t_bits=20)``, which is hepkg's ``bfv-8192-t20``, and SEAL's power-of-two
Galois keys); :func:`authors_product` makes the object without that constructor and gives it a
timed Pyfhel at the same parameters (key generation is outside the timer on both sides).

What is compared: one whole product as the authors timed it in their ``complex.py`` (their
``matrixMul``: sigma and tau in plaintext, encoding, encryption, the products, decryption) against
:func:`hepkg.gemm.matmul` with ``preprocess='client'`` (the client encrypts and serializes, the
cloud deserializes, multiplies and serializes, the client decrypts). E2DM-R is run as their
``complex.py`` runs it: only when ``m <= l`` and ``d = m ceil(max(l, n) / m) <= 64``, on A and B
zero-padded to d columns (and B to d x d), the product cropped.

:func:`versus_run` is the section's part of ``python -m hepkg.bench.versus gemm``.
"""
from __future__ import annotations

import contextlib
import io
import math

import numpy as np

from hepkg.bench.foreign import timed_pyfhel
from hepkg.bench.versus import alternate, import_script

__all__ = ["REPO", "ENV", "FILES", "MODULES", "VARIANTS", "load", "authors_product", "versus_cases",
           "versus_run"]

REPO, ENV = "EchizenG/HEGMM", "HEPKG_AUTHORS_HEGMM"
#: hepkg method -> (their module, their class).
MODULES = {"hegmm-ext": ("algo1", "algo1"), "hegmm-en": ("algo2", "algo2"), "e2dm-s": ("baselineap0", "baselineap0"),
           "e2dm-r": ("baselinelog", "baselinelog"), "huang": ("HuangMid", "huang")}
FILES = tuple(sorted({f"{module}.py" for module, _ in MODULES.values()}))
QUANTITIES = ("e2e_s",)
PARAMS = "bfv-8192-t20"
#: The shapes of the issue (m, l, n).
SHAPES = ((16, 64, 64), (64, 16, 64), (64, 64, 16), (30, 50, 20))
#: hepkg's sides: name -> the context's key policy and the client's dropped primes (None: the default of
#: gemm_context / Client). The authors' settings (SEAL's power-of-two keys, each rotation composed; no
#: prime dropped), each lever alone on them, and hepkg's defaults (exact keys where fewer or cheaper,
#: :func:`hepkg.gemm.key_policy`; the primes the noise allows: one of SEAL's 4 here). Key transfer is
#: outside both sides' timer; its bytes are recorded.
VARIANTS = {
    "hepkg authors' settings": dict(lever="none", policy="pow2", drop_primes=0),
    "hepkg exact keys": dict(lever="exact keys", policy="exact", drop_primes=0),
    "hepkg prime dropping": dict(lever="prime dropping", policy="pow2", drop_primes="auto"),
    "hepkg": dict(lever="all (defaults)", policy=None, drop_primes=None),
}
#: The side with the authors' settings, each lever's ``gain`` is measured against (see versus.summarize).
BASE = "hepkg authors' settings"


def load(checkout, method: str):
    """Their class implementing ``method``, imported from ``checkout``."""
    module, cls = MODULES[method]
    return getattr(import_script(checkout, module, files=FILES), cls)


def _e2dm_r_operands(A, B):
    """(A, B) zero-padded as their ``complex.py`` pads them for E2DM-R, or None where it does not run it."""
    (m, l), n = A.shape, B.shape[1]
    d = m * math.ceil(max(l, n) / m)
    if m > l or d > 64:
        return None
    return np.pad(A, ((0, 0), (0, d - l))), np.pad(B, ((0, d - l), (0, d - n)))


def authors_product(cls, method: str, he, A, B):
    """Their ``matrixMul`` of float copies of A and B (as their script passes them) with the Pyfhel object
    ``he``: the product as int64, or None where their script does not run ``method`` on this shape."""
    obj = cls.__new__(cls)
    obj.cipherSize, obj.HE = he.n, he
    m, n = A.shape[0], B.shape[1]
    if method == "e2dm-r":
        padded = _e2dm_r_operands(A, B)
        if padded is None:
            return None
        A, B = padded
    with contextlib.redirect_stdout(io.StringIO()):  # their Huang prints its timings
        C = obj.matrixMul(A.astype(float), B.astype(float))
    return np.asarray(C, dtype=np.int64)[:m, :n]


def versus_cases(scale: str) -> list[str]:
    """``'m-l-n method'`` for each shape of :data:`SHAPES` and method of :data:`MODULES` (quick: one shape)."""
    shapes = SHAPES[:1] if scale == "quick" else SHAPES
    return [f"{m}-{l}-{n} {method}" for m, l, n in shapes for method in MODULES]


def versus_run(case: str, checkout, *, reps: int, variants=None, seed: int = 0):
    """Alternating runs of their ``matrixMul`` and :func:`~hepkg.gemm.matmul` (each of ``variants``, name ->
    settings; :data:`VARIANTS`) on ``case`` (``'m-l-n method'``): one row per kept run with ``e2e_s``
    (the whole product, key generation excluded), ``he_s``, ``overhead`` (= e2e / he), ``correct``,
    hepkg's ``key_bytes`` (what its cloud receives: SEAL's raw form, as in one process), and
    the counts (``keyswitch``: rotations' and relinearizations' key switches; the authors' rotations
    by a step s cost one key switch per signed power of two of SEAL's decomposition of s)."""
    import pandas as pd

    import hepkg.he as he
    from hepkg.he.counting import library_seconds
    from hepkg.he.keys import pow2_terms

    from .errors import NotApplicable
    from .protocol import Client, Cloud, gemm_context, matmul

    shape, method = case.split()
    m, l, n = (int(x) for x in shape.split("-"))
    params = he.get_params(PARAMS)
    rng = np.random.default_rng(seed)
    A, B = rng.integers(1, 9, (m, l)), rng.integers(1, 9, (l, n))
    want = A @ B
    sides, skipped = {}, {}

    def hepkg_side(lever, policy, drop_primes):
        ctx = gemm_context(method, m, l, n, params=PARAMS, preprocess="client",
                           **({} if policy is None else dict(policy=policy)))
        parties = (Client(ctx) if drop_primes is None else Client(ctx, drop_primes), Cloud(ctx.public()))
        keys = len(ctx.to_bytes())

        def run():
            before = library_seconds()
            res = matmul(parties, A, B, method, preprocess="client")
            spent = library_seconds() - before
            return dict(lever=lever, backend=res.backend, policy=ctx.keys.policy, drop_primes=res.drop_primes,
                        he_s=sum(spent.values()), key_bytes=keys,
                        correct=bool(np.array_equal(res.C, want)),
                        **{k: res.ops.get(k, 0) for k in ("mul_ct", "mul_pt", "rotate", "keyswitch")})
        return run

    if checkout is not None:
        cls, lib = load(checkout, method), timed_pyfhel(scheme="bfv", n=params.n, t=65537, t_bits=20)
        if lib.t != params.plain_modulus:
            raise RuntimeError(f"their contextGen built t = {lib.t}, not {PARAMS}'s {params.plain_modulus}")

        def authors_side():
            seconds, calls, steps = dict(lib.seconds), dict(lib.calls), dict(lib.rotations)
            C = authors_product(cls, method, lib, A, B)
            rot = {k: v - steps.get(k, 0) for k, v in lib.rotations.items()}
            delta = {k: lib.calls[k] - calls.get(k, 0) for k in ("multiply", "multiply_plain", "relinearize")}
            return dict(lever="authors' code", backend="pyfhel", policy="pow2 (SEAL default)", drop_primes=0,
                        he_s=sum(lib.seconds.values()) - sum(seconds.values()),
                        correct=bool(np.array_equal(C, want)), mul_ct=delta["multiply"],
                        mul_pt=delta["multiply_plain"], rotate=sum(rot.values()),
                        keyswitch=delta["relinearize"] + sum(v * len(pow2_terms(int(k), params.n // 2))
                                                             for k, v in rot.items()))
        if method != "e2dm-r" or _e2dm_r_operands(A, B) is not None:
            sides["authors"] = authors_side
        else:
            skipped["authors"] = "their complex.py does not run E2DM-R on this shape"
    for name, lever in (VARIANTS if variants is None else variants).items():
        try:
            sides[name] = hepkg_side(**lever)
        except NotApplicable as exc:
            skipped[name] = str(exc)
    out = alternate(sides, reps)
    if len(out):
        out["e2e_s"] = out.wall_s
        out["overhead"] = out.e2e_s / out.he_s
    na = pd.DataFrame([dict(side=k, status="N/A", reason=v) for k, v in skipped.items()])
    return pd.concat([out.assign(status="ok"), na], ignore_index=True).assign(case=case, params=PARAMS)
