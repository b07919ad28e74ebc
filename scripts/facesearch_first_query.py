"""The fasthe bench's first query against the next ones, hepkg's and FastHE-Search's (docs/benchmarks.md).

    source bench_env.sh      # HEPKG_AUTHORS_FASTHE, HEPKG_OPENFHE_SRC, HEPKG_OPENFHE_PYTHON_SRC, ... (make bench's)
    python scripts/facesearch_first_query.py SIDE THREADS QUERIES [KAPPA [K]] > first_query.jsonl

SIDE: one of hepkg's methods (hydia, hydia-lean, bsgs-diagonal: one process, keys and enrollment, then QUERIES
membership + identification pairs, each line one pair with the server's phases) or 5 / 8 (FastHE-Search's approach:
QUERIES processes, each one membership and one identification). l = 512, K (default 1024), the bench's ring
for KAPPA (default 8), on the bench's one OpenFHE build (:func:`hepkg.facesearch.fasthe.prepare`). Each line records the
machine's free page reporting (:func:`hepkg.bench.sysinfo.page_reporting`), which this compares.
"""
import json
import sys
import tempfile

from hepkg.bench.child import in_child
from hepkg.bench.sysinfo import page_reporting
from hepkg.bench.versus import find_checkout
from hepkg.datasets.faces import synthetic_database
from hepkg.facesearch import authors as A
from hepkg.facesearch import fasthe as F
from hepkg.facesearch.experiments import estimated_peak_bytes

L = 512


def _rounded(row: dict) -> dict:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}


def hepkg_queries(authors: F.Authors, method: str, threads: int, queries: int, kappa: int, K: int) -> list[dict]:
    cfg = dict(backend="openfhe", params=F.PARAMS[kappa], method=method, K=K, Km=F.KM, l=L, kappa=kappa, seed=0,
               reps=queries, warmup=0, workers=1, omp_threads=threads, identify=True, absent=False)
    rows = in_child(F._measure_naming_module, cfg, estimated_peak_bytes(cfg), threads, python_path=authors.python)
    keep = ("keygen_s", "enroll_s", "membership_s", "identify_s", "rss_peak_bytes", "count_error", "identified")
    return [{k: r[k] for k in keep} | {k: v for k, v in r.items() if k.startswith("phase_")} | dict(query=r["rep"])
            for r in rows]


def their_queries(authors: F.Authors, approach: int, threads: int, runs: int, kappa: int, K: int) -> list[dict]:
    inst = synthetic_database(K, F.KM, L, 0)
    with tempfile.TemporaryDirectory(prefix="hepkg-first-query-") as tmp:
        A.write_dataset(f"{tmp}/dataset.dat", inst.database, inst.query)
        return [A.as_row(F.run_authors(authors.programs[kappa], f"{tmp}/dataset.dat", approach, threads),
                         list(inst.matches)) | dict(run=i) for i in range(runs)]


def main(side: str, threads: int, queries: int, kappa: int = 8, K: int = 1024) -> None:
    authors = F.prepare(find_checkout(None, F.ENV, F.REPO, F.FILES))
    rows = (their_queries(authors, int(side), threads, queries, kappa, K) if side.isdigit() else
            hepkg_queries(authors, side, threads, queries, kappa, K))
    for row in rows:
        print(json.dumps(_rounded(row | dict(side=side, threads=threads, kappa=kappa, K=K,
                                             page_reporting_order=page_reporting()))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:]))
