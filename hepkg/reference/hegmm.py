"""HEGMM paper (hegmm_general_matmul.txt): published values."""

#: Table 1: HE vs plaintext op costs (ms), Pyfhel BFV; same measurements as the CSSC paper,
#: plus the ciphertext size.
TABLE1_OPS_MS = {
    "encrypt": {"he": 5.5, "plain": None},
    "decrypt": {"he": 2.57, "plain": None},
    "add": {"he": 0.550, "plain": 0.009},
    "mul_ct": {"he": 20.874, "plain": 0.035},
    "mul_pt": {"he": 4.138, "plain": 0.035},
    "rotate": {"he": 5.35, "plain": 0.13},
}
TABLE1_MESSAGE_MB = 0.5
