"""Cost model: operation counts x per-operation latencies measured on this machine.

A run's *floor* is what its counted operations cost at the backend's measured speed
(:func:`op_costs`, measured once per machine, or :func:`observed_costs`, the per-op times a
run itself spent inside the library: estimates priced with these say ``in-run costs``);
``measured / floor`` is the overhead of everything else (Python, packing, copies). Runs too
long to execute are estimated the same way: count them on ``sim`` at full scale and price
the counts with a real backend's costs::

    costs = op_costs("pyfhel", "bfv-8192-default")     # measured once, then cached
    with sim_ctx.counting() as ops:
        run(sim_ctx)
    seconds = estimate(ops, costs)                      # what pyfhel would take

How each counted kind is priced (``PRICED_AS``):

============================  ==========================================================
kind                          price
============================  ==========================================================
encode                        measured encode of a full vector
encrypt, decrypt              measured (encrypt of an already encoded plaintext)
add, sub, negate, add_pt      measured ciphertext + ciphertext addition
mul_ct                        measured ``ctx.mul``: product, relinearization and, on CKKS,
                              the rescale, so one relinearized product is one mul_ct
mul_pt                        measured ``ctx.mul_plain`` of an encoded plaintext (CKKS:
                              rescale included)
keyswitch                     measured rotation by a step with its own key (one key
                              switch), per key switch *other than relinearization's*:
                              ``keyswitch - relinearize`` of the counts; a pow2 rotation
                              by 7 (= 8 - 1) is two, a BFV column swap one
mod_switch                    measured where the parameter set has a modulus to drop, else
                              0 (no mod_switch can then be counted)
relinearize                   0: inside mul_ct's measurement (deferred relinearization is
                              thus priced as if each product relinearized: an upper bound)
rescale                       0: inside mul_ct's and mul_pt's measurements (an upper bound
                              when rescales are merged by deferring them)
rotate, swap                  0: the logical operation; its key switches carry the cost
hoisted_precompute            0: hoisted rotations are priced as full key switches (an
                              upper bound on OpenFHE, exact elsewhere)
============================  ==========================================================
"""
from __future__ import annotations

import datetime
import hashlib
import json
import math
from collections.abc import Mapping

import numpy as np

import hepkg.he as he
from hepkg import atomic, paths
from hepkg.bench.ops import he_op_latencies, median_ms
from hepkg.bench.sysinfo import cpu_cores, cpu_model

#: counted kind -> the measured latency that prices it (None: priced 0, see the module docstring)
PRICED_AS = {
    "encode": "encode", "encrypt": "encrypt", "decrypt": "decrypt",
    "add": "add", "sub": "add", "negate": "add", "add_pt": "add",
    "mul_ct": "mul_ct", "mul_pt": "mul_pt", "keyswitch": "rotate", "mod_switch": "mod_switch",
    "relinearize": None, "rescale": None, "rotate": None, "swap": None, "hoisted_precompute": None,
}


def machine_fingerprint() -> dict:
    """What makes cached latencies comparable: CPU model, core counts, hepkg version."""
    import hepkg

    physical, logical = cpu_cores()
    return dict(cpu=cpu_model(), physical_cores=physical, logical_cores=logical, hepkg=hepkg.__version__)


def _cache_file(backend: str, params_name: str):
    digest = hashlib.sha256(json.dumps(machine_fingerprint(), sort_keys=True).encode()).hexdigest()[:12]
    return paths.cache("costmodel") / f"{backend}_{params_name}_{digest}.json"


def measure_latencies(backend: str, params, reps: int = 20, insecure: bool = False) -> dict[str, float]:
    """Median ms of each latency ``PRICED_AS`` uses, on a fresh context with a key for step 1."""
    ctx = he.context(backend, params, rotations=[1], policy="exact", insecure=insecure)
    ms = he_op_latencies(ctx, reps)
    values = np.zeros(ctx.slots, dtype=np.int64 if ctx.is_integer else np.float64)
    ms["encode"] = median_ms(lambda: ctx.encode(values), reps)
    ct = ctx.encrypt(values)
    ms["mod_switch"] = median_ms(lambda: ctx.mod_switch(ct), reps) if len(ctx.params.qi_bits) > 2 else 0.0
    return ms


def op_costs(backend: str, params, reps: int = 20, refresh: bool = False, insecure: bool = False) -> dict[str, float]:
    """Seconds per counted operation kind (every kind of ``hepkg.he.KINDS``) for one backend.

    Measured once per machine and cached as JSON under ``paths.cache('costmodel')``, keyed by
    the machine fingerprint, the backend and the parameter set's name; ``refresh=True``
    measures again. ``insecure`` admits a parameter set below 128 bits (tests, demos).
    """
    params = he.get_params(params)
    path = _cache_file(backend, params.name)
    if not refresh and path.exists():
        try:
            return {k: float(v) for k, v in json.loads(path.read_text())["costs_s"].items()}
        except (ValueError, KeyError, AttributeError):
            pass  # unreadable cache entry: measure again
    ms = measure_latencies(backend, params, reps, insecure)
    costs = {kind: 0.0 if op is None else ms[op] / 1e3 for kind, op in PRICED_AS.items()}
    entry = dict(backend=backend, params=params.name, machine=machine_fingerprint(), reps=reps,
                 measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 latency_ms=ms, costs_s=costs)
    atomic.write_text(path, json.dumps(entry, indent=2) + "\n")
    return costs


#: counted kind -> (the backend hooks whose time it carries, the counted kinds that share that time)
OBSERVED_AS = {
    "encode": (("encode",), ("encode",)), "encrypt": (("encrypt",), ("encrypt",)),
    "decrypt": (("decrypt", "noise_budget"), ("decrypt",)),
    "add": (("add", "add_into", "sub", "negate", "add_plain", "sub_plain"), ("add", "sub", "negate", "add_pt")),
    "mul_ct": (("mul", "relin"), ("mul_ct",)), "mul_pt": (("mul_plain",), ("mul_pt",)),
    "keyswitch": (("rotate", "rotate_hoisted", "swap"), ("keyswitch",)), "mod_switch": (("mod_switch",), ("mod_switch",)),
}


def observed_costs(ops) -> dict[str, float]:
    """Seconds per counted kind as observed in a run: the time its hooks spent inside the HE
    library (``ops.seconds``, see :mod:`hepkg.he.counting`) over how often it was counted.

    Priced this way, a run's floor is its own time inside the library (less serialization and
    key setup), so an estimate of a larger run priced with these costs uses no latency measured
    at another moment. Kinds the run did not count are absent. CKKS rescales are shared
    equally by the products (ct x ct and ct x pt) that required them, as ``PRICED_AS`` does.
    """
    counts, seconds = dict(ops), ops.seconds
    priced = _priced_counts(counts)
    rescale = seconds.get("rescale", 0.0) / counts["rescale"] if counts.get("rescale") else 0.0
    out = {}
    for kind, (hooks, kinds) in OBSERVED_AS.items():
        n = priced.get(kind, 0) if kind == "keyswitch" else sum(int(counts.get(k, 0)) for k in kinds)
        if n:
            cost = sum(seconds.get(h, 0.0) for h in hooks) / n + (rescale if kind in ("mul_ct", "mul_pt") else 0.0)
            out |= {k: cost for k in kinds if k in counts} | {kind: cost}   # sub, negate, add_pt: add's price
    return out


def _priced_counts(counts: Mapping) -> dict[str, int]:
    """Counts of the kinds with a price; relinearization's key switches removed (mul_ct pays them)."""
    ks = int(counts.get("keyswitch", 0)) - int(counts.get("relinearize", 0))
    if ks < 0:
        raise ValueError(f"inconsistent counts: {counts.get('relinearize')} relinearizations but only "
                         f"{counts.get('keyswitch', 0)} key switches")
    out = {k: int(v) for k, v in counts.items() if PRICED_AS.get(k) and v}
    out["keyswitch"] = ks
    return out


def breakdown(counts: Mapping, costs: Mapping[str, float]) -> dict[str, float]:
    """Seconds per kind for ``counts`` (an OpCounts or its ``as_dict()``) priced by ``costs``.

    ``costs`` needs the kinds ``PRICED_AS`` prices; it may come from any backend, e.g. a real
    one's for counts taken on ``sim``. Other keys of ``counts`` (``depth``) are ignored.
    """
    out = {}
    for kind, n in _priced_counts(counts).items():
        if n == 0:
            continue
        if kind not in costs:
            raise KeyError(f"no cost for {n} counted '{kind}' operations; costs cover {sorted(costs)}")
        out[kind] = n * float(costs[kind])
    return out


def estimate(counts: Mapping, costs: Mapping[str, float]) -> float:
    """Seconds the counted operations take at the given per-op costs (the run's floor)."""
    return float(sum(breakdown(counts, costs).values()))


def floor_ratio(measured_s: float, counts: Mapping, costs: Mapping[str, float]) -> float:
    """``measured_s`` / the floor of ``counts``: 1 means no overhead; NaN if nothing is priced."""
    floor = estimate(counts, costs)
    return measured_s / floor if floor > 0 else math.nan
