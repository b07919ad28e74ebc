// hepkg_openfhe_encode: OpenFHE's packed encoding read straight from a numpy buffer, the calls of face
// search's diagonal loop with the interpreter lock released, and hoisted rotations run in parallel.
//
// openfhe-python before 1.6 converts a Python sequence element by element (about 2 ms of Python work for
// 65,536 slots: the list, then each item), more than the encoding itself; this module hands the int64 buffer to
// CryptoContextImpl::MakePackedPlaintext. Its bindings also hold the interpreter lock through every call, so
// Python threads that parse, multiply and add ciphertexts run one at a time; here those calls release it. A
// hoisted rotation's steps run one by one from Python, each spread over OpenMP's threads inside OpenFHE;
// fast_rotations runs them as one parallel loop, a step per thread. Built by hepkg.bench.builds.openfhe_encode
// against one openfhe-python build (the same OpenFHE, flags and pybind11), whose CryptoContext and Plaintext types
// it takes and returns.
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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

std::vector<Ciphertext<DCRTPoly>> fast_rotations(const CryptoContext<DCRTPoly>& cc, const Ciphertext<DCRTPoly>& ct,
                                                 const std::vector<int32_t>& steps, uint32_t order) {
    py::gil_scoped_release unlocked;
    const auto digits = cc->EvalFastRotationPrecompute(ct);
    std::vector<Ciphertext<DCRTPoly>> out(steps.size());
    std::exception_ptr failed;
#pragma omp parallel for schedule(dynamic)
    for (size_t i = 0; i < steps.size(); i++) {
        try {
            out[i] = cc->EvalFastRotation(ct, steps[i], order, digits);
        } catch (...) {  // an exception may not leave the parallel loop: the first is thrown after it
#pragma omp critical
            if (!failed)
                failed = std::current_exception();
        }
    }
    if (failed)
        std::rethrow_exception(failed);
    return out;
}

}  // namespace

PYBIND11_MODULE(hepkg_openfhe_encode, m) {
    m.doc() = "OpenFHE's MakePackedPlaintext from an int64 numpy buffer, ciphertext parsing, products and sums "
              "that release the interpreter lock, and parallel hoisted rotations (hepkg.bench.builds.openfhe_encode)";
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
    m.def("fast_rotations", &fast_rotations, py::arg("cc"), py::arg("ct"), py::arg("steps"), py::arg("order"),
          "[cc.EvalFastRotation(ct, s, order, digits) for s in steps], digits = cc.EvalFastRotationPrecompute(ct): "
          "the steps as one OpenMP loop, the interpreter lock released");
}
