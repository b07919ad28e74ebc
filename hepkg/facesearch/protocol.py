"""The three parties of encrypted 1:many face search (HyDia's protocol, face-search paper Fig. 2).

- :class:`Enroller` (public context): normalizes the database, packs it into diagonals and
  writes one serialized ciphertext per diagonal per group to disk (Algorithm 5); the folder
  appears complete or not at all. Each diagonal's file authenticates (session key) its place and
  the manifest, so swapped, moved or re-labelled files are refused when read.
- :class:`Client` (secret context): encrypts the normalized, replicated query (its dimension
  authenticated, checked against the database's); decrypts the membership count or the
  per-group match indicators.
- :class:`Server` (evaluation keys only; refuses a context that can decrypt): loads the
  diagonals group by group, computes the similarities, compares them with the threshold
  and aggregates (Algorithm 7, membership) or not (Algorithm 8, identification).

Messages between parties are bytes (serialized ciphertexts); the server records the time of
each phase in :attr:`Server.timings`. ``Server(workers=w)`` processes w groups at once in Python
threads (the rns engine and hepkg_openfhe_encode's OpenFHE calls release the interpreter lock; openfhe-python's
own bindings hold it), each with its own accumulator: memory beyond the rotated-query
table stays O(w) ciphertexts, as the paper's memory-aware multi-threading (Sec. 4.2); phase times
are then thread-seconds. ``Server(lanes=n)`` cuts each group's products into n lanes run at once in threads,
each reading, authenticating and parsing its own diagonals into its own accumulator, added as a tree at the end
(Algorithm 1's per-thread accumulators; the authors' HyDia reads and multiplies in a parallel loop likewise;
on OpenFHE the lanes run at once where the parsing and products release the lock: docs/benchmarks.md).
``bsgs-streamed`` streams its table
(:func:`~hepkg.facesearch.similarity.streamed_scores`).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from hepkg import atomic
from hepkg.he import CorruptedData, envelope, require_public
from hepkg.he.envelope import is_hex, is_int
from hepkg.linalg.rotsum import rotate_and_sum, rotation_steps_for_sum

from . import chebyshev, similarity
from .packing import Layout, bsgs_shape, group_diagonals, normalize, replicate_query, scores_from_slots

__all__ = ["EncryptedDatabase", "Enroller", "Client", "Server", "key_steps", "sum_weight", "padding_count",
           "membership_answer", "AGGREGATES"]

_MANIFEST = "manifest.json"
#: How membership aggregates the groups' comparison ciphertexts (see :meth:`Server.membership`); the answer
#: names it (:func:`membership_answer`), and the client refuses an answer aggregated otherwise than it decides.
AGGREGATES = ("count", "sum", "slots")
_ANSWER_FIELDS = {"aggregate": lambda v: v in AGGREGATES, "K": is_int(1), "slots": is_int(1), "groups": is_int(1)}
#: an enrollment's folder while it is written, or the database it replaced while that is removed (its pid)
_ENROLLING = re.compile(r"\..+\.enrolling-(\d+)(\.old)?")
_MANIFEST_FIELDS = {"K": is_int(1), "l": is_int(1), "slots": is_int(1), "key_id": is_hex(16),
                    "prerotate_n1": lambda v: v is None or is_int(1)(v), "enrollment": is_hex(8)}


def _manifest(layout: Layout, prerotate_n1: int | None, key_id: str, enrollment: str) -> dict:
    """The manifest's fields, which every diagonal's authenticated metadata repeats (``enrollment``: a
    random id, so that no file of another enrollment fits)."""
    return dict(K=layout.K, l=layout.l, slots=layout.slots, prerotate_n1=prerotate_n1, key_id=key_id,
                enrollment=enrollment)


def _diagonal_meta(manifest: dict, group: int, index: int) -> dict:
    return dict(manifest, group=group, index=index)


def sum_weight(slots: int) -> float:
    """The weight of each comparison in the paper's membership sum: 1 / slots (a power of two, exact). The sum
    of G x slots comparisons is then bounded by G times the comparison's maximum (about 1.04), which the last
    level holds (2^14 at the paper's sets), where the unweighted sum's bound (G x 2^14 x 1.04) never fits and
    is refused (:class:`hepkg.he.ScaleOverflow`); a count of 1024 matches wrapped to 0 before bounds were
    tracked. The client multiplies by slots."""
    return 1.0 / slots


def padding_count(layout: Layout, kappa: int, *, delta: float = chebyshev.DELTA, path: str = "cpu",
                  weight: float = 1.0) -> float:
    """What the padding adds to the paper's membership sum: its G x slots - K empty slots (score 0, public)
    each give the comparison's p(0) (times ``weight``). At kappa 8, p(0) = 1.7e-4: a database of K = 1024 at
    2^14 slots sums 2.6 over its padding alone, a false positive of the paper's rule (count >= 0.5)."""
    p0 = float(chebyshev.compare_numpy(np.zeros(1), kappa, delta=delta, path=path, weight=weight)[0])
    return (layout.groups * layout.slots - layout.K) * p0


def membership_answer(ctx, ct, aggregate: str, layout: Layout) -> bytes:
    """A membership answer: the ciphertext with how it was aggregated and the database's shape, authenticated
    (session key), so that a client deciding by another aggregation refuses it (:meth:`Client.count`,
    :meth:`Client.slot_values`)."""
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    return envelope.seal("face-membership", dict(aggregate=aggregate, K=layout.K, slots=layout.slots,
                                                 groups=layout.groups), ctx.serialize(ct), key=ctx.session_key)


def key_steps(method: str, l: int, slots: int, n1: int | None = None, membership: bool = True) -> list[int]:
    """Rotation keys the client generates: the method's steps, plus the power-of-two steps of the
    membership's sum over all slots (OpenFHE's EvalSum keys), plus the keys the authors' client generates
    unused (:func:`~hepkg.facesearch.similarity.extra_key_steps`), as left rotations mod ``slots`` (one key per
    automorphism): at l = 512, 2^14 slots, the authors' HyDia 529 (their 530 rotation factors include +8192
    and -8192, one automorphism), hepkg's lean HyDia 511 + 5, BSGS-Diagonal 44 + 9."""
    steps = set(similarity.rotation_steps(method, l, n1)) | set(similarity.extra_key_steps(method, l, slots))
    if membership:
        steps |= set(rotation_steps_for_sum(slots))
    return sorted({s % slots for s in steps} - {0})


class EncryptedDatabase:
    """An enrolled database on disk: ``manifest.json`` and ``g<k>/d<i>.ct`` per group k, diagonal i."""

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)
        path = self.folder / _MANIFEST
        if not path.is_file():
            raise FileNotFoundError(f"{self.folder}: no enrolled database here (no {_MANIFEST})")
        try:
            meta = json.loads(path.read_text())
        except (UnicodeDecodeError, ValueError) as exc:
            raise CorruptedData(f"{path}: not a face-search manifest ({exc})") from None
        envelope.require(meta if isinstance(meta, dict) else {}, _MANIFEST_FIELDS, f"{path}")
        self.layout = Layout(meta["K"], meta["l"], meta["slots"])
        self.prerotate_n1 = meta["prerotate_n1"]
        self.key_id = meta["key_id"]
        self.manifest = _manifest(self.layout, self.prerotate_n1, self.key_id, meta["enrollment"])
        self._check_complete()

    def _check_complete(self) -> None:
        """CorruptedData unless every diagonal file the manifest implies is there (a copy or a removal that was
        interrupted leaves a database with files missing)."""
        missing = []
        for k in range(self.layout.groups):
            group = self.path(k, 0).parent
            present = set(os.listdir(group)) if group.is_dir() else set()
            missing += [self.path(k, i) for i in range(self.layout.l) if self.path(k, i).name not in present]
        if missing:
            raise CorruptedData(f"{self.folder}: {len(missing)} of the {self.layout.groups * self.layout.l} diagonal "
                                f"files are missing (first {missing[0].relative_to(self.folder)}): enroll it again")

    def path(self, group: int, diagonal: int) -> pathlib.Path:
        return self.folder / f"g{group:05d}" / f"d{diagonal:04d}.ct"

    def diagonal(self, ctx, k: int, i: int):
        """Diagonal ciphertext ``i`` of group ``k``, read from disk; CorruptedData unless the file's
        authenticated metadata names this place in a database with this manifest. Read with ``guard=True`` (a forked
        child first where the context's ciphertexts need one, unless :meth:`vet` has parsed this file so)."""
        return ctx.deserialize(self._ciphertext(ctx, k, i), guard=True)

    def vet(self, ctx) -> None:
        """Parse every diagonal in one forked child (:meth:`hepkg.he.Context.vet`; only where the context's
        ciphertexts need the guard, ``fragile_ciphertexts``), so that queries read them without a child each."""
        where = [(k, i) for k in range(self.layout.groups) for i in range(self.layout.l)]
        ctx.vet(lambda: (self._ciphertext(ctx, k, i) for k, i in where), what=f"the database at {self.folder}",
                sizes=[self.path(k, i).stat().st_size for k, i in where] if ctx.fragile_ciphertexts else ())

    def _ciphertext(self, ctx, k: int, i: int) -> memoryview:
        """The serialized ciphertext in diagonal ``i`` of group ``k``'s file (see :meth:`diagonal`)."""
        if not (0 <= k < self.layout.groups and 0 <= i < self.layout.l):
            raise IndexError(f"no diagonal {i} of group {k}: the database has {self.layout.groups} groups of "
                             f"l={self.layout.l} diagonals")
        path = self.path(k, i)
        if not path.is_file():
            raise FileNotFoundError(f"{self.folder}: diagonal {i} of group {k} is missing ({path.name})")
        try:
            meta, ct = envelope.unseal(path.read_bytes(), "face-diagonal", key=ctx.session_key)
        except CorruptedData as exc:
            raise CorruptedData(f"{path}: {exc}") from None
        want = _diagonal_meta(self.manifest, k, i) | dict(kind="face-diagonal")
        wrong = [f"{f}={meta.get(f)!r} (expected {v!r})" for f, v in want.items() if meta.get(f) != v]
        if wrong or meta.keys() != want.keys():
            raise CorruptedData(f"{path} is not diagonal {i} of group {k} of the database its manifest describes: "
                                f"{', '.join(wrong) or 'other fields'} (files swapped, moved or the manifest edited?)")
        return ct

    def group(self, ctx, k: int) -> "GroupDiagonals":
        """The l diagonal ciphertexts of group ``k`` as a sequence, each read from disk when indexed."""
        return GroupDiagonals(self, ctx, k)

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.rglob("*.ct"))

    def query(self, ctx, message) -> memoryview:
        """The query ciphertext of a :meth:`Client.query` message; ValueError unless the query has this
        database's dimension l."""
        meta, ct = envelope.unseal(message, "face-query", key=ctx.session_key)
        envelope.require(meta, {"l": is_int(1)}, "face-search query")
        if meta["l"] != self.layout.l:
            raise ValueError(f"the query has {meta['l']} dimensions; the database's vectors have l={self.layout.l}")
        return ct

    def method_fits(self, method: str, n1: int | None) -> None:
        """ValueError unless the stored diagonals suit ``method`` (textbook BSGS needs them pre-rotated by n1)."""
        want = bsgs_shape(self.layout.l, n1)[0] if method == "bsgs-textbook" else None
        if want != self.prerotate_n1:
            raise ValueError(f"the database was enrolled {'pre-rotated by n1=' + str(self.prerotate_n1) if self.prerotate_n1 else 'without pre-rotation'}"
                             f"; {method} with n1={n1} needs {'pre-rotation by n1=' + str(want) if want else 'plain diagonals'}")


class GroupDiagonals(Sequence):
    """The diagonals of one group of an :class:`EncryptedDatabase`, item i read, authenticated and parsed when
    indexed (:meth:`EncryptedDatabase.diagonal`): safe from several threads at once."""

    def __init__(self, db: EncryptedDatabase, ctx, k: int):
        self.db, self.ctx, self.k = db, ctx, k

    def __len__(self) -> int:
        return self.db.layout.l

    def __getitem__(self, i: int):
        if not isinstance(i, int):
            raise TypeError(f"diagonals are indexed by int, not {type(i).__name__}")
        return self.db.diagonal(self.ctx, self.k, i)


class Enroller:
    """Encrypts a database under the client's public key (a public context suffices)."""

    def __init__(self, ctx):
        self.ctx = require_public(ctx, "the face-search enroller")

    def enroll(self, db, folder, *, prerotate_n1: int | None = None, overwrite: bool = False,
               progress: bool = False, workers: int = 1) -> EncryptedDatabase:
        """Normalize ``db`` (K x l), pack, encrypt and write it to ``folder``; ``prerotate_n1`` for textbook BSGS;
        ``workers`` threads encrypt and write the diagonals (the rns engine and the writes release the GIL).

        Every argument is checked before anything is encrypted. The folder is written as
        ``.<name>.enrolling-<pid>`` beside it, then put in place at once (:func:`hepkg.atomic.replace_folder`: with
        ``overwrite``, a reader sees the old database or the new one, whole); such folders left by enrollments that
        were killed (their pid gone) are removed first."""
        folder = pathlib.Path(folder)
        if folder.exists() and not overwrite:
            raise FileExistsError(f"{folder} exists; pass overwrite=True to replace it")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        db = normalize(db)
        if db.ndim != 2:
            raise ValueError(f"the database must be a K x l matrix, got shape {db.shape}")
        layout = Layout(db.shape[0], db.shape[1], self.ctx.params.n // 2)
        if prerotate_n1 is not None and not _MANIFEST_FIELDS["prerotate_n1"](prerotate_n1):
            raise ValueError(f"prerotate_n1 must be None or a positive integer, got {prerotate_n1!r}")
        if prerotate_n1 is not None:
            bsgs_shape(layout.l, prerotate_n1)    # a baby step n1 in [1, l]
        manifest = _manifest(layout, prerotate_n1, self.ctx.key_id, os.urandom(8).hex())
        atomic.clean_stale(folder.parent, _ENROLLING)
        tmp = folder.with_name(f".{folder.name}.enrolling-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        from tqdm.auto import tqdm

        def write(k: int, i: int, row: np.ndarray) -> None:
            ct = self.ctx.serialize(self.ctx.encrypt(row))
            (tmp / f"g{k:05d}" / f"d{i:04d}.ct").write_bytes(envelope.seal(
                "face-diagonal", _diagonal_meta(manifest, k, i), ct, key=self.ctx.session_key))
        try:
            with tqdm(total=layout.groups * layout.l, desc="enroll", disable=not progress) as bar, \
                    ThreadPoolExecutor(workers) as pool:
                for k in range(layout.groups):
                    (tmp / f"g{k:05d}").mkdir(parents=True)
                    rows = group_diagonals(db, layout, k, prerotate_n1=prerotate_n1)
                    for _ in pool.map(write, [k] * layout.l, range(layout.l), rows):
                        bar.update()
            atomic.write_text(tmp / _MANIFEST, json.dumps(manifest))
            atomic.replace_folder(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return EncryptedDatabase(folder)


class Client:
    """Holds the secret key: encrypts queries, decrypts answers."""

    def __init__(self, ctx):
        if not ctx.has_secret:
            raise ValueError("the client decrypts: it needs the secret context")
        self.ctx = ctx

    def query(self, q) -> bytes:
        """The encrypted query, its dimension authenticated (the server refuses another l than the database's)."""
        q = normalize(q)
        if q.ndim != 1:
            raise ValueError(f"a query is one vector, got shape {q.shape}")
        ct = self.ctx.serialize(self.ctx.encrypt(replicate_query(q, self.ctx.params.n // 2)))
        return envelope.seal("face-query", dict(l=len(q)), ct, key=self.ctx.session_key)

    def _answer(self, answer: bytes, want: tuple[str, ...]):
        """The answer's metadata and ciphertext; ValueError unless it was aggregated as one of ``want``."""
        meta, ct = envelope.unseal(answer, "face-membership", key=self.ctx.session_key)
        envelope.require(meta, _ANSWER_FIELDS, "face-search membership answer")
        if meta["aggregate"] not in want:
            raise ValueError(f"the membership answer was aggregated by {meta['aggregate']!r}; this decision needs "
                             f"{' or '.join(map(repr, want))} (Server.membership(..., aggregate=...))")
        if meta["slots"] != self.ctx.params.n // 2:
            raise ValueError(f"the answer has {meta['slots']} slots; this context has {self.ctx.params.n // 2}")
        return meta, self.ctx.deserialize(ct, guard=True)

    def count(self, answer: bytes, aggregate: str = "count") -> float:
        """The count of a membership answer aggregated by ``aggregate`` (refused otherwise): ``"count"``, the
        matches' comparison summed over the K entries (the padding's public contribution removed by the
        server); ``"sum"``, the paper's sum over every slot of every group, padding included. Slot 0 holds the
        sum weighted by 1 / slots (:func:`sum_weight`); the count is that times the slots. Decide with
        :func:`~hepkg.facesearch.decision.paper_member` (count >= 0.5)."""
        if aggregate not in ("count", "sum"):
            raise ValueError(f"a count is aggregated by 'count' or 'sum', not {aggregate!r}")
        meta, ct = self._answer(answer, (aggregate,))
        return float(self.ctx.decrypt(ct, 1).real[0]) * meta["slots"]

    def slot_values(self, answer: bytes) -> np.ndarray:
        """A membership answer aggregated by ``"slots"`` (refused otherwise): per slot, the comparison summed
        over the groups (decide with :class:`~hepkg.facesearch.decision.SlotRule`)."""
        return self.ctx.decrypt(self._answer(answer, ("slots",))[1]).real

    def indicators(self, answers: list[bytes], layout: Layout) -> np.ndarray:
        """The K comparison values (about 1 for a match, 0 otherwise) of an identification answer."""
        return scores_from_slots([self.ctx.decrypt(self.ctx.deserialize(a, guard=True)).real for a in answers],
                                 layout)


class Server:
    """Evaluates queries against an enrolled database with evaluation keys only."""

    def __init__(self, ctx, database: EncryptedDatabase, workers: int = 1, lanes: int = 1):
        self.ctx = require_public(ctx, "face-search server")
        self.db = database
        for name, value in (("workers", workers), ("lanes", lanes)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.workers, self.lanes = workers, lanes
        self.timings: Counter = Counter()
        self._lock = threading.Lock()
        database.vet(self.ctx)  # where ciphertexts need the guard: every diagonal parsed once in one child

    @contextmanager
    def _phase(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self.timings[name] += time.perf_counter() - start

    def compared(self, query: bytes, method: str, kappa: int | None, *, n1: int | None = None,
                 delta: float = chebyshev.DELTA, path: str = "cpu", weight: float = 1.0):
        """Per group, the comparison ciphertext (the similarity itself if ``kappa`` is None), its output times
        ``weight`` (folded into the last coefficients: no level)."""
        query = self.db.query(self.ctx, query)
        self.db.method_fits(method, n1)
        ctx, lay = self.ctx, self.db.layout
        with self._phase("upload"):
            q = ctx.deserialize(query, guard=True)

        def compare(scores):
            if kappa is None:
                return scores
            with self._phase("comparison"):
                return chebyshev.compare(ctx, scores, kappa, delta=delta, path=path, weight=weight)

        with ThreadPoolExecutor(self.workers) as pool, ThreadPoolExecutor(self.workers * self.lanes) as lane_pool:
            mapper = map if self.workers == 1 or lay.groups == 1 else pool.map
            lane_map = lane_pool.map if self.lanes > 1 else map
            if similarity.streams(method):
                scores = similarity.streamed_scores(ctx, q, lambda k, i: self.db.diagonal(ctx, k, i), lay.groups,
                                                    lay.l, n1, clock=self._phase, mapper=mapper, lanes=self.lanes,
                                                    lane_mapper=lane_map)
                yield from self._in_flight(mapper, compare, scores)
                return
            with self._phase("rotations"):
                table = similarity.query_table(ctx, q, method, lay.l, n1)

            def one(k: int):
                with self._phase("similarity"):  # diagonals read from disk by the lanes (time included)
                    scores = similarity.group_scores(ctx, table, self.db.group(ctx, k), method, lay.l, n1,
                                                     lanes=self.lanes, mapper=lane_map)
                return compare(scores)  # timed apart, as the streamed method's
            yield from self._in_flight(mapper, one, range(lay.groups))

    def _in_flight(self, mapper, fn, items):
        """``fn`` over ``items`` in order, ``workers`` at a time (memory: O(workers) results in flight)."""
        items = list(items)
        for start in range(0, len(items), self.workers):
            yield from mapper(fn, items[start:start + self.workers])

    def membership(self, query: bytes, method: str, kappa: int, *, aggregate: str = "count", **kw) -> bytes:
        """Algorithm 7: the comparison added over the groups, then summed over every slot by rotate-and-sum, the
        count in every slot. ``aggregate="count"`` (hepkg's): less the padding's public contribution
        (:func:`padding_count`, one scalar subtraction), so the count is the K entries' alone and the paper's
        rule (count >= 0.5) decides it; the client learns that one number, as from the paper's answer.
        ``"sum"``: the paper's, padding included. ``"slots"``: the groups' slot-wise sum alone, for
        :class:`~hepkg.facesearch.decision.SlotRule` (no rotation; it shows the client every slot's sum over the
        groups). The sums' comparisons are weighted by :func:`sum_weight` (free), so that the worst case (every
        entry a match) fits the last level's capacity; :meth:`Client.count` scales it back. The answer names
        its aggregation (:func:`membership_answer`)."""
        if aggregate not in AGGREGATES:
            raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
        chebyshev.check_kappa(kappa, kw.get("path", "cpu"))
        lay = self.db.layout
        weight = 1.0 if aggregate == "slots" else sum_weight(lay.slots)
        total = self._fold(self.compared(query, method, kappa, weight=weight, **kw))
        if aggregate != "slots":
            with self._phase("aggregation"):
                total = rotate_and_sum(self.ctx, total, lay.slots)
                if aggregate == "count":
                    total = self.ctx.add(total, -padding_count(lay, kappa, delta=kw.get("delta", chebyshev.DELTA),
                                                               path=kw.get("path", "cpu"), weight=weight))
        with self._phase("download"):
            return membership_answer(self.ctx, total, aggregate, lay)

    def _fold(self, cts):
        """The slot-wise sum of the groups' comparison ciphertexts, added as they arrive."""
        total = None
        for ct in cts:
            with self._phase("aggregation"):
                total = ct if total is None else self.ctx.add(total, ct)
        return total

    def fold(self, answers: list[bytes]) -> bytes:
        """The ``aggregate="slots"`` membership answer from an identification's answers (the same G comparison
        ciphertexts added: a membership decision without a second query)."""
        if len(answers) != self.db.layout.groups:
            raise ValueError(f"expected the {self.db.layout.groups} answers of one identification, got {len(answers)}")
        total = self._fold(self.ctx.deserialize(a, guard=True) for a in answers)
        with self._phase("download"):
            return membership_answer(self.ctx, total, "slots", self.db.layout)

    def identify(self, query: bytes, method: str, kappa: int, **kw) -> list[bytes]:
        """Algorithm 8: one comparison ciphertext per group."""
        chebyshev.check_kappa(kappa, kw.get("path", "cpu"))
        out = []
        for ct in self.compared(query, method, kappa, **kw):
            with self._phase("download"):
                out.append(self.ctx.serialize(ct))
        return out
