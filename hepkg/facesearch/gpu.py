"""The face-search paper's device-resident pipelines (Sec. 5, Algorithms 3-4) on hepkg's ``rns`` engine.

Three variants, resident on the device from query upload to result download:

- ``hydia-dg`` (HyDia-GPU-DG): the query uploaded alone; its l - 1 rotations on the device; every
  key resident (l - 1 diagonal steps + the power-of-two keys of the slot sum: 516 at l = 512).
- ``bsgs-tbs`` (BSGS-GPU-TBS): the n1 - 1 baby steps rotated on the host and the n1 baby-step
  ciphertexts uploaded; the stored diagonals pre-rotated on the device (Eq. 8) with temporary
  negative giant-step keys that are freed afterwards; per group and giant step j, the n1 products
  summed unrelinearized, one relinearization and rescale, then one on-demand rotation by j n1.
- ``bsgs-tbe`` (BSGS-GPU-TBE): the same online pipeline, the pre-rotation done by the enroller in
  plaintext (no negative keys).

Per group: similarity, then the comparison (the paper's GPU path: the Chebyshev series of the step
alone, degree 13 at kappa 8, no f4, :func:`~hepkg.facesearch.chebyshev.compare` with ``path='gpu'``).
Membership adds the groups' comparisons by a tree and (the paper's) sums the slots by rotate-and-sum, or
(for the slot rule) not; one ciphertext downloaded either way. Identification downloads the G comparison
ciphertexts. Groups run in waves
of S over a pool of streams, S from Eq. 6 (:func:`stream_pool_size`) and the device's properties.

The device is whatever the ``rns`` engine runs on (``HEPKG_RNS_XP``: numpy on the CPU, cupy on an
NVIDIA GPU). On numpy a documented CPU stand-in (:func:`device_info`) sizes the pool, phases are
timed by ``perf_counter`` (CUDA events on CuPy, :class:`PhaseTimer`), and every number is a CPU
measurement. Host <-> device transfers are the serialized ciphertexts handed between the host
context (numpy) and the device context: their bytes are Table 2's transfers.

Keys: the client generates every key the variant uses (:func:`key_plan`); the server's host context
keeps the baby steps only, its device context the giant and power-of-two steps (plus, for TBS, the
negative giant steps until the diagonals are pre-rotated). Dropping keys is the one step outside the
backend protocol (:func:`_keep_keys`: the rns engine's ``free_rotation_keys``).

Membership decision: :class:`~hepkg.facesearch.decision.SlotRule` with ``path="gpu"`` on the answer
aggregated by ``"slots"`` (:meth:`DeviceServer.membership`: the groups' tree reduction alone, no rotation,
still one ciphertext down), where the rule is sound (kappa 8, margin 0.05: G <= 2 groups at degree 13);
elsewhere membership is decided from the identification answer. :func:`measure` records both and the
paper's rule on the rotate-and-sum count beside them.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

import numpy as np

from hepkg import he
from hepkg.linalg.rotsum import rotate_and_sum, rotation_steps_for_sum
from hepkg.rns import device as rdev

from . import chebyshev
from .decision import SlotRule, paper_member
from .packing import Layout, bsgs_shape
from .protocol import membership_answer, sum_weight

__all__ = ["VARIANTS", "PAPER_NAME", "DeviceInfo", "device_info", "stream_pool_size", "key_plan", "memory_estimate",
           "PhaseTimer", "DeviceServer", "expected_table2"]

VARIANTS = ("hydia-dg", "bsgs-tbs", "bsgs-tbe")
#: the paper's names (RTX / H200 in the paper; "GPU" for whichever device runs them here)
PAPER_NAME = {"hydia-dg": "HyDia-GPU-DG", "bsgs-tbs": "BSGS-GPU-TBS", "bsgs-tbe": "BSGS-GPU-TBE"}
#: Eq. 6: ciphertext-sized temporaries per group in flight, SMs per stream, the cap
TEMPS_PER_GROUP, SMS_PER_STREAM, MAX_STREAMS = 40, 4, 32


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown GPU pipeline {variant!r}; choose one of {VARIANTS}")


# ---------------------------------------------------------------------------- the device and Eq. 6

@dataclass(frozen=True)
class DeviceInfo:
    """What Eq. 6 reads from the device: streaming multiprocessors and free memory."""
    name: str
    kind: str           # 'cuda' or 'cpu stand-in'
    sms: int
    free_bytes: int
    total_bytes: int


def device_info(xp=None) -> DeviceInfo:
    """The device the rns engine runs on (``xp``: default ``HEPKG_RNS_XP``).

    CuPy: the GPU's name, multiprocessor count and free / total memory. numpy: a CPU stand-in with
    4 "SMs" per core (so Eq. 6's SM term is the core count) and the host's available memory."""
    xp = rdev.array_module(os.environ.get("HEPKG_RNS_XP", "numpy") if xp is None else xp)
    if rdev.on_gpu(xp):
        props = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)
        free, total = xp.cuda.runtime.memGetInfo()
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return DeviceInfo(name, "cuda", int(props["multiProcessorCount"]), int(free), int(total))
    cores = os.cpu_count() or 1
    free = rdev.free_bytes(np)
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return DeviceInfo(f"CPU stand-in ({cores} cores, {rdev.path(xp)} kernels)", "cpu stand-in", SMS_PER_STREAM * cores,
                      int(free), int(total))


def stream_pool_size(sms: int, free_bytes: int, ct_bytes: int) -> int:
    """Eq. 6: S = min(floor(SMs / 4), floor(0.2 F / (40 C)), 32), at least 2."""
    if min(sms, free_bytes, ct_bytes) <= 0:
        raise ValueError(f"Eq. 6 needs positive SMs, free memory and ciphertext size, got {sms}, {free_bytes}, "
                         f"{ct_bytes}")
    return max(2, min(sms // SMS_PER_STREAM, int(0.2 * free_bytes) // (TEMPS_PER_GROUP * ct_bytes), MAX_STREAMS))


# ---------------------------------------------------------------------------- keys and memory

def key_plan(variant: str, l: int, slots: int, n1: int | None = None, membership: bool = True) -> dict:
    """Rotation steps (normalized mod slots) per role: ``generated`` by the client, ``host`` (the baby steps
    rotated on the CPU), ``device`` (resident online), ``temporary`` (TBS's negative giant steps, freed after
    the pre-rotation). HyDia: l - 1 + the sum's powers of two, all on the device."""
    _check_variant(variant)
    total = set(rotation_steps_for_sum(slots)) if membership else set()
    if variant == "hydia-dg":
        device, host, temporary = set(range(1, l)) | total, set(), set()
    else:
        n1, n2 = bsgs_shape(l, n1)
        host = set(range(1, n1))
        device = {j * n1 for j in range(1, n2)} | total
        temporary = {(-j * n1) % slots for j in range(1, n2)} if variant == "bsgs-tbs" else set()
    return dict(generated=sorted(host | device | temporary), host=sorted(host), device=sorted(device),
                temporary=sorted(temporary))


def memory_estimate(variant: str, layout: Layout, n1: int | None, ct_bytes: int, key_bytes: int, streams: int,
                    membership: bool = True) -> dict:
    """Device bytes before loading: the G l diagonals, the resident keys (+ TBS's temporary keys during setup),
    the cached rotated queries (l for HyDia, n1 baby steps for BSGS) and 40 ciphertext temporaries per stream
    (Eq. 6's term); ``total`` is the largest of three peaks: loading the public context (every generated key
    arrives, the host-only ones are dropped at once), setup and online."""
    plan = key_plan(variant, layout.l, layout.slots, n1, membership)
    diagonals = layout.groups * layout.l * ct_bytes
    keys = (len(plan["device"]) + 1) * key_bytes  # + the relinearization key
    temporary = len(plan["temporary"]) * key_bytes
    table = (layout.l if variant == "hydia-dg" else bsgs_shape(layout.l, n1)[0]) * ct_bytes
    temps = min(streams, layout.groups) * TEMPS_PER_GROUP * ct_bytes
    load = (len(plan["generated"]) + 1) * key_bytes
    setup, online = diagonals + keys + temporary + ct_bytes, diagonals + keys + table + temps
    return dict(diagonals=diagonals, keys=keys, temporary_keys=temporary, query_table=table, temporaries=temps,
                load=load, setup=setup, online=online, total=max(load, setup, online))


def _keep_keys(ctx, steps) -> list[int]:
    """Drop every rotation key of ``ctx`` but ``steps``, releasing its memory; returns the dropped steps.

    The backend protocol fixes a context's keys when it is made; the paper's temporary and host-only keys
    need them dropped, which the rns engine offers (``free_rotation_keys``). The one place this module
    leaves the protocol."""
    if ctx.backend != "rns":
        raise ValueError(f"the device pipelines run on the rns backend, not {ctx.backend!r}")
    keep = frozenset(int(s) % ctx.period for s in steps)
    drop = sorted(set(ctx.keys.steps) - keep)
    ctx._eng.free_rotation_keys(drop)
    ctx.keys.steps = frozenset(ctx.keys.steps) & keep
    return drop


# ---------------------------------------------------------------------------- timing and streams

class PhaseTimer:
    """Seconds per phase: CUDA events on CuPy (the device's own clock), ``perf_counter`` on numpy."""

    def __init__(self, xp):
        self.xp, self.seconds = xp, Counter()

    @contextmanager
    def phase(self, name: str):
        if not rdev.on_gpu(self.xp):
            start = time.perf_counter()
            try:
                yield
            finally:
                self.seconds[name] += time.perf_counter() - start
            return
        cuda = self.xp.cuda
        start, end = cuda.Event(), cuda.Event()
        start.record()
        try:
            yield
        finally:
            cuda.Device().synchronize()  # every stream of the pool done
            end.record()
            end.synchronize()
            self.seconds[name] += cuda.get_elapsed_time(start, end) / 1e3


class _Streams:
    """A pool of S non-blocking CUDA streams (numpy: S labels, work runs in order)."""

    def __init__(self, xp, size: int):
        self.xp, self.size = xp, size
        self.pool = [xp.cuda.Stream(non_blocking=True) for _ in range(size)] if rdev.on_gpu(xp) else None

    def use(self, i: int):
        return self.pool[i % self.size] if self.pool else nullcontext()

    def synchronize(self) -> None:
        for s in self.pool or ():
            s.synchronize()


def _device_used(xp) -> int | None:
    """Bytes CuPy's memory pool holds now (None on numpy: the host's peak RSS stands in)."""
    return int(xp.get_default_memory_pool().used_bytes()) if rdev.on_gpu(xp) else None


@contextmanager
def _array_module(name: str):
    """HEPKG_RNS_XP set to ``name`` while contexts are loaded (the host side always runs on numpy)."""
    old = os.environ.get("HEPKG_RNS_XP")
    os.environ["HEPKG_RNS_XP"] = name
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("HEPKG_RNS_XP", None)
        else:
            os.environ["HEPKG_RNS_XP"] = old


# ---------------------------------------------------------------------------- the server

class DeviceServer:
    """One variant's pipeline: setup (keys, diagonals, pre-rotation) once, then queries.

    ``public``: the client's public context bytes (``ctx.to_bytes()``), ``fingerprint``: the one the client
    published (:func:`hepkg.he.fingerprint`); ``database``: an
    :class:`~hepkg.facesearch.protocol.EncryptedDatabase` enrolled under it (pre-rotated by n1 for
    ``bsgs-tbe``, plain otherwise). Refuses with :class:`hepkg.rns.DeviceMemoryError` when the memory
    estimate exceeds what the device has free, before loading anything. ``timer.seconds`` holds the
    phases; ``transfers`` the last query's bytes and ciphertexts each way; ``stats`` the setup.
    """

    def __init__(self, public: bytes, database, variant: str, *, fingerprint: str | None = None, kappa: int = 8,
                 n1: int | None = None, delta: float = chebyshev.DELTA, membership: bool = True,
                 device: DeviceInfo | None = None):
        _check_variant(variant)
        self.variant, self.kappa, self.delta, self.db = variant, kappa, delta, database
        lay = self.layout = database.layout
        self.n1, self.n2 = (lay.l, 1) if variant == "hydia-dg" else bsgs_shape(lay.l, n1)
        database.method_fits("bsgs-textbook" if variant == "bsgs-tbe" else "hydia", self.n1)
        xp_name = os.environ.get("HEPKG_RNS_XP", "numpy")
        self.xp = rdev.array_module(xp_name)
        self.device = device or device_info(self.xp)
        self.plan = key_plan(variant, lay.l, lay.slots, n1, membership)
        t0 = time.perf_counter()
        self.ctx = he.load_context(public, fingerprint=fingerprint)  # the device context (HEPKG_RNS_XP's array module)
        missing = sorted(set(self.plan["generated"]) - set(self.ctx.keys.steps))
        if missing:
            raise he.MissingRotationKey(f"{PAPER_NAME[variant]} needs keys for steps {self.plan['generated']}; the "
                                        f"public context lacks {missing[:8]}")
        sizes = self.ctx.key_sizes()
        self.ct_bytes = int(sizes.get("ciphertext") or self.ctx.nbytes(self.ctx.encrypt([0.0])))
        self.key_bytes = sizes["galois_keys"] // max(1, len(self.ctx.keys))
        self.streams = stream_pool_size(self.device.sms, self.device.free_bytes, self.ct_bytes)
        self.estimate = memory_estimate(variant, lay, n1, self.ct_bytes, self.key_bytes, self.streams, membership)
        rdev.check_memory(self.estimate["total"], f"{PAPER_NAME[variant]} at K={lay.K} (diagonals, keys, "
                          f"temporaries)", self.xp)
        self.timer = PhaseTimer(self.xp)
        self.host = None
        if variant != "hydia-dg":
            with _array_module("numpy"):
                self.host = he.load_context(public, fingerprint=fingerprint)
            _keep_keys(self.host, self.plan["host"])
        _keep_keys(self.ctx, self.plan["device"] + self.plan["temporary"])
        self.peak_device = _device_used(self.xp)
        with self.timer.phase("setup_upload"):
            self.diagonals = [[database.diagonal(self.ctx, k, i) for i in range(lay.l)] for k in range(lay.groups)]
        self._track()
        upload_bytes = sum(p.stat().st_size for p in database.folder.rglob("*.ct"))
        prerotations = 0
        if variant == "bsgs-tbs":
            with self.timer.phase("setup_prerotate"):
                for group in self.diagonals:
                    for i in range(self.n1, lay.l):
                        group[i] = self.ctx.rotate(group[i], -(i // self.n1) * self.n1)
                        prerotations += 1
            self._track()
            _keep_keys(self.ctx, self.plan["device"])   # the temporary negative giant-step keys freed
        self.stats = dict(setup_s=time.perf_counter() - t0, keys_generated=len(self.plan["generated"]),
                          keys_device=len(self.ctx.keys), keys_host=len(self.host.keys) if self.host else 0,
                          keys_temporary=len(self.plan["temporary"]), prerotations=prerotations,
                          key_bytes_device=self.ctx.key_sizes()["galois_keys"], setup_upload_bytes=upload_bytes,
                          streams=self.streams, estimate_bytes=self.estimate["total"])
        self.transfers: dict = {}
        self.counts: dict = {}

    def _track(self) -> None:
        used = _device_used(self.xp)
        if used is not None:
            self.peak_device = max(self.peak_device or 0, used)

    # ------------------------------------------------------------------ online phase
    def _table(self, query: bytes) -> list:
        """Step 1: the rotated queries on the device (uploads counted); ``query``: a :meth:`Client.query
        <hepkg.facesearch.protocol.Client.query>` message (its dimension checked against the database's)."""
        ctx = self.ctx
        query = self.db.query(ctx, query)
        if self.variant == "hydia-dg":
            with self.timer.phase("upload"):
                q = ctx.deserialize(query, guard=True)
            self.transfers.update(up_cts=1, up_bytes=len(query))
            with self.timer.phase("baby_steps"), ctx.counting() as ops:
                rot = ctx.rotate_many(q, range(1, self.n1))
            self.counts["baby_rotations_device"] = ops["rotate"]
            return [q] + [rot[i] for i in range(1, self.n1)]
        with self.timer.phase("baby_steps"), self.host.counting() as ops:   # on the host (Sec. 5.1.3)
            q = self.host.deserialize(query, guard=True)
            rot = self.host.rotate_many(q, range(1, self.n1))
            blobs = [self.host.serialize(q)] + [self.host.serialize(rot[i]) for i in range(1, self.n1)]
        self.counts["baby_rotations_host"] = ops["rotate"]
        with self.timer.phase("upload"):
            table = [ctx.deserialize(b) for b in blobs]
        self.transfers.update(up_cts=len(blobs), up_bytes=sum(map(len, blobs)))
        return table

    def _group(self, table: list, k: int, weight: float = 1.0):
        """Similarity of group k (Algorithm 3, lines 14-22): per giant step, n1 products unrelinearized,
        one relinearization and rescale, the on-demand giant rotation; then the comparison."""
        ctx = self.ctx
        with ctx.counting() as ops:
            acc = self._similarity(table, self.diagonals[k])
        self.counts["similarity_mul_ct"] = self.counts.get("similarity_mul_ct", 0) + ops["mul_ct"]
        return chebyshev.compare(ctx, acc, self.kappa, delta=self.delta, path="gpu", weight=weight)

    def _similarity(self, table: list, diags: list):
        ctx, acc = self.ctx, None
        for j in range(self.n2):
            part = None
            for i in range(min(self.n1, self.layout.l - j * self.n1)):
                prod = ctx.mul(table[i], diags[j * self.n1 + i], relin=False)
                part = prod if part is None else ctx.add(part, prod)
            part = ctx.rescale(ctx.relinearize(part))
            if j:
                part = ctx.rotate(part, j * self.n1)
            acc = part if acc is None else ctx.add(acc, part)
        return acc

    def compared(self, query: bytes, weight: float = 1.0) -> list:
        """Steps 1-2: the G comparison ciphertexts (times ``weight``), groups in waves of S over the stream pool."""
        self.transfers, self.counts = {}, {}
        table = self._table(query)
        self._track()
        out = [None] * self.layout.groups
        pool = _Streams(self.xp, self.streams)
        with self.timer.phase("similarity_comparison"), self.ctx.counting() as ops:
            for wave in range(0, self.layout.groups, self.streams):
                for k in range(wave, min(wave + self.streams, self.layout.groups)):
                    with pool.use(k):
                        out[k] = self._group(table, k, weight)
                pool.synchronize()
                self._track()
        self.counts.update(giant_rotations=ops["rotate"], mul_ct=ops["mul_ct"], relinearize=ops["relinearize"])
        return out

    def membership(self, query: bytes, aggregate: str = "sum") -> bytes:
        """Algorithm 3: tree reduction of the groups' comparisons, then (``aggregate="sum"``, the paper's)
        rotate-and-sum, the count in every slot (each comparison weighted by
        :func:`~hepkg.facesearch.protocol.sum_weight`, as the CPU server's); ``"slots"``: the tree reduction alone,
        per slot the sum over the groups, for :class:`~hepkg.facesearch.decision.SlotRule` (no rotation). One
        ciphertext down either way."""
        if aggregate not in ("sum", "slots"):
            raise ValueError(f"aggregate must be 'sum' or 'slots' on the device, got {aggregate!r}")
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
        self._track()
        return out

    def identify(self, query: bytes) -> list[bytes]:
        """Algorithm 4: the G comparison ciphertexts downloaded."""
        cts = self.compared(query)
        with self.timer.phase("download"):
            out = [self.ctx.serialize(ct) for ct in cts]
        self.transfers.update(down_cts=len(out), down_bytes=sum(map(len, out)))
        self._track()
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
                mul_per_group=l, up_cts=n1, down_membership=1, down_membership_slots=1,
                down_identification=groups)



# ---------------------------------------------------------------------------- a measured trial

def _identified(values: np.ndarray) -> list[int]:
    return np.flatnonzero(np.asarray(values) > 0.5).tolist()


_CLIENTS: dict = {}


def _client_context(params: str, steps: tuple, insecure: bool):
    """The client's secret context and its key-generation seconds: made on numpy (the client is a CPU party,
    and its keys never occupy the device), once per process for a parameter set and key plan (0 s when reused)."""
    key = (params, steps, insecure)
    if key in _CLIENTS:
        return _CLIENTS[key], 0.0
    t0 = time.perf_counter()
    with _array_module("numpy"):
        ctx = he.context("rns", params, rotations=list(steps), policy="exact", insecure=insecure)
    _CLIENTS.clear()   # one client at a time: its keys are the largest thing the host holds
    _CLIENTS[key] = ctx
    return ctx, time.perf_counter() - t0


def measure(config: dict) -> list[dict]:
    """One database, every variant of ``config['variants']`` (and, with ``cpu_baseline``, the CPU
    BSGS-Diagonal on the same machine): setup, then ``reps`` rounds of three queries each: membership as the
    paper's (``aggregate="sum"``, timed: ``membership_s``, its transfers Table 2's), membership for the slot rule
    (``"slots"``: ``membership_slots_s``, ``membership_slots_*`` transfers) and identification.

    ``config``: params, K, Km, l, kappa, reps, seed, insecure, variants, cpu_baseline, n1, margin (the slot
    rule's, 0.05; all optional but the first five). One client context holds the union of the variants' keys
    (each server keeps only its plan's), reused across calls (``keygen_s`` is then 0). Membership is decided
    (``member``, ``member_rule``) by :class:`~hepkg.facesearch.decision.SlotRule` (GPU path) on the "slots"
    answer where it is sound (``slot_sound``), else from the identification answer; ``slot_member`` and
    ``paper_member`` (the paper's rule on the summed count) are recorded either way. Every query is checked
    against numpy on the plaintext scores: the count and the slot values against the polynomial summed
    (``count_error``, ``slot_error``), each decision against the same rule on those numpy values, the
    identified indices against the numpy polynomial's; ``truth_member`` (some score >= delta) must equal
    ``member`` unless a score lies within the margin of delta (``in_band``, where neither rule is guaranteed).
    ``correct`` is all of these; ``planted_found`` says whether the planted matches are among the identified.
    One row per variant and repetition; a variant whose memory estimate does not fit the device gets one row
    with ``status`` 'refused: ...' (the paper's out-of-memory cells)."""
    import pathlib
    import tempfile

    from hepkg.bench.memory import peak_rss, reset_peak_rss
    from hepkg.datasets.faces import synthetic_database

    from .packing import normalize
    from .protocol import Client, Enroller, Server, key_steps

    params, K, l, kappa = config["params"], config["K"], config["l"], config.get("kappa", 8)
    variants, n1 = config.get("variants", VARIANTS), config.get("n1")
    slots = he.get_params(params).n // 2
    steps = set().union(*(key_plan(v, l, slots, n1)["generated"] for v in variants))
    if config.get("cpu_baseline"):
        steps |= set(key_steps("bsgs-diagonal", l, slots, n1))
    ctx, keygen_s = _client_context(params, tuple(sorted(steps)), bool(config.get("insecure", False)))
    data = synthetic_database(K, config["Km"], l, seed=config.get("seed", 0))
    scores = normalize(data.database) @ normalize(data.query)
    layout = Layout(K, l, slots)
    padded = np.zeros(layout.groups * slots)
    padded[:K] = scores
    p = chebyshev.compare_numpy(padded, kappa, path="gpu")
    rule = SlotRule(kappa, layout, margin=config.get("margin", 0.05), path="gpu")
    want_ids, numpy_count, numpy_slots = _identified(p[:K]), float(p.sum()), p.reshape(layout.groups, slots).sum(0)
    client, public = Client(ctx), ctx.to_bytes()
    enroller = Enroller(ctx.public())
    xp_name = os.environ.get("HEPKG_RNS_XP", "numpy")
    numpy_slot_member = rule.member(numpy_slots)
    base = dict(params=params, N=2 * slots, K=K, Km=config["Km"], l=l, kappa=kappa, groups=layout.groups, xp=xp_name,
                keygen_s=keygen_s)
    decision = dict(slot_sound=rule.sound, numpy_count=numpy_count,
                    member_rule="slot rule" if rule.sound else "identification",
                    member_numpy=numpy_slot_member if rule.sound else bool(want_ids),
                    truth_member=bool((scores >= chebyshev.DELTA).any()),
                    in_band=bool((np.abs(scores - chebyshev.DELTA) < rule.margin).any()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="hepkg-fsgpu-") as tmp:
        dbs = {}

        def enrolled(pre):
            if pre not in dbs:
                t = time.perf_counter()
                dbs[pre] = (enroller.enroll(data.database, pathlib.Path(tmp) / f"db{pre or 0}", prerotate_n1=pre),
                            time.perf_counter() - t)
            return dbs[pre]

        query = client.query(data.query)
        for v in variants:
            pre = bsgs_shape(l, n1)[0] if v == "bsgs-tbe" else None
            db, enroll_s = enrolled(pre)
            reset_peak_rss()
            try:
                server = DeviceServer(public, db, v, fingerprint=he.fingerprint(public), kappa=kappa, n1=n1)
            except rdev.DeviceMemoryError as exc:   # the paper's out-of-memory cells, refused before loading
                rows.append(base | dict(variant=v, approach=PAPER_NAME[v], status=f"refused: {exc}"))
                continue
            dev = server.device
            for rep in range(config.get("reps", 1)):
                server.timer.seconds.clear()
                t = time.perf_counter()
                answer = server.membership(query)
                membership_s = time.perf_counter() - t
                m_phase, m_tr, m_counts = dict(server.timer.seconds), dict(server.transfers), dict(server.counts)
                t = time.perf_counter()
                slot_answer = server.membership(query, aggregate="slots")
                slots_s, s_tr = time.perf_counter() - t, dict(server.transfers)
                s_rot = server.counts["aggregation_rotations"]
                server.timer.seconds.clear()
                t = time.perf_counter()
                ids = client.indicators(server.identify(query), layout)
                identify_s = time.perf_counter() - t
                count, slot_values = client.count(answer, "sum"), client.slot_values(slot_answer)[:slots]
                got_ids, slot_member, paper = _identified(ids), rule.member(slot_values), paper_member(count)
                member = slot_member if rule.sound else bool(got_ids)
                rows.append(base | decision | dict(
                    variant=v, approach=PAPER_NAME[v], status="measured", rep=rep, device=dev.name,
                    device_kind=dev.kind, sms=dev.sms,
                    enroll_s=enroll_s, setup_s=server.stats["setup_s"], membership_s=membership_s,
                    membership_slots_s=slots_s, identify_s=identify_s,
                    **{f"phase_{k}_s": s for k, s in m_phase.items()},
                    **{f"membership_{k}": x for k, x in m_tr.items()},
                    **{f"membership_slots_{k}": x for k, x in s_tr.items()},
                    membership_slots_aggregation_rotations=s_rot,
                    **{f"identify_{k}": x for k, x in server.transfers.items()}, **m_counts,
                    **{k: x for k, x in server.stats.items() if k != "setup_s"},
                    estimate_online_bytes=server.estimate["online"],
                    estimate_setup_bytes=server.estimate["setup"], device_peak_bytes=server.peak_device,
                    rss_peak_bytes=peak_rss(), count=count, count_error=abs(count - numpy_count),
                    slot_error=float(np.abs(slot_values - numpy_slots).max()),
                    ids_error=float(np.abs(ids - p[:K]).max()), member=member, slot_member=slot_member,
                    paper_member=paper,
                    correct=bool(got_ids == want_ids and member == decision["member_numpy"]
                                 and slot_member == numpy_slot_member and paper == paper_member(numpy_count)
                                 and (decision["in_band"] or member == decision["truth_member"])),
                    planted_found=bool(set(data.matches.tolist()) <= set(got_ids))))
            del server
        if config.get("cpu_baseline"):
            db, enroll_s = enrolled(None)
            server = Server(ctx.public(), db)
            for rep in range(config.get("reps", 1)):
                t = time.perf_counter()
                answer = server.membership(query, "bsgs-diagonal", kappa, n1=n1)
                membership_s = time.perf_counter() - t
                t = time.perf_counter()
                got_ids = _identified(client.indicators(server.identify(query, "bsgs-diagonal", kappa, n1=n1), layout))
                rows.append(base | dict(variant="bsgs-cpu-dg", approach="BSGS-CPU-DG", status="measured", rep=rep,
                                        device=device_info(np).name, device_kind="cpu", enroll_s=enroll_s,
                                        membership_s=membership_s, identify_s=time.perf_counter() - t,
                                        rss_peak_bytes=peak_rss(), correct=bool(got_ids == _identified(
                                            chebyshev.compare_numpy(scores, kappa))),
                                        planted_found=bool(set(data.matches.tolist()) <= set(got_ids))))
    return rows
