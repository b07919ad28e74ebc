"""RNS-CKKS: ciphertexts, encryption and the homomorphic operations, on numpy or CuPy.

Polynomials are (k, N) uint64 arrays in NTT form; a ciphertext stacks its 2 (or 3, before
relinearization) polynomials as (size, k, N). Level l (moduli dropped) holds k = L+1-l limbs.

Scales: every level l has a standard scale s_l (s_0 = 2^scale_bits, s_{l+1} = s_l^2 / q),
the scale a product of two level-l operands has after rescaling. Plaintexts are encoded at
s_l by default, so every ciphertext at a level has that level's scale; ``drop_level`` lands
on it too (multiplication by an integer constant, then a rescale). Additions check that the
scales agree (``SCALE_RTOL``) instead of silently mixing them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import keys as K
from .arith import add_mod, mul_mod, mul_shoup, neg_mod, sub_mod
from .basis import Bases, rescale, to_centered_float
from .device import array_module, check_memory, path as kernel_path, to_device, to_host
from .encoding import Encoder, galois_element
from .keyswitch import rotate_hoisted, switch
from .ntt import automorphism_index
from .params import RnsParams, get_params
from .sampling import Sampler

#: relative difference of scales that add/sub accept (drop_level lands within ~2^-46 of s_l)
SCALE_RTOL = 2.0 ** -30
#: an integer constant used to adjust the scale must be at least this large (its rounding error is 1/2c)
_MIN_ADJUST = 2 ** 20


@dataclass
class Ciphertext:
    """``data``: (size, k, N) NTT form; ``level``: moduli dropped; ``scale``: the exact scale."""

    data: object
    level: int
    scale: float

    @property
    def size(self) -> int:
        return self.data.shape[0]


@dataclass
class Plaintext:
    """``data``: (k, N) NTT form at ``level`` and ``scale``."""

    data: object
    level: int
    scale: float


class CKKS:
    """An RNS-CKKS engine: parameters, keys and operations on one array module.

    ``xp``: 'numpy' (CPU) or 'cupy' (GPU), or the module itself; ``kernels`` (CPU): 'numba' (compiled, the
    default where numba is installed) or 'numpy' (the reference); :attr:`path` says which ran. ``seed``: reproducible
    keys and noise, for tests only: every key and all encryption randomness then follow from a
    public value, so a seed is refused unless ``insecure=True`` is passed too (default: a 256-bit
    key from ``secrets`` and a fresh OS nonce per draw, see :mod:`hepkg.rns.sampling`).
    ``rotations``: left-rotation steps to make Galois keys for. ``keys``: a KeySet to use instead
    of generating one (evaluation-only engines get one without the secret).
    """

    def __init__(self, params: "RnsParams | str", *, xp="numpy", kernels: str | None = None, seed: int | None = None,
                 insecure: bool = False, rotations=(), keys: K.KeySet | None = None):
        if seed is not None and not insecure:
            raise ValueError("a fixed seed makes every key and all encryption randomness public: pass "
                             "insecure=True as well (tests only), or no seed")
        self.params = get_params(params)
        self.xp = array_module(xp, kernels)
        self.path = kernel_path(self.xp)
        self.n, self.slots, self.dnum = self.params.n, self.params.n // 2, self.params.dnum
        self.bases = Bases(self.n, self.params.q_primes, self.params.p_primes, self.xp)
        self.encoder = Encoder(self.n, self.xp)
        self.sampler = Sampler(self.n, seed)
        self._device_array = np.ndarray if self.xp is np else self.xp.ndarray
        self.scales = self._level_scales()
        self._indices: dict = {}
        self.keys = keys if keys is not None else self._keygen()
        if rotations:
            self.gen_rotation_keys(rotations)

    # ------------------------------------------------------------------ setup
    def _level_scales(self) -> list[float]:
        q, s = self.params.q_primes, [2.0 ** self.params.scale_bits]
        for level in range(len(q) - 1):
            s.append(s[-1] * s[-1] / q[len(q) - 1 - level])
        return s

    def _keygen(self) -> K.KeySet:
        sk = K.secret_key(self.bases, self.sampler)
        check_memory(K.switch_key_bytes(self.bases, self.dnum), "the relinearization key", self.xp)
        return K.KeySet(pk=K.public_key(self.bases, self.sampler, sk), sk=sk,
                        relin=K.relin_key(self.bases, self.sampler, sk, self.dnum))

    @property
    def max_level(self) -> int:
        return self.bases.nq - 1

    def _step(self, step: int) -> int:
        return int(step) % self.slots

    def _index(self, step: int):
        """The NTT-order index map of the rotation by ``step``, resident on the engine's array module."""
        if step not in self._indices:
            self._indices[step] = self.xp.asarray(automorphism_index(self.n, galois_element(self.n, step)))
        return self._indices[step]

    def gen_rotation_keys(self, steps) -> None:
        """Make Galois keys for the left-rotation ``steps`` (after a memory estimate)."""
        if self.keys.sk is None:
            raise PermissionError("rotation keys are made with the secret key: this engine has none")
        new = sorted({self._step(s) for s in steps} - set(self.keys.galois) - {0})
        check_memory(len(new) * K.switch_key_bytes(self.bases, self.dnum), f"{len(new)} rotation keys", self.xp)
        for s in new:
            self.keys.galois[s] = K.galois_key(self.bases, self.sampler, self.keys.sk, self._index(s), self.dnum)

    def free_rotation_keys(self, steps) -> None:
        """Drop the Galois keys of ``steps`` (temporary keys), releasing their memory."""
        for s in steps:
            self.keys.galois.pop(self._step(s), None)

    @property
    def rotation_steps(self) -> list[int]:
        return sorted(self.keys.galois)

    # ------------------------------------------------------------------ transfers
    def download(self, ct: Ciphertext) -> Ciphertext:
        """The ciphertext with its data copied to host (numpy) memory."""
        return Ciphertext(to_host(ct.data), ct.level, ct.scale)

    def upload(self, ct: Ciphertext) -> Ciphertext:
        """The ciphertext with its data copied to this engine's array module (the GPU for CuPy)."""
        return Ciphertext(to_device(ct.data, self.xp), ct.level, ct.scale)

    # ------------------------------------------------------------------ encoding, encryption
    def _rows(self, level: int) -> tuple:
        if not 0 <= level <= self.max_level:
            raise ValueError(f"level {level} outside 0..{self.max_level}")
        return self.bases.q_rows(level)

    def encode(self, values, level: int = 0, scale: float | None = None) -> Plaintext:
        """Slot values (at most N/2, zero-padded; numpy or the engine's device arrays) as a plaintext at
        ``level`` (scale: s_level)."""
        values = values if isinstance(values, self._device_array) else np.asarray(values)
        if values.ndim != 1 or values.shape[0] > self.slots:
            raise ValueError(f"expected at most {self.slots} values in a 1-D vector, got shape {values.shape}")
        rows = self._rows(level)
        scale = self.scales[level] if scale is None else float(scale)
        coeffs = self.encoder.encode(self.xp.asarray(values), scale, self.bases.mod(rows))
        return Plaintext(self.bases.ntt(rows).forward(coeffs), level, scale)

    def encrypt(self, pt) -> Ciphertext:
        """Public-key encryption of a plaintext (or of slot values, encoded at level 0)."""
        pt = pt if isinstance(pt, Plaintext) else self.encode(pt)
        rows = self._rows(pt.level)
        k, m = len(rows), self.bases.mod(rows)
        b, a = (t[:k] for t in self.keys.pk)
        v = K.ntt_signed(self.bases, self.sampler.ternary()[0], rows)
        e = K.ntt_signed(self.bases, self.sampler.gaussian(2), rows)
        c0 = add_mod(add_mod(mul_mod(v, b, m), e[0], m.q, self.xp), pt.data, m.q, self.xp)
        c1 = add_mod(mul_mod(v, a, m), e[1], m.q, self.xp)
        return Ciphertext(self.xp.stack([c0, c1]), pt.level, pt.scale)

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        """The complex slots (numpy, N/2) of a ciphertext of size 2 or 3, read from every limb it has:
        what the modulus of its level holds, as the other backends decrypt (a message beyond what the
        first prime holds, at an upper level, is not wrapped)."""
        if self.keys.sk is None:
            raise PermissionError("this engine holds no secret key: it cannot decrypt")
        j = ct.data.shape[1]
        rows = tuple(range(j))
        m, s = self.bases.mod(rows), self.keys.sk[:j]
        acc, power = ct.data[0, :j], s
        for i in range(1, ct.size):
            acc = add_mod(acc, mul_mod(ct.data[i, :j], power, m), m.q, self.xp)
            power = mul_mod(power, s, m)
        coeffs = to_centered_float(self.bases.ntt(rows).inverse(acc), m)
        return to_host(self.encoder.decode(coeffs, ct.scale))

    # ------------------------------------------------------------------ levels
    def drop_level(self, ct: Ciphertext, levels: int = 1) -> Ciphertext:
        """The ciphertext ``levels`` lower, at the standard scale of its new level: each step
        multiplies by round(s_(l+1) q / scale) and rescales by q (message kept, ~2^-46 relative)."""
        for _ in range(levels):
            level = ct.level + 1
            self._rows(level)
            q_last = self.params.q_primes[self.bases.nq - level]
            c = round(self.scales[level] * q_last / ct.scale)
            if c < _MIN_ADJUST:
                raise ValueError(f"cannot drop a level at scale 2^{np.log2(ct.scale):.1f}: rescale first")
            m = self.bases.mod(self._rows(ct.level))
            data = mul_shoup(ct.data, *m.constants([c] * len(m)), m.q, self.xp)
            ct = Ciphertext(rescale(self.bases, data), level, ct.scale * c / q_last)
        return ct

    def match(self, a, b) -> tuple:
        """Ciphertexts/plaintexts a and b at one level (the higher one dropped)."""
        if isinstance(b, Plaintext) and b.level != a.level:
            raise ValueError(f"plaintext at level {b.level}, ciphertext at level {a.level}: encode at the "
                             f"ciphertext's level")
        if a.level < b.level:
            a = self.drop_level(a, b.level - a.level)
        elif b.level < a.level:
            b = self.drop_level(b, a.level - b.level)
        return a, b

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        """Divide by the last prime (rounding): one level down, scale / q."""
        level = ct.level + 1
        self._rows(level)
        q_last = self.params.q_primes[self.bases.nq - level]
        return Ciphertext(rescale(self.bases, ct.data), level, ct.scale / q_last)

    # ------------------------------------------------------------------ arithmetic
    @staticmethod
    def _check_scales(x, y) -> None:
        if abs(x.scale / y.scale - 1) > SCALE_RTOL:
            raise ValueError(f"scales differ (2^{np.log2(x.scale):.4f} vs 2^{np.log2(y.scale):.4f}): "
                             f"rescale or drop levels so both sit at one level's scale")

    def _linear(self, a, b, op) -> Ciphertext:
        a, b = self.match(a, b)
        self._check_scales(a, b)
        m, xp = self.bases.mod(self._rows(a.level)), self.xp
        x = b.data
        if isinstance(b, Plaintext):
            out = xp.array(a.data, copy=True)
            out[0] = op(a.data[0], x, m.q, xp)
            return Ciphertext(out, a.level, a.scale)
        size = max(a.size, b.size)
        out = xp.zeros((size,) + a.data.shape[1:], dtype=np.uint64)
        out[:a.size] = a.data
        out[:b.size] = op(out[:b.size], x, m.q, xp)
        return Ciphertext(out, a.level, a.scale)

    def add(self, a: Ciphertext, b) -> Ciphertext:
        """a + b for a ciphertext or plaintext b (sizes 2 and 3 may be mixed)."""
        return self._linear(a, b, add_mod)

    def sub(self, a: Ciphertext, b) -> Ciphertext:
        return self._linear(a, b, sub_mod)

    def negate(self, a: Ciphertext) -> Ciphertext:
        m = self.bases.mod(self._rows(a.level))
        return Ciphertext(neg_mod(a.data, m.q, self.xp), a.level, a.scale)

    def mul_plain(self, a: Ciphertext, p: Plaintext) -> Ciphertext:
        """a * p, not rescaled (scale multiplies)."""
        a, p = self.match(a, p)
        m = self.bases.mod(self._rows(a.level))
        return Ciphertext(mul_mod(a.data, p.data[None], m), a.level, a.scale * p.scale)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a * b of size-2 ciphertexts: a size-3 ciphertext (relinearize and rescale separately)."""
        if a.size != 2 or b.size != 2:
            raise ValueError("mul needs relinearized (size-2) ciphertexts")
        a, b = self.match(a, b)
        m, xp = self.bases.mod(self._rows(a.level)), self.xp
        if xp is not np:
            return Ciphertext(self.bases.fused.tensor(a.data, b.data, a.level), a.level, a.scale * b.scale)
        (a0, a1), (b0, b1) = a.data, b.data
        mid = add_mod(mul_mod(a0, b1, m), mul_mod(a1, b0, m), m.q, xp)
        return Ciphertext(xp.stack([mul_mod(a0, b0, m), mid, mul_mod(a1, b1, m)]), a.level, a.scale * b.scale)

    def relinearize(self, a: Ciphertext, rescale: bool = False) -> Ciphertext:
        """A size-3 ciphertext back to size 2 with the relinearization key; with ``rescale``, also divided by the
        last prime in the same ModDown (the rescale folded in: one level down, scale / q; a size-2 ciphertext
        is then rescaled alone)."""
        if a.size == 2:
            return self.rescale(a) if rescale else a
        if self.keys.relin is None:
            raise PermissionError("no relinearization key in this engine")
        if rescale:
            level = a.level + 1
            self._rows(level)
            q_last = self.params.q_primes[self.bases.nq - level]
            data = switch(self.bases, a.data[2], a.level, self.keys.relin, self.dnum, add=a.data, add_polys=2,
                          rescale=True)
            return Ciphertext(data, level, a.scale / q_last)
        return Ciphertext(switch(self.bases, a.data[2], a.level, self.keys.relin, self.dnum, add=a.data, add_polys=2),
                          a.level, a.scale)

    # ------------------------------------------------------------------ rotations
    def rotate(self, a: Ciphertext, step: int) -> Ciphertext:
        """Left rotation of the slots by ``step``: X -> X^(5^step) on both polynomials, then a key
        switch of the second from s(X^g) to s (a Galois key for the step is needed)."""
        step = self._step(step)
        if step == 0:
            return a
        self._check_rotation(a, [step])
        c = self.xp.take(a.data, self._index(step), axis=-1)     # C-contiguous, as the kernels read it
        return Ciphertext(switch(self.bases, c[1], a.level, self.keys.galois[step], self.dnum, add=c, add_polys=1),
                          a.level, a.scale)

    def _check_rotation(self, a: Ciphertext, steps) -> None:
        if a.size != 2:
            raise ValueError("rotation needs a relinearized (size-2) ciphertext")
        missing = sorted({s for s in steps if s and s not in self.keys.galois})
        if missing:
            raise KeyError(f"no Galois key for rotation steps {missing}: gen_rotation_keys() first")

    def rotate_hoisted(self, a: Ciphertext, steps) -> dict:
        """{step: rotation by step} for several steps sharing one ModUp decomposition."""
        norm = {s: self._step(s) for s in steps}
        self._check_rotation(a, norm.values())
        todo = sorted({v for v in norm.values() if v})
        k = a.data.shape[1]
        check_memory((len(todo) * 2 * k + len(self.bases.digits(a.level, self.dnum)) * (k + len(self.bases.p_rows)))
                     * self.n * 8, f"{len(todo)} hoisted rotations", self.xp)
        raw = rotate_hoisted(self.bases, a.data, a.level, {s: self.keys.galois[s] for s in todo}, self.dnum,
                             {s: self._index(s) for s in todo}) if todo else {}
        raw[0] = a.data
        return {s: Ciphertext(raw[v], a.level, a.scale) for s, v in norm.items()}
