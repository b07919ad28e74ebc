"""The OMR detection key's bytes as the receiver writes them, per scheme: relinearization and rotation keys of every
context (the top level's and the compression's lowered one) and Enc(sparse-packed sk), as
``scripts/omr_compression_profile.py`` counts them, without running a digest.

    python scripts/omr_key_sizes.py [PARAMS] [N]

Prints one JSON line per scheme (SophOMD, SophOMR) on the openfhe backend.
"""
import json
import sys

from hepkg import he
from hepkg.omr import detector as D
from hepkg.omr.board import bulletin_board
from hepkg.omr.signaling import PARAMS

params = sys.argv[1] if len(sys.argv) > 1 else "bfv-omr-soph"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 16
ps = PARAMS["sophomr"]
for scheme in D.SCHEMES:
    lay = D.layout(ps, he.get_params(params).n, scheme=scheme, N=N)
    board = bulletin_board(256, lay.k, ps, payload_bytes=612, others=0, seed=0)
    rec = D.Receiver(D.receiver_context("openfhe", params, lay), board.sk, lay)
    key = rec.detection_key()
    sizes, sk = rec.key_sizes(), key.context.nbytes(key.sk)
    print(json.dumps(dict(scheme=scheme, params=params, N=N, relin_key=sizes["relin_key"],
                          galois_keys=sizes["galois_keys"], switch_key=sizes["switch_key"], enc_sk=sk,
                          detection_key_bytes=sizes["relin_key"] + sizes["galois_keys"] + sizes["switch_key"] + sk)),
          flush=True)
    rec.close()
