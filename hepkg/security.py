"""The HomomorphicEncryption.org security standard's table, used by :mod:`hepkg.he` and :mod:`hepkg.rns`.

Albrecht et al., 2018, Table 1 (ternary secret, classical attacks), extended to N = 2^16, 2^17
as OpenFHE does: the largest log2(PQ) (ciphertext modulus including key-switching special
primes) that keeps each security level.
"""

#: max log2(PQ) per ring degree for 128, 192 and 256-bit classical security.
HE_STANDARD = {
    1024: {128: 27, 192: 19, 256: 14},
    2048: {128: 54, 192: 37, 256: 29},
    4096: {128: 109, 192: 75, 256: 58},
    8192: {128: 218, 192: 152, 256: 118},
    16384: {128: 438, 192: 305, 256: 237},
    32768: {128: 881, 192: 611, 256: 476},
    65536: {128: 1747, 192: 1224, 256: 953},
    131072: {128: 3523, 192: 2454, 256: 1900},
}
