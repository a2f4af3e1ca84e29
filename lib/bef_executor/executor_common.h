// What the fast executor (bef_program.cc) and the reference executor
// (reference_executor.cc) share: how a BEF function's types and function
// operands are decoded, and the diagnostics and error values both produce,
// so that the two report the same errors, with the same messages, at the
// same source locations. Private to lib/bef_executor.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_EXECUTOR_COMMON_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_EXECUTOR_COMMON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/location.h"
#include "asyncrt/host_context/tracing.h"

namespace asyncrt::internal {

// The names of `types` (type indices of `file`).
inline std::vector<std::string> TypeNames(const bef::BefFile& file,
                                          absl::Span<const uint32_t> types) {
  std::vector<std::string> names;
  names.reserve(types.size());
  for (uint32_t type : types) names.emplace_back(file.type_name(type));
  return names;
}

// Appends the functions that `attribute` names (`tfrt.call @f`,
// `tfrt.case [@a, @b]`) to `out`, in attribute order.
inline void CollectFunctions(const bef::BefFile& file,
                             const bef::Attribute& attribute,
                             std::vector<uint32_t>& out) {
  if (attribute.kind == bef::AttributeKind::kFunction) {
    out.push_back(attribute.index);
  } else if (attribute.kind == bef::AttributeKind::kAggregate) {
    for (uint32_t element : attribute.elements) {
      CollectFunctions(file, file.attribute(element), out);
    }
  }
}

// A kernel's function operands (indices into the file's functions): its
// regions, then the functions its attributes name, in attribute order.
inline std::vector<uint32_t> FunctionOperands(const bef::BefFile& file,
                                              const bef::Kernel& kernel) {
  std::vector<uint32_t> operands(kernel.functions.begin(),
                                 kernel.functions.end());
  for (const bef::NamedAttribute& named : kernel.attributes) {
    CollectFunctions(file, file.attribute(named.attribute), operands);
  }
  return operands;
}

// Reports a kernel name the host's registry does not know, at the kernel's
// source location (BefProgram::Load then fails with NotFound).
inline void ReportUnknownKernel(const BefProgram& program,
                                const bef::Kernel& kernel,
                                absl::string_view name) {
  program.host()->EmitError(DecodedDiagnostic(
      program.DecodeLocation(Location(&program, kernel.location)),
      absl::NotFoundError(absl::StrCat("unknown kernel name '", name, "'"))));
}

// Whether every kernel's operands are arguments or results of earlier
// kernels (always so for a converted program; a hand-made BEF file may
// differ, and a tfrt.sync function of it then runs as dataflow).
inline bool OperandsDefinedInOrder(const bef::Function& function) {
  std::vector<bool> defined(function.num_registers, false);
  for (uint32_t reg : function.argument_registers) defined[reg] = true;
  for (const bef::Kernel& kernel : function.kernels) {
    for (uint32_t reg : kernel.operands) {
      if (!defined[reg]) return false;
    }
    for (uint32_t reg : kernel.results) defined[reg] = true;
  }
  return true;
}

// A call of a BEF function with the wrong number of arguments or results
// (kernels read an untrusted file): every result is an error value, nothing
// is reported.
[[gnu::noinline, gnu::cold]] inline void SetCallArityError(
    const Function& function, size_t num_arguments,
    absl::Span<RCReference<AsyncValue>> results) {
  RCReference<AsyncValue> error =
      MakeErrorAsyncValueRef(absl::InvalidArgumentError(absl::StrCat(
          "function '", function.name(), "' called with ", num_arguments,
          " arguments and ", results.size(), " results; it takes ",
          function.num_arguments(), " and returns ", function.num_results())));
  for (auto& result : results) result = error;
}

// After a kernel ran: a result it did not set, or (in a tfrt.sync function)
// one not yet available. Reports it at the kernel's location (the frame's
// context) and makes every result the error.
[[gnu::noinline, gnu::cold]] inline void ReportBadResults(
    absl::string_view kernel_name, AsyncKernelFrame& frame,
    RCReference<AsyncValue>* results, size_t num_results) {
  for (size_t i = 0; i < num_results; ++i) {
    if (!results[i]) {
      frame.ReportError(absl::InternalError(
          absl::StrCat("kernel '", kernel_name, "' did not set result ", i)));
      return;
    }
  }
  // A tfrt.sync function runs start to end on the calling thread: a kernel
  // that defers its result does not belong in it.
  RCReference<AsyncValue> error = EmitErrorAsync(
      frame.GetExecutionContext(),
      absl::FailedPreconditionError(absl::StrCat(
          "kernel '", kernel_name,
          "' returned a value that is not yet available, in a tfrt.sync "
          "function")));
  for (size_t r = 0; r < num_results; ++r) results[r] = error;
}

// Chrome trace support, called only on traced paths. The source location of
// a kernel as "file:line:col" for its trace event; empty unless a Chrome
// trace is being recorded (text scopes print no location).
inline std::string KernelTraceLocation(const BefProgram& program,
                                       uint32_t location) {
  if (!tracing::IsChromeTraceActive()) return std::string();
  std::optional<DecodedLocation> decoded =
      program.DecodeLocation(Location(&program, location));
  if (!decoded) return std::string();
  return absl::StrCat(decoded->filename, ":", decoded->line, ":",
                      decoded->column);
}

// A function call's span in the Chrome trace (from its start to the end of
// its last kernel), keyed by the call's address. Region bodies have no name.
inline absl::string_view CallSpanName(const Function& function) {
  return function.name().empty() ? absl::string_view("(region)")
                                 : absl::string_view(function.name());
}
inline void BeginCallSpan(const Function& function, const void* call) {
  if (!tracing::IsChromeTraceActive()) return;
  tracing::BeginAsyncSpan(CallSpanName(function),
                          reinterpret_cast<uintptr_t>(call));
}
inline void EndCallSpan(const Function& function, const void* call) {
  if (!tracing::IsChromeTraceActive()) return;
  tracing::EndAsyncSpan(CallSpanName(function),
                        reinterpret_cast<uintptr_t>(call));
}

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_EXECUTOR_COMMON_H_
