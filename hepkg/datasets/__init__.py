"""hepkg.datasets: SuiteSparse / SNAP matrices by name, SNAP edge lists, Mycielski graphs, face embeddings.

>>> from hepkg.datasets import load_matrix
>>> load_matrix("mycielskian4").shape
(11, 11)
"""
from .faces import FaceSet, SyntheticSearch, load_embeddings, load_faces, synthetic_database
from .fetch import (BASE_URL_ENV, DEFAULT_BASE_URL, ChecksumError, CorruptDownload, DatasetError, download, sha256_file,
                    suitesparse_url)
from .matrices import (DATA_ENV, SUITESPARSE_GROUPS, CorruptMatrixFile, MatrixNotFound, list_matrices, load_matrix,
                       read_matrix, search_dirs)
from .mycielski import mycielski_step, mycielskian, mycielskian_size
from .snap import read_edge_list

__all__ = [
    "load_matrix", "list_matrices", "read_matrix", "search_dirs", "MatrixNotFound", "SUITESPARSE_GROUPS", "DATA_ENV",
    "download", "suitesparse_url", "sha256_file", "DatasetError", "ChecksumError", "CorruptDownload",
    "CorruptMatrixFile", "DEFAULT_BASE_URL", "BASE_URL_ENV",
    "mycielskian", "mycielski_step", "mycielskian_size", "read_edge_list",
    "FaceSet", "SyntheticSearch", "load_embeddings", "load_faces", "synthetic_database",
]
