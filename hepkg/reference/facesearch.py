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


#: Tables 7-8, GPU rows (kappa = 8, depth 9): (kappa, K, Km, approach, RTT s, membership s mean, std, index s mean,
#: std, RAM GB, disk GB); RTX = NVIDIA Quadro RTX 8000 (48 GB), H200 = NVIDIA H200 (141 GB). HyDia-RTX-DG is out of
#: GPU memory at K = 2^16, every RTX approach at K >= 2^17; the H200 reaches 2^17.
GPU_ROWS = (
    (8, 1024, 16, 'HyDia-RTX-DG', 39.4, 0.63, 0.01, 0.42, 0.0, 24.6, 27.23),
    (8, 1024, 16, 'HyDia-H200-DG', 44.1, 0.58, 0.03, 0.39, 0.01, 24.6, 27.23),
    (8, 1024, 16, 'BSGS-RTX-TBS', 9.5, 0.25, 0.0, 0.24, 0.0, 3.5, 5.61),
    (8, 1024, 16, 'BSGS-RTX-TBE', 8.5, 0.25, 0.0, 0.24, 0.0, 2.6, 4.71),
    (8, 1024, 16, 'BSGS-H200-TBS', 9.3, 0.2, 0.01, 0.19, 0.01, 3.4, 5.61),
    (8, 1024, 16, 'BSGS-H200-TBE', 7.9, 0.2, 0.01, 0.19, 0.01, 2.5, 4.71),
    (8, 2048, 16, 'HyDia-RTX-DG', 39.3, 0.63, 0.02, 0.42, 0.0, 24.6, 27.23),
    (8, 2048, 16, 'HyDia-H200-DG', 46.9, 0.6, 0.03, 0.39, 0.01, 24.6, 27.23),
    (8, 2048, 16, 'BSGS-RTX-TBS', 9.6, 0.25, 0.0, 0.24, 0.0, 3.5, 5.61),
    (8, 2048, 16, 'BSGS-RTX-TBE', 8.5, 0.26, 0.0, 0.24, 0.0, 2.6, 4.71),
    (8, 2048, 16, 'BSGS-H200-TBS', 8.9, 0.2, 0.01, 0.19, 0.01, 3.4, 5.61),
    (8, 2048, 16, 'BSGS-H200-TBE', 8.6, 0.22, 0.02, 0.2, 0.01, 2.5, 4.71),
    (8, 4096, 32, 'HyDia-RTX-DG', 39.4, 0.63, 0.01, 0.43, 0.0, 24.6, 27.23),
    (8, 4096, 32, 'HyDia-H200-DG', 44.8, 0.59, 0.02, 0.41, 0.01, 24.6, 27.23),
    (8, 4096, 32, 'BSGS-RTX-TBS', 9.6, 0.25, 0.0, 0.24, 0.0, 3.5, 5.61),
    (8, 4096, 32, 'BSGS-RTX-TBE', 8.8, 0.25, 0.0, 0.24, 0.0, 2.6, 4.71),
    (8, 4096, 32, 'BSGS-H200-TBS', 9.2, 0.2, 0.01, 0.2, 0.01, 3.4, 5.61),
    (8, 4096, 32, 'BSGS-H200-TBE', 8.4, 0.21, 0.01, 0.2, 0.01, 2.5, 4.71),
    (8, 8192, 32, 'HyDia-RTX-DG', 39.0, 0.63, 0.01, 0.42, 0.0, 24.6, 27.23),
    (8, 8192, 32, 'HyDia-H200-DG', 44.8, 0.6, 0.05, 0.4, 0.01, 24.6, 27.23),
    (8, 8192, 32, 'BSGS-RTX-TBS', 9.7, 0.25, 0.0, 0.24, 0.0, 3.5, 5.61),
    (8, 8192, 32, 'BSGS-RTX-TBE', 8.6, 0.25, 0.0, 0.24, 0.0, 2.6, 4.71),
    (8, 8192, 32, 'BSGS-H200-TBS', 9.3, 0.2, 0.01, 0.19, 0.01, 3.4, 5.61),
    (8, 8192, 32, 'BSGS-H200-TBE', 8.3, 0.21, 0.01, 0.2, 0.02, 2.5, 4.71),
    (8, 16384, 64, 'HyDia-RTX-DG', 41.7, 0.63, 0.01, 0.42, 0.0, 24.6, 27.23),
    (8, 16384, 64, 'HyDia-H200-DG', 45.6, 0.61, 0.05, 0.41, 0.02, 24.6, 27.23),
    (8, 16384, 64, 'BSGS-RTX-TBS', 9.7, 0.25, 0.0, 0.24, 0.0, 3.5, 5.61),
    (8, 16384, 64, 'BSGS-RTX-TBE', 8.7, 0.26, 0.01, 0.24, 0.0, 2.6, 4.71),
    (8, 16384, 64, 'BSGS-H200-TBS', 9.8, 0.2, 0.01, 0.2, 0.02, 3.4, 5.61),
    (8, 16384, 64, 'BSGS-H200-TBE', 8.6, 0.2, 0.01, 0.19, 0.01, 2.5, 4.71),
    (8, 32768, 64, 'HyDia-RTX-DG', 53.0, 1.75, 0.02, 1.66, 0.02, 24.6, 30.23),
    (8, 32768, 64, 'HyDia-H200-DG', 64.3, 1.69, 0.06, 1.66, 0.07, 24.6, 30.23),
    (8, 32768, 64, 'BSGS-RTX-TBS', 16.8, 0.78, 0.01, 0.81, 0.01, 3.5, 8.11),
    (8, 32768, 64, 'BSGS-RTX-TBE', 15.3, 0.81, 0.01, 0.81, 0.01, 2.6, 7.21),
    (8, 32768, 64, 'BSGS-H200-TBS', 16.7, 0.64, 0.01, 0.69, 0.02, 3.4, 8.11),
    (8, 32768, 64, 'BSGS-H200-TBE', 15.4, 0.68, 0.02, 0.69, 0.02, 2.5, 7.21),
    (8, 65536, 128, 'HyDia-H200-DG', 98.5, 3.04, 0.05, 4.1, 0.03, 24.6, 36.23),
    (8, 65536, 128, 'BSGS-RTX-TBS', 38.5, 3.02, 0.14, 3.16, 0.05, 4.0, 13.11),
    (8, 65536, 128, 'BSGS-RTX-TBE', 36.1, 3.03, 0.03, 3.13, 0.04, 3.6, 12.21),
    (8, 65536, 128, 'BSGS-H200-TBS', 35.9, 2.58, 0.08, 2.93, 0.08, 3.9, 13.11),
    (8, 65536, 128, 'BSGS-H200-TBE', 33.2, 2.6, 0.05, 2.91, 0.03, 3.5, 12.21),
    (8, 131072, 128, 'HyDia-H200-DG', 245.4, 11.05, 0.18, 22.66, 0.26, 24.6, 48.24),
    (8, 131072, 128, 'BSGS-H200-TBS', 97.7, 8.93, 0.22, 14.66, 0.13, 7.5, 23.12),
    (8, 131072, 128, 'BSGS-H200-TBE', 93.7, 9.73, 0.28, 15.03, 0.54, 6.5, 22.21),
)
#: The GPUs: streaming multiprocessors (Sec. 5.1.2 for the H200; the RTX 8000 is a TU102 with 72) and memory (GB).
GPUS = {"RTX": dict(name="NVIDIA Quadro RTX 8000", sms=72, memory_gb=48), "H200": dict(name="NVIDIA H200", sms=132,
                                                                                       memory_gb=141)}
#: Table 2 (l = 512, n1 = n2 = 23), per variant: rotation keys generated in total, keys on the GPU online, peak GPU
#: memory at K = 8192 (GB), query ciphertexts uploaded, and Sec. 5.1.1 / 6.4's sizes: a ciphertext ~5 MB, a rotation
#: key ~37 MB on the GPU (~30 MB in RAM), the n1 baby steps uploaded ~115 MB, the l rotations 2.5 GB.
TABLE2 = {"HyDia-GPU-DG": dict(keys_total=516, keys_device=516, peak_gpu_gb=27, up_cts=1),
          "BSGS-GPU-TBS": dict(keys_total=75, keys_device=36, peak_gpu_gb=9, up_cts=23),
          "BSGS-GPU-TBE": dict(keys_total=53, keys_device=36, peak_gpu_gb=7, up_cts=23),
          "BSGS-CPU-DG": dict(keys_total=44, keys_device=None, peak_gpu_gb=None, up_cts=None)}
CT_MB, KEY_MB_GPU, BABY_UPLOAD_MB, ALL_ROTATIONS_GB = 5, 37, 115, 2.5
#: Sec. 5.1.3, BSGS-RTX-TBS's baby steps (ms, MB): n1 - 1 = 22 hoisted rotations on the CPU at ~3.1 ms each plus
#: ~5 ms to upload the n1 ciphertexts, ~73 ms in all, against the GPU-rotation alternative's ~33 ms of key upload
#: + ~40 ms for 22 non-hoisted GPU rotations; peak GPU memory of the baby-step phase 115 MB against 929 MB
BABY_STEPS = dict(host_rotation_ms=3.1, upload_ms=5, host_total_ms=73, key_upload_ms=33, device_rotations_ms=40,
                  host_peak_mb=115, device_peak_mb=929)


def gpu_table():
    """Tables 7-8's GPU rows as a pandas table, with the GPU (RTX or H200) and the variant (DG, TBS, TBE) apart."""
    import pandas as pd
    df = pd.DataFrame(GPU_ROWS, columns=CPU_COLUMNS)
    parts = df.approach.str.split("-", expand=True)
    return df.assign(gpu=parts[1], variant=parts[0] + "-GPU-" + parts[2])
