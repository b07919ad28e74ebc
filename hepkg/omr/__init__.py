"""Oblivious message retrieval (SophOMR paper): private signaling, bulletin boards, decoding.

Submodules load on first use: ``hepkg.omr.signaling`` (Construction 1, plaintext),
``hepkg.omr.board`` (the bulletin-board generator), ``hepkg.omr.compress`` (the digest
compressions of SophOMR and PerfOMR in plaintext, the twins of the encrypted detector),
``hepkg.omr.decode`` (the receiver's decoding over F_p with python-flint).
"""
