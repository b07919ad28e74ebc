"""gemm on real HE libraries: a smoke test on a few small shapes (the op counts are sim's, checked elsewhere)."""
import numpy as np
import pytest

import hepkg.gemm as gm
import hepkg.he as he

#: OpenFHE refuses N = 8192 with depth 4 at 128 bits; a small test ring with depth 3 (1M + 2C)
OPENFHE_PARAMS = he.ParamSet(name="test-gemm-openfhe", scheme="bfv", n=4096, plain_modulus=65537,
                             qi_bits=(60,) * 5, depth=3, source="hepkg gemm tests (HEStd_NotSet)")
CASES = [("hegmm-en", (2, 5, 3), "cloud"), ("hegmm-en-bsgs", (3, 7, 5), "cloud"), ("e2dm-s", (3, 2, 3), "client"),
         ("huang", (4, 3, 2), "cloud")]


def _context(backend, method, shape, preprocess, params, insecure):
    if not he.availability()[backend]:
        pytest.skip(f"{backend} is not installed")
    try:
        return gm.gemm_context(method, *shape, backend=backend, params=params, preprocess=preprocess,
                               insecure=insecure)
    except (he.BackendUnavailable, ImportError) as exc:  # installed but not importable
        pytest.skip(f"{backend} cannot be imported: {exc}")


@pytest.mark.parametrize("backend,params,insecure", [("pyfhel", "bfv-8192-default", False),
                                                     ("openfhe", OPENFHE_PARAMS, True)])
@pytest.mark.parametrize("method,shape,preprocess", CASES)
def test_real_backend_matches_numpy_and_sim_counts(backend, params, insecure, method, shape, preprocess):
    ctx = _context(backend, method, shape, preprocess, params, insecure)
    A, B = gm.random_operands(*shape, ctx.plain_modulus, seed=7, max_abs=100)
    res = gm.matmul(ctx, A, B, method, preprocess=preprocess)
    assert np.array_equal(res.C, A @ B)
    assert res.ops["mul_ct"] == gm.expected_counts(method, *shape, preprocess, ctx.period)["mul_ct"]
    assert res.ops["depth"] <= 3
