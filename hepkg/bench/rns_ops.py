"""Microbenchmarks of hepkg's RNS-CKKS engine beside OpenFHE: NTT, product, rotation, hoisted rotation.

``python -m hepkg.bench.rns_ops [--n 15 16] [--depth 9 11] [--reps 5] [--paths numpy numba cupy] [--threads 1 2]
[--save [--tag T]]`` times, for each ring degree 2^n and depth, the engine's own full-size set
(``rns-ckks-<N>-d<depth>``) and hepkg's OpenFHE set of the same shape (``ckks-<N>-d<depth>``; at N = 2^16 the
2^15 set's moduli, see :func:`engine_sets`), every side in one run:

- the engine on each kernel path (:mod:`hepkg.rns.device`): ``numpy`` (the reference, one thread), ``numba``
  (the compiled CPU kernels, at each thread count of ``--threads``) and ``cuda`` (CuPy, where a GPU is visible);
- OpenFHE at each thread count, each in a process started with that OMP_NUM_THREADS (OpenFHE fixes its threads
  when it loads); where OpenFHE is not installed (a GPU machine, say) its rows say so.

Each round times every side's ops in turn (one warm-up round, then ``--reps``), each call timed where it runs.

The ops: ``ntt``: forward NTT of one fresh ciphertext, both polynomials, every limb (OpenFHE's python
bindings do not expose its NTT: no OpenFHE row); ``mul_relin_rescale``: ciphertext x ciphertext,
relinearization, rescale (the engine folds the rescale into the relinearization's ModDown); ``rotate``: one rotation (one key switch); ``hoist_step``: per extra step of a
hoisted rotation, (t(k steps) - t(1 step)) / (k - 1), k = HOIST; ``baby_steps``: the k = HOIST = 22 steps of
one hoisted rotation, face search's BSGS baby steps at l = 512 (n1 = 23), which BSGS-TBS computes on the host.

OpenFHE is timed through its backend's raw hooks (the library calls, without hepkg's protocol
bookkeeping), the engine through its own methods. ``vs_openfhe``: median / single-threaded OpenFHE's median.
On a GPU (the ``cuda`` rows) also: ``floor_us``, the op's floor on this device (:mod:`hepkg.bench.rns_floor`)
and ``of_floor`` = median / floor; ``batch32_ms``, the time per op of BATCH independent ops issued back to back
(throughput); ``host_ms``, the host's time to issue one op (the call returning, before the device finishes).
:func:`beside_published` sets the N = 2^15 rows beside the GPU and CPU latencies the face-search paper states;
:func:`kernel_bandwidth` gives each kernel's achieved bandwidth against a plain copy on the same device.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

OPS = ("ntt", "mul_relin_rescale", "rotate", "hoist_step", "baby_steps")
#: rotation steps of the hoisted measurement (k = HOIST): face search's baby steps at l = 512 (n1 - 1 = 22)
HOIST = 22
COLUMNS = ["op", "N", "depth", "backend", "threads", "median_ms", "q1_ms", "q3_ms", "reps", "vs_openfhe",
           "floor_us", "of_floor", "batch32_ms", "host_ms", "note"]
#: independent ops issued back to back for the GPU's throughput (one synchronization at the end)
BATCH = 32
#: the engine's kernel paths, by the name the bench takes (``cupy`` runs the ``cuda`` kernels)
PATHS = ("numpy", "numba", "cupy")


def engine_sets(n_log: int, depth: int) -> tuple:
    """(the rns engine's set, the OpenFHE set beside it) for N = 2^n_log and ``depth``: hepkg's set
    ``ckks-<N>-d<depth>`` where it exists, else the same moduli as ``ckks-32768-d<depth>`` at N with the
    engine's digit count (hepkg registers no N = 2^16 face-search set: the paper runs N = 2^15)."""
    import hepkg.he as he
    from hepkg.rns import get_params

    name = f"ckks-{2 ** n_log}-d{depth}"
    mine = get_params(f"rns-{name}")
    if name in he.PARAMS:
        return mine, name
    base = he.get_params(f"ckks-32768-d{depth}")
    return mine, base.replace(name=name, n=mine.n, ks_digits=mine.dnum, tags=("bench",),
                              source=f"hepkg.bench.rns_ops: {base.name}'s moduli at N={mine.n}, dnum {mine.dnum}")


def array_modules() -> list[str]:
    """The engine's kernel paths found here: 'numpy', 'numba' where numba is installed, 'cupy' where CuPy sees a
    device."""
    from hepkg.rns.device import array_module, compiled_available
    found = ["numpy"] + (["numba"] if compiled_available() else [])
    try:
        array_module("cupy")
        return found + ["cupy"]
    except (ImportError, RuntimeError):
        return found


def default_threads() -> list[int]:
    """One thread and every core (the CPU sides' thread counts)."""
    return sorted({1, os.cpu_count() or 1})


#: per-op latencies the face-search paper states (Sec. 5.1.3, 5.2; N = 2^15, scale 2^45; FIDESlib v1.0.0 on an
#: NVIDIA Quadro RTX 8000, the CPU row OpenFHE v1.2.3 multi-threaded on a Xeon Platinum 8260)
PUBLISHED = (
    dict(op="hoist_step", device="GPU (FIDESlib, RTX 8000)", ms=1.8,
         source="Sec. 5.1.3: ~1.8 ms per hoisted rotation (HyDia-RTX-DG's query rotations)"),
    dict(op="rotate", device="GPU (FIDESlib, RTX 8000)", ms=40 / 22,
         source="Sec. 5.1.3: ~40 ms for 22 non-hoisted GPU rotations"),
    dict(op="hoist_step", device="CPU (OpenFHE, Xeon 8260, threads)", ms=3.1,
         source="Sec. 5.1.3: ~3.1 ms per hoisted rotation on the CPU (double hoisting)"),
    dict(op="baby_steps", device="CPU (OpenFHE, Xeon 8260, threads)", ms=22 * 3.1,
         source="Sec. 5.1.3: BSGS-TBS's n1 - 1 = 22 hoisted baby steps at ~3.1 ms each on the CPU (73 ms with the "
                "~5 ms upload)"),
    dict(op="ntt", device="GPU (FIDESlib, RTX 8000)", ms=0.045,
         source="Sec. 5.2 (NTT representation tradeoff): each NTT ~40-50 us; what one NTT covers is not stated"),
)


#: bytes per residue (8-byte words) each kernel must read and write at the least; the NTT reads and
#: writes the array once per radix-2 stage (twiddle tables not counted)
KERNEL_BYTES = {"copy": 16, "add_mod": 24, "mul_mod": 24, "mul_shoup": 16, "ntt": lambda n: 16 * (n.bit_length() - 1)}


def kernel_bandwidth(params, path="numpy", *, reps: int = 5, seed: int = 0):
    """Achieved bandwidth of the engine's kernels on one (k, N) array of the set's Q basis (kernel path
    ``path``: numpy, numba or cupy; numba at its current threads): the bytes in :data:`KERNEL_BYTES` over the
    median time, and as a fraction of a plain copy of the same array on the same device (memory-bound kernels:
    the copy is the floor)."""
    import pandas as pd

    from hepkg.rns import get_params
    from hepkg.rns.arith import add_mod, mul_mod, mul_shoup
    from hepkg.rns.basis import Bases
    from hepkg.rns.device import path as kernel_path

    from .repeat import interleaved

    p, xp = get_params(params), _array_module(path)
    bases = Bases(p.n, p.q_primes, p.p_primes, xp)
    rows = bases.q_rows(0)
    m, ntt = bases.mod(rows), bases.ntt(rows)
    rng = np.random.default_rng(seed)
    a, b = (xp.asarray(np.stack([rng.integers(0, q, p.n, dtype=np.uint64) for q in m.primes])) for _ in range(2))
    w, ws = m.constants([q // 3 for q in m.primes])
    out = xp.empty_like(a)
    calls = {"copy": lambda: xp.copyto(out, a), "add_mod": lambda: add_mod(a, b, m.q, xp),
             "mul_mod": lambda: mul_mod(a, b, m), "mul_shoup": lambda: mul_shoup(a, w, ws, m.q, xp),
             "ntt": lambda: ntt.forward(a)}
    runs = interleaved({k: _synced(fn, xp) for k, fn in calls.items()}, reps=reps, progress=False)
    med = runs.groupby("method").wall_s.median()
    residues = a.size
    table = pd.DataFrame([dict(kernel=k, N=p.n, limbs=len(rows), path=kernel_path(xp),
                               bytes=residues * (nb(p.n) if callable(nb) else nb), median_ms=1e3 * med[k])
                          for k, nb in KERNEL_BYTES.items()])
    table["gb_per_s"] = table.bytes / table.median_ms / 1e6
    table["of_copy"] = table.gb_per_s / table.set_index("kernel").gb_per_s["copy"]
    return table


def beside_published(table):
    """The N = 2^15 rows of ``table`` beside :data:`PUBLISHED`: ``ratio`` = ours / theirs (published figures,
    another device: a scale, not a like-for-like comparison)."""
    import pandas as pd

    ours = table[(table.N == 32768) & table.median_ms.notna()][["op", "depth", "backend", "threads", "median_ms"]]
    theirs = pd.DataFrame(PUBLISHED).rename(columns={"ms": "published_ms"})
    out = ours.merge(theirs, on="op").assign(ratio=lambda d: d.median_ms / d.published_ms)
    return out[["op", "depth", "backend", "threads", "median_ms", "device", "published_ms", "ratio", "source"]]


def _inputs(slots: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, slots), rng.uniform(-1, 1, slots)


def _array_module(path: str):
    """The engine's array module of a kernel path (numpy, numba or cupy)."""
    from hepkg.rns.device import array_module
    return array_module("cupy") if path == "cupy" else array_module("numpy", path)


def _synced(fn, xp):
    """``fn`` followed by a device synchronization (CuPy), so the wall clock covers the kernels."""
    from hepkg.rns.device import on_gpu
    if not on_gpu(xp):
        return fn

    def call():
        out = fn()
        xp.cuda.Device().synchronize()
        return out
    return call


def rns_calls(params, path="numpy", seed: int = 0) -> tuple:
    """(the engine on kernel path ``path``: numpy, numba or cupy; its ops as zero-argument calls, not
    synchronized: ntt, mul_relin_rescale, rotate, hoist_1, hoist_k)."""
    from hepkg.rns import CKKS

    eng = CKKS(params, xp=_array_module(path), rotations=range(1, HOIST + 1))
    a, b = (eng.encrypt(v) for v in _inputs(eng.slots, seed))
    ntt = eng.bases.ntt(eng.bases.q_rows(0))
    coeffs = ntt.inverse(a.data)
    steps = list(range(1, HOIST + 1))
    return eng, {"ntt": lambda: ntt.forward(coeffs),
                 "mul_relin_rescale": lambda: eng.relinearize(eng.mul(a, b), rescale=True),
                 "rotate": lambda: eng.rotate(a, 1),
                 "hoist_1": lambda: eng.rotate_hoisted(a, steps[:1]),
                 "hoist_k": lambda: eng.rotate_hoisted(a, steps)}


def openfhe_calls(params, insecure: bool = False, seed: int = 0) -> tuple:
    """(the OpenFHE context, its ops as zero-argument raw library calls; no ntt)."""
    import hepkg.he as he

    steps = list(range(1, HOIST + 1))
    ctx = he.context("openfhe", params, rotations=steps, policy="exact", insecure=insecure)
    a, b = (ctx.encrypt(v).raw for v in _inputs(ctx.slots, seed))
    return ctx, {"mul_relin_rescale": lambda: ctx._rescale(ctx._relin(ctx._mul(a, b))),
                 "rotate": lambda: ctx._rotate(a, 1),
                 "hoist_1": lambda: ctx._rotate_hoisted(a, steps[:1]),
                 "hoist_k": lambda: ctx._rotate_hoisted(a, steps)}


def _omp_max_threads() -> int | None:
    """omp_get_max_threads() of the OpenMP runtime OpenFHE loaded (its wheel's libgomp, else the system's)."""
    import ctypes
    import ctypes.util
    import pathlib

    import openfhe

    bundled = sorted(pathlib.Path(openfhe.__file__).parent.glob("lib/libgomp*.so*"))
    name = str(bundled[0]) if bundled else ctypes.util.find_library("gomp")
    return ctypes.CDLL(name).omp_get_max_threads() if name else None


def _openfhe_worker(conn, params, insecure: bool, seed: int) -> None:
    """A process of OpenFHE's ops: says ("ready", its OpenMP threads), then times each op it is sent (seconds back;
    None ends it)."""
    import time

    ctx, calls = openfhe_calls(params, insecure, seed)
    try:
        conn.send(("ready", _omp_max_threads()))
        while (op := conn.recv()) is not None:
            fn = calls[op]
            t = time.perf_counter()
            fn()
            conn.send(time.perf_counter() - t)
    finally:
        ctx.close()


class OpenfheSide:
    """OpenFHE's ops in a process of their own, started with OMP_NUM_THREADS = ``threads``: OpenFHE fixes its
    threads when it loads (its ParallelControls: omp_set_num_threads later changes nothing), so each thread count
    is a process. Each op is timed in the process, as the engine's are in this one."""

    def __init__(self, params, threads: int, *, insecure: bool = False, seed: int = 0):
        import multiprocessing

        mp = multiprocessing.get_context("spawn")
        self.conn, child = mp.Pipe()
        before = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(threads)          # the child's environment, read when OpenFHE loads
        try:
            self.proc = mp.Process(target=_openfhe_worker, args=(child, params, insecure, seed), daemon=True)
            self.proc.start()
        finally:
            if before is None:
                os.environ.pop("OMP_NUM_THREADS")
            else:
                os.environ["OMP_NUM_THREADS"] = before
        child.close()
        if not self.conn.poll(600):
            self.close()
            raise RuntimeError(f"OpenFHE's worker ({threads} threads) did not start within 10 minutes")
        _, self.omp_threads = self.conn.recv()
        if self.omp_threads != threads:
            self.close()
            raise RuntimeError(f"OpenFHE's worker runs {self.omp_threads} OpenMP threads, not the {threads} asked")

    def time(self, op: str) -> float | None:
        """Seconds of one call of ``op`` in the worker (None for the NTT, which OpenFHE's bindings do not expose)."""
        if op == "ntt":
            return None
        self.conn.send(op)
        return self.conn.recv()

    def close(self) -> None:
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.proc.join(30)
        if self.proc.is_alive():
            self.proc.kill()


def _local(calls: dict, set_threads=None, count: int | None = None):
    """A timer of this process's ``calls``: seconds of one call of an op (``set_threads(count)`` first, outside the
    time), None for an op it lacks."""
    import time

    def timer(op: str):
        fn = calls.get(op)
        if fn is None:
            return None
        if set_threads is not None:
            set_threads(count)
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    return timer


def _rounds(sides: dict, reps: int, desc: str):
    """Every side's ops in rounds (one warm-up, then ``reps``), op by op, the sides in turn: a table of
    (method = 'side|op', rep, wall_s)."""
    import pandas as pd
    from tqdm.auto import tqdm

    ops = ("ntt", "mul_relin_rescale", "rotate", "hoist_1", "hoist_k")
    rows = []
    with tqdm(total=(reps + 1) * len(ops) * len(sides), desc=desc, leave=False) as bar:
        for r in range(reps + 1):
            for op in ops:
                for side, (_, _, timer) in sides.items():
                    seconds = timer(op)
                    if seconds is not None and r:
                        rows.append(dict(method=f"{side}|{op}", rep=r - 1, wall_s=seconds))
                    bar.update()
    return pd.DataFrame(rows, columns=["method", "rep", "wall_s"])


def launch_counts(params="rns-ckks-32768-d9", *, hoist: int = 3) -> dict:
    """Kernel launches of the engine's CuPy path per op, counted on the strict CuPy stand-in (hepkg.rns.standin:
    numpy underneath, no GPU needed): {op: standin.Counts} for ntt (one ciphertext), mul_relin_rescale, rotate,
    hoist_1 and hoist_<hoist>, each op's second call (the first builds the context's device tables)."""
    from hepkg.rns import CKKS, standin

    standin.install()
    try:
        eng = CKKS(params, xp="cupy", seed=1, insecure=True, rotations=range(1, hoist + 1))
        rng = np.random.default_rng(0)
        a, b = (eng.encrypt(rng.uniform(-1, 1, eng.slots)) for _ in range(2))
        ntt = eng.bases.ntt(eng.bases.q_rows(0))
        coeffs = ntt.inverse(a.data)
        ops = {"ntt": lambda: ntt.forward(coeffs),
               "mul_relin_rescale": lambda: eng.relinearize(eng.mul(a, b), rescale=True),
               "rotate": lambda: eng.rotate(a, 1), "hoist_1": lambda: eng.rotate_hoisted(a, [1]),
               f"hoist_{hoist}": lambda: eng.rotate_hoisted(a, range(1, hoist + 1))}
        out = {}
        for op, fn in ops.items():
            fn()
            with standin.counting() as c:
                fn()
            out[op] = c
        return out
    finally:
        standin.uninstall()


#: the stages of the precision table, in order (product l: after the l-th product, relinearized and rescaled)
def precision_stages(depth: int) -> list[str]:
    return ["encrypt", "rotate", "hoisted_rotate"] + [f"product_{l}" for l in range(1, depth + 1)]


def precision(backend: str, params: str, *, seed: int = 0, insecure: bool = False) -> list[dict]:
    """log2 of the largest slot error of ``backend`` on hepkg's CKKS set ``params`` (through the protocol,
    as every section uses it) at each stage: a fresh encryption of x ~ U(-1, 1); its rotation by 1; the
    step-2 rotation of a hoisted pair (1, 2); then x times y_1 ... y_l (y_i ~ U(0.9, 1.1), each encrypted
    fresh and dropped to the product's level) after each product l = 1..depth."""
    import hepkg.he as he

    ctx = he.context(backend, params, rotations=[1, 2], policy="exact", insecure=insecure)
    try:
        rng = np.random.default_rng(seed)
        x = rng.uniform(-1, 1, ctx.slots)
        ys = rng.uniform(0.9, 1.1, (ctx.params.depth, ctx.slots))
        ct = ctx.encrypt(x)

        def row(stage, got, want):
            return dict(stage=stage, backend=backend, log2_max_err=float(np.log2(np.max(np.abs(got - want)))))
        rows = [row("encrypt", ctx.decrypt(ct), x), row("rotate", ctx.decrypt(ctx.rotate(ct, 1)), np.roll(x, -1)),
                row("hoisted_rotate", ctx.decrypt(ctx.rotate_many(ct, [1, 2])[2]), np.roll(x, -2))]
        want = x
        for level, y in enumerate(ys, 1):
            ey = ctx.encrypt(y)
            ct = ctx.mul(ct, ctx.drop_level(ey, level - 1) if level > 1 else ey)
            want = want * y
            rows.append(row(f"product_{level}", ctx.decrypt(ct), want))
        return rows
    finally:
        ctx.close()


def precision_table(depths=(9, 11), backends=("rns", "openfhe"), *, seed: int = 0):
    """The precision table at N = 2^15 (hepkg's sets ckks-32768-d<depth>): one row per (depth, stage), a column
    of log2(largest slot error) per backend, and ``rns_minus_openfhe`` (bits)."""
    import pandas as pd

    rows = [dict(N=32768, depth=d, **r) for d in depths for b in backends
            for r in precision(b, f"ckks-32768-d{d}", seed=seed)]
    long = pd.DataFrame(rows)
    wide = long.pivot_table(index=["N", "depth", "stage"], columns="backend", values="log2_max_err", sort=False)
    wide = wide.reset_index()[["N", "depth", "stage", *backends]]
    wide.columns.name = None
    if {"rns", "openfhe"} <= set(backends):
        wide["rns_minus_openfhe"] = wide.rns - wide.openfhe
    return wide


def _stats(ms) -> dict:
    q1, med, q3 = np.percentile(np.asarray(ms, dtype=float), [25, 50, 75])
    return dict(median_ms=med, q1_ms=q1, q3_ms=q3, reps=len(ms))


def _rows(runs, side: str, backend: str, threads) -> list[dict]:
    """Per op: median and quartiles (ms) of one side's runs; hoist_step per rep from hoist_k and hoist_1."""
    mine = runs[runs.method.str.startswith(side + "|")]
    ms = {m.split("|", 1)[1]: 1e3 * g.sort_values("rep").wall_s.to_numpy() for m, g in mine.groupby("method")}
    if "hoist_k" in ms:
        ms["baby_steps"] = ms["hoist_k"]
        ms["hoist_step"] = (ms.pop("hoist_k") - ms.pop("hoist_1")) / (HOIST - 1)
    return [dict(op=op, backend=backend, threads=threads, **_stats(ms[op])) for op in OPS if op in ms]


def gpu_extras(eng, calls: dict, *, reps: int = 5) -> dict:
    """{op: dict(floor_us, batch32_ms, host_ms)} of the engine's CuPy ``calls`` (not synchronized): the op's floor
    on this device, the median time per op of BATCH ops issued back to back, the median time to issue one op."""
    import time

    from .rns_floor import device_peaks, floor_us

    xp = eng.xp
    sync = xp.cuda.Device().synchronize
    floors = floor_us(eng.params, device_peaks(xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)), HOIST)
    batch, host = {}, {}
    for op, fn in calls.items():
        b, h = [], []
        for _ in range(reps):
            sync()
            t = time.perf_counter()
            for _ in range(BATCH):
                fn()
            sync()
            b.append((time.perf_counter() - t) / BATCH)
            t = time.perf_counter()
            fn()
            h.append(time.perf_counter() - t)
            sync()
        batch[op], host[op] = 1e3 * np.asarray(b), 1e3 * np.asarray(h)
    for ms in (batch, host):
        ms["baby_steps"] = ms["hoist_k"]
        ms["hoist_step"] = (ms.pop("hoist_k") - ms.pop("hoist_1")) / (HOIST - 1)
    return {op: dict(floor_us=floors[op]["floor_us"], batch32_ms=float(np.median(batch[op])),
                     host_ms=float(np.median(host[op]))) for op in OPS}


def _sides(rns_params, openfhe_params, paths, threads, *, seed: int, insecure: bool) -> tuple:
    """({side: (backend, threads, timer)}, {GPU side: (engine, raw calls)}, OpenFHE's worker processes, why OpenFHE
    has no rows or None)."""
    sides, gpu, workers = {}, {}, []
    for path in paths:
        eng, raw = rns_calls(rns_params, path, seed)
        calls = {op: _synced(fn, eng.xp) for op, fn in raw.items()}
        if path == "cupy":
            gpu["rns-cupy"] = (eng, raw)
        if path == "numba":
            from hepkg.rns import cpu
            for t in threads:
                sides[f"rns-numba-{t}t"] = ("rns-numba", t, _local(calls, cpu.set_threads, t))
        else:
            sides[f"rns-{path}"] = (f"rns-{path}", 1 if path == "numpy" else None, _local(calls))
    missing = _openfhe_missing(openfhe_params, rns_params)
    if missing is None:
        for t in threads:
            workers.append(OpenfheSide(openfhe_params, t, insecure=insecure, seed=seed))
            sides[f"openfhe-{t}t"] = ("openfhe", t, workers[-1].time)
    return sides, gpu, workers, missing


def measure_config(rns_params, openfhe_params, *, reps: int = 5, seed: int = 0, insecure: bool = False,
                   paths=None, threads=None):
    """The long table of one (N, depth): the engine (an rns set or its name) on each kernel path of ``paths``
    (None: every one found here; numba at each count of ``threads``, None: :func:`default_threads`) and the
    OpenFHE set ``openfhe_params`` (a name or ParamSet; None: no such set) at each thread count (a process each),
    op by op in rounds."""
    import pandas as pd

    import hepkg.he as he
    from hepkg.rns import get_params

    rns_params = get_params(rns_params)
    threads = list(threads or default_threads())
    sides, gpu, workers, missing = _sides(rns_params, openfhe_params, paths or array_modules(), threads, seed=seed,
                                          insecure=insecure)
    try:
        runs = _rounds(sides, reps, f"N=2^{rns_params.n.bit_length() - 1}, depth {rns_params.depth}")
        extras = {side: gpu_extras(eng, raw, reps=reps) for side, (eng, raw) in gpu.items()}
    finally:
        for w in workers:
            w.close()
    rows = [r | extras.get(side, {}).get(r["op"], {}) for side, (backend, t, _) in sides.items()
            for r in _rows(runs, side, backend, t)]
    if missing is not None:
        rows += [dict(op=op, backend="openfhe", note=missing) for op in OPS]
    else:
        rows += [dict(op="ntt", backend="openfhe", threads=t, note="not exposed by OpenFHE's python bindings")
                 for t in threads]
    out = pd.DataFrame(rows).assign(N=rns_params.n, depth=rns_params.depth).reindex(columns=COLUMNS)
    out["of_floor"] = 1e3 * out.median_ms / out.floor_us
    if missing is None and not isinstance(openfhe_params, str) and openfhe_params.name not in he.PARAMS:
        out.loc[(out.backend == "openfhe") & out.note.isna(), "note"] = openfhe_params.source
    return _with_ratio(out.fillna({"note": ""}).astype({"reps": "Int64", "threads": "Int64"}))


def _openfhe_missing(openfhe_params, rns_params):
    """Why no OpenFHE row can be measured beside the engine (None: it can)."""
    import hepkg.he as he

    if openfhe_params is None:
        return f"hepkg has no OpenFHE set ckks-{rns_params.n}-d{rns_params.depth}"
    if not he.availability()["openfhe"]:
        return "OpenFHE is not installed on this machine"
    return None


def _with_ratio(df):
    """``vs_openfhe``: each median over single-threaded OpenFHE's (NaN without that row)."""
    ref = df[(df.backend == "openfhe") & (df.threads == 1)].set_index("op").median_ms
    df["vs_openfhe"] = df.median_ms / df.op.map(ref)
    return df


def measure(n_logs=(15, 16), depths=(9, 11), *, reps: int = 5, seed: int = 0, paths=None, threads=None):
    """The long table for every (N = 2^n, depth): one row per (op, backend, threads); ``paths``: the engine's
    kernel paths (None: every one found here); ``threads``: the CPU sides' thread counts."""
    import pandas as pd

    return pd.concat([measure_config(*engine_sets(n, d), reps=reps, seed=seed, paths=paths, threads=threads)
                      for n in n_logs for d in depths], ignore_index=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[15, 16], help="log2 of the ring degrees")
    parser.add_argument("--depth", type=int, nargs="+", default=[9, 11], help="multiplicative depths")
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions (after one warm-up)")
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts of the CPU sides, numba and OpenFHE (default: 1 and every core)")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=None,
                        help="the engine's kernel paths (default: numpy, numba where installed, cupy where a GPU "
                             "is visible)")
    parser.add_argument("--save", action="store_true", help="write artifacts/bench/rns_ops.csv (and .md)")
    parser.add_argument("--tag", default="", help="suffix of the saved tables' names (rns_ops_<tag>.csv ...), "
                        "e.g. gpu for a run on another machine")
    parser.add_argument("--precision", action="store_true",
                        help="only the precision table (N = 2^15, the --depth values; rns beside OpenFHE) -> "
                             "artifacts/bench/rns_precision.csv with --save")
    parser.add_argument("--launches", action="store_true",
                        help="only the CuPy path's kernel launches per op at rns-ckks-32768-d9, counted on the "
                             "strict CuPy stand-in (no GPU needed)")
    args = parser.parse_args(argv)
    import pandas as pd

    if args.launches:
        counts = launch_counts()
        for op, c in counts.items():
            print(f"{op:18s} {c.total:4d} launches {c.uploads} uploads {c.downloads} downloads  {dict(c.launches)}")
        print("hoist_step", (counts["hoist_3"].total - counts["hoist_1"].total) / 2, "launches")
        return
    if args.precision:
        table = precision_table(args.depth)
        if args.save:
            from .report import save_table
            print("saved", *save_table(table, "bench", "rns_precision"))
        print(table.round(2).to_string(index=False))
        return

    paths = args.paths or array_modules()
    table = measure(args.n, args.depth, reps=args.reps, paths=paths, threads=args.threads)
    published = beside_published(table)
    bandwidth = pd.concat([kernel_bandwidth(engine_sets(n, min(args.depth))[0], path, reps=args.reps)
                           for n in args.n for path in paths], ignore_index=True)
    if args.save:
        from .report import save_table
        tag = f"_{args.tag}" if args.tag else ""
        print("saved", *save_table(table, "bench", f"rns_ops{tag}"),
              *save_table(published, "bench", f"rns_ops_published{tag}"),
              *save_table(bandwidth, "bench", f"rns_bandwidth{tag}"))
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False), published.drop(columns="source").to_string(index=False),
              bandwidth.to_string(index=False), sep="\n\n")


if __name__ == "__main__":
    main()
