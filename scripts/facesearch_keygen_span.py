"""Where the fasthe bench's hepkg ``keygen_s`` goes (docs/benchmarks.md): the client's context for a method built
on the bench's openfhe-python, split into OpenFHE's crypto context (GenCryptoContext, the features enabled and
its moduli read back: ``_new_cc``), the key pair, the evaluation keys (relinearization and rotations; the two
together are :attr:`hepkg.he.Context.keygen_s`) and the rest of ``he.context``. FastHE-Search's timers cover the
key pair and evaluation keys alone (``src/main.cpp``: from ``KeyGen`` to ``EvalRotateKeyGen``), not
``GenCryptoContext``.

    source bench_env.sh      # the fasthe bench's builds (make bench's)
    python scripts/facesearch_keygen_span.py METHOD ROUNDS KAPPA THREADS > keygen_span.jsonl

METHOD: a face-search method (bsgs-diagonal, hydia-lean); the bench's ring for KAPPA and its key steps at l = 512.
Each line: round, seconds of each span.
"""
import json
import sys
import time

from hepkg.bench.child import in_child
from hepkg.bench.versus import find_checkout
from hepkg.facesearch import fasthe as F

L = 512


def measure(config: dict) -> list[dict]:
    """Each round: one client context, timed whole and in its spans."""
    from hepkg import he
    from hepkg.facesearch.protocol import key_steps
    from hepkg.he.backends import openfhe as backend

    spans: dict[str, float] = {}

    def timing(name, fn):
        def timed(*args, **kw):
            start = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                spans[name] = spans.get(name, 0.0) + time.perf_counter() - start
        return timed

    cls = backend.OpenFHEContext
    for name in ("_new_cc", "_evaluation_keys"):        # the key pair and evaluation keys together: ctx.keygen_s
        setattr(cls, name, timing(name, getattr(cls, name)))
    steps = key_steps(config["method"], L, he.get_params(config["params"]).n // 2)
    rows = []
    for r in range(config["rounds"]):
        spans.clear()
        start = time.perf_counter()
        ctx = he.context("openfhe", config["params"], rotations=steps, policy="exact")
        whole = time.perf_counter() - start
        ctx.close()
        rows.append(dict(round=r, keys=len(steps), he_context_s=whole, crypto_context_s=spans["_new_cc"],
                         key_pair_s=ctx.keygen_s - spans["_evaluation_keys"],
                         evaluation_keys_s=spans["_evaluation_keys"], their_span_s=ctx.keygen_s,
                         rest_s=whole - spans["_new_cc"] - ctx.keygen_s))
    return rows


def main(method: str, rounds: int, kappa: int, threads: int) -> None:
    authors = F.prepare(find_checkout(None, F.ENV, F.REPO, F.FILES))
    cfg = dict(method=method, rounds=rounds, params=F.PARAMS[kappa])
    for row in in_child(measure, cfg, int(16e9 if method.startswith("hydia") else 4e9), threads,
                        python_path=authors.python):
        print(json.dumps(row | dict(method=method, omp_threads=threads, params=F.PARAMS[kappa],
                                    build=authors.hepkg_build)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:]))
