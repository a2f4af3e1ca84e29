// BefProgram: loading a BEF file (native functions here; BEF functions are
// planned in execution_plan.cc and run by call_state.cc and its paths).
// Design notes are in docs/executor.md.
#include "asyncrt/bef_executor/bef_program.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <optional>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "asyncrt/support/block_cache.h"
#include "lib/bef_executor/execution_plan.h"
#include "lib/bef_executor/executor_common.h"
#include "lib/bef_executor/reference_executor.h"

namespace asyncrt {
namespace {

using internal::BefFunction;
using internal::KernelPlan;
using internal::TypeNames;

//===--- Native functions -------------------------------------------------===//

class NativeFunction final : public Function {
 public:
  NativeFunction(const bef::BefFile& file, const bef::Function& function,
                 NativeFunctionImplementation impl)
      : Function(std::string(function.name),
                 TypeNames(file, function.argument_types),
                 TypeNames(file, function.result_types)),
        impl_(impl) {}

  void Execute(const ExecutionContext& exec_ctx,
               absl::Span<AsyncValue* const> arguments,
               absl::Span<RCReference<AsyncValue>> results) const override {
    if (arguments.size() != num_arguments() ||
        results.size() != num_results()) {
      RCReference<AsyncValue> error =
          MakeErrorAsyncValueRef(absl::InvalidArgumentError(absl::StrCat(
              "native function '", name(), "' called with ", arguments.size(),
              " arguments and ", results.size(), " results; it takes ",
              num_arguments(), " and returns ", num_results())));
      for (auto& result : results) result = error;
      return;
    }
    for (AsyncValue* argument : arguments) {
      if (argument->IsUnavailable()) {
        ExecuteWhenReady(exec_ctx, arguments, results);
        return;
      }
    }
    impl_(exec_ctx, arguments, results);
  }

 private:
  // Native code reads its arguments at once; callers may pass pending ones
  // (tfrt.call is non-strict), so wait and forward.
  void ExecuteWhenReady(const ExecutionContext& exec_ctx,
                        absl::Span<AsyncValue* const> arguments,
                        absl::Span<RCReference<AsyncValue>> results) const {
    std::vector<RCReference<IndirectAsyncValue>> outputs;
    for (auto& result : results) {
      outputs.push_back(MakeIndirectAsyncValue());
      result = outputs.back();
    }
    std::vector<RCReference<AsyncValue>> kept;
    for (AsyncValue* argument : arguments) kept.push_back(FormRef(argument));
    std::vector<AsyncValue*> raw(arguments.begin(), arguments.end());
    RunWhenReady(absl::MakeConstSpan(raw),
                 [impl = impl_, exec_ctx = ExecutionContext(exec_ctx),
                  kept = std::move(kept), outputs = std::move(outputs)] {
                   std::vector<AsyncValue*> available;
                   for (const auto& value : kept) {
                     available.push_back(value.get());
                   }
                   std::vector<RCReference<AsyncValue>> values(outputs.size());
                   impl(exec_ctx, available, absl::MakeSpan(values));
                   for (size_t i = 0; i < outputs.size(); ++i) {
                     outputs[i]->ForwardTo(std::move(values[i]));
                   }
                 });
  }

  NativeFunctionImplementation impl_;
};

}  // namespace

//===--- BefProgram
//---------------------------------------------------------===//

BefProgram::~BefProgram() = default;

absl::StatusOr<RCReference<BefProgram>> BefProgram::Load(
    std::unique_ptr<bef::BefFile> file, HostContext* host,
    const BefProgramOptions& options) {
  RCReference<BefProgram> program =
      TakeRef(new BefProgram(std::move(file), host));
  const bef::BefFile& bef = *program->file_;
  auto& natives = host->GetOrCreateSharedContext<NativeFunctionRegistry>();
  std::vector<BefFunction*> bef_functions;
  std::vector<ReferenceFunction*> reference_functions;
  int unknown = 0;
  for (const bef::Function& function : bef.functions()) {
    if (function.kind == bef::FunctionKind::kNative) {
      NativeFunctionImplementation impl = natives.Get(function.name);
      if (impl == nullptr) {
        ++unknown;
        host->EmitError(DecodedDiagnostic(absl::NotFoundError(
            absl::StrCat("unknown native function '", function.name, "'"))));
        program->owned_functions_.push_back(nullptr);
      } else {
        program->owned_functions_.push_back(
            std::make_unique<NativeFunction>(bef, function, impl));
      }
    } else if (options.mode == ExecutorMode::kReference) {
      auto reference = std::make_unique<ReferenceFunction>(*program, function);
      reference_functions.push_back(reference.get());
      program->owned_functions_.push_back(std::move(reference));
    } else {
      auto bef_function = std::make_unique<BefFunction>(*program, function);
      bef_functions.push_back(bef_function.get());
      program->owned_functions_.push_back(std::move(bef_function));
    }
    program->functions_.push_back(program->owned_functions_.back().get());
  }
  for (BefFunction* function : bef_functions) {
    unknown += function->Prepare(program->functions_);
  }
  for (ReferenceFunction* function : reference_functions) {
    unknown += function->Prepare(program->functions_);
  }
  // TFRT's stream scheduler never had non-strict kernels: functions with
  // them, and the bodies they run, keep the order TFRT programs using them
  // expect (tfrt.if printing its body before later kernels, for example).
  absl::flat_hash_set<const Function*> dataflow_order;
  for (BefFunction* function : bef_functions) {
    if (!function->has_non_strict_kernels()) continue;
    dataflow_order.insert(function);
    for (uint32_t k = 0; k < function->num_kernels(); ++k) {
      const KernelPlan& kernel = function->kernel(k);
      if (kernel.non_strict) {
        dataflow_order.insert(kernel.descriptor.functions.begin(),
                              kernel.descriptor.functions.end());
      }
    }
  }
  for (BefFunction* function : bef_functions) {
    function->ChooseSchedule(dataflow_order.contains(function));
  }
  if (unknown > 0) {
    return absl::NotFoundError(absl::StrCat(
        unknown, " unknown kernel", unknown == 1 ? "" : "s",
        " or native function", unknown == 1 ? "" : "s", " in the program"));
  }
  return program;
}

const Function* BefProgram::GetFunction(absl::string_view name) const {
  for (const Function* function : functions_) {
    if (!function->name().empty() && function->name() == name) return function;
  }
  return nullptr;
}

std::optional<DecodedLocation> BefProgram::DecodeLocation(Location loc) const {
  if (loc.data() < 0 ||
      static_cast<size_t>(loc.data()) >= file_->num_locations()) {
    return std::nullopt;
  }
  bef::Location location = file_->location(loc.data());
  return DecodedLocation{
      std::string(location.filename), static_cast<int>(location.line),
      static_cast<int>(location.column), std::string(location.name)};
}

}  // namespace asyncrt
