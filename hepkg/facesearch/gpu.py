"""The face-search paper's device-resident pipelines (Sec. 5, Algorithms 3-4) on hepkg's ``rns`` engine.

Three variants of the paper, resident on the device from query upload to result download, and one alternative
the paper prices (Sec. 5.1.3):

- ``hydia-dg`` (HyDia-GPU-DG): the query uploaded alone; its l - 1 rotations on the device; every key resident
  (l - 1 diagonal steps + the power-of-two keys of the slot sum: 516 at l = 512).
- ``bsgs-tbs`` (BSGS-GPU-TBS): the n1 - 1 baby steps rotated on the host (hoisted, the steps split over
  ``host_workers`` threads) and the n1 baby-step ciphertexts uploaded as arrays (no serialization); the stored
  diagonals pre-rotated on the device (Eq. 8) with temporary negative giant-step keys that are freed afterwards;
  per group and giant step j, the n1 products summed unrelinearized, one relinearization and rescale, then one
  on-demand rotation by j n1.
- ``bsgs-tbe`` (BSGS-GPU-TBE): the same online pipeline, the pre-rotation done by the enroller in plaintext.
- ``bsgs-tbs-ku`` (BSGS-GPU-TBS-KU, hepkg's name): BSGS-GPU-TBS with the baby steps on the device instead, their
  n1 - 1 keys uploaded from the host for each query and freed after it (the paper's "GPU-rotation alternative":
  33 ms of key upload + 40 ms of rotations against 73 ms on the CPU, 929 MB of device memory against 115 MB).

Per group: similarity, then the comparison (the paper's GPU path: the Chebyshev series of the step alone, degree
13 at kappa 8, no f4, :func:`~hepkg.facesearch.chebyshev.compare` with ``path='gpu'``). Groups are in flight
``streams`` at a time (:class:`~hepkg.facesearch.gpu_device.StreamPool`: host threads, each on its own CUDA
stream), S from Eq. 6 by default. Membership adds the groups' comparisons by a tree and (the paper's) sums the
slots by rotate-and-sum, or (for the slot rule) not; one ciphertext downloaded either way. Identification
downloads the G comparison ciphertexts.

Setup: arguments and the memory estimate are checked before anything is loaded (a refusal costs nothing); keys
and the diagonals then go to the device, the diagonals read, authenticated and uploaded by ``workers`` threads.
The device's memory is read at every allocation (:func:`~hepkg.facesearch.gpu_device.window`): ``memory``
holds the setup peak, the bytes resident after setup and the largest query peak, beside :attr:`estimate`.

Membership decision: :class:`~hepkg.facesearch.decision.SlotRule` with ``path="gpu"`` on the answer aggregated
by ``"slots"`` where the rule is sound (kappa 8, margin 0.05: G <= 2 groups at degree 13); elsewhere from the
identification answer (:mod:`.gpu_experiment`).
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from hepkg import he
from hepkg.he.context import Ciphertext
from hepkg.linalg.rotsum import rotate_and_sum, rotation_steps_for_sum
from hepkg.rns import device as rdev

from . import chebyshev
from .gpu_device import (DeviceInfo, PhaseTimer, StreamPool, array_module, device_info, keep_keys,
                         sizes, stream_pool_size, upload_keys, window)
from .packing import Layout, bsgs_shape
from .protocol import EncryptedDatabase, membership_answer, sum_weight

__all__ = ["VARIANTS", "PAPER_VARIANTS", "PAPER_NAME", "key_plan", "memory_estimate", "DeviceServer",
           "expected_table2", "DeviceInfo", "device_info", "stream_pool_size", "GROUP_TEMPS", "QUERY_TEMPS",
           "ROTATION_TEMPS"]

VARIANTS = ("hydia-dg", "bsgs-tbs", "bsgs-tbe", "bsgs-tbs-ku")
PAPER_VARIANTS = VARIANTS[:3]
#: the paper's names (RTX / H200 in the paper; "GPU" for whichever device runs them here), and hepkg's for the
#: alternative of Sec. 5.1.3 (KU: the baby-step keys uploaded per query)
PAPER_NAME = {"hydia-dg": "HyDia-GPU-DG", "bsgs-tbs": "BSGS-GPU-TBS", "bsgs-tbe": "BSGS-GPU-TBE",
              "bsgs-tbs-ku": "BSGS-GPU-TBS-KU"}
#: hepkg's own temporaries, in level-0 ciphertexts (measured under the CuPy stand-in at ckks-32768-d9 and
#: toy-ckks-4096-d11, reading every allocation): per group in flight beyond the query table (the BSGS sum of size-3
#: products, the key switches, the Chebyshev powers: the paper's Eq. 6 assumes 40 for its own), per query (the
#: aggregation, the answer's serialization), and per rotation in flight beside one key's bytes (the ModUp digits
#: and the key-switch inner product, TBS's pre-rotation)
GROUP_TEMPS, QUERY_TEMPS, ROTATION_TEMPS = 12, 3, 4


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown GPU pipeline {variant!r}; choose one of {VARIANTS}")


def _positive(name: str, value, none: bool = True):
    if (value is None and none) or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise ValueError(f"{name} must be a positive integer{' or None' if none else ''}, got {value!r}")


# ---------------------------------------------------------------------------- keys and memory

def key_plan(variant: str, l: int, slots: int, n1: int | None = None, membership: bool = True) -> dict:
    """Rotation steps (normalized mod slots) per role: ``generated`` by the client, ``host`` (held on the CPU:
    the baby steps), ``device`` (resident online), ``temporary`` (TBS's negative giant steps, freed after the
    pre-rotation), ``lent`` (KU: the baby steps uploaded for each query and freed). HyDia: l - 1 + the sum's
    powers of two, all on the device."""
    _check_variant(variant)
    total = set(rotation_steps_for_sum(slots)) if membership else set()
    if variant == "hydia-dg":
        device, host, temporary = set(range(1, l)) | total, set(), set()
    else:
        n1, n2 = bsgs_shape(l, n1)
        host = set(range(1, n1))
        device = {j * n1 for j in range(1, n2)} | total
        temporary = {(-j * n1) % slots for j in range(1, n2)} if variant != "bsgs-tbe" else set()
    lent = host if variant == "bsgs-tbs-ku" else set()
    return dict(generated=sorted(host | device | temporary), host=sorted(host), device=sorted(device),
                temporary=sorted(temporary), lent=sorted(lent))


def memory_estimate(variant: str, layout: Layout, n1: int | None, size: dict, in_flight: int,
                    membership: bool = True) -> dict:
    """Device bytes, before anything is loaded, from the sizes of :func:`~hepkg.facesearch.gpu_device.sizes`
    (``size``) with ``in_flight`` groups at once: the engine (NTT tables, public key), the G l diagonals, the
    resident keys (+ the relinearization key), during setup TBS's temporary keys and a rotation's workspace per
    group in flight; online the query table (l rotated queries for HyDia, n1 baby steps for BSGS), the engine's
    workspaces (``size['workspace']`` per group in flight, and one for the thread that rotates the query on the
    device: HyDia, KU; kept between queries), and the larger of KU's lent keys (freed before the groups start) and
    the groups' temporaries (:data:`QUERY_TEMPS` + :data:`GROUP_TEMPS` level-0 ciphertexts per group in flight).
    ``total`` is the largest of three peaks: loading the public context (every key it carries arrives, then the
    unused ones are dropped), setup and online."""
    plan = key_plan(variant, layout.l, layout.slots, n1, membership)
    ct, key = size["ciphertext"], size["switch_key"]
    engine = size["tables"] + ct // 2
    diagonals = layout.groups * layout.l * ct
    keys = (len(plan["device"]) + 1) * key
    temporary, lent = len(plan["temporary"]) * key, len(plan["lent"]) * key
    n_table = layout.l if variant == "hydia-dg" else bsgs_shape(layout.l, n1)[0]
    table = n_table * ct
    temps = (QUERY_TEMPS + in_flight * GROUP_TEMPS) * ct
    # the engine's workspaces stay with each stream, and with the thread that rotates the query on the device
    workspaces = (in_flight + (variant in ("hydia-dg", "bsgs-tbs-ku"))) * size["workspace"]
    rotations = min(in_flight, layout.groups) * (key + ROTATION_TEMPS * ct) if temporary else 0
    load = engine + size["keys"] * key
    setup = engine + diagonals + keys + temporary + rotations
    online = engine + diagonals + keys + table + workspaces + max(lent, temps)
    return dict(engine=engine, diagonals=diagonals, keys=keys, temporary_keys=temporary, lent_keys=lent,
                query_table=table, workspaces=workspaces, temporaries=temps, prerotation=rotations, load=load,
                setup=setup, online=online, total=max(load, setup, online))


# ---------------------------------------------------------------------------- the server

class DeviceServer:
    """One variant's pipeline: setup (keys, diagonals, pre-rotation) once, then queries.

    ``public``: the client's public context bytes (``ctx.to_bytes()``), ``fingerprint``: the one the client
    published (:func:`hepkg.he.fingerprint`; loading refuses other bytes); ``database``: an
    :class:`~hepkg.facesearch.protocol.EncryptedDatabase` enrolled under it (pre-rotated by n1 for
    ``bsgs-tbe``, plain otherwise). ``streams``: groups in flight (default: Eq. 6's S); ``workers``: threads that
    read and upload the diagonals (default: the cores); ``host_workers``: threads over which the host's baby
    steps are split (BSGS; default: one on the engine's numba kernels, which use every core in each call, else
    half the cores, at most n1 - 1). Every argument, the keys the public context carries and the memory estimate
    are checked before anything is loaded (:class:`hepkg.rns.DeviceMemoryError`
    when the estimate exceeds what the device has free). ``timer.seconds`` holds the phases; ``transfers`` the
    last query's bytes and ciphertexts each way; ``stats`` the setup; ``memory`` the device bytes measured.
    """

    def __init__(self, public: bytes, database, variant: str, *, fingerprint: str | None = None, kappa: int = 8,
                 n1: int | None = None, delta: float = chebyshev.DELTA, membership: bool = True,
                 device: DeviceInfo | None = None, streams: int | None = None, workers: int | None = None,
                 host_workers: int | None = None):
        _check_variant(variant)
        chebyshev.check_kappa(kappa, "gpu")
        if not isinstance(database, EncryptedDatabase):
            raise TypeError(f"database must be an EncryptedDatabase, got {type(database).__name__}")
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not -1 < delta < 1:
            raise ValueError(f"delta must be a threshold in (-1, 1), got {delta!r}")
        if not isinstance(membership, bool):
            raise ValueError(f"membership must be True or False, got {membership!r}")
        cores = os.cpu_count() or 1
        self.variant, self.kappa, self.delta, self.db = variant, kappa, float(delta), database
        lay = self.layout = database.layout
        self.n1, self.n2 = (lay.l, 1) if variant == "hydia-dg" else bsgs_shape(lay.l, n1)
        database.method_fits("bsgs-textbook" if variant == "bsgs-tbe" else "hydia", self.n1)
        self.workers = _positive("workers", workers) or cores
        # the numba kernels spread each call over every core (and run one call at a time): one hoisted rotation;
        # the numpy reference runs one core per call: the steps split over threads
        host_path = rdev.path(rdev.array_module("numpy"))
        self.host_workers = _positive("host_workers", host_workers) or (
            1 if host_path == "numba" else max(1, min(cores // 2, self.n1 - 1)))
        self.size = sizes(public)
        if self.size["n"] // 2 != lay.slots:
            raise ValueError(f"the database has {lay.slots} slots; the public context's ring has {self.size['n'] // 2}")
        self.plan = key_plan(variant, lay.l, lay.slots, n1, membership)
        missing = sorted(set(self.plan["generated"]) - set(self.size["steps"]))
        if missing:
            raise he.MissingRotationKey(f"{PAPER_NAME[variant]} needs keys for steps {self.plan['generated']}; the "
                                        f"public context lacks {missing[:8]}")
        self.xp = rdev.array_module(os.environ.get("HEPKG_RNS_XP", "numpy"))
        self.device = device or device_info(self.xp)
        self.streams = _positive("streams", streams) or stream_pool_size(self.device.sms, self.device.free_bytes,
                                                                          self.size["ciphertext"])
        self.estimate = memory_estimate(variant, lay, n1, self.size, min(self.streams, lay.groups), membership)
        rdev.check_memory(self.estimate["total"], f"{PAPER_NAME[variant]} at K={lay.K} (diagonals, keys, "
                          f"temporaries)", self.xp)
        # ---------------------------------------------------------------- the work starts here
        self.timer, self.pool = PhaseTimer(self.xp), StreamPool(self.xp, self.streams)
        self.transfers, self.counts, self.host = {}, {}, None
        self._lock = threading.Lock()
        t0 = time.perf_counter()
        with window(self.xp) as mem:
            with self.timer.phase("setup_keys"):
                # the device context (HEPKG_RNS_XP's module), pinned to the fingerprint the client published
                self.ctx = he.load_context(public, fingerprint=fingerprint, backend="rns")
                if variant != "hydia-dg":
                    with array_module("numpy"):
                        self.host = he.load_context(public, fingerprint=fingerprint, backend="rns")
                    keep_keys(self.host, self.plan["host"])
                keep_keys(self.ctx, self.plan["device"] + self.plan["temporary"])
            with self.timer.phase("setup_upload"):
                with ThreadPoolExecutor(self.workers) as threads:
                    flat = list(threads.map(lambda ki: database.diagonal(self.ctx, *ki),
                                            [(k, i) for k in range(lay.groups) for i in range(lay.l)]))
                self.diagonals = [flat[k * lay.l:(k + 1) * lay.l] for k in range(lay.groups)]
                del flat            # else the pre-rotated diagonals' originals stay alive until setup ends
            prerotations = 0
            if variant in ("bsgs-tbs", "bsgs-tbs-ku"):
                with self.timer.phase("setup_prerotate"):
                    prerotations = sum(self.pool.map(self._prerotate, range(lay.groups)))
                keep_keys(self.ctx, self.plan["device"])   # the temporary negative giant-step keys freed
        self.memory = dict(setup_peak=mem and mem.rise, resident=mem and mem.end - mem.base, online_peak=None)
        self.stats = dict(setup_s=time.perf_counter() - t0, keys_generated=len(self.plan["generated"]),
                          keys_device=len(self.ctx.keys), keys_host=len(self.host.keys) if self.host else 0,
                          keys_temporary=len(self.plan["temporary"]), keys_lent=len(self.plan["lent"]),
                          prerotations=prerotations, key_bytes_device=self.ctx.key_sizes()["galois_keys"],
                          setup_upload_bytes=database.disk_bytes(), streams=self.streams, workers=self.workers,
                          host_workers=self.host_workers if self.host is not None else None,
                          host_kernels=self.host._eng.path if self.host is not None else None,
                          estimate_bytes=self.estimate["total"],
                          **{f"{k}_s": v for k, v in self.timer.seconds.items()})
        self.timer.seconds.clear()

    def _prerotate(self, k: int) -> int:
        """Eq. 8 on the device: diagonal j n1 + i of group k rotated by -j n1 (the temporary keys)."""
        group = self.diagonals[k]
        for i in range(self.n1, self.layout.l):
            group[i] = self.ctx.rotate(group[i], -(i // self.n1) * self.n1)
        return self.layout.l - self.n1

    def close(self) -> None:
        """Release the stream pool's threads and the device's data (diagonals, keys)."""
        self.pool.close()
        self.diagonals = []
        for c in (self.ctx, self.host):
            if c is not None:
                c.close()

    def __enter__(self) -> "DeviceServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ online phase
    def _to_device(self, ct):
        """A host ciphertext's arrays copied to the device as they are (no serialization: the raw upload)."""
        raw = self.ctx._eng.upload(ct.raw)
        return Ciphertext(raw, self.ctx, depth=ct.depth, level=ct.level, size=ct.size, pending=ct.pending,
                          bound=ct.bound)

    def _host_baby_steps(self, query: memoryview) -> list:
        """The query and its n1 - 1 baby-step rotations on the host: the steps split over ``host_workers``
        threads, each a hoisted rotation of its share."""
        q = self.host.deserialize(query, guard=True)
        steps = list(range(1, self.n1))
        shares = [steps[i::self.host_workers] for i in range(self.host_workers) if steps[i::self.host_workers]]
        with ThreadPoolExecutor(len(shares)) as threads:
            rotated = {}
            for part in threads.map(lambda share: self.host.rotate_many(q, share), shares):
                rotated.update(part)
        return [q] + [rotated[i] for i in steps]

    def _table(self, query: bytes) -> list:
        """Step 1: the rotated queries on the device (transfers counted); ``query``: a :meth:`Client.query
        <hepkg.facesearch.protocol.Client.query>` message (its dimension checked against the database's)."""
        ctx = self.ctx
        query = self.db.query(ctx, query)
        if self.variant in ("hydia-dg", "bsgs-tbs-ku"):
            with self.timer.phase("upload"):
                q = ctx.deserialize(query, guard=True)
            self.transfers.update(up_cts=1, up_bytes=len(query))
            if self.plan["lent"]:
                with self.timer.phase("key_upload"):
                    self.transfers["up_key_bytes"] = upload_keys(ctx, self.host, self.plan["lent"])
                self.transfers["up_keys"] = len(self.plan["lent"])
            with self.timer.phase("baby_steps"), ctx.counting() as ops:
                rot = ctx.rotate_many(q, range(1, self.n1))
            if self.plan["lent"]:
                keep_keys(ctx, self.plan["device"])
            self.counts["baby_rotations_device"] = ops["rotate"]
            return [q] + [rot[i] for i in range(1, self.n1)]
        with self.timer.phase("baby_steps"), self.host.counting() as ops:   # on the host (Sec. 5.1.3)
            host_table = self._host_baby_steps(query)
        self.counts["baby_rotations_host"] = ops["rotate"]
        with self.timer.phase("upload"):
            table = [self._to_device(ct) for ct in host_table]
        self.transfers.update(up_cts=len(table), up_bytes=sum(int(ct.raw.data.nbytes) for ct in host_table))
        return table

    def _group(self, table: list, k: int, weight: float = 1.0):
        """Similarity of group k (Algorithm 3, lines 14-22): per giant step, n1 products unrelinearized,
        one relinearization and rescale, the on-demand giant rotation; then the comparison."""
        ctx, diags, acc, products = self.ctx, self.diagonals[k], None, 0
        for j in range(self.n2):
            part = None
            for i in range(min(self.n1, self.layout.l - j * self.n1)):
                prod = ctx.mul(table[i], diags[j * self.n1 + i], relin=False)
                part = prod if part is None else ctx.add(part, prod)
                products += 1
            part = ctx.rescale(ctx.relinearize(part))
            if j:
                part = ctx.rotate(part, j * self.n1)
            acc = part if acc is None else ctx.add(acc, part)
        with self._lock:
            self.counts["similarity_mul_ct"] = self.counts.get("similarity_mul_ct", 0) + products
        return chebyshev.compare(ctx, acc, self.kappa, delta=self.delta, path="gpu", weight=weight)

    def compared(self, query: bytes, weight: float = 1.0, *, groups=None, streams: int | None = None,
                 issue: str | None = None) -> list:
        """Steps 1-2: the comparison ciphertexts (times ``weight``) of ``groups`` (default: every group, in order;
        an index may repeat, as the stream experiment does), ``streams`` (default: the pool's) in flight, launched
        as ``issue`` says (:class:`~hepkg.facesearch.gpu_device.StreamPool`; default: the pool's)."""
        self.transfers, self.counts = {}, {}
        table = self._table(query)
        groups = range(self.layout.groups) if groups is None else list(groups)
        own = streams in (None, self.streams) and issue in (None, self.pool.issue)
        pool = self.pool if own else StreamPool(self.xp, _positive("streams", streams or self.streams),
                                                issue or self.pool.issue)
        try:
            with self.timer.phase("similarity_comparison"), self.ctx.counting() as ops:
                out = pool.map(lambda k: self._group(table, k, weight), groups)
        finally:
            if pool is not self.pool:
                pool.close()
        self.counts.update(giant_rotations=ops["rotate"], mul_ct=ops["mul_ct"], relinearize=ops["relinearize"])
        return out

    def _query(self, fn):
        """``fn()`` with its device memory measured: the server's online peak is the largest query's rise above
        what it holds resident."""
        with window(self.xp) as mem:
            out = fn()
        if mem is not None:
            peak = self.memory["resident"] + mem.rise
            self.memory["online_peak"] = max(self.memory["online_peak"] or 0, peak)
        return out

    def membership(self, query: bytes, aggregate: str = "sum") -> bytes:
        """Algorithm 3: tree reduction of the groups' comparisons, then (``aggregate="sum"``, the paper's)
        rotate-and-sum, the count in every slot (each comparison weighted by
        :func:`~hepkg.facesearch.protocol.sum_weight`, as the CPU server's); ``"slots"``: the tree reduction alone,
        per slot the sum over the groups, for :class:`~hepkg.facesearch.decision.SlotRule` (no rotation). One
        ciphertext down either way."""
        if aggregate not in ("sum", "slots"):
            raise ValueError(f"aggregate must be 'sum' or 'slots' on the device, got {aggregate!r}")
        return self._query(lambda: self._membership(query, aggregate))

    def _membership(self, query: bytes, aggregate: str) -> bytes:
        level = self.compared(query, sum_weight(self.layout.slots) if aggregate == "sum" else 1.0)
        with self.timer.phase("aggregation"), self.ctx.counting() as ops:
            while len(level) > 1:
                level = [self.ctx.add(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                         for i in range(0, len(level), 2)]
            total = level[0]
            if aggregate == "sum":
                total = rotate_and_sum(self.ctx, total, self.layout.slots)
        self.counts["aggregation_rotations"] = ops["rotate"]
        with self.timer.phase("download"):
            out = membership_answer(self.ctx, total, aggregate, self.layout)
        self.transfers.update(down_cts=1, down_bytes=len(out))
        return out

    def identify(self, query: bytes) -> list[bytes]:
        """Algorithm 4: the G comparison ciphertexts downloaded."""
        return self._query(lambda: self._identify(query))

    def _identify(self, query: bytes) -> list[bytes]:
        cts = self.compared(query)
        with self.timer.phase("download"):
            out = [self.ctx.serialize(ct) for ct in cts]
        self.transfers.update(down_cts=len(out), down_bytes=sum(map(len, out)))
        return out


def expected_table2(variant: str, l: int, groups: int, n1: int | None = None) -> dict:
    """Table 2's per-query counts in closed form (the similarity; the slot sum's rotations apart); the
    ``"slots"`` membership answer (no slot sum) is one ciphertext down too."""
    _check_variant(variant)
    if variant == "hydia-dg":
        return dict(baby_rotations=l - 1, giant_rotations=0, online_rotations=l - 1, mul_per_group=l, up_cts=1,
                    down_membership=1, down_membership_slots=1, down_identification=groups)
    n1, n2 = bsgs_shape(l, n1)
    return dict(baby_rotations=n1 - 1, giant_rotations=(n2 - 1) * groups, online_rotations=(n1 - 1) + (n2 - 1) * groups,
                mul_per_group=l, up_cts=1 if variant == "bsgs-tbs-ku" else n1, down_membership=1,
                down_membership_slots=1, down_identification=groups)
