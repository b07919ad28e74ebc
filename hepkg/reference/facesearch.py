"""Published numbers of the face-search paper (face_search_bsgs_gpu.txt), as data."""
from __future__ import annotations

#: The authors' comparison threshold delta (their code) and the Chebyshev degree per comparison depth kappa (Sec. 5.1.4).
DELTA = 0.44
DEGREE_FOR_KAPPA = {7: 5, 8: 13, 9: 27, 10: 59}
#: Sec. 6 parameters: ring 2^15, 2^14 slots, scale 2^45, l = 512 (FRGC 2.0 ArcFace embeddings), n1 = n2 = 23.
RING, SLOTS, SCALE_BITS, DIM, N1 = 2 ** 15, 2 ** 14, 45, 512, 23

#: Table 5: total rotations (textbook single-hoisted BSGS, BSGS-Diagonal) and rotated query ciphertexts stored, per K.
TABLE5 = {2 ** 14: (1, 44, 511), 2 ** 16: (4, 110, 511), 2 ** 18: (16, 374, 511), 2 ** 19: (32, 726, 511),
          2 ** 20: (64, 1430, 511)}
TABLE5_STORED = {"bsgs-textbook": 23, "bsgs-diagonal": 512}

#: Rotation keys the client generates (Sec. 4.2.3, 5.3, Table 2): HyDia l - 1 = 511 plus 5 power-of-two
#: EvalSum keys = 516; BSGS 44 (baby 1..22 and giant 23, 46, ..., 506); the TBE variant's 53 adds EvalSum keys.
KEYS = {"hydia": 511, "hydia+evalsum": 516, "bsgs": 44, "bsgs+evalsum": 53}

#: Tables 6 (kappa = 10) and 7-8 (kappa = 8), CPU rows: (kappa, K, Km, approach, RTT s, membership s mean, std,
#: index s mean, std, RAM GB, disk GB); means and std over 11 trials (10 steady-state) on the authors' machine.
CPU_ROWS = (
    (10, 1024, 16, 'HyDia-CPU-DG' , 30.6, 5.67, 0.08, 5.67, 0.24, 33.3, 27.84),
    (10, 1024, 16, 'BSGS-CPU-DG'  , 13.1, 4.92, 0.03, 4.76, 0.09, 7.2, 5.52),
    (10, 2048, 16, 'HyDia-CPU-DG' , 30.6, 5.72, 0.07, 5.49, 0.07, 33.3, 27.84),
    (10, 2048, 16, 'BSGS-CPU-DG'  , 13.3, 4.97, 0.07, 4.83, 0.06, 7.2, 5.52),
    (10, 4096, 32, 'HyDia-CPU-DG' , 30.7, 5.74, 0.12, 5.61, 0.21, 33.3, 27.84),
    (10, 4096, 32, 'BSGS-CPU-DG'  , 13.3, 4.97, 0.06, 4.91, 0.31, 7.2, 5.52),
    (10, 8192, 32, 'HyDia-CPU-DG' , 30.7, 5.72, 0.09, 5.56, 0.12, 33.3, 27.84),
    (10, 8192, 32, 'BSGS-CPU-DG'  , 13.3, 4.98, 0.03, 4.82, 0.06, 7.2, 5.52),
    (10, 16384, 64, 'HyDia-CPU-DG' , 30.9, 5.68, 0.08, 5.52, 0.04, 33.4, 27.84),
    (10, 16384, 64, 'BSGS-CPU-DG'  , 13.3, 4.95, 0.03, 4.77, 0.04, 7.2, 5.52),
    (10, 32768, 64, 'HyDia-CPU-DG' , 36.5, 7.87, 0.09, 7.67, 0.24, 33.4, 30.84),
    (10, 32768, 64, 'BSGS-CPU-DG'  , 18.7, 6.34, 0.09, 6.73, 0.68, 7.3, 8.52),
    (10, 65536, 128, 'HyDia-CPU-DG' , 48.4, 12.09, 0.29, 12.12, 0.38, 33.6, 36.84),
    (10, 65536, 128, 'BSGS-CPU-DG'  , 27.4, 8.94, 0.05, 9.55, 0.69, 7.4, 14.52),
    (10, 131072, 128, 'HyDia-CPU-DG' , 77.9, 21.91, 0.75, 23.54, 0.85, 33.9, 48.85),
    (10, 131072, 128, 'BSGS-CPU-DG'  , 45.6, 14.18, 0.12, 16.47, 0.77, 7.6, 26.53),
    (10, 262144, 256, 'HyDia-CPU-DG' , 128.1, 39.42, 1.22, 41.87, 2.37, 34.8, 72.86),
    (10, 262144, 256, 'BSGS-CPU-DG'  , 114.1, 26.66, 0.47, 30.13, 0.3, 8.0, 50.54),
    (10, 524288, 256, 'HyDia-CPU-DG' , 242.2, 84.12, 3.38, 79.79, 2.25, 35.4, 120.88),
    (10, 524288, 256, 'BSGS-CPU-DG'  , 173.0, 53.64, 0.83, 57.91, 0.73, 9.0, 98.57),
    (10, 1048576, 512, 'HyDia-CPU-DG' , 483.5, 163.66, 3.53, 165.61, 3.58, 37.3, 216.93),
    (10, 1048576, 512, 'BSGS-CPU-DG'  , 356.0, 112.33, 1.46, 115.42, 1.83, 11.3, 194.61),
    (8, 1024, 16, 'HyDia-CPU-DG' , 24.9, 4.22, 0.02, 4.04, 0.07, 28.7, 24.23),
    (8, 1024, 16, 'BSGS-CPU-DG'  , 10.1, 3.64, 0.04, 3.54, 0.07, 6.1, 4.71),
    (8, 2048, 16, 'HyDia-CPU-DG' , 25.0, 4.21, 0.04, 4.07, 0.08, 28.7, 24.23),
    (8, 2048, 16, 'BSGS-CPU-DG'  , 10.1, 3.64, 0.03, 3.56, 0.07, 6.1, 4.71),
    (8, 4096, 32, 'HyDia-CPU-DG' , 25.0, 4.26, 0.08, 4.0, 0.11, 28.7, 24.23),
    (8, 4096, 32, 'BSGS-CPU-DG'  , 10.5, 3.68, 0.04, 3.6, 0.05, 6.1, 4.71),
    (8, 8192, 32, 'HyDia-CPU-DG' , 25.1, 4.24, 0.07, 4.04, 0.09, 28.7, 24.23),
    (8, 8192, 32, 'BSGS-CPU-DG'  , 10.3, 3.69, 0.07, 3.61, 0.06, 6.1, 4.71),
    (8, 16384, 64, 'HyDia-CPU-DG' , 25.1, 4.24, 0.06, 4.02, 0.1, 28.7, 24.23),
    (8, 16384, 64, 'BSGS-CPU-DG'  , 10.5, 3.68, 0.08, 3.6, 0.06, 6.1, 4.71),
    (8, 32768, 64, 'HyDia-CPU-DG' , 29.9, 6.0, 0.12, 5.87, 0.12, 28.7, 26.73),
    (8, 32768, 64, 'BSGS-CPU-DG'  , 14.6, 4.85, 0.06, 4.8, 0.14, 6.2, 7.21),
    (8, 65536, 128, 'HyDia-CPU-DG' , 41.3, 9.71, 0.26, 10.15, 0.61, 28.9, 31.74),
    (8, 65536, 128, 'BSGS-CPU-DG'  , 22.8, 7.07, 0.08, 7.48, 0.18, 6.3, 12.21),
    (8, 131072, 128, 'HyDia-CPU-DG' , 64.6, 17.95, 0.58, 17.56, 0.71, 29.1, 41.74),
    (8, 131072, 128, 'BSGS-CPU-DG'  , 43.3, 11.67, 0.25, 13.53, 0.66, 6.4, 22.21),
    (8, 262144, 256, 'HyDia-CPU-DG' , 130.9, 34.91, 1.31, 35.71, 1.34, 29.8, 61.75),
    (8, 262144, 256, 'BSGS-CPU-DG'  , 102.5, 22.01, 0.48, 24.64, 0.53, 6.7, 42.22),
    (8, 524288, 256, 'HyDia-CPU-DG' , 200.9, 64.21, 2.92, 63.96, 2.69, 31.3, 101.77),
    (8, 524288, 256, 'BSGS-CPU-DG'  , 146.9, 44.49, 0.39, 47.09, 0.24, 7.9, 82.24),
    (8, 1048576, 512, 'HyDia-CPU-DG' , 384.6, 126.35, 3.74, 127.81, 3.96, 34.6, 181.81),
    (8, 1048576, 512, 'BSGS-CPU-DG'  , 306.3, 88.99, 2.7, 95.85, 5.51, 10.1, 162.29),
)
CPU_COLUMNS = ("kappa", "K", "Km", "approach", "rtt_s", "membership_s", "membership_std", "index_s", "index_std",
               "ram_gb", "disk_gb")
#: The paper's approach names for hepkg's similarity methods.
APPROACH = {"hydia": "HyDia-CPU-DG", "bsgs-diagonal": "BSGS-CPU-DG"}


def cpu_table():
    """Tables 6-8's CPU rows as a pandas table."""
    import pandas as pd
    return pd.DataFrame(CPU_ROWS, columns=CPU_COLUMNS)
