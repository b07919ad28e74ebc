"""The physical floor of the rns engine's ops on a GPU: the bytes an op must move and the integer multiplies it
must make, over what the device can do (a lower bound under the model below, not a measurement).

Per op at level 0 of a set (N; k = L + 1 limbs of Q; p limbs of P; D digits of alpha_j limbs; ciphertexts of
two polynomials), every array read once and written once, nothing else (intermediates on chip):

- ``ntt``: a ciphertext's 2k limbs in and out, and their twiddle tables (w and its Shoup values);
- ``rotate``: the ciphertext in and out, the switching key's 2D(k + p) limbs, the forward and inverse tables
  of the k + p primes;
- ``hoist_step`` (each further step of a hoisted rotation): the ModUp digits D(k + p) limbs in, the key, the
  rotated ciphertext out;
- ``mul_relin_rescale``: two ciphertexts in, the rescaled one out (2(k - 1) limbs), the relinearization key
  and the tables;
- ``baby_steps``: a hoisted rotation by ``steps`` steps: one ModUp, then each step.

Integer work, in 32-bit multiply-adds (a 64 x 64 -> 128-bit product: 4, its low word alone: 3): a Shoup
product 10 (butterflies, conversions, the division by P), a Barrett product 17 (the tensor product), a term of
the key inner product 7 with a 17 reduction every four terms. The NTT makes (N / 2) log N butterflies per limb,
ModUp the inverse NTT of k limbs, the conversions and the NTT of every extension limb but the digit's own,
ModDown the inverse NTT of 2p limbs, the conversion P -> Q and the NTT of 2k limbs; the rescale the inverse
NTT of 2 limbs and the NTT of 2(k - 1).

The device's peaks from its properties: bandwidth = 2 x memory clock x bus width (DDR), multiply-adds = SMs x
clock x 64 (32-bit multiply-add results per clock per SM on compute capability 8.x and 9.0, CUDA C++
Programming Guide, arithmetic instructions).
"""
from __future__ import annotations

import math

#: 32-bit multiply-adds per operation (see the module docstring)
SHOUP, BARRETT, TERM, REDUCE = 10, 17, 7, 17
#: 32-bit multiply-add results per clock per SM (compute capability 8.x, 9.0)
IMAD_PER_CLOCK_SM = 64


def _shape(params) -> dict:
    from hepkg.rns.basis import digit_rows

    digits = [len(d) for d in digit_rows(len(params.q_primes), 0, params.dnum)]
    return dict(n=params.n, k=len(params.q_primes), p=len(params.p_primes), digits=digits)


def _ntt(limbs: int, n: int) -> float:
    return limbs * n / 2 * math.log2(n) * SHOUP


def _mod_up(s) -> float:
    n, k, p = s["n"], s["k"], s["p"]
    conv = sum(a + a * (k + p - a) + (k + p - a) for a in s["digits"]) * n * SHOUP
    return _ntt(k, n) + conv + _ntt(sum(k + p - a for a in s["digits"]), n)


def _mod_down(s) -> float:
    n, k, p = s["n"], s["k"], s["p"]
    return _ntt(2 * p, n) + 2 * n * (p + p * k + k) * SHOUP + _ntt(2 * k, n) + 2 * k * n * SHOUP


def _inner(s) -> float:
    d = len(s["digits"])
    return 2 * (s["k"] + s["p"]) * s["n"] * (TERM * d + REDUCE * math.ceil(d / 4))


def work(params, steps: int = 22) -> dict:
    """{op: (bytes, 32-bit multiply-adds)} at level 0 of the rns set ``params`` (``steps``: the hoisted
    rotation's steps of ``baby_steps``)."""
    s = _shape(params)
    n, k, p, d = s["n"], s["k"], s["p"], len(s["digits"])
    word, key, tables = 8 * n, 2 * d * (k + p), 4 * (k + p)
    rescale = _ntt(2, n) + _ntt(2 * (k - 1), n) + 2 * (k - 1) * n * (SHOUP + BARRETT)
    step = (word * (d * (k + p) + key + 2 * k), _inner(s) + _mod_down(s))
    return {
        "ntt": (word * 6 * k, _ntt(2 * k, n)),
        "rotate": (word * (4 * k + key + tables), _mod_up(s) + _inner(s) + _mod_down(s)),
        "hoist_step": step,
        "baby_steps": (word * (2 * k + tables) + steps * step[0], _mod_up(s) + steps * step[1]),
        "mul_relin_rescale": (word * (4 * k + 2 * (k - 1) + key + tables),
                              4 * k * n * BARRETT + _mod_up(s) + _inner(s) + _mod_down(s) + rescale),
    }


def device_peaks(props: dict) -> dict:
    """Bandwidth (bytes/s) and 32-bit multiply-adds per second of a CUDA device, from its properties
    (``cupy.cuda.runtime.getDeviceProperties``: memoryClockRate and clockRate in kHz, memoryBusWidth in bits)."""
    return dict(bandwidth=2 * props["memoryClockRate"] * 1e3 * props["memoryBusWidth"] / 8,
                imads=props["multiProcessorCount"] * props["clockRate"] * 1e3 * IMAD_PER_CLOCK_SM)


def floor_us(params, peaks: dict, steps: int = 22) -> dict:
    """{op: dict(bytes, imads, memory_us, compute_us, floor_us)}: the larger of the two times is the floor."""
    out = {}
    for op, (nbytes, imads) in work(params, steps).items():
        mem, comp = 1e6 * nbytes / peaks["bandwidth"], 1e6 * imads / peaks["imads"]
        out[op] = dict(bytes=nbytes, imads=imads, memory_us=mem, compute_us=comp, floor_us=max(mem, comp))
    return out
