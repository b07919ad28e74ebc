// hepkg_openfhe_encode: OpenFHE's packed encoding read straight from a numpy buffer.
//
// openfhe-python before 1.6 converts a Python sequence element by element (about 2 ms of Python work for
// 65,536 slots: the list, then each item), more than the encoding itself; this module hands the int64 buffer to
// CryptoContextImpl::MakePackedPlaintext. Built by hepkg.bench.builds.openfhe_encode against one openfhe-python
// build (the same OpenFHE, flags and pybind11), whose CryptoContext and Plaintext types it takes and returns.
#include <cstdint>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "openfhe.h"

namespace py = pybind11;
using lbcrypto::CryptoContext;
using lbcrypto::DCRTPoly;
using lbcrypto::Plaintext;

namespace {

Plaintext packed(const CryptoContext<DCRTPoly>& cc, const py::array_t<int64_t, py::array::c_style>& values,
                 unsigned int noise_scale_deg, uint32_t level) {
    if (values.ndim() != 1)
        throw py::value_error("packed: values must be one-dimensional");
    std::vector<int64_t> slots(values.data(), values.data() + values.shape(0));
    py::gil_scoped_release unlocked;
    return cc->MakePackedPlaintext(slots, noise_scale_deg, level);
}

}  // namespace

PYBIND11_MODULE(hepkg_openfhe_encode, m) {
    m.doc() = "OpenFHE's MakePackedPlaintext from an int64 numpy buffer (hepkg.bench.builds.openfhe_encode)";
    m.attr("built_for") = HEPKG_OPENFHE_MODULE;
    m.def("packed", &packed, py::arg("cc"), py::arg("values"), py::arg("noise_scale_deg") = 1,
          py::arg("level") = 0,
          "A packed plaintext of the int64 slot values (C order), as cc.MakePackedPlaintext(values, "
          "noise_scale_deg, level)");
}
