"""The experiments that measure the device pipelines (:mod:`.gpu`): Tables 7-8's rows at one K (:func:`measure`)
and the stream pool's overlap (:func:`measure_streams`). Every query is checked against numpy.

The client's keys are made per variant (each server gets exactly the keys its plan generates, Table 2), with
the client's context on the engine's array module (the GPU under CuPy: key generation and the query's encryption
there); the enroller gets the public key alone. A database is enrolled by ``workers`` threads, its diagonals
uploaded by the servers that use it, then deleted (the disk holds one database at a time: 21.5 GB at K = 2^17 on
the paper's ring); the variants' queries then run interleaved (round r: every variant, in order), after
``warmup`` rounds that are not kept. Rows are handed to ``on_row`` as they finish.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import tempfile
import time

import numpy as np

from hepkg import atomic, he
from hepkg.rns import device as rdev

from . import chebyshev
from .decision import SlotRule, paper_member
from .gpu import PAPER_NAME, VARIANTS, DeviceServer, key_plan, memory_estimate
from .gpu_device import device_info, generate_keys, keep_keys, window
from .packing import Layout, bsgs_shape
from .protocol import Client, Enroller

__all__ = ["measure", "measure_streams", "stream_settings", "QUERIES"]

#: the queries of one round: membership as the paper's (slot sum), for the slot rule (no sum), identification
QUERIES = ("membership", "membership_slots", "identify")


_WORKDIR = re.compile(r"hepkg-fsgpu-(\d+)-\w+")


def _workdir(config: dict) -> str:
    """A fresh folder to enroll into, under ``config['tmp']`` (made if missing) or the system's temporary one;
    the folders of runs that were killed (their pid gone: a database can be 21.5 GB) are removed first."""
    base = pathlib.Path(config.get("tmp") or tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    atomic.clean_stale(base, _WORKDIR)
    return tempfile.mkdtemp(prefix=f"hepkg-fsgpu-{os.getpid()}-", dir=base)


def _identified(values: np.ndarray) -> list[int]:
    return np.flatnonzero(np.asarray(values) > 0.5).tolist()


class _Trial:
    """One database and its client: the plaintext truth, the query, and the servers' setup (keys per variant,
    the enrollments, the device uploads)."""

    def __init__(self, config: dict):
        from hepkg.datasets.faces import synthetic_database

        from .packing import normalize

        self.config = config
        self.params, self.K, self.l = config["params"], config["K"], config["l"]
        self.kappa, self.n1 = config.get("kappa", 8), config.get("n1")
        chebyshev.check_kappa(self.kappa, "gpu")
        self.workers = config.get("workers") or os.cpu_count() or 1
        t = time.perf_counter()
        self.client_ctx = he.context("rns", self.params, rotations=[], policy="exact",
                                     insecure=bool(config.get("insecure", False)))
        self.keygen_s = time.perf_counter() - t      # secret, public and relinearization keys
        self.slots = self.client_ctx.params.n // 2
        self.data = synthetic_database(self.K, config["Km"], self.l, seed=config.get("seed", 0))
        self.scores = normalize(self.data.database) @ normalize(self.data.query)
        self.layout = Layout(self.K, self.l, self.slots)
        padded = np.zeros(self.layout.groups * self.slots)
        padded[:self.K] = self.scores
        self.p = chebyshev.compare_numpy(padded, self.kappa, path="gpu")
        self.rule = SlotRule(self.kappa, self.layout, margin=config.get("margin", 0.05), path="gpu")
        self.client = Client(self.client_ctx)
        self.query = self.client.query(self.data.query)
        pk = self.client_ctx.to_bytes(evaluation_keys=False)    # the public key alone: no evaluation key
        self.enroller = Enroller(he.load_context(pk, fingerprint=he.fingerprint(pk), backend="rns", guard=False))

    def enroll(self, folder: pathlib.Path, prerotate_n1):
        t = time.perf_counter()
        db = self.enroller.enroll(self.data.database, folder, prerotate_n1=prerotate_n1, workers=self.workers)
        return db, dict(enroll_s=time.perf_counter() - t, disk_bytes=db.disk_bytes())

    def public(self, variant: str) -> tuple[bytes, dict]:
        """The client's public context with exactly ``variant``'s keys (made now, then dropped by the client)."""
        t = time.perf_counter()
        generate_keys(self.client_ctx, key_plan(variant, self.l, self.slots, self.n1)["generated"])
        public = self.client_ctx.to_bytes()
        keep_keys(self.client_ctx, [])
        return public, dict(keys_s=time.perf_counter() - t, key_bytes=len(public))

    def close(self) -> None:
        for ctx in (self.enroller.ctx, self.client_ctx):
            ctx.close()


def _server(trial: _Trial, variant: str, db, config: dict, **kw):
    """(server or None, what its setup measured): refused by its memory estimate, it is the paper's
    out-of-memory cell."""
    from hepkg.bench.memory import peak_rss, reset_peak_rss

    public, info = trial.public(variant)
    reset_peak_rss()
    try:
        server = DeviceServer(public, db, variant, fingerprint=he.fingerprint(public), kappa=trial.kappa,
                              n1=trial.n1, workers=trial.workers,
                              streams=config.get("streams"), host_workers=config.get("host_workers"), **kw)
    except rdev.DeviceMemoryError as exc:
        return None, info | dict(status=f"refused: {exc}")
    return server, info | dict(status="measured", rss_setup_peak_bytes=peak_rss())


def _setup(trial: _Trial, variants, folder: pathlib.Path) -> dict:
    """{variant: (server or None, setup record)}: the plain database for every variant but TBE, then TBE's
    pre-rotated one; each database deleted once its servers hold its diagonals."""
    out = {}
    for pre in (None, bsgs_shape(trial.l, trial.n1)[0]):
        users = [v for v in variants if (v == "bsgs-tbe") == (pre is not None)]
        if not users:
            continue
        db, enrolled = trial.enroll(folder / f"db{pre or 0}", pre)
        for v in users:
            server, info = _server(trial, v, db, trial.config)
            out[v] = (server, enrolled | info)
        shutil.rmtree(db.folder)
    return {v: out[v] for v in variants}


def _base(trial: _Trial, xp_name: str) -> dict:
    lay, dev = trial.layout, device_info()
    host = rdev.path(rdev.array_module("numpy"))
    if host == "numba":
        from hepkg.rns import cpu
    return dict(params=trial.params, N=2 * trial.slots, K=trial.K, Km=trial.config["Km"], l=trial.l,
                kappa=trial.kappa, groups=lay.groups, xp=xp_name, keygen_s=trial.keygen_s, workers=trial.workers,
                device=dev.name, device_kind=dev.kind, sms=dev.sms, host_kernels=host,
                host_threads=cpu.threads() if host == "numba" else 1)


def _query_round(trial: _Trial, server: DeviceServer) -> dict:
    """The three queries of one round on ``server``, each timed and checked against numpy."""
    client, lay, slots, rule, p, K = trial.client, trial.layout, trial.slots, trial.rule, trial.p, trial.K
    want_ids, numpy_count = _identified(p[:K]), float(p.sum())
    numpy_slots = p.reshape(lay.groups, slots).sum(0)
    in_band = bool((np.abs(trial.scores - chebyshev.DELTA) < rule.margin).any())
    truth = bool((trial.scores >= chebyshev.DELTA).any())
    server.timer.seconds.clear()
    t = time.perf_counter()
    answer = server.membership(trial.query)
    membership_s = time.perf_counter() - t
    phases, m_tr, m_counts = dict(server.timer.seconds), dict(server.transfers), dict(server.counts)
    t = time.perf_counter()
    slot_answer = server.membership(trial.query, aggregate="slots")
    slots_s, s_tr, s_rot = time.perf_counter() - t, dict(server.transfers), server.counts["aggregation_rotations"]
    t = time.perf_counter()
    ids = client.indicators(server.identify(trial.query), lay)
    identify_s = time.perf_counter() - t
    count, slot_values = client.count(answer, "sum"), client.slot_values(slot_answer)[:slots]
    got_ids, slot_member, paper = _identified(ids), rule.member(slot_values), paper_member(count)
    member = slot_member if rule.sound else bool(got_ids)
    member_numpy = rule.member(numpy_slots) if rule.sound else bool(want_ids)
    correct = (got_ids == want_ids and member == member_numpy and slot_member == rule.member(numpy_slots)
               and paper == paper_member(numpy_count) and (in_band or member == truth))
    return dict(
        membership_s=membership_s, membership_slots_s=slots_s, identify_s=identify_s,
        **{f"phase_{k}_s": s for k, s in phases.items()},
        **{f"membership_{k}": x for k, x in m_tr.items()}, **{f"membership_slots_{k}": x for k, x in s_tr.items()},
        membership_slots_aggregation_rotations=s_rot, **{f"identify_{k}": x for k, x in server.transfers.items()},
        **m_counts, slot_sound=rule.sound, member_rule="slot rule" if rule.sound else "identification",
        numpy_count=numpy_count, member_numpy=member_numpy, truth_member=truth, in_band=in_band, count=count,
        count_error=abs(count - numpy_count), slot_error=float(np.abs(slot_values - numpy_slots).max()),
        ids_error=float(np.abs(ids - p[:K]).max()), member=member, slot_member=slot_member, paper_member=paper,
        correct=bool(correct), planted_found=bool(set(trial.data.matches.tolist()) <= set(got_ids)))


def measure(config: dict, on_row=None) -> list[dict]:
    """Tables 7-8's rows at one K: every variant of ``config['variants']`` set up, then ``warmup`` + ``reps``
    interleaved rounds of three queries each (membership as the paper's, ``aggregate="sum"``: ``membership_s``,
    its transfers and phases Table 2's; membership for the slot rule, ``"slots"``: ``membership_slots_s``;
    identification: ``identify_s``). One row per variant and kept round (``on_row(row)`` as each finishes); a
    variant whose memory estimate does not fit the device gets one row with ``status`` 'refused: ...' (the
    paper's out-of-memory cells).

    ``config``: params, K, Km, l (required); kappa (8), reps (1), warmup (0), seed (0), insecure, variants (all),
    n1, margin (the slot rule's, 0.05), workers, streams, host_workers, tmp (the folder enrolled into; a
    temporary one by default). Setup columns: ``keygen_s`` (the client's secret, public and relinearization
    keys), ``keys_s`` (the variant's rotation keys and its public context), ``enroll_s``, ``setup_s`` (the
    server's: keys and diagonals to the device, TBS's pre-rotation; ``setup_*_s`` its phases), ``rtt_s`` (their
    sum), ``disk_bytes`` + ``key_bytes`` (the database and the public context); device memory measured at
    every allocation (``device_setup_peak_bytes``, ``device_resident_bytes``, ``device_online_peak_bytes``:
    None on the CPU) beside the estimate; ``rss_setup_peak_bytes`` (the process's peak during the variant's
    setup; the variants share the process) and ``rss_peak_bytes``. Membership is decided (``member``,
    ``member_rule``) by :class:`~hepkg.facesearch.decision.SlotRule` (GPU path) on the "slots" answer where it is
    sound, else from the identification answer; ``correct`` says every answer agreed with numpy."""
    from hepkg.bench.memory import peak_rss

    variants = tuple(config.get("variants", VARIANTS))
    reps, warmup = config.get("reps", 1), config.get("warmup", 0)
    xp_name = os.environ.get("HEPKG_RNS_XP", "numpy")
    trial = _Trial(config)
    base, rows = _base(trial, xp_name), []
    tmp = _workdir(config)
    try:
        servers = _setup(trial, variants, pathlib.Path(tmp))
        for v, (server, info) in servers.items():
            if server is None:
                row = base | info | dict(variant=v, approach=PAPER_NAME[v])
                rows.append(row)
                on_row and on_row(row)
        live = {v: s for v, (s, _) in servers.items() if s is not None}
        for round_ in range(warmup + reps):
            for v, server in live.items():
                result = _query_round(trial, server)
                if round_ < warmup:
                    continue
                info = servers[v][1]
                row = base | info | result | dict(
                    variant=v, approach=PAPER_NAME[v], rep=round_ - warmup, setup_s=server.stats["setup_s"],
                    rtt_s=trial.keygen_s + info["keys_s"] + info["enroll_s"] + server.stats["setup_s"],
                    **{k: x for k, x in server.stats.items() if k != "setup_s"},
                    estimate_online_bytes=server.estimate["online"], estimate_setup_bytes=server.estimate["setup"],
                    estimate_load_bytes=server.estimate["load"],
                    device_setup_peak_bytes=server.memory["setup_peak"],
                    device_resident_bytes=server.memory["resident"],
                    device_online_peak_bytes=server.memory["online_peak"], rss_peak_bytes=peak_rss())
                rows.append(row)
                on_row and on_row(row)
        for server in live.values():
            server.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        trial.close()
    return rows


def stream_settings(S: int) -> list[int]:
    """The stream counts the overlap is measured at: 1, S/2, S (Eq. 6's), 2S."""
    return sorted({1, max(1, S // 2), S, 2 * S})


def measure_streams(config: dict, on_row=None) -> list[dict]:
    """The stream pool's overlap on BSGS-GPU-TBS: one query's similarity and comparison over 2S groups (the
    database's G groups repeated: the work per group is the same, so concurrency, not the database, is what
    varies) with 1, S/2, S and 2S in flight, S from Eq. 6 (or ``config['streams']``), interleaved after
    ``warmup`` rounds. Each setting's results must equal the single stream's bit for bit, and the real groups'
    must decrypt to numpy's; device memory is measured beside the estimate at that many in flight.
    ``config``: as :func:`measure` (the variant is TBS)."""
    xp_name = os.environ.get("HEPKG_RNS_XP", "numpy")
    reps, warmup = config.get("reps", 1), config.get("warmup", 0)
    trial = _Trial(config)
    base, rows = _base(trial, xp_name), []
    tmp = _workdir(config)
    try:
        server, info = _setup(trial, ("bsgs-tbs",), pathlib.Path(tmp))["bsgs-tbs"]
        if server is None:
            return [base | info | dict(unit="streams", variant="bsgs-tbs", approach=PAPER_NAME["bsgs-tbs"])]
        S, G = server.streams, trial.layout.groups
        groups = [k % G for k in range(2 * S)]
        reference = None
        for round_ in range(warmup + reps):
            for s in stream_settings(S):
                server.timer.seconds.clear()
                with window(server.xp) as mem:
                    out = server.compared(trial.query, groups=groups, streams=s)
                seconds = server.timer.seconds["similarity_comparison"]
                if reference is None:       # the first run (one stream): its real groups against numpy
                    values = trial.client.indicators([server.ctx.serialize(ct) for ct in out[:G]], trial.layout)
                    reference = (out, float(np.abs(values - trial.p[:trial.K]).max()))
                equal = all(bool((a.raw.data == b.raw.data).all()) for a, b in zip(out, reference[0]))
                if round_ < warmup:
                    continue
                estimate = memory_estimate("bsgs-tbs", trial.layout, trial.n1, server.size, min(s, len(groups)))
                row = base | dict(
                    unit="streams", variant="bsgs-tbs", approach=PAPER_NAME["bsgs-tbs"], rep=round_ - warmup, S_eq6=S,
                    streams=s, virtual_groups=len(groups), seconds=seconds, seconds_per_group=seconds / len(groups),
                    baby_steps_s=server.timer.seconds["baby_steps"], equal_to_one_stream=equal,
                    ids_error=reference[1], correct=bool(equal and reference[1] < 1e-3),
                    device_peak_bytes=mem and server.memory["resident"] + mem.rise,
                    estimate_online_bytes=estimate["online"])
                rows.append(row)
                on_row and on_row(row)
        server.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        trial.close()
    return rows
