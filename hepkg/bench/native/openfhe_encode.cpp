// hepkg_openfhe_encode: OpenFHE's packed encoding read straight from a numpy buffer, and the calls of face
// search's diagonal loop with the interpreter lock released.
//
// openfhe-python before 1.6 converts a Python sequence element by element (about 2 ms of Python work for
// 65,536 slots: the list, then each item), more than the encoding itself; this module hands the int64 buffer to
// CryptoContextImpl::MakePackedPlaintext. Its bindings also hold the interpreter lock through every call, so
// Python threads that parse, multiply and add ciphertexts run one at a time; here those calls release it. Built by hepkg.bench.builds.openfhe_encode against one openfhe-python
// build (the same OpenFHE, flags and pybind11), whose CryptoContext and Plaintext types it takes and returns.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "openfhe.h"

#include "ciphertext-ser.h"
#include "cryptocontext-ser.h"  // registers the schemes' parameter types with this module's cereal

namespace py = pybind11;
using lbcrypto::Ciphertext;
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

Ciphertext<DCRTPoly> parse_ciphertext(const py::buffer& data) {
    py::buffer_info view = data.request();
    if (view.ndim != 1 || view.itemsize != 1)
        throw py::value_error("parse_ciphertext: data must be a one-dimensional byte buffer");
    const char* begin = static_cast<const char*>(view.ptr);
    Ciphertext<DCRTPoly> ct;
    py::gil_scoped_release unlocked;
    std::istringstream in(std::string(begin, begin + view.size), std::ios::binary);
    lbcrypto::Serial::Deserialize(ct, in, lbcrypto::SerType::BINARY);
    return ct;
}

Ciphertext<DCRTPoly> mult_no_relin(const CryptoContext<DCRTPoly>& cc, const Ciphertext<DCRTPoly>& a,
                                   const Ciphertext<DCRTPoly>& b) {
    py::gil_scoped_release unlocked;
    return cc->EvalMultNoRelin(a, b);
}

Ciphertext<DCRTPoly> add(const CryptoContext<DCRTPoly>& cc, const Ciphertext<DCRTPoly>& a,
                         const Ciphertext<DCRTPoly>& b) {
    py::gil_scoped_release unlocked;
    return cc->EvalAdd(a, b);
}

}  // namespace

PYBIND11_MODULE(hepkg_openfhe_encode, m) {
    m.doc() = "OpenFHE's MakePackedPlaintext from an int64 numpy buffer, and ciphertext parsing, products and sums "
              "that release the interpreter lock (hepkg.bench.builds.openfhe_encode)";
    m.attr("built_for") = HEPKG_OPENFHE_MODULE;
    m.def("packed", &packed, py::arg("cc"), py::arg("values"), py::arg("noise_scale_deg") = 1,
          py::arg("level") = 0,
          "A packed plaintext of the int64 slot values (C order), as cc.MakePackedPlaintext(values, "
          "noise_scale_deg, level)");
    m.def("parse_ciphertext", &parse_ciphertext, py::arg("data"),
          "A ciphertext from OpenFHE's binary serialization (bytes or a byte memoryview), as "
          "DeserializeCiphertextString(data, BINARY), the interpreter lock released while it is copied and parsed");
    m.def("mult_no_relin", &mult_no_relin, py::arg("cc"), py::arg("a"), py::arg("b"),
          "cc.EvalMultNoRelin(a, b), the interpreter lock released");
    m.def("add", &add, py::arg("cc"), py::arg("a"), py::arg("b"), "cc.EvalAdd(a, b), the interpreter lock released");
}
