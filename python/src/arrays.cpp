// bitproof.assert_equal's comparison: two arrays of one float dtype (float16, float32), C
// order, the same shape, compared word by word (+0 and -0 differ; NaN payloads compared), the
// first `keep` differences decoded by the format room (describe_code). Arrays cross by the
// buffer protocol, without copies; a wrong dtype, shape or layout is bad input naming the array.
#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "report/report.hpp"

namespace bitproof::python {
namespace {

struct View {
  py::buffer_info info;
  FormatId format = FormatId::fp16;
  int bytes = 2;
};

// The array's buffer, checked: a float16 or float32 dtype, C-contiguous.
View view_of(const py::object& array, const std::string& name) {
  if (!PyObject_CheckBuffer(array.ptr()))
    raise({fmt::format("{}: expected an array (the buffer protocol: a NumPy array), got {}", name,
                       std::string(py::str(py::type::of(array).attr("__name__"))))});
  View v{py::reinterpret_borrow<py::buffer>(array).request()};
  const std::string& f = v.info.format;
  if (f == "e" && v.info.itemsize == 2) {
    v.format = FormatId::fp16;
  } else if (f == "f" && v.info.itemsize == 4) {
    v.format = FormatId::fp32;
    v.bytes = 4;
  } else {
    raise({fmt::format("{}: dtype: expected float16 or float32, got buffer format \"{}\" ({} bytes an element)", name,
                       f, v.info.itemsize)});
  }
  py::ssize_t stride = v.info.itemsize;
  for (py::ssize_t d = v.info.ndim - 1; d >= 0; --d) {
    if (v.info.shape[d] > 1 && v.info.strides[d] != stride)
      raise({fmt::format("{}: not C-contiguous (strides {}): pass numpy.ascontiguousarray(...)", name,
                         fmt::join(v.info.strides, ", "))});
    stride *= v.info.shape[d];
  }
  return v;
}

std::uint32_t word(const View& v, py::ssize_t i) {
  if (v.bytes == 2) {
    std::uint16_t w;
    std::memcpy(&w, static_cast<const char*>(v.info.ptr) + i * 2, 2);
    return w;
  }
  std::uint32_t w;
  std::memcpy(&w, static_cast<const char*>(v.info.ptr) + i * 4, 4);
  return w;
}

nlohmann::json decoded(FormatId f, int bytes, std::uint32_t bits) {
  return {{"bits", fmt::format("0x{:0{}x}", bits, bytes * 2)}, {"decoded", describe_code(f, bits)}};
}

}  // namespace

std::string compare(const py::object& a, const py::object& b, const std::string& name_a, const std::string& name_b,
                    std::size_t keep) {
  const View va = view_of(a, name_a);
  const View vb = view_of(b, name_b);
  if (va.format != vb.format)
    raise({fmt::format("{}: dtype: {} holds {}, {} holds {}", name_b, name_a, va.info.format, name_b, vb.info.format)});
  if (va.info.shape != vb.info.shape)
    raise({fmt::format("{}: shape: ({}) is not {}'s ({})", name_b, fmt::join(vb.info.shape, ", "), name_a,
                       fmt::join(va.info.shape, ", "))});
  nlohmann::json out{{"dtype", va.bytes == 2 ? "float16" : "float32"},
                     {"shape", va.info.shape},
                     {"elements", va.info.size},
                     {"differing", 0},
                     {"first", nlohmann::json::array()}};
  std::uint64_t differing = 0;
  for (py::ssize_t i = 0; i < va.info.size; ++i) {
    const std::uint32_t x = word(va, i), y = word(vb, i);
    if (x == y) continue;
    if (differing++ >= keep) continue;
    std::vector<py::ssize_t> at(va.info.shape.size());
    py::ssize_t rest = i;
    for (std::size_t d = at.size(); d-- > 0;) {
      at[d] = rest % va.info.shape[d];
      rest /= va.info.shape[d];
    }
    out["first"].push_back(
        {{"index", at}, {"flat", i}, {"a", decoded(va.format, va.bytes, x)}, {"b", decoded(vb.format, vb.bytes, y)}});
  }
  out["differing"] = differing;
  return out.dump();
}

}  // namespace bitproof::python
