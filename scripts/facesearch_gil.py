"""Which steps of face search's similarity phase run at once from two Python threads on the bench's
openfhe-python (docs/benchmarks.md): each step over the same ciphertexts, by one thread, then split between two
(the lanes of :func:`hepkg.facesearch.similarity._dot`), at one and at two OpenMP threads, through the bindings'
calls and through hepkg_openfhe_encode's, which release the interpreter lock (``call_path``), interleaved.

    source bench_env.sh      # the fasthe bench's builds (make bench's)
    python scripts/facesearch_gil.py ROUNDS [CIPHERTEXTS] > gil.jsonl

Steps, per ciphertext, as a query's lanes run them: ``read`` (the file's bytes), ``authenticate`` (the session
MAC over them), ``parse`` (OpenFHE's deserialization), ``multiply`` (by a query ciphertext, no
relinearization) and ``add`` (into a running sum); ``lane`` is the five together through ``_dot`` itself, and
from two Python threads also with each lane's OpenMP teams pinned to one thread (:data:`PINNED`: at two OpenMP
threads, two lanes otherwise start two teams of two on the two cores).
Each line: one step, call path, OpenMP threads, Python threads, seconds for all the ciphertexts. A step that
holds the interpreter lock takes as long from two Python threads as from one.
"""
import ctypes
import json
import pathlib
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from hepkg.bench.child import in_child
from hepkg.bench.versus import find_checkout
from hepkg.facesearch import fasthe as F
from hepkg.he import envelope

#: the lane step with each lane's OpenMP teams pinned to one thread (:func:`pin_openmp`), two Python threads only
PINNED = "lane, OpenMP 1 per lane"


def _split_time(fn, items, threads: int) -> float:
    """Seconds to run ``fn`` over ``items``, the items cut into ``threads`` contiguous runs mapped by a pool."""
    runs = [items[i * len(items) // threads:(i + 1) * len(items) // threads] for i in range(threads)]
    with ThreadPoolExecutor(threads) as pool:
        start = time.perf_counter()
        list(pool.map(lambda run: [fn(x) for x in run], runs))
        return time.perf_counter() - start


def pin_openmp() -> None:
    """This thread's OpenMP teams at one thread (libgomp's per-thread ``omp_set_num_threads``, the library
    OpenFHE links here): each lane then runs its OpenFHE calls alone, not as the master of a team of its own."""
    ctypes.CDLL("libgomp.so.1").omp_set_num_threads(1)


def _load(ctx, path: pathlib.Path):
    """A diagonal as a lane loads it: the file read, authenticated and parsed."""
    return ctx.deserialize(path.read_bytes())


def measure(config: dict) -> list[dict]:
    """The steps' times at this child's OpenMP threads, one and two Python threads, both call paths, ``rounds``
    times, interleaved."""
    from hepkg import he
    from hepkg.facesearch import similarity
    from hepkg.he.backends import openfhe as backend

    paths_of_calls = {"lock held (bindings)": None, backend.CALL_PATH: backend._UNLOCKED}
    rng, rows = np.random.default_rng(0), []
    with he.context("openfhe", F.PARAMS[8], rotations=[1], policy="exact") as ctx, \
            tempfile.TemporaryDirectory(prefix="hepkg-gil-") as tmp:
        qv, dvs = rng.uniform(-1, 1, 512), rng.uniform(-1, 1, (config["ciphertexts"], 512))
        q, paths = ctx.encrypt(qv), [pathlib.Path(tmp) / f"d{i:04d}.ct" for i in range(len(dvs))]
        for path, dv in zip(paths, dvs):
            path.write_bytes(ctx.serialize(ctx.encrypt(dv)))
        blobs = [p.read_bytes() for p in paths]
        payloads = [envelope.unpack(b, "ciphertext", key=ctx._session_key) for b in blobs]
        cts = [ctx.deserialize(b) for b in blobs]
        prods = [ctx.mul(q, c, relin=False) for c in cts]
        steps = dict(read=(lambda p: p.read_bytes(), paths),
                     authenticate=(lambda b: envelope.unpack(b, "ciphertext", key=ctx._session_key), blobs),
                     parse=(lambda mp: ctx._parse(mp[1], mp[0]), payloads),
                     multiply=(lambda c: ctx.mul(q, c, relin=False), cts),
                     add=(lambda p: ctx.add(p, p), prods))
        for r in range(config["rounds"]):
            for call_path, unlocked in (paths_of_calls.items() if r % 2 else reversed(paths_of_calls.items())):
                backend._UNLOCKED = unlocked
                for threads in ((1, 2) if r % 2 else (2, 1)):
                    for step, (fn, items) in steps.items():
                        rows.append(dict(step=step, seconds=_split_time(fn, items, threads), python_threads=threads))
                    for step, init in [("lane", None)] + [(PINNED, pin_openmp)] * (threads > 1):
                        with ThreadPoolExecutor(threads, initializer=init) as pool:
                            list(pool.map(lambda _: None, range(threads)))  # the lanes' threads started first
                            start = time.perf_counter()
                            dot = similarity._dot(ctx, [(q, partial(_load, ctx, p)) for p in paths], lanes=threads,
                                                  mapper=pool.map)
                            rows.append(dict(step=step, seconds=time.perf_counter() - start, python_threads=threads))
                        got = ctx.decrypt(ctx.rescale(ctx.relinearize(dot)), 512)
                        if not np.allclose(got, (dvs * qv).sum(axis=0), atol=1e-3):
                            raise AssertionError(f"{call_path}, {step}: the lanes' sum is not numpy's")
                    for row in rows[-6 - (threads > 1):]:
                        row.update(round=r, call_path=call_path)
    return rows


def main(rounds: int, ciphertexts: int = 64) -> None:
    authors = F.prepare(find_checkout(None, F.ENV, F.REPO, F.FILES))
    for omp in (1, 2):
        cfg = dict(rounds=rounds, ciphertexts=ciphertexts)
        for row in in_child(measure, cfg, int(ciphertexts * 6e6 * 3 + 2e9), omp, python_path=authors.python):
            print(json.dumps(row | dict(omp_threads=omp, ciphertexts=ciphertexts, params=F.PARAMS[8],
                                        build=authors.hepkg_build)), flush=True)


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
