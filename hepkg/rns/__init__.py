"""hepkg.rns: an RNS-CKKS engine written once against an array module (numpy on the CPU, CuPy on a GPU).

>>> from hepkg.rns import CKKS
>>> eng = CKKS("rns-test-4096-d3", rotations=[1])
>>> ct = eng.encrypt([1.0, 2.0, 3.0])
>>> eng.decrypt(eng.rotate(ct, 1))[:2].real.round(6)
array([2., 3.])

Modules: arith (primes, 64-bit modular multiply), ntt, encoding, basis (conversion, rescale,
ModUp/ModDown), sampling, keys, keyswitch, ckks (the engine), params, device; on CuPy, kernels (the
CUDA sources beside their numpy twins) and fused (the operations made of them); standin (a strict
CuPy stand-in on numpy that counts kernel launches, for tests and ``bench.rns_ops --launches``).
"""
from .ckks import CKKS, Ciphertext, Plaintext
from .device import DeviceMemoryError, array_module
from .params import MAX_LOG_QP_128, RnsParams, get_params, names

__all__ = ["CKKS", "Ciphertext", "Plaintext", "RnsParams", "get_params", "names", "MAX_LOG_QP_128",
           "DeviceMemoryError", "array_module"]
