"""The numpy twin of every CUDA kernel of :mod:`hepkg.rns.kernels`, by kernel name (:data:`TWINS`).

A twin computes exactly what its kernel computes (every residue canonical, float sums in the same order), so
the CuPy path is bit-identical to numpy: the strict CuPy stand-in (:mod:`hepkg.rns.standin`) runs a kernel
as its twin, and the tests run each compiled source as C++ against it. Kept apart from the sources so that
the arithmetic (:mod:`.arith`, :mod:`.ntt`), which launches the kernels on CuPy, and the twins, which are
built from that arithmetic, do not import each other.
"""
from __future__ import annotations

import types

import numpy as np

from .arith import _mul_mod_xp, _mul_shoup_xp, add_mod as _add, sub_mod as _sub
from .ntt import geometry, stages

__all__ = ["TWINS"]


def _barrett(q, mu, lsh, osh):
    return types.SimpleNamespace(q=q, mu=mu, lo_shift=lsh, hi_shift=np.uint64(64) - lsh, out_lo=osh,
                                 out_hi=np.uint64(64) - osh, xp=np)


def _check_grid(name, grid, block, n, rows):
    if grid[0] * block[0] < n or (len(grid) > 1 and grid[1]) != rows:
        raise ValueError(f"{name}: grid {grid} x block {block} does not cover {rows} rows of {n}")


def _ntt_twin(inverse: bool, part: str):
    """The twin of one of the NTT's two launches: the strided stages ('cols': 0..log N1 - 1) or the contiguous
    ones ('rows': log N1..log N - 1) on the table's rows; the first launch reads src rows of its input, the second
    works in place on the destination rows (the inverse's ends with N^-1)."""
    first = part == ("rows" if inverse else "cols")

    def twin(grid, block, *args):
        if first:
            inp, out, src, dst, prime, w, ws, q, logn, log1 = args
        else:
            out, dst, prime, w, ws, q, logn, log1, *ninv = args
            inp, src = out, dst
        n, logn, log1 = 1 << int(logn), int(logn), int(log1)
        blocks, threads = geometry(logn, inverse)[f"hepkg_rns_ntt_{'inv' if inverse else 'fwd'}_{part}"]
        if grid != (len(dst) * blocks,) or block[0] > threads:
            raise ValueError(f"ntt {part}: grid {grid} x block {block} is not {blocks} blocks per row of {len(dst)}")
        x = inp.reshape(-1, n)[src.astype(np.int64)]                          # (jobs, n): one limb per job
        p = prime.astype(np.int64)
        qs = q[p].reshape(-1, 1)
        lo, hi = (log1, logn) if part == "rows" else (0, log1)
        stages(x, lambda m: (w[p, m:2 * m], ws[p, m:2 * m]), qs, inverse, lo, hi)
        if inverse and not first:
            x = _mul_shoup_xp(x, ninv[0][p].reshape(-1, 1), ninv[1][p].reshape(-1, 1), qs, np)
        out.reshape(-1, n)[dst.astype(np.int64)] = x
    return twin


def _convert_twin(grid, block, x, xn, out, n, kin, groups, kout, a_max, nsrc, src_row, src_q, ih, ihs, isrc,
                  copy_from, dst_q, hat, hats, tot, tots):
    n, kin, groups, kout, a_max = (int(v) for v in (n, kin, groups, kout, a_max))
    s = x.size // (kin * n)
    _check_grid("convert", grid, block, n, s * groups)
    xs, xns, o = x.reshape(s, kin, n), xn.reshape(s, kin, n), out.reshape(s, groups, kout, n)
    for g in range(groups):
        sel = slice(g * a_max, g * a_max + int(nsrc[g]))
        y = _mul_shoup_xp(xs[:, src_row[sel].astype(np.int64)], ih[sel, None], ihs[sel, None], src_q[sel, None], np)
        v = np.rint(np.sum(y.astype(np.float64) * isrc[sel, None], axis=-2)).astype(np.uint64)
        for r in range(kout):
            cf = int(copy_from[g * kout + r])
            if cf >= 0:
                o[:, g, r] = xns[:, cf]
                continue
            acc = np.zeros_like(v)
            for i in range(sel.stop - sel.start):
                h = (g * a_max + i) * kout + r
                acc = _add(acc, _mul_shoup_xp(y[:, i], hat[h], hats[h], dst_q[r], np), dst_q[r])
            j = g * kout + r
            o[:, g, r] = _sub(acc, _mul_shoup_xp(v, tot[j], tots[j], dst_q[r], np), dst_q[r])


def _key_inner_twin(grid, block, ext, kb, ka, out, perm, use_perm, n, d, k, kr, key_row, q, mu, lsh, osh, add,
                    add_polys, kq, pm):
    n, d, k, kr, kq = int(n), int(d), int(k), int(kr), int(kq)
    _check_grid("key_inner", grid, block, n, k)
    e = ext.reshape(-1, k, n)[:d]
    if use_perm:
        e = e[..., perm]
    rows = key_row.astype(np.int64)
    m = _barrett(q.reshape(-1, 1), mu.reshape(-1, 1), lsh.reshape(-1, 1), osh.reshape(-1, 1))
    o = out.reshape(2, k, n)
    for t, key in enumerate((kb, ka)):
        y = key.reshape(-1, kr, n)[:d][:, rows]
        acc = _mul_mod_xp(e[0], y[0], m)
        for j in range(1, d):
            acc = _add(acc, _mul_mod_xp(e[j], y[j], m), m.q)
        if int(add_polys):
            mq = _barrett(*(v.reshape(-1, 1)[:kq] for v in (q, mu, lsh, osh)))
            acc[:kq] = _add(acc[:kq], _mul_mod_xp(add.reshape(-1, kq, n)[t], pm.reshape(-1, 1)[:kq], mq), mq.q)
        o[t] = acc


def _finish_twin(grid, block, cc, t, out, add, perm, use_perm, n, kc, k, add_polys, q, inv, invs):
    n, kc, k, add_polys = int(n), int(kc), int(k), int(add_polys)
    s = out.size // (k * n)
    _check_grid("finish", grid, block, n, s * k)
    qc = q.reshape(-1, 1)
    v = _mul_shoup_xp(_sub(cc.reshape(s, kc, n)[:, :k], t.reshape(s, k, n), qc), inv.reshape(-1, 1),
                      invs.reshape(-1, 1), qc, np)
    if add_polys:
        a = add.reshape(-1, k, n)[:add_polys]
        v[:add_polys] = _add(a[..., perm] if use_perm else a, v[:add_polys], qc)
    out.reshape(s, k, n)[...] = v


def _rescale_prep_twin(grid, block, top, t, n, k1, ql, half, q, half_i):
    n, k1 = int(n), int(k1)
    s = t.size // (k1 * n)
    _check_grid("rescale_prep", grid, block, n, s * k1)
    x = top.reshape(s, 1, n) + half
    x = np.minimum(x, x - ql)
    t.reshape(s, k1, n)[...] = _sub(x % q.reshape(-1, 1), half_i.reshape(-1, 1), q.reshape(-1, 1))


def _tensor_twin(grid, block, a, b, out, n, k, q, mu, lsh, osh):
    n, k = int(n), int(k)
    _check_grid("tensor", grid, block, n, k)
    m = _barrett(q.reshape(-1, 1), mu.reshape(-1, 1), lsh.reshape(-1, 1), osh.reshape(-1, 1))
    (a0, a1), (b0, b1) = a.reshape(2, k, n), b.reshape(2, k, n)
    o = out.reshape(3, k, n)
    o[0] = _mul_mod_xp(a0, b0, m)
    o[1] = _add(_mul_mod_xp(a0, b1, m), _mul_mod_xp(a1, b0, m), m.q)
    o[2] = _mul_mod_xp(a1, b1, m)


#: numpy twin of every kernel, by name (what the CuPy stand-in runs)
TWINS = {
    "hepkg_rns_mul_mod": lambda a, b, q, mu, lsh, osh: _mul_mod_xp(a, b, _barrett(q, mu, lsh, osh)),
    "hepkg_rns_mul_shoup": lambda a, w, ws, q: _mul_shoup_xp(a, w, ws, q, np),
    "hepkg_rns_add_mod": _add,
    "hepkg_rns_sub_mod": _sub,
    "hepkg_rns_neg_mod": lambda a, q: _sub(np.zeros_like(a), a, q),
    "hepkg_rns_ntt_fwd_cols": _ntt_twin(False, "cols"),
    "hepkg_rns_ntt_fwd_rows": _ntt_twin(False, "rows"),
    "hepkg_rns_ntt_inv_rows": _ntt_twin(True, "rows"),
    "hepkg_rns_ntt_inv_cols": _ntt_twin(True, "cols"),
    "hepkg_rns_convert": _convert_twin,
    "hepkg_rns_key_inner": _key_inner_twin,
    "hepkg_rns_finish": _finish_twin,
    "hepkg_rns_rescale_prep": _rescale_prep_twin,
    "hepkg_rns_tensor": _tensor_twin,
}
