"""One digest of each side of the OMR bench's cases, without the bench's rounds: where hepkg's OMR stands now.

    HEPKG_AUTHORS_SOPHOMR=DIR HEPKG_OPENFHE_SRC=DIR HEPKG_OPENFHE_PYTHON_SRC=DIR [HEXL checkouts] \\
        python scripts/omr_digest_pair.py OUT.jsonl ["OMR N65536 k50 t250 threads1" ...]

Runs :func:`hepkg.omr.authors.versus_run` once per case (no warm-up, one run of each side: their program on the
bench's OpenFHE, on the OpenFHE they tested, and hepkg on openfhe-python built on the bench's) and appends each
row to OUT.jsonl as it finishes, with the revision, the page-reporting setting and the glibc tunables of the
process. Exploratory: the bench's tables (``make bench ONLY=omr``) are what the claims use.
"""
import json
import os
import sys

from hepkg.bench.sysinfo import system_info
from hepkg.omr import authors


def main(out: str, cases: list[str]) -> None:
    prepared = authors.prepare(os.environ[authors.ENV])
    system = system_info()
    extra = dict(revision=system["git"]["revision"][:7], dirty=system["git"]["dirty"],
                 page_reporting_order=system["page_reporting_order"], glibc_tunables=os.environ.get("GLIBC_TUNABLES"))
    for case in cases:
        rows = authors.versus_run(case, prepared, reps=1, warmup=0)
        with open(out, "a") as fh:
            for row in rows.to_dict("records"):
                fh.write(json.dumps(row | extra, default=str) + "\n")
        print(rows[["side", "digest_s", "compression_s", "decode_s", "correct"]].to_string(index=False), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or ["OMR N65536 k50 t250 threads1", "OMD N65536 k50 threads1"])
