"""Randomness for keys and encryption, from a cryptographic stream.

Every draw reads bytes of SHAKE-256 keyed by a 32-byte (256-bit) key from ``secrets``, a call
counter taken under a lock, and a fresh 16-byte nonce from ``os.urandom`` (an extendable-output
function: the stream reveals nothing of the key or of other draws, unlike a PCG or Mersenne
generator, whose state the public key's uniform polynomials would give away). The nonce keeps
draws distinct across threads and across forked copies of a sampler, which share the key and the
counter. An explicit integer seed (tests of reproducibility only: every key and all encryption
randomness then follow from a public value) is hashed into the key, and its draws are the counter's
alone, with no nonce. Sampling runs on the host and the results are uploaded; uniform polynomials
are drawn directly in NTT form (uniform in any basis).
"""
from __future__ import annotations

import hashlib
import os
import secrets
import threading

import numpy as np

#: standard deviation of the error distribution (HE standard)
SIGMA = 3.2
#: errors are cut at this many standard deviations
TAIL = 6


class Sampler:
    """Ternary secrets, rounded Gaussian errors and uniform residues for ring degree n."""

    def __init__(self, n: int, seed: int | None = None):
        self.n, self.seeded = n, seed is not None
        if seed is None:
            self._key = secrets.token_bytes(32)
        elif isinstance(seed, (int, np.integer)) and 0 <= int(seed) < 2 ** 256:
            self._key = hashlib.sha3_256(b"hepkg.rns.sampling seed " + int(seed).to_bytes(32, "little")).digest()
        else:
            raise ValueError(f"seed must be an integer in [0, 2^256), got {seed!r}")
        self._calls = 0
        self._lock = threading.Lock()

    def _bytes(self, count: int) -> np.ndarray:
        """``count`` fresh bytes of the stream (uint8)."""
        with self._lock:
            self._calls += 1
            calls = self._calls
        nonce = b"" if self.seeded else os.urandom(16)
        xof = hashlib.shake_256(self._key + calls.to_bytes(8, "little") + nonce)
        return np.frombuffer(xof.digest(count), dtype=np.uint8)

    def _words(self, count: int) -> np.ndarray:
        return self._bytes(8 * count).view(np.uint64)

    def ternary(self, count: int = 1) -> np.ndarray:
        """(count, N) int64 coefficients uniform over {-1, 0, 1} (bytes below 255, mod 3)."""
        need, out = count * self.n, np.empty(0, dtype=np.int64)
        while out.size < need:
            b = self._bytes(2 * (need - out.size) + 64)
            out = np.concatenate([out, b[b < 255].astype(np.int64) % 3 - 1])
        return out[:need].reshape(count, self.n)

    def gaussian(self, count: int = 1) -> np.ndarray:
        """(count, N) int64 rounded Gaussian coefficients, sigma = SIGMA, cut at TAIL sigma (Box-Muller on
        53-bit uniforms of the stream)."""
        size = count * self.n
        u = ((self._words(2 * size) >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0 ** -53  # (0, 1]
        e = SIGMA * np.sqrt(-2.0 * np.log(u[:size])) * np.cos(2.0 * np.pi * u[size:])
        return np.clip(np.rint(e), -TAIL * SIGMA, TAIL * SIGMA).astype(np.int64).reshape(count, self.n)

    def uniform(self, primes, lead: tuple = ()) -> np.ndarray:
        """(*lead, k, N) uint64 residues uniform mod each prime (rejection sampling on masked words)."""
        out = np.empty(lead + (len(primes), self.n), dtype=np.uint64)
        need = int(np.prod(lead, dtype=np.int64)) * self.n
        for i, q in enumerate(primes):
            mask, got = np.uint64((1 << int(q).bit_length()) - 1), np.empty(0, dtype=np.uint64)
            while got.size < need:  # each word is kept with probability > 1/2
                w = self._words(2 * (need - got.size) + 64) & mask
                got = np.concatenate([got, w[w < np.uint64(q)]])
            out[..., i, :] = got[:need].reshape(lead + (self.n,))
        return out
