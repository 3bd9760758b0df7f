// The schema's enums, declared once. schema.cpp writes the `enum` table of
// every recording and the "Enums" section of docs/schema.md from these lists,
// and code names the codes instead of writing the integers:
//   if (r.source == schema::range_source::dataloader) ...
// (scripts/check_schema_literals.py fails the build's tests on a bare integer
// compared with or assigned to an enum column).
//
// Each enum is a namespace spelled as its `enum.type`, holding an unscoped
// `enum Value : int` whose enumerators are spelled as its `enum.name` rows, so
// the code, the table and the docs use one name. Unscoped, because the columns
// stay int64_t in the row structs, the analyzer's model and SQL: a name
// converts to the column's integer without a cast.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuscope::schema {

// One list per enum: X(T, name, value) for each value, T being the enum's type
// name, in the order the `enum` table lists them.
#define GPUSCOPE_ENUM_COPY_KIND(X, T)                                                            \
  X(T, unknown, 0) X(T, HtoD, 1) X(T, DtoH, 2) X(T, HtoA, 3) X(T, AtoH, 4) X(T, AtoA, 5)         \
  X(T, AtoD, 6) X(T, DtoA, 7) X(T, DtoD, 8) X(T, HtoH, 9) X(T, PtoP, 10)
#define GPUSCOPE_ENUM_MEM_KIND(X, T)                                                             \
  X(T, unknown, 0) X(T, pageable, 1) X(T, pinned, 2) X(T, device, 3) X(T, array, 4)             \
  X(T, managed, 5) X(T, device_static, 6) X(T, managed_static, 7)
#define GPUSCOPE_ENUM_API_DOMAIN(X, T) X(T, runtime, 1) X(T, driver, 2)
#define GPUSCOPE_ENUM_SYNC_TYPE(X, T)                                                            \
  X(T, unknown, 0) X(T, event_synchronize, 1) X(T, stream_wait_event, 2)                        \
  X(T, stream_synchronize, 3) X(T, context_synchronize, 4)
#define GPUSCOPE_ENUM_MEMORY_OP(X, T) X(T, alloc, 1) X(T, free, 2)
#define GPUSCOPE_ENUM_MEMORY_SOURCE(X, T) X(T, cuda, 1) X(T, torch_allocator, 2)
#define GPUSCOPE_ENUM_RANGE_KIND(X, T) X(T, push_pop, 1) X(T, start_end, 2) X(T, mark, 3)
#define GPUSCOPE_ENUM_RANGE_SOURCE(X, T)                                                         \
  X(T, nvtx, 1) X(T, torch_user, 2) X(T, dataloader, 3) X(T, optimizer, 4)                      \
  X(T, profiler_step, 5) X(T, torch_other, 6) X(T, sampling_window, 7) X(T, untraced_drained, 8) \
  X(T, tracer_overhead, 9)
#define GPUSCOPE_ENUM_STEP_SOURCE(X, T) X(T, profiler_step, 1) X(T, optimizer_step, 2) X(T, nvtx, 3) X(T, graph_launch, 4)
#define GPUSCOPE_ENUM_SEVERITY(X, T) X(T, info, 1) X(T, warning, 2) X(T, error, 3)

// E(type, list) for every enum, in the order of the `enum` table.
#define GPUSCOPE_SCHEMA_ENUMS(E)                                                                 \
  E(copy_kind, GPUSCOPE_ENUM_COPY_KIND)                                                         \
  E(mem_kind, GPUSCOPE_ENUM_MEM_KIND)                                                           \
  E(api_domain, GPUSCOPE_ENUM_API_DOMAIN)                                                       \
  E(sync_type, GPUSCOPE_ENUM_SYNC_TYPE)                                                         \
  E(memory_op, GPUSCOPE_ENUM_MEMORY_OP)                                                         \
  E(memory_source, GPUSCOPE_ENUM_MEMORY_SOURCE)                                                 \
  E(range_kind, GPUSCOPE_ENUM_RANGE_KIND)                                                       \
  E(range_source, GPUSCOPE_ENUM_RANGE_SOURCE)                                                   \
  E(step_source, GPUSCOPE_ENUM_STEP_SOURCE)                                                     \
  E(severity, GPUSCOPE_ENUM_SEVERITY)

// op.scope holds torch's at::RecordScope as the plugin passes it on. Its
// values are listed in the column's doc (tests/trace_formats/schema/enums_test.cpp), not in
// the `enum` table, which recordings carry unchanged.
#define GPUSCOPE_ENUM_OP_SCOPE(X, T)                                                             \
  X(T, function, 0) X(T, backward_function, 1) X(T, torchscript_function, 2)                    \
  X(T, kernel_function_dtype, 3) X(T, custom_class, 4) X(T, build_feature, 5)                   \
  X(T, lite_interpreter, 6) X(T, user_scope, 7) X(T, static_runtime_op, 8)                      \
  X(T, static_runtime_model, 9)

// Each enum T gets, in namespace T: the enumerators; name(code), the
// `enum.name` of a code ("" for a code the schema does not name); and
// parse(name), the code of a name.
#define GPUSCOPE_ENUMERATOR(T, name, value) name = value,
#define GPUSCOPE_NAME_CASE(T, name, value) case value: return #name;
#define GPUSCOPE_PARSE_NAME(T, name, value) if (text == #name) return name;
#define GPUSCOPE_DECLARE_ENUM(T, LIST)                          \
  namespace T {                                                 \
  enum Value : int { LIST(GPUSCOPE_ENUMERATOR, T) };            \
  constexpr std::string_view name(int64_t code) {               \
    switch (code) { LIST(GPUSCOPE_NAME_CASE, T) }               \
    return {};                                                  \
  }                                                             \
  constexpr std::optional<Value> parse(std::string_view text) { \
    LIST(GPUSCOPE_PARSE_NAME, T)                                \
    return std::nullopt;                                        \
  }                                                             \
  }
GPUSCOPE_SCHEMA_ENUMS(GPUSCOPE_DECLARE_ENUM)
GPUSCOPE_DECLARE_ENUM(op_scope, GPUSCOPE_ENUM_OP_SCOPE)
#undef GPUSCOPE_DECLARE_ENUM
#undef GPUSCOPE_PARSE_NAME
#undef GPUSCOPE_NAME_CASE
#undef GPUSCOPE_ENUMERATOR

}  // namespace gpuscope::schema
