"""Bounded memory: the cloud evaluates one chunk at a time; messages are packed with one copy and unpacked
into views."""
import tracemalloc

import numpy as np
import scipy.sparse as sp

from conftest import pinned
from hepkg.spmv import ClientA, ClientB, Cloud, messages


def traced_peak(fn):
    """(fn(), tracemalloc's peak while it ran)."""
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def cloud_peak(n: int):
    """(chunks, peak of the cloud's evaluation, bytes of both messages) for an n x n matrix on sim."""
    m = sp.random(n, n, density=0.02, format="csr", random_state=2, data_rvs=lambda k: np.ones(k, int))
    v = np.ones(n, dtype=np.int64)
    a = ClientA(m, backend="sim")
    b = ClientB(v, a.encryption_context(), a.column_index_message(), **pinned(a.encryption_context(), "sim"))
    a_msg, b_msg = a.matrix_message(), b.vector_message()
    cloud = Cloud(a.public_context(), **pinned(a.public_context(), "sim"))
    reply, peak = traced_peak(lambda: cloud.evaluate(a_msg, b_msg))
    assert np.array_equal(a.decrypt_result(reply), m @ v)
    return a.plan.n_ct, peak, len(a_msg) + len(b_msg)


def test_cloud_memory_does_not_grow_with_the_chunks():
    """The cloud deserializes, multiplies and aggregates one chunk at a time, from views of the messages
    (before: peak 27 MB for 86 chunks and 59 MB for 187; now about 5 MB for both)."""
    (small, p_small, _), (large, p_large, message) = cloud_peak(4000), cloud_peak(6000)
    assert large > 2 * small
    assert p_large < 1.5 * p_small and p_large < message / 3


def test_messages_are_packed_with_one_copy_and_unpacked_into_views():
    blobs = [np.random.default_rng(i).bytes(4 << 20) for i in range(8)]  # 32 MiB of "ciphertexts"
    data, peak = traced_peak(lambda: messages.pack("spmv/vector", {}, {"CP": np.arange(10)}, blobs))
    assert len(data) < peak < 1.1 * len(data)  # the message itself, no intermediate join
    (meta, arrays, views), peak = traced_peak(lambda: messages.unpack(data, "spmv/vector"))
    assert peak < len(data) / 100 and meta == {} and arrays["CP"].tolist() == list(range(10))
    assert all(isinstance(v, memoryview) and v.obj is data for v in views)
    assert [bytes(v) for v in views] == blobs
