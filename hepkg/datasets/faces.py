"""Face-embedding data: the face-search paper's synthetic generator and real embeddings.

The face-search paper (Sec. 6) benchmarks on synthetic databases: a query with integer
entries uniform in [-99, 99], ``Km`` planted matches (the query plus integer noise uniform in
[-2, 2]) at uniformly random positions, the other entries uniform in [-99, 99]. Its accuracy
table uses FRGC 2.0, which is not public; :func:`load_faces` gives a small public set
instead (Keras FaceNet, 128-d, 5 identities), and :func:`load_embeddings` a user's own.
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np

from hepkg import paths

from .fetch import DatasetError, download, verify_cached

__all__ = ["SyntheticSearch", "synthetic_database", "FaceSet", "load_faces", "load_embeddings", "FACES_URL",
           "FACES_SHA256"]

FACES_FILE = "5-celebrity-faces-embeddings_facenet128.npz"
#: The file as committed in github.com/Meetkumar1/Face-Recognition-Using-FaceNet (pinned commit).
FACES_URL = ("https://raw.githubusercontent.com/Meetkumar1/Face-Recognition-Using-FaceNet/"
             "1849ec1814ec6cad66bf8fbf3dadfc111602fb33/5-celebrity-faces-embeddings.npz")
FACES_SHA256 = "eefc25ac4fc15f5b1ab8e374a47ffd7c17acdd0715bdeddb46ff3c70e4d5e5f5"


@dataclass(frozen=True)
class SyntheticSearch:
    """A synthetic 1:K search instance: ``database`` (K x l), ``query`` (l,), ``matches`` (sorted indices)."""
    database: np.ndarray
    query: np.ndarray
    matches: np.ndarray


def synthetic_database(K: int, Km: int, l: int, seed: int = 0, *, spread: int = 99, noise: int = 2) -> SyntheticSearch:
    """The paper's generator: ``Km`` of the ``K`` vectors are the query plus noise in [-noise, noise]."""
    for name, v in (("K", K), ("l", l)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if not isinstance(Km, (int, np.integer)) or not 0 <= Km <= K:
        raise ValueError(f"Km must be an integer in [0, K={K}], got {Km!r}")
    rng = np.random.default_rng(seed)
    query = rng.integers(-spread, spread + 1, size=l).astype(np.float64)
    database = rng.integers(-spread, spread + 1, size=(K, l)).astype(np.float64)
    matches = np.sort(rng.choice(K, size=Km, replace=False))
    database[matches] = query + rng.integers(-noise, noise + 1, size=(Km, l))
    return SyntheticSearch(database, query, matches)


@dataclass(frozen=True)
class FaceSet:
    """Embeddings with identity labels: a gallery (``train``) and probes (``test``)."""
    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    source: str


def _checked(x, labels, what: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise DatasetError(f"{what}: expected a 2-D array of embeddings (vectors x dimension), got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.number) or not np.isfinite(x).all():
        raise DatasetError(f"{what}: embeddings must be finite numbers (dtype {x.dtype})")
    labels = np.asarray(labels)
    if labels.shape != (x.shape[0],):
        raise DatasetError(f"{what}: {labels.shape[0] if labels.ndim else 0} labels for {x.shape[0]} embeddings")
    return x.astype(np.float64), labels.astype(str)


def load_embeddings(path, labels=None, *, test_fraction: float = 0.0, seed: int = 0) -> FaceSet:
    """A user's embeddings: ``.npz`` holding ``arr_0..arr_3`` (train X, y, test X, y: the FaceNet
    tutorial format) or ``X``/``embeddings`` and ``y``/``labels``; or ``.npy`` with ``labels`` given.
    Without a test split, ``test_fraction`` of the vectors (per identity, at least one left in the
    gallery) become probes."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: not a numpy .npy/.npz file ({exc})") from None
    if isinstance(data, np.ndarray):
        if labels is None:
            raise DatasetError(f"{path}: a .npy file holds no labels; pass labels=")
        x, y = _checked(data, labels, str(path))
        return _split(x, y, test_fraction, seed, str(path))
    keys = set(data.files)
    if {"arr_0", "arr_1", "arr_2", "arr_3"} <= keys:
        tx, ty = _checked(data["arr_0"], data["arr_1"], f"{path} (train)")
        vx, vy = _checked(data["arr_2"], data["arr_3"], f"{path} (test)")
        if tx.shape[1] != vx.shape[1]:
            raise DatasetError(f"{path}: train dimension {tx.shape[1]} != test dimension {vx.shape[1]}")
        return FaceSet(tx, ty, vx, vy, str(path))
    xk = next((k for k in ("X", "embeddings") if k in keys), None)
    yk = next((k for k in ("y", "labels") if k in keys), None)
    if xk is None or (yk is None and labels is None):
        raise DatasetError(f"{path}: expected arrays arr_0..arr_3, or X/embeddings with y/labels; found {sorted(keys)}")
    x, y = _checked(data[xk], data[yk] if yk else labels, str(path))
    return _split(x, y, test_fraction, seed, str(path))


def _split(x, y, test_fraction: float, seed: int, source: str) -> FaceSet:
    if not 0.0 <= test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in [0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), bool)
    for label in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == label))
        test[idx[:min(int(round(test_fraction * len(idx))), len(idx) - 1)]] = True
    return FaceSet(x[~test], y[~test], x[test], y[test], source)


def load_faces(path=None, *, download_missing: bool = True) -> FaceSet:
    """The 5-celebrity FaceNet-128 set (93 gallery, 25 probe embeddings): ``path``, else
    ``<shared>/faces``, else hepkg's cache (downloaded once, sha256-pinned)."""
    if path is not None:
        return load_embeddings(path)
    shared = paths.shared_data()
    candidates = ([shared / "faces" / FACES_FILE] if shared is not None else []) + [paths.cache("faces") / FACES_FILE]
    for cand in candidates:
        if cand.is_file():
            verify_cached(cand, FACES_SHA256)
            return load_embeddings(cand)
    if not download_missing:
        raise DatasetError(f"{FACES_FILE} not found in {[str(c.parent) for c in candidates]} and download_missing=False")
    dest = candidates[-1]
    download(FACES_URL, dest, sha256=FACES_SHA256)
    return load_embeddings(dest)
