"""CSSC paper (cssc_sparse_matvec.txt): published values."""

#: Table 1: per-operation cost in ms, Pyfhel BFV N=8192 t=65537, Xeon Silver 4114, one thread.
#: "plain" is the paper's plaintext counterpart of the operation.
TABLE1_OPS_MS = {
    "encrypt": {"he": 5.501, "plain": None},
    "decrypt": {"he": 2.570, "plain": None},
    "add": {"he": 0.550, "plain": 0.009},
    "mul_ct": {"he": 20.874, "plain": 0.035},
    "mul_pt": {"he": 4.138, "plain": 0.035},
    "rotate": {"he": 5.350, "plain": 0.130},
}

#: Table 4: noise budget (bits) after 0..6 repeated products, Pyfhel BFV N=8192 t=65537,
#: qi [60,40,40,60] (the paper's Sec. 5 parameter set).
TABLE4_NOISE_BITS = {
    "mul_ct": [146, 114, 81, 48, 15, 0, 0],
    "mul_pt": [146, 121, 96, 71, 45, 19, 0],
}

#: Table 3: the cloud's op counts per step, as printed (n_ct ciphertexts, C_max columns);
#: depth "1M + 1C" is one ct x ct and one ct x pt product: 2.
TABLE3_FORMULA = {
    "mul_ct": "n_ct", "mul_pt": "n_ct", "rotate": "n_ct * log2(C_max)", "add": "n_ct * log2(C_max)", "depth": "1M + 1C",
}

#: Sec. 5.3: the measured size of one ciphertext, used by the paper for its approximate memory.
CIPHERTEXT_MB = 0.52

#: Table 5: time (s) of CSSC ("ours"), the diagonal method, HEGMM and HETAL, and the printed speedup
#: (best baseline / ours). None: "> 3 days" (did not finish).
TABLE5_TIME_S = {
    "arc130": dict(rows=130, cols=130, nnz=1354, ours=0.25, diagonal=7.52, hegmm=9.83, hetal=8.33, speedup=30.08),
    "stat96v5": dict(rows=2307, cols=75779, nnz=233921, ours=17.78, diagonal=5465.94, hegmm=69524.83, hetal=40436.16,
                     speedup=307.42),
    "M80PI_n1": dict(rows=4028, cols=4028, nnz=9927, ours=0.82, diagonal=294.71, hegmm=6317.35, hetal=3659.79,
                     speedup=359.40),
    "mycielskian13": dict(rows=6143, cols=6143, nnz=1227742, ours=71.76, diagonal=1030.40, hegmm=14649.79,
                          hetal=8497.93, speedup=14.36),
    "nemeth24": dict(rows=9506, cols=9506, nnz=1506550, ours=97.15, diagonal=1859.81, hegmm=35140.14, hetal=20502.51,
                     speedup=19.14),
    "msc10848": dict(rows=10848, cols=10848, nnz=1229776, ours=81.58, diagonal=56198.48, hegmm=45707.00, hetal=None,
                     speedup=560.28),
    "as-caida": dict(rows=26475, cols=26475, nnz=53381, ours=8.77, diagonal=18750.38, hegmm=272714.29,
                     hetal=159955.17, speedup=2138.01),
    "ship_001": dict(rows=34920, cols=34920, nnz=3896496, ours=268.77, diagonal=21398.58, hegmm=None, hetal=None,
                     speedup=79.62),
    "cca": dict(rows=49152, cols=49152, nnz=139264, ours=14.89, diagonal=17686.71, hegmm=None, hetal=None,
                speedup=1187.82),
    "p2p-Gnutella31": dict(rows=62586, cols=62586, nnz=147892, ours=12.62, diagonal=74553.33, hegmm=None, hetal=None,
                           speedup=5907.55),
}

#: Table 6: peak memory (MB, tracemalloc) of the same methods and the printed saving (best baseline / ours).
TABLE6_MEMORY_MB = {
    "arc130": dict(ours=1.33, diagonal=317.16, hegmm=8.08, hetal=8.06, saving=6.06),
    "stat96v5": dict(ours=1509.12, diagonal=4916.19, hegmm=29654.11, hetal=28938.01, saving=3.26),
    "M80PI_n1": dict(ours=140.42, diagonal=4662.45, hegmm=2541.23, hetal=2521.64, saving=17.96),
    "mycielskian13": dict(ours=390.33, diagonal=7059.54, hegmm=5856.08, hetal=6037.39, saving=15.00),
    "nemeth24": dict(ours=813.70, diagonal=10924.30, hegmm=14957.53, hetal=14914.10, saving=13.43),
    "msc10848": dict(ours=1014.04, diagonal=7051.20, hegmm=19175.89, hetal=15028.00, saving=6.95),
    "as-caida": dict(ours=7645.86, diagonal=30425.07, hegmm=113725.61, hetal=114161.60, saving=3.98),
    "ship_001": dict(ours=9619.61, diagonal=40130.06, hegmm=155304.24, hetal=155304.24, saving=4.17),
    "cca": dict(ours=18636.32, diagonal=56485.48, hegmm=307107.84, hetal=307107.84, saving=3.03),
    "p2p-Gnutella31": dict(ours=30143.85, diagonal=71923.83, hegmm=497880.24, hetal=497880.24, saving=2.39),
}
#: Table 6 entries printed with "≈": estimated from ciphertext counts x 0.52 MB, not measured.
TABLE6_APPROXIMATE = {("msc10848", "hetal"), ("ship_001", "hegmm"), ("ship_001", "hetal"), ("cca", "hegmm"),
                      ("cca", "hetal"), ("p2p-Gnutella31", "hegmm"), ("p2p-Gnutella31", "hetal")}

#: Table 7: communication, A -> Cloud (= B -> Cloud) in MB and A -> B in bytes.
TABLE7_COMMUNICATION = {
    "arc130": dict(to_cloud_mb=1.04, a_to_b_bytes=88),
    "stat96v5": dict(to_cloud_mb=53.04, a_to_b_bytes=920),
    "M80PI_n1": dict(to_cloud_mb=2.08, a_to_b_bytes=88),
    "mycielskian13": dict(to_cloud_mb=183.04, a_to_b_bytes=3184),
    "nemeth24": dict(to_cloud_mb=197.60, a_to_b_bytes=3560),
    "msc10848": dict(to_cloud_mb=176.80, a_to_b_bytes=3240),
    "as-caida": dict(to_cloud_mb=17.16, a_to_b_bytes=776),
    "ship_001": dict(to_cloud_mb=520.52, a_to_b_bytes=9240),
    "cca": dict(to_cloud_mb=17.68, a_to_b_bytes=1056),
    "p2p-Gnutella31": dict(to_cloud_mb=21.32, a_to_b_bytes=760),
}

#: Table 8: CSSC vs Rhombus (plaintext matrix x encrypted vector): time (s) and memory (MB).
TABLE8_RHOMBUS = {
    "arc130": dict(ours_s=0.27, rhombus_s=6.40, ours_mb=1.33, rhombus_mb=143.44),
    "stat96v5": dict(ours_s=18.76, rhombus_s=1683.25, ours_mb=1509.15, rhombus_mb=1479.00),
    "M80PI_n1": dict(ours_s=0.83, rhombus_s=278.98, ours_mb=140.44, rhombus_mb=269.12),
    "mycielskian13": dict(ours_s=69.35, rhombus_s=426.17, ours_mb=390.47, rhombus_mb=433.56),
    "nemeth24": dict(ours_s=97.72, rhombus_s=1312.29, ours_mb=813.85, rhombus_mb=837.97),
    "msc10848": dict(ours_s=81.28, rhombus_s=1518.11, ours_mb=1014.16, rhombus_mb=1044.75),
    "as-caida": dict(ours_s=8.83, rhombus_s=9091.51, ours_mb=7645.84, rhombus_mb=7658.15),
    "ship_001": dict(ours_s=261.40, rhombus_s=11846.40, ours_mb=9619.73, rhombus_mb=9462.98),
    "cca": dict(ours_s=14.85, rhombus_s=14303.09, ours_mb=18636.36, rhombus_mb=18577.58),
    "p2p-Gnutella31": dict(ours_s=12.58, rhombus_s=37186.32, ours_mb=30143.78, rhombus_mb=30028.66),
}

#: Table A.9, row by row as printed (matrix, rows, cols, nnz, time s, memory MB); two matrices are
#: printed twice (mycielskian14, TSOPF_RS_b2052_c1) and "bcpwr06" is HB/bcspwr06.
TABLEA9_ALL = [
    ("arc130", 130, 130, 1354, 0.25, 1.33),
    ("494_bus", 494, 494, 1669, 0.17, 3.08),
    ("fs_541_4", 541, 541, 4273, 0.32, 3.45),
    ("jpwh_991", 991, 991, 6027, 0.42, 9.05),
    ("bcpwr06", 1454, 1454, 5300, 0.45, 18.81),
    ("watt_2", 1856, 1856, 11550, 0.81, 30.48),
    ("CAG_mat1916", 1916, 1916, 195985, 9.0, 44.23),
    ("stat96v5", 2307, 75779, 233921, 17.78, 1509.12),
    ("heart2", 2339, 2339, 680341, 45.29, 95.92),
    ("heart3", 2339, 2339, 680341, 45.56, 95.92),
    ("yeast", 2361, 2361, 13828, 0.55, 39.08),
    ("qc2534", 2534, 2534, 463360, 33.16, 139.33),
    ("reorientation_4", 2717, 2717, 33630, 2.39, 65.08),
    ("cegb2802", 2802, 2802, 277362, 18.79, 82.63),
    ("cegb2919", 2919, 2919, 321543, 20.98, 91.51),
    ("mycielskian12", 3071, 3071, 407200, 22.38, 103.54),
    ("psmigr_2", 3140, 3140, 540022, 30.38, 118.41),
    ("psmigr_1", 3140, 3140, 543160, 30.32, 118.66),
    ("psmigr_3", 3140, 3140, 543160, 30.08, 118.66),
    ("stat96v4", 3173, 63076, 491336, 30.43, 1735.46),
    ("raefsky1", 3242, 3242, 293409, 19.38, 104.52),
    ("raefsky2", 3242, 3242, 293551, 19.56, 104.53),
    ("bayer05", 3268, 3268, 20712, 1.42, 92.87),
    ("bcsstm21", 3600, 3600, 3600, 0.29, 112.13),
    ("nemsemml", 3945, 75352, 1053986, 54.22, 2588.5),
    ("M80PI_n1", 4028, 4028, 9927, 0.82, 140.42),
    ("ca-GrQc", 5242, 5242, 14496, 2.03, 232.05),
    ("bas1lp", 5411, 9825, 587775, 38.79, 465.46),
    ("stat96v1", 5995, 197472, 588798, 38.9, 9824.81),
    ("mycielskian13", 6143, 6143, 1227742, 71.76, 390.33),
    ("EternityII_A", 7362, 150638, 782087, 49.16, 9077.57),
    ("TSC_OPF_1047", 8140, 8140, 2012833, 140.15, 699.91),
    ("nemeth20", 9506, 9506, 971870, 63.1, 782.24),
    ("nemeth21", 9506, 9506, 1173746, 76.71, 793.48),
    ("nemeth22", 9506, 9506, 1358832, 89.1, 804.21),
    ("nemeth24", 9506, 9506, 1506550, 97.15, 813.7),
    ("nemeth23", 9506, 9506, 1506810, 97.6, 813.47),
    ("nemeth25", 9506, 9506, 1511758, 97.65, 813.9),
    ("nemeth26", 9506, 9506, 1511760, 97.6, 813.9),
    ("ca-HepTh", 9877, 9877, 51971, 3.71, 788.41),
    ("EternityII_Etilde", 10054, 204304, 1170516, 71.75, 16546.9),
    ("msc10848", 10848, 10848, 1229776, 81.58, 1014.04),
    ("EternityII_E", 11077, 262144, 1503732, 48.01, 23231.46),
    ("ca-HepPh", 12008, 12008, 237010, 13.55, 1166.96),
    ("mycielskian14", 12287, 12287, 3695512, 227.71, 1441.94),
    ("mycielskian14", 12287, 12287, 3695512, 227.67, 1441.94),
    ("appu", 14000, 14000, 1853104, 122.15, 1648.41),
    ("opt1", 15449, 15449, 1930655, 129.11, 1982.25),
    ("ramage02", 16830, 16830, 2866352, 194.58, 2373.74),
    ("pkustk07", 16860, 16860, 2418804, 159.01, 2360.05),
    ("TSOPF_RS_b678_c1", 18696, 18696, 4396289, 300.06, 2990.01),
    ("ca-AstroPh", 18772, 18772, 396160, 26.18, 2790.39),
    ("tsyl201", 20685, 20685, 2454957, 166.05, 3460.68),
    ("pkustk08", 22209, 22209, 3226671, 213.64, 4007.6),
    ("ca-CondMat", 23133, 23133, 186936, 13.77, 4187.52),
    ("TSOPF_RS_b2052_c1", 25626, 25626, 6761100, 479.62, 5465.63),
    ("TSOPF_RS_b2052_c1", 25626, 25626, 6761100, 476.57, 5465.63),
    ("smt", 25710, 25710, 3749582, 265.11, 5318.58),
    ("as-caida", 26475, 26475, 53381, 8.77, 7645.86),
    ("cit-HepTh", 27770, 35963, 352807, 26.16, 6015.74),
    ("TSOPF_RS_b300_c2", 28338, 28338, 2943887, 196.25, 6381.86),
    ("TSOPF_FS_b300", 29214, 29214, 4400122, 279.48, 6875.61),
    ("TSOPF_FS_b300_c1", 29214, 29214, 4400122, 279.81, 6875.61),
    ("thread", 29736, 29736, 4444880, 299.7, 7063.6),
    ("cit-HepPh", 34546, 42339, 421578, 32.36, 9267.22),
    ("ship_001", 34920, 34920, 3896496, 268.77, 9619.61),
    ("TSOPF_RS_b678_c2", 35696, 35696, 8781949, 603.99, 10263.74),
    ("pdb1HYS", 36417, 36417, 4344765, 294.52, 10444.81),
    ("email-Enron", 36692, 36692, 183831, 25.26, 10443.22),
    ("windtunnel_evap3d", 40816, 40816, 803978, 56.95, 12907.6),
    ("TSOPF_RS_b300_c3", 42138, 42138, 4413449, 297.18, 13908.05),
    ("pkustk06", 43164, 43164, 2571768, 176.94, 14494.9),
    ("mark3jac100", 45769, 45769, 268563, 23.35, 16178.62),
    ("mosfet2", 46994, 46994, 1013062, 72.58, 17080.55),
    ("c-65", 48066, 48066, 360428, 28.83, 17839.21),
    ("cca", 49152, 49152, 139264, 14.89, 18636.32),
    ("rajat26", 51032, 51032, 247528, 21.81, 20086.69),
    ("ct20stif", 52329, 52329, 2600295, 180.54, 21207.51),
    ("crankseg_1", 52804, 52804, 10614210, 741.84, 21923.13),
    ("g7jac180sc", 53370, 53370, 641290, 49.71, 21983.89),
    ("srb1", 54924, 54924, 2962152, 203.89, 23349.09),
    ("c-67b", 57975, 57975, 530583, 39.46, 25905.52),
    ("g7jac200sc", 59310, 59310, 717620, 55.48, 27117.89),
    ("Ga3As3H12", 61349, 61349, 5970947, 418.09, 29332.46),
    ("p2p-Gnutella31", 62586, 62586, 147892, 12.62, 30143.85),
    ("crankseg_2", 63838, 63838, 14148858, 1002.04, 31918.81),
    ("Goodwin_095", 100037, 100037, 3226066, 247.99, 76875.57),
    ("lung2", 109460, 109460, 492564, 67.21, 91871.54),
    ("Ge87H76", 112985, 112985, 7892195, 581.36, 98188.38),
]

#: The paper's names of matrices hepkg loads under another name.
PAPER_NAMES = {"bcspwr06": "bcpwr06"}

#: Fig. 10: the slope of log(cloud time) vs log(NNZ) is stated as "close to 1" (no number printed).
FIG10_SLOPE = 1.0
