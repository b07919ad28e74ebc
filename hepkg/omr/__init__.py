"""Oblivious message retrieval (SophOMR paper): private signaling, bulletin boards, the encrypted
detector, decoding.

Submodules load on first use: ``hepkg.omr.signaling`` (Construction 1, plaintext),
``hepkg.omr.board`` (the bulletin-board generator), ``hepkg.omr.compress`` (the digest
compressions of SophOMR and PerfOMR in plaintext, the twins of the encrypted detector),
``hepkg.omr.rangecheck`` and ``hepkg.omr.detector`` (SophOMR / SophOMD on the backend protocol:
receiver, detection key, detector, digest), ``hepkg.omr.decode`` (the receiver's decoding over F_p
with python-flint), ``hepkg.omr.params`` (Tables 4-6, key and digest sizes),
``hepkg.omr.experiments`` and ``hepkg.omr.report`` (the notebook's runs and tables).
"""
