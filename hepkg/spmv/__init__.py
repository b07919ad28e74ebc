"""hepkg.spmv: encrypted sparse matrix x encrypted vector with CSSC (Gao et al.), and baselines.

- :mod:`~hepkg.spmv.cssc`: the CSSC format (Algorithm 5) and back;
- :mod:`~hepkg.spmv.chunks`: chunks (Algorithm 2), row blocks (Sec. 4.7), vector reorganization (Algorithm 3);
- :mod:`~hepkg.spmv.aggregate`: the cloud's products and aggregation (Algorithm 4), un-permutation;
- :mod:`~hepkg.spmv.parties`: Client A, Client B and the cloud exchanging bytes (Algorithm 1);
- :mod:`~hepkg.spmv.encoding`: exact integers, fixed point with overflow checks against a public
  vector bound, CKKS;
- :mod:`~hepkg.spmv.costs`: Tables 2 and 3 as the paper states them, against hepkg's counts;
- baselines: :mod:`~hepkg.spmv.diagonal` (Fig. 9) and :mod:`~hepkg.spmv.rowwise` (Rhombus-style,
  Sec. 5.5). HEGMM lives in :mod:`hepkg.gemm`. HETAL is absent: the paper cites its times but
  specifies no matrix-vector algorithm or parameters for it, so there is nothing to implement faithfully;
- :mod:`~hepkg.spmv.experiments`: result rows for the notebook.

``run_cssc`` and ``ClientA`` default to the fast, safe settings: Pyfhel at the 128-bit
``bfv-8192-spmv``, one Galois key per rotation step, and the data primes the noise budget leaves
room for dropped after encryption (``drop_primes='auto'``). ``backend="sim"`` (the baselines'
default) offers no privacy: its "ciphertexts" are cleartext slots, there for op counts and fast
tests; ``run_cssc`` warns when given it. Each :class:`SpmvResult` records ``backend``, ``params``
and ``insecure``. Server-side parties refuse a context that can decrypt.

>>> import numpy as np, scipy.sparse as sp
>>> m = sp.random(50, 40, density=0.1, format="csr", random_state=0, data_rvs=lambda n: np.ones(n, int))
>>> v = np.arange(40) % 9 - 4
>>> bool((run_cssc(m, v).y == m @ v).all())
True
"""
from .aggregate import aggregate, multiply, unpermute
from .chunks import (LAYOUTS, Chunk, ChunkPlan, chunk_column_index, chunk_layout, chunk_values, generate_chunks,
                     reorg_vector)
from .costs import (TABLE2, predicted_ops, sum_steps, table2_formula, table2_rows, table3_bound, table3_formula,
                    table3_rows)
from .cssc import CSSC, as_csr
from .diagonal import diagonal_block_size, diagonal_offsets, diagonal_predicted_ops, run_diagonal
from .encoding import FixedPoint, capacity, vector_bound
from .experiments import METHODS, default_params, make_operands, predict_ops, run_config
from .parties import ClientA, ClientB, Cloud, run_cssc
from .result import PHASES, PhaseClock, SpmvResult
from .rowwise import rowwise_predicted_ops, run_rowwise

__all__ = [
    "CSSC", "as_csr", "LAYOUTS", "Chunk", "ChunkPlan", "generate_chunks", "chunk_layout", "chunk_values",
    "chunk_column_index", "reorg_vector", "multiply", "aggregate", "unpermute",
    "FixedPoint", "capacity", "vector_bound", "ClientA", "ClientB", "Cloud", "run_cssc", "SpmvResult", "PHASES",
    "PhaseClock", "TABLE2", "table2_formula", "table2_rows", "table3_formula", "table3_bound", "predicted_ops",
    "sum_steps", "table3_rows",
    "run_diagonal", "diagonal_block_size", "diagonal_offsets", "diagonal_predicted_ops",
    "run_rowwise", "rowwise_predicted_ops",
    "METHODS", "run_config", "predict_ops", "make_operands", "default_params",
]
