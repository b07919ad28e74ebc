"""The compound operations of the kernel paths (compiled CPU and CuPy), each a few launches of the kernel set
(:mod:`hepkg.rns.cpu` or :mod:`hepkg.rns.kernels`: the same names and arguments).

Their numpy counterparts (the reference, bit-identical) are ``basis.mod_up``, ``basis.mod_down``,
``basis.rescale``, ``keyswitch.apply_key`` and ``CKKS.mul``. Every constant table a kernel reads
(basis-conversion tables, key-row maps, inverses of P and of the dropped primes) is built on the
host once per context and level, uploaded once and cached in the Bases; every intermediate lives in the context's
fixed workspace (:mod:`hepkg.rns.workspace`), so an op allocates its result alone. Launches per call:

- ``mod_up``: 5 (inverse NTT of the limbs, every digit's conversion, forward NTT of every extension row but
  the digit's own rows, which are copied in NTT form);
- ``switch_tail``: 7 (inner product, inverse NTT of the P limbs, conversion P -> Q, forward NTT,
  the division by P with the addend of a relinearization or rotation; a relinearization may fold its rescale
  in: P times the addend in the inner product, then the division by P q_last);
- ``rescale``: 6; ``tensor``: 1. An NTT is two launches (:func:`hepkg.rns.ntt.launch_ntt`).
"""
from __future__ import annotations

import numpy as np

from .device import kernel_set
from .ntt import launch_ntt
from .workspace import Workspace


def _shoup(w: int, q: int) -> int:
    return (w << 64) // q


def workspace_bytes(n: int, k: int, p: int, digits: int) -> int:
    """The bytes one thread's (on CuPy: one stream's) workspace grows to on a ring of degree n with k primes in Q,
    p in P and ``digits`` ModUp digits at the top level, its rescales on ciphertexts of two polynomials: ModUp's
    coefficients (k rows) and extensions (digits x (k + p)), the key inner product (2 (k + p)), ModDown's
    coefficients (2 (p + 1): P's rows and, where a rescale is folded in, Q's last) and conversion (2 k), the
    rescale's top limb (2) and carries (2 (k - 1))."""
    return 8 * n * (k + digits * (k + p) + 2 * (k + p) + 2 * (p + 1) + 2 * k + 2 + 2 * (k - 1))


class Fused:
    """Resident tables and the fused operations of one Bases (compiled CPU or CuPy)."""

    def __init__(self, bases):
        self.b, self.xp, self.n = bases, bases.xp, bases.n
        self.kn = kernel_set(self.xp)
        self._dummy_u64 = self.xp.zeros(1, dtype=np.uint64)
        self._dummy_perm = self.xp.zeros(1, dtype=np.int64)
        self.work = Workspace(self.xp)

    def _up(self, host: dict) -> dict:
        return {k: self.xp.asarray(v) for k, v in host.items()}

    # ------------------------------------------------------------------ tables (built once, cached)
    def _conv_table(self, groups, dst_rows) -> dict:
        """Conversion tables towards ``dst_rows`` for each group (source rows, where each sits in the
        kernel's input, {destination row: input row copied instead of converted})."""
        primes = self.b.full.primes
        a_max = max(len(src) for src, _, _ in groups)
        if a_max > 16:
            raise ValueError(f"a basis conversion from {a_max} limbs exceeds the kernel's 16")
        g, kout = len(groups), len(dst_rows)
        t = dict(nsrc=np.zeros(g, np.int32), src_row=np.zeros(g * a_max, np.int32),
                 src_q=np.ones(g * a_max, np.uint64), ih=np.zeros(g * a_max, np.uint64),
                 ihs=np.zeros(g * a_max, np.uint64), isrc=np.zeros(g * a_max, np.float64),
                 copy_from=np.full(g * kout, -1, np.int32),
                 dst_q=np.asarray([primes[r] for r in dst_rows], np.uint64),
                 hat=np.zeros(g * a_max * kout, np.uint64), hats=np.zeros(g * a_max * kout, np.uint64),
                 tot=np.zeros(g * kout, np.uint64), tots=np.zeros(g * kout, np.uint64))
        for gi, (src, where, copy) in enumerate(groups):
            bs = [primes[r] for r in src]
            total = 1
            for q in bs:
                total *= q
            t["nsrc"][gi] = len(src)
            for i, (q, row) in enumerate(zip(bs, where)):
                j = gi * a_max + i
                ih = pow(total // q % q, -1, q)
                t["src_row"][j], t["src_q"][j], t["ih"][j], t["ihs"][j] = row, q, ih, _shoup(ih, q)
                t["isrc"][j] = 1.0 / q
            for r, row in enumerate(dst_rows):
                if row in copy:
                    t["copy_from"][gi * kout + r] = copy[row]
                    continue
                d = primes[row]
                for i, q in enumerate(bs):
                    h = (gi * a_max + i) * kout + r
                    w = total // q % d
                    t["hat"][h], t["hats"][h] = w, _shoup(w, d)
                w = total % d
                t["tot"][gi * kout + r], t["tots"][gi * kout + r] = w, _shoup(w, d)
        out = self._up(t)
        out["a_max"] = a_max
        return out

    def _modup_table(self, level: int, dnum: int) -> dict:
        """The conversion tables of every digit (its own rows copied from the NTT form) and the row table of the
        forward NTT of the other rows of every extension (int32 device arrays: rows, primes)."""
        b = self.b

        def make():
            digits, ext = b.digits(level, dnum), b.q_rows(level) + b.p_rows
            t = self._conv_table([(rows, rows, {r: r for r in rows}) for rows in digits], ext)  # input: (k, N)
            todo = [(j * len(ext) + i, row) for j, rows in enumerate(digits) for i, row in enumerate(ext)
                    if row not in rows]
            t["ntt_rows"] = self.xp.asarray(np.asarray([r for r, _ in todo], np.int32))
            t["ntt_primes"] = self.xp.asarray(np.asarray([p for _, p in todo], np.int32))
            return t
        return b._cached(("fused-modup", level, dnum), make)

    def _moddown_table(self, level: int, rescale: bool = False) -> dict:
        """ModDown's tables at ``level``: the conversion of the dropped limbs (P; with ``rescale`` also q_last)
        to the kept ones, the inverse of their product, the key's rows, and P mod each prime of Q (the
        addend's factor when the rescale is folded in)."""
        b = self.b

        def make():
            q_rows = b.q_rows(level)
            keep = q_rows[:-1] if rescale else q_rows
            drop = q_rows[len(keep):] + b.p_rows
            t = self._conv_table([(drop, range(len(drop)), {})], keep)  # input: the dropped limbs
            m, mq = b.mod(keep), b.mod(q_rows)
            divisor, p_prod = b.mod(drop).product(), b.mod(b.p_rows).product()
            inv = [pow(divisor % q, -1, q) for q in m.primes]
            t.update(self._up(dict(inv=np.asarray(inv, np.uint64),
                                   invs=np.asarray([_shoup(v, q) for v, q in zip(inv, m.primes)], np.uint64),
                                   p_mod=np.asarray([p_prod % q for q in mq.primes], np.uint64))))
            t["key_row"] = self.xp.asarray(np.asarray(list(q_rows) + list(b.p_rows), np.int32))
            return t
        return b._cached(("fused-moddown", level, rescale), make)

    def _rescale_table(self, k: int) -> dict:
        b = self.b

        def make():
            q_last = b.full.primes[k - 1]
            primes = b.full.primes[:k - 1]
            inv = [pow(q_last, -1, q) for q in primes]
            t = self._up(dict(half_i=np.asarray([q_last // 2 % q for q in primes], np.uint64),
                              inv=np.asarray(inv, np.uint64),
                              invs=np.asarray([_shoup(v, q) for v, q in zip(inv, primes)], np.uint64)))
            t.update(q_last=np.uint64(q_last), half=np.uint64(q_last // 2))
            return t
        return b._cached(("fused-rescale", k), make)

    # ------------------------------------------------------------------ launches
    def _convert(self, x, t, groups: int, kout: int, out_name: str, xn=None):
        """The conversion kernel on x (S, kin, N), the rows of a group's own basis copied from xn (x's shape;
        default x itself): (S, groups, kout, N), in the workspace ``out_name``."""
        s, kin, n = x.shape[0], x.shape[-2], self.n
        out = self.work(out_name, (s, groups, kout, n))
        grid, block = self.kn.grid(n, s * groups)
        self.kn.launch("hepkg_rns_convert", grid, block,
                       (x, x if xn is None else xn, out, np.int32(n), np.int32(kin), np.int32(groups), np.int32(kout),
                        np.int32(t["a_max"]), t["nsrc"], t["src_row"], t["src_q"], t["ih"], t["ihs"], t["isrc"],
                        t["copy_from"], t["dst_q"], t["hat"], t["hats"], t["tot"], t["tots"]))
        return out

    def mod_up(self, d, level: int, dnum: int):
        """ModUp of the NTT-form (k, N) polynomial d: (digits, k + |P|, N), NTT form (5 launches), in the workspace
        (valid until the next ModUp of this thread and stream). Each digit's own rows are d's, copied; the NTT
        transforms the others only."""
        b = self.b
        q_rows = b.q_rows(level)
        t = self._modup_table(level, dnum)
        if not d.flags.c_contiguous:
            d = d.copy()
        coeffs = b.ntt(q_rows).launch(d[None], inverse=True, out=self.work("modup-coeffs", (1, len(q_rows), self.n)))
        raw = self._convert(coeffs, t, len(b.digits(level, dnum)), len(q_rows) + len(b.p_rows), "modup-ext",
                            xn=d[None])[0]
        launch_ntt(b._ntt_full, False, raw, raw, t["ntt_rows"], t["ntt_rows"], t["ntt_primes"])
        return raw

    def switch_tail(self, ext, level: int, key, add=None, add_polys: int = 0, perm=None, rescale: bool = False):
        """ModDown(sum_j ext_j * key_j) over Q_l, plus ``add`` (its first ``add_polys`` polynomials, through
        the automorphism ``perm`` if given): (2, k, N) in 7 launches. ``perm`` also permutes ``ext``. With
        ``rescale`` (a relinearization), (P add + sum_j ext_j key_j) divided by P q_last: (2, k - 1, N), the
        rescale folded into ModDown, also 7 launches."""
        b, n = self.b, self.n
        q_rows = b.q_rows(level)
        k, ext_rows = len(q_rows), q_rows + b.p_rows
        kk, d = len(ext_rows), ext.shape[0]
        t = self._moddown_table(level, rescale)
        m = b.mod(ext_rows)
        use_perm = np.int32(perm is not None)
        perm = self._dummy_perm if perm is None else perm
        if add is not None and not add.flags.c_contiguous:
            add = add.copy()
        inner_add = add if rescale else self._dummy_u64
        ip = self.work("inner", (2, kk, n))
        grid, block = self.kn.grid(n, kk)
        self.kn.launch("hepkg_rns_key_inner", grid, block,
                       (ext, key.b, key.a, ip, perm, use_perm, np.int32(n), np.int32(d), np.int32(kk),
                        np.int32(key.b.shape[1]), t["key_row"], m.q, m.mu, m.lo_shift, m.out_lo, inner_add,
                        np.int32(2 if rescale else 0), np.int32(k), t["p_mod"]))
        keep = k - 1 if rescale else k
        coeffs = b.ntt(ext_rows[keep:]).launch(ip, inverse=True, r0=keep,
                                               out=self.work("moddown-coeffs", (2, kk - keep, n)))
        conv = self._convert(coeffs, t, 1, keep, "moddown-conv").reshape(2, keep, n)
        b.ntt(q_rows[:keep]).launch(conv, inverse=False, out=conv)
        if rescale:
            add, add_polys = None, 0
        return self._finish(ip, conv, t, add, add_polys, perm, use_perm, b.mod(q_rows[:keep]).q)

    def _finish(self, c, t, tab, add, add_polys, perm, use_perm, q):
        s, k, n = t.shape[0], t.shape[-2], self.n
        out = self.xp.empty((s, k, n), dtype=np.uint64)
        grid, block = self.kn.grid(n, s * k)
        self.kn.launch("hepkg_rns_finish", grid, block,
                  (c, t, out, self._dummy_u64 if add is None else add, perm, use_perm, np.int32(n),
                   np.int32(c.shape[-2]), np.int32(k), np.int32(add_polys if add is not None else 0), q,
                   tab["inv"], tab["invs"]))
        return out

    def rescale(self, c):
        """c (S, k, N) NTT form divided by its last prime, rounding: (S, k-1, N) in 6 launches."""
        b, n = self.b, self.n
        if not c.flags.c_contiguous:
            c = c.copy()
        s, k = c.shape[0], c.shape[-2]
        tab = self._rescale_table(k)
        rows = tuple(range(k - 1))
        top = b.ntt((k - 1,)).launch(c, inverse=True, r0=k - 1, out=self.work("rescale-top", (s, 1, n)))
        q = b.mod(rows).q
        t = self.work("rescale-t", (s, k - 1, n))
        grid, block = self.kn.grid(n, s * (k - 1))
        self.kn.launch("hepkg_rns_rescale_prep", grid, block,
                  (top, t, np.int32(n), np.int32(k - 1), tab["q_last"], tab["half"], q, tab["half_i"]))
        b.ntt(rows).launch(t, inverse=False, out=t)
        return self._finish(c, t, tab, None, 0, self._dummy_perm, np.int32(0), q)

    def tensor(self, a, b_, level: int):
        """The size-3 product of the size-2 ciphertexts' data a, b_ (2, k, N): 1 launch."""
        k, n = a.shape[-2], self.n
        m = self.b.mod(self.b.q_rows(level))
        a, b_ = (x if x.flags.c_contiguous else x.copy() for x in (a, b_))
        out = self.xp.empty((3, k, n), dtype=np.uint64)
        grid, block = self.kn.grid(n, k)
        self.kn.launch("hepkg_rns_tensor", grid, block, (a, b_, out, np.int32(n), np.int32(k), m.q, m.mu, m.lo_shift,
                                                     m.out_lo))
        return out
