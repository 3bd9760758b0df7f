#include "input_format.h"

#include <cstdint>
#include <string_view>

#include "json_buffer.h"

namespace gpuscope::torch_plugin {
namespace {

// Fake and traced tensors (torch.compile) have symbolic sizes, and sizes()
// throws for them; torch 2.x can say so, 1.13 cannot (try/catch covers it).
template <class Impl>
bool symbolic_sizes(const Impl& impl) {
  if constexpr (requires { impl.has_symbolic_sizes_strides(); })
    return impl.has_symbolic_sizes_strides();
  else
    return false;
}

bool plain_sizes(const at::Tensor& t) {
  return t.defined() && !t.is_nested() && !symbolic_sizes(*t.unsafeGetTensorImpl());
}

void put_shape(JsonBuffer& out, const at::Tensor& t) {
  out.put('[');
  if (plain_sizes(t)) {
    try {
      bool first = true;
      for (int64_t d : t.sizes()) {
        if (!first) out.put(',');
        first = false;
        out.put_int(d);
      }
    } catch (...) {
      // A tensor subclass whose sizes cannot be read: record it as unknown.
    }
  }
  out.put(']');
}

void put_dtype(JsonBuffer& out, const at::Tensor& t, DtypeNames& names) {
  if (!t.defined()) {
    out.put("\"\"");
    return;
  }
  const auto i = static_cast<size_t>(t.scalar_type());
  if (i < DtypeNames::kTypes) {
    if (names.len[i] == 0) {
      auto name = t.dtype().name();
      JsonBuffer quoted(names.text[i], DtypeNames::kLen);
      quoted.put_string(std::string_view(name.data(), name.size()));
      if (quoted.ok()) names.len[i] = static_cast<uint8_t>(quoted.size());
    }
    if (names.len[i] != 0) {
      out.put(std::string_view(names.text[i], names.len[i]));
      return;
    }
  }
  auto name = t.dtype().name();
  out.put_string(std::string_view(name.data(), name.size()));
}

// One input: its shape element and its dtype element.
void put_input(JsonBuffer& shapes, JsonBuffer& dtypes, const c10::IValue& v, DtypeNames& names) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    put_shape(shapes, t);
    put_dtype(dtypes, t, names);
  } else if (v.isTensorList() || (v.isList() && !v.toListRef().empty() && v.toListRef()[0].isTensor())) {
    shapes.put('[');
    bool first = true;
    for (const c10::IValue& item : v.toListRef()) {
      if (!first) shapes.put(',');
      first = false;
      if (item.isTensor()) {
        put_shape(shapes, item.toTensor());
      } else {
        shapes.put("[]");
      }
    }
    shapes.put(']');
    dtypes.put("\"TensorList\"");
  } else if (v.isScalar()) {
    shapes.put("[]");
    dtypes.put("\"Scalar\"");
  } else {
    shapes.put("[]");
    dtypes.put("\"\"");
  }
}

}  // namespace

FormattedInputs format_inputs(c10::ArrayRef<const c10::IValue> inputs, char* shapes_buf, size_t shapes_cap,
                              char* dtypes_buf, size_t dtypes_cap, DtypeNames& names) {
  JsonBuffer shapes(shapes_buf, shapes_cap);
  JsonBuffer dtypes(dtypes_buf, dtypes_cap);
  shapes.put('[');
  dtypes.put('[');
  bool first = true;
  for (const c10::IValue& v : inputs) {
    size_t shapes_mark = shapes.mark(), dtypes_mark = dtypes.mark();
    if (!first) {
      shapes.put(',');
      dtypes.put(',');
    }
    put_input(shapes, dtypes, v, names);
    if (!shapes.ok() || !dtypes.ok()) {
      shapes.rollback(shapes_mark);
      dtypes.rollback(dtypes_mark);
      break;
    }
    first = false;
  }
  shapes.close(']');
  dtypes.close(']');
  return {static_cast<uint32_t>(shapes.size()), static_cast<uint32_t>(dtypes.size())};
}

}  // namespace gpuscope::torch_plugin
