"""Published numbers of the SophOMR paper (sophomr_oblivious_message_retrieval.txt), as data.

Line numbers ``l.NNN`` refer to /work/shared/papers/sophomr_oblivious_message_retrieval.txt (an OCR'd text:
exponents, decimal points and Greek letters are often lost; every repair made here is listed in :data:`MISPRINTS`).
Greek letters are spelled out: nu = PerfOMR's bundling parameter (OCR "v"), lambda = bit security (OCR "A"),
rho / nu in Table 6 = false-positive (soundness) / false-negative (completeness) security bits.
Sizes: KB = 1000 bytes, MB = 10^6 bytes (the digests fit 2*n*8 bytes exactly; see tests/test_reference_omr.py).
"""
from __future__ import annotations

import math

#: The paper's scheme labels for hepkg's keys (l.1622-1625, l.1768-1773; "v" in the OCR is nu).
LABELS = {"perfomr": "PerfOMR (ν = 2)", "perfomr-nu16": "PerfOMR (ν = 16)", "sophomr": "SophOMR",
          "perfomd": "PerfOMD (ν = 2)", "perfomd-nu16": "PerfOMD (ν = 16)", "sophomd": "SophOMD"}
#: Experimental setting (Sec. 5, l.1506-1543): single thread, Google n2-standard-8 (Intel Ice Lake), HEXL;
#: k = 50 pertinent payloads of 612 bytes (Zcash transaction size, l.1305); N = 2^16 (primary) and 2^19 (Appx. B).
K, PAYLOAD_BYTES, N_PRIMARY, N_LARGE = 50, 612, 2 ** 16, 2 ** 19
TABLE_COLUMNS = ("digest_s", "decode_ms", "detection_key_mb", "digest_kb")
#: SophOMR's one-thread digest of 2^16 payloads takes under 3 minutes (Sec. 1.1 l.95-97), in seconds
UNDER_S = 180.0

#: Table 3 (l.1620-1629), N = 2^16, k = 50. Units as printed: Digest (s) = server Digest runtime, excluding
#: PerfOMR's preprocessing (Rmk. 4, l.1559-1569); Decode (ms) = client decode runtime; Detection Key (MB), with
#: random key parts compressed to a seed (footnote 19, l.1683); Digest (KB), size of the digest (footnote 20:
#: could shrink ~2x more, Rmk. 6).
TABLE3 = {
    "perfomr": dict(label="PerfOMR (ν = 2)", digest_s=534, decode_ms=12, detection_key_mb=171, digest_kb=567),
    "sophomr": dict(label="SophOMR", digest_s=162, decode_ms=14, detection_key_mb=114, digest_kb=263),
    "perfomd": dict(label="PerfOMD (ν = 2)", digest_s=492, decode_ms=4, detection_key_mb=171, digest_kb=284),
    "sophomd": dict(label="SophOMD", digest_s=113, decode_ms=5, detection_key_mb=142, digest_kb=132),
}

#: Table 7 (Appx. B, l.1766-1775), N = 2^19 (caption OCR'd "N = 217"), k = 50, single thread; same columns and
#: units as Table 3. PerfOMR/PerfOMD appear with nu = 2 and nu = 16 (the two ends of their runtime/digest trade-off).
TABLE7 = {
    "perfomr": dict(label="PerfOMR (ν = 2)", digest_s=3627, decode_ms=12, detection_key_mb=171, digest_kb=568),
    "perfomr-nu16": dict(label="PerfOMR (ν = 16)", digest_s=1386, decode_ms=70, detection_key_mb=171, digest_kb=2840),
    "sophomr": dict(label="SophOMR", digest_s=1107, decode_ms=14, detection_key_mb=114, digest_kb=263),
    "perfomd": dict(label="PerfOMD (ν = 2)", digest_s=3331, decode_ms=4, detection_key_mb=171, digest_kb=284),
    "perfomd-nu16": dict(label="PerfOMD (ν = 16)", digest_s=1004, decode_ms=5, detection_key_mb=171, digest_kb=568),
    "sophomd": dict(label="SophOMD", digest_s=723, decode_ms=5, detection_key_mb=142, digest_kb=132),
}

#: Table 4 (l.1706-1710): BFV parameters. n ring dimension, p plaintext modulus (p = 1 mod 2n), log Q ciphertext
#: modulus bits, log PQ bits including the hybrid key-switching special modulus P (l.1692-1695), lambda bit security
#: (Lattice Estimator, commit "5c25455" as OCR'd, l.1524). dnum is not printed: the authors' code uses dnum = 2 for
#: SophOMR/SophOMD (see AUTHORS_CODE); PerfOMR (SEAL) has a 60-bit special modulus (log PQ - log Q = 60), the
#: "one extreme" of hybrid key switching the paper criticises (Sec. 4.3, l.1397-1400). OCR: "2%" = 2^15,
#: "2'©" = 2^16, "1209" = 120.9.
TABLE4 = {
    "perfomr": dict(label="PerfOMR", n=2 ** 15, p=65537, log_q=857, log_pq=917, security_bits=120.9),
    "sophomr": dict(label="SophOMR", n=2 ** 16, p=786433, log_q=1140, log_pq=1740, security_bits=128.6),
}
#: Table 4's SophOMR parameters are also SophOMD's (Sec. 5: "The OMD experiments use the same parameter sets", l.1663).

#: Table 5 (l.1712-1716): BFV parameters after ring switching (the digest's ring), same columns as Table 4
#: (no p column: p = 786433 throughout). OCR: SophOMR's "2%" is 2^14 (the code's 2^16 / dim_trace 4, and the
#: 263 KB digest = 2 * 2^14 * 8 bytes); SophOMD "213" = 2^13 (2^16 / 8; 132 KB = 2 * 2^13 * 8 bytes).
TABLE5 = {
    "sophomr": dict(label="SophOMR", n=2 ** 14, log_q=120, log_pq=240, security_bits=244.6),
    "sophomd": dict(label="SophOMD", n=2 ** 13, log_q=120, log_pq=180, security_bits=154.4),
}

#: Table 6 (l.1762-1765): private-signaling (PS, Construction 1) parameters. n_ps = n', q_ps = q' (equal to the
#: BFV p), sigma error std-dev, h Hamming weight of the ternary secret (code: also of the signal randomness),
#: ell = l repetitions, r range parameter, lambda security bits, rho false-positive (soundness) bits
#: = ell * log2(q' / (2r + 1)) (Rmk. 2, l.1024-1032), nu false-negative (completeness) bits, PS key and signal in KB
#: (PS key with its random part as a seed, footnote 21, l.1751). OCR: "05" = 0.5, "940" = 94.0, "214" = 21.4,
#: "1284" = 128.4. PerfOMR's PS reaches only 94-bit security and 18-bit completeness (l.1532-1534, l.1720-1723).
TABLE6 = {
    "perfomr": dict(label="PerfOMR", n_ps=1024, q_ps=65537, sigma=0.5, h=32, ell=2, r=19, security_bits=94.0,
                    rho=21.4, nu=17.6, pk_kb=2.2, signal_kb=2.2),
    "sophomr": dict(label="SophOMR", n_ps=1024, q_ps=786433, sigma=0.5, h=80, ell=2, r=40, security_bits=128.4,
                    rho=26.5, nu=30.7, pk_kb=2.6, signal_kb=2.6),
}

#: Table 1 (l.616-624), cost of Alg. 1 = wide MatMul of a k x N plaintext matrix with N = s*n (n ring dimension,
#: k a power of two, k = g*b; Horner-style BSGS then log(n/k) block-summation rotations). The OCR kept only
#: "sk", "<s-b+g+log(n/k)" and "<2+log(n/k)"; the cells below are those, checked against Alg. 1 (l.575-607):
#: exactly s*(b-1) + (g-1) + log2(n/k) rotations (log2(n/k) - 1 row + 1 column rotation in the block sum)
#: and keys {1, b} plus log2(n/k) block-summation keys. Minimised at g ~ sqrt(s*k) (l.564-565).
TABLE1 = {"ptxt_mult": "s*k", "rotation": "<= s*b + g + log2(n/k)", "rot_key": "<= 2 + log2(n/k)",
          "exact_rotation": "s*(b-1) + (g-1) + log2(n/k)", "optimum": "g ~ sqrt(s*k)"}

#: Table 2 (l.1466-1473), cost of Alg. 7 (PerfOMR's single-key MatMul, Eq. 2) and Alg. 8 (SophOMR's tall
#: BSGS MatMul) for an N x k plaintext matrix times a sparsely packed ct(v), N = s*n, k = g*b. The OCR lost Alg. 8's
#: key count; the text says two keys (Rot^1 and Rot^b, l.1416). Alg. 7 does exactly k - 1 rotations, Alg. 8 exactly
#: (b-1) + s*(g-1). Rotations of Alg. 8 are minimised at b ~ sqrt(s*k) (l.1420).
TABLE2 = {
    "alg7": {"ptxt_mult": "s*k", "rotation": "k", "rot_key": "1", "exact_rotation": "k - 1"},
    "alg8": {"ptxt_mult": "s*k", "rotation": "b + s*g", "rot_key": "2", "exact_rotation": "(b-1) + s*(g-1)",
             "optimum": "b ~ sqrt(s*k)"},
}

#: Speedups and reductions as stated in the text, each with the Table columns that recompute it:
#: (stated factor, where stated, table name, numerator (scheme, column), denominator (scheme, column)).
#: The stated factor is a ratio printed to one decimal; the two N = 2^19 Digest speedups disagree with Table 7
#: (see MISPRINTS): 3627/1107 = 3.28 (text 3.0x) and 1386/1107 = 1.25 (text 1.1x).
SPEEDUPS = {
    "omr-digest-2^16": (3.3, "Abstract l.15; Sec. 1.1 l.118; Sec. 5 l.1573", "TABLE3",
                        ("perfomr", "digest_s"), ("sophomr", "digest_s")),
    "omr-digest-size-2^16": (2.2, "Abstract l.15; l.118; l.1577", "TABLE3",
                             ("perfomr", "digest_kb"), ("sophomr", "digest_kb")),
    "omr-key-size-2^16": (1.5, "Abstract l.16; l.119; l.1575", "TABLE3",
                          ("perfomr", "detection_key_mb"), ("sophomr", "detection_key_mb")),
    "omd-digest-2^16": (4.4, "Sec. 1.1 l.130; Sec. 5 l.1667", "TABLE3",
                        ("perfomd", "digest_s"), ("sophomd", "digest_s")),
    "omr-digest-2^19-vs-nu2": (3.0, "Appx. B l.1744", "TABLE7",
                               ("perfomr", "digest_s"), ("sophomr", "digest_s")),
    "omr-digest-size-2^19-vs-nu2": (2.2, "Appx. B l.1745", "TABLE7",
                                    ("perfomr", "digest_kb"), ("sophomr", "digest_kb")),
    "omr-digest-2^19-vs-nu16": (1.1, "Appx. B l.1746-1747", "TABLE7",
                                ("perfomr-nu16", "digest_s"), ("sophomr", "digest_s")),
    "omr-digest-size-2^19-vs-nu16": (10.8, "Appx. B l.1747", "TABLE7",
                                     ("perfomr-nu16", "digest_kb"), ("sophomr", "digest_kb")),
}
#: Table 7's Digest speedups recomputed from its columns, to the printed precision of 3 significant digits
#: (the table prints no ratio; the text's 3.0x / 1.1x at l.1744-1747 disagree).
TABLE7_SPEEDUPS = {"omr-digest-2^19-vs-nu2": 3.28, "omr-digest-2^19-vs-nu16": 1.25}
#: Compression-phase speedups (only in the text; Figures 2-3 show the phases without numbers).
COMPRESSION_SPEEDUPS = {
    "omr-2^16": (7.4, "Abstract l.27; l.108; Sec. 5 l.1587 (excluding PerfOMR's preprocessing)"),
    "omd-2^16": (335, "l.130; Sec. 5 l.1670-1672 (SophOMD compresses in 'only one second')"),
    "omd-2^19-vs-nu2": (1343, "Appx. B l.1755-1758 (SophOMD compresses in 'just 2 seconds')"),
    "omd-2^19-vs-nu16": (190, "Appx. B l.1758"),
}

#: Figure 2 (l.1631-1651, N = 2^16, k = 50) and Figure 3 (l.1777-1792, N = 2^19): stacked bars per scheme with the
#: phases Preprocess (blue mesh, PerfOMR only: the time PerfOMR excludes from its own timing, Rmk. 4), Affine
#: (Sec. 4.4), RangeCheck (Sec. 3.3) and Compress (Sec. 4.1). The paper prints no per-phase number in the figures
#: (the OCR kept only the legend and axis ticks 0m-6m for Fig. 2, 0m-60m for Fig. 3). What the text reads off them:
#: Compress is SophOMR's main gain (7.4x, 335x for OMD), Affine "considerable speedup", RangeCheck "slight
#: increase" for SophOMR (larger parameters), SophOMD compresses in ~1 s (2^16) and ~2 s (2^19).
#: "derived_2^16" is our arithmetic from Table 3 + those ratios, not the paper's: SophOMR and SophOMD share
#: the detection phase (same parameters), so SophOMR's compression ~ 1 + (162 - 113) = 50 s, detection ~ 112 s;
#: PerfOMD's compression ~ 335 * 1 s, detection ~ 492 - 335 = 157 s; PerfOMR's compression ~ 7.4 * 50 = 370 s,
#: detection ~ 534 - 370 = 164 s (consistent with PerfOMD's 157 s to ~4%). Seconds, rough (the "1 s" is rounded).
FIGURE2 = {
    "phases": ("Preprocess", "Affine", "RangeCheck", "Compress"),
    "printed_numbers": None,
    "axis_ticks_min": (0, 2, 4, 6),
    "text": {"sophomd_compress_s": 1, "compress_speedup_omr": 7.4, "compress_speedup_omd": 335,
             "affine": "considerable speedup (BSGS), l.1588-1590", "rangecheck": "slight increase, l.1590-1593",
             "preprocess": "PerfOMR only, needs >= 25 GB RAM, excluded from Tables 3 and 7, l.1559-1569"},
    "derived_2^16": {"sophomr": dict(detect_s=112, compress_s=50), "sophomd": dict(detect_s=112, compress_s=1),
                     "perfomr": dict(detect_s=164, compress_s=370), "perfomd": dict(detect_s=157, compress_s=335)},
}
FIGURE3 = {"phases": FIGURE2["phases"], "printed_numbers": None, "axis_ticks_min": (0, 20, 40, 60),
           "text": {"sophomd_compress_s": 2, "compress_speedup_vs_nu2": 1343, "compress_speedup_vs_nu16": 190}}

#: Every other quantitative claim of the abstract, introduction, Sec. 4-5 and the appendices, as
#: (name, statement, source) for a notebook to evaluate against hepkg's measurements or models.
CLAIMS = (
    ("omr-digest-speedup-2^16", "SophOMR's Digest is 3.3x faster than PerfOMR (nu = 2) at N = 2^16, k = 50, "
     "612-byte payloads (Table 3: 534 s vs 162 s)", "Abstract l.14-17; Sec. 1.1 l.117-120; Sec. 5 l.1572-1574"),
    ("omr-digest-size-2^16", "SophOMR's digest is 2.2x smaller than PerfOMR's (567 KB vs 263 KB)",
     "Abstract l.15; l.118-119; Sec. 5 l.1576-1579"),
    ("omr-key-size-2^16", "SophOMR's detection key is 1.5x smaller than PerfOMR's (171 MB vs 114 MB), through "
     "hybrid key switching", "Abstract l.16; l.119; Sec. 5 l.1575-1576"),
    ("omr-compress-speedup-2^16", "SophOMR's homomorphic compression is 7.4x faster than PerfOMR's, even "
     "excluding PerfOMR's preprocessing", "Abstract l.25-27; l.107-108; Sec. 5 l.1584-1588"),
    ("omr-affine-faster", "SophOMR's Affine Transform (BSGS, two rotation keys) is considerably faster than "
     "PerfOMR's (single key)", "Sec. 5 l.1588-1590; Sec. 4.4.2 l.1494-1499"),
    ("omr-rangecheck-slower", "SophOMR's Range Check is slightly slower than PerfOMR's (larger parameters)",
     "Sec. 5 l.1590-1593"),
    ("omr-under-3-minutes", "SophOMR digests 2^16 payloads in under 3 minutes on one thread (2.5 ms/payload)",
     "Sec. 1.1 l.95-97"),
    ("omd-digest-speedup-2^16", "SophOMD's Digest is 4.4x faster than PerfOMD (nu = 2) (492 s vs 113 s)",
     "Sec. 1.1 l.128-131; Sec. 5 l.1666-1668"),
    ("omd-compress-speedup-2^16", "SophOMD compresses in about one second, 335x faster than PerfOMD",
     "Sec. 1.1 l.130-131; Sec. 5 l.1669-1672"),
    ("omd-key-larger-than-omr", "SophOMD's detection key is larger than SophOMR's (extra block-summation "
     "rotation keys for fewer MatMul rows) but smaller than PerfOMR's (142 vs 114 vs 171 MB)", "Sec. 5 l.1674-1677"),
    ("rotations-sqrt-n", "SophOMR's compression needs O(sqrt(N)) rotations, PerfOMR's O(N)",
     "Sec. 1.1 l.105-107; Sec. 1.2.2 l.243-245"),
    ("stacking-sqrt-t", "Stacking the t + 1 compression matrices into one ((t+1)k) x N MatMul cuts rotations by "
     "about sqrt(t + 1) versus t + 1 separate k x N MatMuls", "Sec. 4.1 l.1344-1352; Sec. 1.2.2 l.255-260"),
    ("affine-rotations-sqrt-k", "BSGS reduces the Affine Transform's rotations from O(k) to O(sqrt(k)) "
     "(k = n' = 1024 here)", "Sec. 4.4.2 l.1497-1499"),
    ("ring-switch-cheap", "Ring switching costs about one key switch", "Sec. 4.2 l.1383-1385"),
    ("compression-deterministic", "SophOMR's compression has no failure probability (deterministic)",
     "l.246-248; footnote 13 l.1300-1301"),
    ("digest-size-remark6", "With PerfOMR's low-level-modulus trick SophOMR's digest would shrink a further ~2x",
     "Rmk. 6 l.1604-1610, l.1653-1655"),
    ("perfomr-preprocess-ram", "PerfOMR's excluded preprocessing needs at least 25 GB of RAM", "Rmk. 4 l.1562-1564"),
    ("perfomr-nu2-free", "PerfOMR with nu = 2 costs nearly no extra runtime or digest size over nu = 1; nu > 2 "
     "does not help at N = 2^16", "Rmk. 5 l.1595-1603"),
    ("ps-security", "SophOMR's PS parameters give 128-bit security and 30-bit completeness; PerfOMR's only 94-bit "
     "and 18-bit (Table 6: 128.4/30.7 vs 94.0/17.6)", "Sec. 5 l.1529-1534; Appx. A l.1718-1723"),
    ("he-standard", "SophOMR uses n = 2^16 to meet the HE standard's 128 bits; PerfOMR's n = 2^15, log PQ = 917 "
     "gives 120.9 bits (Table 4)", "Sec. 5 l.1526-1529; Appx. A l.1696-1699"),
    ("omr-digest-speedup-2^19-nu2", "At N = 2^19 SophOMR's Digest is 3.0x faster than PerfOMR (nu = 2) "
     "(Table 7's columns give 3627/1107 = 3.28x)", "Appx. B l.1743-1744; Table 7 l.1768-1770"),
    ("omr-digest-size-2^19-nu2", "At N = 2^19 SophOMR's digest is 2.2x smaller than PerfOMR's (nu = 2)",
     "Appx. B l.1744-1745"),
    ("omr-digest-speedup-2^19-nu16", "At N = 2^19 SophOMR's Digest is 1.1x faster than PerfOMR (nu = 16) "
     "(Table 7's columns give 1386/1107 = 1.25x)", "Appx. B l.1745-1747; Table 7 l.1769-1770"),
    ("omr-digest-size-2^19-nu16", "At N = 2^19 SophOMR's digest is 10.8x smaller than PerfOMR's (nu = 16)",
     "Appx. B l.1747"),
    ("perfomr-decode-nu16", "PerfOMR's Decode runtime grows with nu = 16 (Table 7: 70 ms vs 12 ms)",
     "Appx. B l.1748-1749"),
    ("omd-compress-2^19", "At N = 2^19 SophOMD compresses in about 2 s: 1343x faster than PerfOMD (nu = 2), "
     "190x faster than PerfOMD (nu = 16)", "Appx. B l.1753-1758"),
)
#: Figures the paper cites from other work (not its own measurements, so not claims judged here), as
#: (name, statement, source).
CITED = (
    ("lt22-baseline", "The original OMR [LT22] took over 20 hours for 2^19 payloads (155 ms/payload); PerfOMR "
     "reported 15x faster", "Sec. 1 l.82-90"),
)

#: Facts about the authors' public implementation, github.com/keewoolee/SophOMR (paper footnote 5 / 16, l.134,
#: l.1555): C++ with OpenFHE (README: tested with v1.4.0, HEXL backend) and NTL. Read at HEAD 998c418 (2026-01-28);
#: the paper-era commit 8b5da6c (2024-11-05, "adding files") has the same parameters and algorithms in headers.
#: Each fact is (topic, fact, path at HEAD). Code was read, not copied.
AUTHORS_CODE = {
    "repo": "keewoolee/SophOMR",
    "commit": "998c41843fc84903701620b1cf1141e12342ff86",
    "paper_era_commit": "8b5da6cc930dc6961948cd31df532d78a9b55990",
    "license": "Apache-2.0",
    "invocations": {"smoke": "./test OMD 65536 16", "omr-2^16": "./test OMR 65536 50 250",
                    "omd-2^16": "./test OMD 65536 50", "omr-2^19": "./test OMR 524288 50 250",
                    "omd-2^19": "./test OMD 524288 50", "all": "python3 -u benchmark.py (6-7 compute-hours)"},
    "openfhe": {"scheme": "BFVrns", "key_switching": "HYBRID", "ring_dim": 2 ** 16, "plaintext_modulus": 786433,
                "multiplicative_depth": 28, "dnum": 2, "scaling_mod_size": 60,
                "comp_multiplicative_depth": 1, "comp_dnum": {"omr": 1, "omd": 2},
                "dim_trace": {"omr": 4, "omd": 8}},
    "ps": dict(n_ps=1024, q_ps=786433, ell=2, h=80, sigma=0.5),
    "facts": (
        ("params", "Every predefined config uses n = 2^16, p = 786433, HYBRID key switching with NumLargeDigits "
         "(dnum) 2, ScalingModSize 60, MultiplicativeDepth 28 for detection; the compression/ring-switch "
         "context has depth 1, dnum 1 (OMR) or 2 (OMD), ring 2^16 / dim_trace with dim_trace 4 (OMR) or 8 (OMD). "
         "These reproduce Tables 4-5: log Q = 19 x 60 = 1140, P = ceil(19/2) x 60 = 600 bits (log PQ 1740); "
         "ring-switch log Q = 2 x 60 = 120, P = 120 (dnum 1, OMR) or 60 (dnum 2, OMD) bits",
         "src/param.cpp; src/global.cpp; src/setup.cpp (initBFVparam, printParam); src/sophomr.cpp"),
        ("params", "PS parameters (n', q', ell, h, sigma) = (1024, 786433, 2, 80, 0.5): ternary secret and signal "
         "randomness of Hamming weight 80, discrete Gaussian errors of sigma 0.5; pk is a full length-n' RLWE "
         "vector, a signal is (a in Z_q'^n', b in Z_q'^ell)", "src/global.cpp; src/signal.cpp"),
        ("range-check", "RangeCheck per (PV ciphertext, ell): square X, evaluate the monic degree-40 polynomial "
         "P(Y) = prod_{i=0}^{39} (Y - i^2) at Y = X^2 (we checked the stored 41 coefficients mod 786433 equal this "
         "product), so the zeros are |X| <= 39 = r - 1 for r = 40 (79 values, not 2r + 1 = 81); then X^(p-1) "
         "(Fermat), 1 - result, and the product over ell = 2",
         "src/global.cpp (coeff_rangeCheck); src/detect.cpp (rangeCheck)"),
        ("paterson-stockmeyer", "PS over the 6 x 8 coefficient table: baby powers Y^1..Y^8 and giant powers "
         "(Y^8)^1..(Y^8)^5 by a square/multiply ladder (7 + 4 ct-ct products), 6 groups of 7 plaintext-constant "
         "products, group g > 0 multiplied by (Y^8)^g without relinearisation (5 products) and one "
         "relinearisation of the sum; ct-ct depth 1 (square) + 7 (PS) = 8",
         "src/detect.cpp (powers, patersonStockmeyer)"),
        ("fermat", "X^(p-1) with p - 1 = 3 * 2^18 by square-and-multiply: 19 squarings + 1 product (depth 20); "
         "so one ell-branch is 37 ct-ct products at depth 28, the ell-product adds 1 (29 sequential levels "
         "against MultiplicativeDepth 28; OpenFHE sizes Q from a noise estimate)", "src/detect.cpp (FLT, product)"),
        ("affine", "Affine Transform = tall BSGS MatMul (Alg. 8) on the encrypted PS secret, sparsely packed n/n' "
         "= 64 times: b1 = ceil(sqrt(n' * s * ell)) baby steps by rotation 1 shared by all s ciphertexts and both "
         "ell, g1 = ceil(n'/b1) giant steps (Horner, rotation by b1) per (ciphertext, ell); rotations "
         "(b1 - 1) + s*ell*(g1 - 1), plaintext products s*ell*n'; diagonals encoded inside the timed region; "
         "then subtract b. Top-level rotation keys {1, b1}. N = 2^16: b1 = 46, g1 = 23, 89 rotations, 2048 "
         "products; N = 2^19: b1 = 128, g1 = 8, 239 rotations, 16384 products",
         "src/detect.cpp (affine); src/setup.cpp (updateGlobal); src/sophomr.cpp"),
        ("compress", "Compression = one wide BSGS MatMul (Alg. 1) of the stacked [C; D_1; ...; D_t] "
         "(k' = k(t+1) rows padded to a power of two; D_i = Vandermonde C times diag(payload slot i), computed "
         "mod p inside the timed region) with PV: b2 = ceil(sqrt(k'/s)) baby steps per ciphertext, "
         "g2 = ceil(k'/b2) giant steps on the ciphertext sum, log2(n/(2k')) row + 1 column block-summation "
         "rotations, then ring switching (1 rotation, 2 mask products, mod-down to one 60-bit limb, keep every "
         "dim_trace-th coefficient). OMR 2^16: k' = 16384, b2 = g2 = 128, 257 rotations, 16384 products; OMD "
         "2^16: k' = 64, b2 = g2 = 8, 25 rotations, 64 products (see authors_code_counts)",
         "src/compress.cpp (compress, ringSwitch, computeVandermonde); src/setup.cpp (updateGlobal)"),
        ("ring-switch", "The compression key is sk_trace(X^dim_trace), so ring switching is coefficient "
         "extraction; its one key switch (top-level key -> compression key, after mod-down to 2 limbs) runs at "
         "the end of RangeCheck and is timed there", "src/setup.cpp (liftsk); src/detect.cpp (rangeCheck)"),
        ("payloads", "A 612-byte payload fills t = ceil(612*8 / log2 p) = 250 slots, each simulated as a uniform "
         "element of Z_p (not real bytes); the paper's 'e.g. t = 300' (l.1311) is an illustration",
         "src/setup.cpp (updateGlobal, simulatePayloads); src/global.cpp"),
        ("signals", "Only the k pertinent signals are real PS signals; the other N - k are uniform (a, b)",
         "src/setup.cpp (simulateSignals)"),
        ("keys", "Detection key = relinearisation key and rotation keys {1, b1} at the top level (dnum 2), the "
         "top->compression switching key, compression rotation keys {1, b2, n/2, n_trace/2, k'*2^j}, and the "
         "encrypted PS secret; the OMD's small k' = 64 needs 9 block-summation keys vs 1 for OMR (paper l.1674)",
         "src/sophomr.cpp; src/setup.cpp (saveKeys)"),
        ("timing", "Digest = Affine + RangeCheck + Compression wall-clock timers (std::chrono), mean +- std over "
         "5 runs; excludes key generation and payload/signal simulation, includes all plaintext encoding and the "
         "Vandermonde-times-payload products; Decode (ms) covers decryption, Newton's identities, NTL "
         "Cantor-Zassenhaus root finding and a Vandermonde inverse. Single-threading is not set in the code or "
         "benchmark.py (OpenFHE's OpenMP must be limited by the environment/build)",
         "src/sophomr.cpp; benchmark.py; src/decode.cpp"),
        ("revision", "benchmark.py labels the default runs 'Table 4 / Figure 2' and the N = 2^19 runs 'Table 8 / "
         "Figure 4' and adds varying-k and varying-t figures: the HEAD code follows a later paper revision than "
         "this text (Tables 3 and 7)", "benchmark.py; README.md"),
    ),
}


def authors_code_counts(N: int, k: int = K, payload_bits: int = PAYLOAD_BYTES * 8, n: int = 2 ** 16,
                        p: int = 786433, n_ps: int = 1024, ell: int = 2, dim_trace: int = 4) -> dict:
    """Baby/giant steps, rotations and plaintext products of the authors' code for one configuration.

    Our re-derivation of their parameter formulas (src/setup.cpp updateGlobal) and loop counts (src/detect.cpp,
    src/compress.cpp). OMD: ``payload_bits=0, dim_trace=8``. ``compress_rotations`` includes the block sum
    (``block_rotations``: row rotations plus the column swap) and ring switching's one rotation; ``*_ptxt_mults``
    count plaintext-ciphertext products, ``rangecheck_ct_mults`` ciphertext-ciphertext ones.
    """
    t = math.ceil(payload_bits / math.log2(p))
    s = math.ceil(N / n)
    b1 = math.ceil(math.sqrt(n_ps * s * ell))
    g1 = math.ceil(n_ps / b1)
    rows = k * (t + 1)
    rows_po2 = 1 << (rows - 1).bit_length()
    b2 = math.ceil(math.sqrt(rows_po2 / s))
    g2 = math.ceil(rows_po2 / b2)
    block = int(math.log2(n // 2 // rows_po2)) + 1
    comp_keys = {1, b2, n // 2, n // dim_trace // 2} | {rows_po2 * 2 ** j for j in range(block - 1)}
    return dict(t=t, s=s, b1=b1, g1=g1, rows=rows, rows_po2=rows_po2, b2=b2, g2=g2,
                affine_rotations=(b1 - 1) + s * ell * (g1 - 1), affine_ptxt_mults=s * ell * n_ps,
                compress_rotations=s * (b2 - 1) + (g2 - 1) + block + 1, compress_ptxt_mults=s * rows_po2,
                ring_switch_rotations=1, ring_switch_ptxt_mults=2,
                block_rotations=block, rangecheck_ct_mults=s * (ell * 37 + ell - 1),
                top_rot_keys=2, comp_rot_keys=len(comp_keys), ring_switch_n=n // dim_trace)


#: authors_code_counts for the paper's four configurations (hepkg key, N).
AUTHORS_CODE_COUNTS = {
    ("sophomr", 2 ** 16): authors_code_counts(2 ** 16),
    ("sophomd", 2 ** 16): authors_code_counts(2 ** 16, payload_bits=0, dim_trace=8),
    ("sophomr", 2 ** 19): authors_code_counts(2 ** 19),
    ("sophomd", 2 ** 19): authors_code_counts(2 ** 19, payload_bits=0, dim_trace=8),
}

#: OCR problems and misprints / inconsistencies, as (where, what, evidence).
MISPRINTS = (
    ("Appx. B l.1744 vs Table 7 l.1768-1770", "text says SophOMR's Digest is 3.0x faster than PerfOMR (nu = 2) "
     "at N = 2^19", "Table 7: 3627 / 1107 = 3.28x"),
    ("Appx. B l.1746 vs Table 7 l.1769-1770", "text says 1.1x faster than PerfOMR (nu = 16) at N = 2^19",
     "Table 7: 1386 / 1107 = 1.25x; both text figures fit a SophOMR Digest of ~1205-1229 s, not 1107 s (our "
     "guess: an older measurement)"),
    ("Table 6 / Rmk. 2 vs authors' code", "rho = ell*log2(q'/(2r+1)) with r = 40 assumes the window [-r, r] "
     "(81 values) and Alg. 6's g(X) = X prod_{i=1}^{r}(X^2 - i^2) has degree 2r + 1 = 81",
     "the code's polynomial prod_{i=0}^{39}(X^2 - i^2) (degree 80) accepts |X| <= 39 (79 values): "
     "rho = 26.56, printed 26.5 (conservative)"),
    ("Table 3 l.1622 vs Table 7 l.1768", "PerfOMR (nu = 2) digest 567 KB at N = 2^16 but 568 KB at N = 2^19 "
     "(PerfOMD 284 in both)", "rounding or a real 1 KB growth with N; unexplained"),
    ("Sec. 4.1 l.1310-1311", "'t = 300 for typical HE parameters' for a 612-byte payload",
     "the authors' code packs log2(786433) = 19.6 bits a slot: t = 250 (16-bit slots would give 306)"),
    ("Table 7 caption l.1775", "OCR 'N = 217'", "N = 2^19 (Appx. B title l.1733, Fig. 3 caption l.1792)"),
    ("l.83, l.96, l.1537-1547, l.1551, l.1571, l.1629, l.1651", "OCR exponents: \"2'°\", \"2'¢\", \"2!°\", "
     "\"2'5\", \"216\", \"219\" etc.", "2^16 where 2.5 ms/payload * 2^16 = 162 s and 3 h digests; 2^19 where "
     "155 ms * 2^19 = 22.6 h (> 20 h, l.83) and Bitcoin's ~2^19 transactions/day (l.1551, footnote 17); "
     "'N = 212,221 223' (PerfOMR's sizes, l.1546) is illegible"),
    ("Sec. 5 l.1527", "OCR 'n = 210'", "n = 2^16 (Table 4, l.1697)"),
    ("Tables 4-6 l.1707-1714, l.1763-1764", "OCR dropped decimal points and exponents: '1209', '940', '214', "
     "'1284', '05', '2%', \"2'©\", '213'", "120.9, 94.0, 21.4, 128.4, 0.5, 2^15 or 2^14, 2^16, 2^13 (rho "
     "recomputes to 21.43 / 26.49; digests 263 / 132 KB = 2 * 2^14 / 2^13 * 8 bytes)"),
    ("Tables 1-2 l.616-624, l.1466-1473", "OCR lost most cells (Table 1 keeps 'sk', '<s-b+g+log(n/k)', "
     "'<2+log(n/k)'; Table 2 loses Alg. 8's key count)", "reconstructed from Algs. 1, 7, 8 and l.1416 ('two "
     "rotation keys'); see TABLE1, TABLE2"),
    ("Table 6 header l.1762, throughout", "OCR Greek letters: 'v' = nu, 'o' = sigma, '(' = ell, 'A' = lambda, "
     "'P' = rho; 'O(v/N)' = O(sqrt N)", "context"),
    ("Sec. 5 l.1524", "Lattice Estimator commit OCR'd '5¢c25455'", "probably 5c25455; unverified"),
    ("Def. 5 l.856", "OMD correctness printed 'For k < |M|'", "Def. 3 (l.801) has k >= |M|; k < |M| cannot "
     "be meant (OCR or misprint)"),
    ("Sec. 4.1 l.1344-1345", "'rotations required in k x N MatMul is O(sqrt(k))'", "Table 1 gives ~2 sqrt(s*k) "
     "with s = N/n; O(sqrt k) only for fixed N (the intro's O(sqrt N) is the fixed-k view)"),
    ("Fig. 2 l.1649", "axis ticks 0m-6m while PerfOMR's Digest is 534 s = 8.9 min plus preprocessing",
     "further ticks lost in OCR (or bars cut); no per-phase numbers are printed"),
    ("authors' code src/param.cpp", "config 'OMR_65536_50_256' sets payload_size 4930 bits",
     "ceil(4930 / log2 786433) = 252 slots, not 256 (the 64/128/512 configs match their names); not used by "
     "this paper's tables"),
    ("authors' code src/detect.cpp vs src/global.cpp", "MultiplicativeDepth 28", "our count of sequential ct-ct "
     "products in RangeCheck is 29 (1 + 7 + 20 + 1); it runs correctly, so OpenFHE's noise-based modulus has slack"),
)
