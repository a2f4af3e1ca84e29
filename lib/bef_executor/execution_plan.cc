// Load-time planning (see execution_plan.h).
#include "lib/bef_executor/execution_plan.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "lib/bef_executor/call_state.h"

namespace asyncrt::internal {

int BefFunction::Prepare(const std::vector<const Function*>& all_functions) {
  const bef::BefFile& file = program_.file();
  int unknown = 0;
  // A kernel's function operands: its regions, then the functions its
  // attributes name (`tfrt.call @f`, `tfrt.case [@a, @b]`), in attribute
  // order.
  std::vector<std::vector<uint32_t>> operands_per_kernel;
  size_t num_function_operands = 0;
  for (const bef::Kernel& kernel : decoded_.kernels) {
    operands_per_kernel.push_back(internal::FunctionOperands(file, kernel));
    num_function_operands += operands_per_kernel.back().size();
  }
  function_pool_.reserve(num_function_operands);
  size_t kernel_index = 0;
  kernels_.reserve(decoded_.kernels.size());
  for (const bef::Kernel& kernel : decoded_.kernels) {
    KernelPlan plan;
    absl::string_view name = file.kernel_name(kernel.kernel_name);
    plan.descriptor.file = &file;
    plan.descriptor.name = name;
    plan.impl = program_.host()->registry().GetKernel(name);
    plan.non_strict = program_.host()->registry().IsNonStrict(name);
    plan.location = kernel.location;
    plan.operands = kernel.operands;
    plan.results = kernel.results;
    plan.descriptor.attributes = kernel.attributes;
    size_t start = function_pool_.size();
    const std::vector<uint32_t>& operands = operands_per_kernel[kernel_index++];
    for (uint32_t f : operands) function_pool_.push_back(all_functions[f]);
    plan.descriptor.functions =
        absl::MakeConstSpan(function_pool_).subspan(start, operands.size());
    if (plan.impl == nullptr) {
      ++unknown;
      internal::ReportUnknownKernel(program_, kernel, name);
    }
    kernels_.push_back(plan);
  }
  BuildRegisterPlans();
  // tfrt.sync functions keep every value boxed: their kernels run in
  // program order, with results checked as they come.
  if (!is_sync()) PlanUnboxed();
  runs_in_order_ = is_sync() && internal::OperandsDefinedInOrder(decoded_);
  return unknown;
}

void BefFunction::ChooseSchedule(bool dataflow_order) {
  has_streams_ =
      !decoded_.kernel_streams.empty() && !is_sync() && !dataflow_order;
  if (has_streams_) {
    SplitUsersByStream();
  } else if (dataflow_order && !is_sync()) {
    CountVisits();
  } else {
    // The worklist is LIFO.
    std::reverse(initially_ready_.begin(), initially_ready_.end());
    std::reverse(ready_with_arguments_.begin(), ready_with_arguments_.end());
  }
  for (RegisterPlan& plan : registers_) {
    plan.has_sole_user = plan.users.size() == 1 && plan.outline_users.empty() &&
                         plan.result_slots.empty() &&
                         !plan.has_non_strict_users && plan.references == 1;
    if (plan.has_sole_user) plan.sole_user = plan.users[0];
  }
  for (KernelPlan& kernel : kernels_) {
    if (!kernel.unboxed_result) continue;
    const RegisterPlan& plan = registers_[kernel.results[0]];
    if (plan.has_sole_user) kernel.unboxed_sole_user = plan.sole_user;
    const size_t num_operands = kernel.operands.size();
    if (num_operands == 0 ||
        kernel.unboxed_operands != (1u << num_operands) - 1) {
      continue;
    }
    kernel.direct_invoke = kernel.unboxed->invoke;
    for (size_t i = 0; i < kMaxUnboxedOperands; ++i) {
      kernel.operand_slots[i] = kernel.operands[i < num_operands ? i : 0];
    }
    kernel.result_slot = kernel.results[0];
  }
  BuildCallImages();
}

void BefFunction::BuildRegisterPlans() {
  const uint32_t num_registers = decoded_.num_registers;
  std::vector<uint32_t> use_counts(num_registers, 0);
  std::vector<uint32_t> non_strict_counts(num_registers, 0);
  std::vector<uint32_t> result_counts(num_registers, 0);
  for (const KernelPlan& kernel : kernels_) {
    for (uint32_t reg : kernel.operands) {
      ++(kernel.non_strict ? non_strict_counts : use_counts)[reg];
    }
  }
  for (uint32_t reg : decoded_.result_registers) ++result_counts[reg];
  size_t total = 0;
  for (uint32_t reg = 0; reg < num_registers; ++reg) {
    total += use_counts[reg] + non_strict_counts[reg] + result_counts[reg];
  }
  pool_.resize(total);
  registers_.resize(num_registers);
  std::vector<size_t> user_fill(num_registers), slot_fill(num_registers);
  std::vector<size_t> non_strict_fill(num_registers);
  size_t offset = 0;
  for (uint32_t reg = 0; reg < num_registers; ++reg) {
    user_fill[reg] = offset;
    registers_[reg].users =
        absl::MakeConstSpan(pool_).subspan(offset, use_counts[reg]);
    offset += use_counts[reg];
    non_strict_fill[reg] = offset;
    registers_[reg].non_strict_users =
        absl::MakeConstSpan(pool_).subspan(offset, non_strict_counts[reg]);
    offset += non_strict_counts[reg];
    slot_fill[reg] = offset;
    registers_[reg].result_slots =
        absl::MakeConstSpan(pool_).subspan(offset, result_counts[reg]);
    offset += result_counts[reg];
  }
  for (uint32_t reg : decoded_.argument_registers) {
    registers_[reg].is_argument = true;
  }
  for (uint32_t reg = 0; reg < num_registers; ++reg) {
    RegisterPlan& plan = registers_[reg];
    const size_t uses = plan.users.size() + plan.non_strict_users.size();
    plan.references = (plan.is_argument ? 1 : uses) + plan.result_slots.size();
    plan.has_non_strict_users = !plan.non_strict_users.empty();
  }
  size_t num_operands = 0;
  for (const KernelPlan& kernel : kernels_) {
    num_operands += kernel.operands.size();
  }
  operand_is_argument_.reserve(num_operands);
  for (KernelPlan& kernel : kernels_) {
    kernel.descriptor.argument_is_shared =
        operand_is_argument_.data() + operand_is_argument_.size();
    for (uint32_t reg : kernel.operands) {
      operand_is_argument_.push_back(registers_[reg].is_argument);
    }
    // An operand passed twice is never unique at this kernel. Only strict
    // kernels qualify: their operands are concrete when they run, so
    // SetReturnedResultAt need not test the state.
    const size_t candidates =
        kernel.non_strict ? 0 : std::min<size_t>(kernel.operands.size(), 8);
    for (size_t i = 0; i < candidates; ++i) {
      const uint32_t reg = kernel.operands[i];
      if (!registers_[reg].is_argument &&
          std::count(kernel.operands.begin(), kernel.operands.end(), reg) ==
              1) {
        kernel.descriptor.maybe_spent_arguments |= 1u << i;
      }
    }
  }
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    KernelPlan& kernel = kernels_[k];
    int32_t non_argument_operands = 0;
    for (uint32_t reg : kernel.operands) {
      pool_[(kernel.non_strict ? non_strict_fill : user_fill)[reg]++] = k;
      non_argument_operands += !registers_[reg].is_argument;
    }
    const int32_t num_operands = kernel.operands.size();
    if (kernel.non_strict) {
      // The first operand defined starts it (see CountDownNonStrict).
      kernel.ready_count = num_operands > 0 ? 1 : 0;
      kernel.ready_count_with_arguments =
          non_argument_operands < num_operands ? 0 : kernel.ready_count;
    } else {
      kernel.ready_count = num_operands;
      kernel.ready_count_with_arguments = non_argument_operands;
    }
    if (kernel.ready_count == 0) initially_ready_.push_back(k);
    if (kernel.ready_count_with_arguments == 0) {
      ready_with_arguments_.push_back(k);
    }
  }
  for (uint32_t i = 0; i < decoded_.result_registers.size(); ++i) {
    uint32_t reg = decoded_.result_registers[i];
    pool_[slot_fill[reg]++] = i;
  }
  // Users are pushed on the LIFO worklist in list order: reversed, the
  // first user in program order runs first (and its own users right after
  // it, depth first), as a sequential reading of the program expects.
  for (uint32_t reg = 0; reg < num_registers; ++reg) {
    const size_t begin = registers_[reg].users.data() - pool_.data();
    std::reverse(pool_.begin() + begin,
                 pool_.begin() + begin + registers_[reg].users.size());
  }
  state_slots_ = std::make_unique<KernelStateSlot[]>(kernels_.size());
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    kernels_[k].descriptor.state_slot = &state_slots_[k];
  }
}

void BefFunction::BuildCallImages() {
  const size_t ready_at =
      kCallRegistersAt + sizeof(AsyncValue*) * num_registers();
  const size_t slots_at =
      AlignUp<uintptr_t>(ready_at + sizeof(int32_t) * num_kernels());
  const size_t end = slots_at + sizeof(uintptr_t) * num_results();
  // Whole 16-byte chunks, for CopyCallImage. Block classes are powers
  // of two from 64 bytes, so the padding never changes the class.
  const size_t image_size = (end - kCallRegistersAt + 15) / 16 * 16;
  call_layout_.ready_at = ready_at;
  call_layout_.slots_at = slots_at;
  call_layout_.values_at = kCallRegistersAt + image_size;
  call_layout_.size = call_layout_.values_at +
                      (has_unboxed_ ? sizeof(uint64_t) * num_registers() : 0);
  call_layout_.block_class = CallBlockCache::ClassOf(call_layout_.size);
  auto build = [&](std::vector<unsigned char>& image, bool with_arguments) {
    // Zero bytes are null registers and empty result slots.
    image.assign(image_size, 0);
    for (uint32_t k = 0; k < num_kernels(); ++k) {
      const int32_t count = with_arguments
                                ? kernels_[k].ready_count_with_arguments
                                : kernels_[k].ready_count;
      std::memcpy(
          image.data() + ready_at - kCallRegistersAt + sizeof(int32_t) * k,
          &count, sizeof(count));
    }
  };
  build(call_image_, /*with_arguments=*/false);
  build(call_image_with_arguments_, /*with_arguments=*/true);
}

void BefFunction::PlanUnboxed() {
  const KernelRegistry& registry = program_.host()->registry();
  constexpr uint32_t kNone = ~uint32_t{0};
  std::vector<const UnboxedKernel*> entries(kernels_.size(), nullptr);
  std::vector<uint32_t> definer(num_registers(), kNone);
  std::vector<uint32_t> definitions(num_registers(), 0);
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    const KernelPlan& kernel = kernels_[k];
    for (uint32_t reg : kernel.results) {
      ++definitions[reg];
      definer[reg] = k;
    }
    const UnboxedKernel* entry =
        registry.GetUnboxedKernel(kernel.descriptor.name);
    // Exact counts only: a trailing chain goes through the frame.
    if (entry != nullptr && !kernel.non_strict && kernel.results.size() == 1 &&
        kernel.operands.size() == entry->num_operands &&
        kernel.operands.size() <= kMaxUnboxedOperands) {
      entries[k] = entry;
    }
  }
  // Whether every user takes `reg` unboxed, as `type`.
  auto users_take = [&](uint32_t reg, AsyncValue::TypeId type) {
    const RegisterPlan& plan = registers_[reg];
    return std::all_of(
        plan.users.begin(), plan.users.end(), [&](uint32_t user) {
          const UnboxedKernel* entry = entries[user];
          if (entry == nullptr) return false;
          const absl::Span<const uint32_t> operands = kernels_[user].operands;
          for (size_t i = 0; i < operands.size(); ++i) {
            if (operands[i] == reg && entry->operand_types[i] != type) {
              return false;
            }
          }
          return true;
        });
  };
  for (uint32_t reg = 0; reg < num_registers(); ++reg) {
    RegisterPlan& plan = registers_[reg];
    if (!plan.result_slots.empty() || plan.has_non_strict_users) continue;
    if (plan.is_argument) {
      // Copied into its value slot when a call starts (UnboxArguments).
      if (definitions[reg] != 0 || plan.users.empty()) continue;
      const uint32_t user = plan.users[0];
      if (entries[user] == nullptr) continue;
      const absl::Span<const uint32_t> operands = kernels_[user].operands;
      const size_t i =
          std::find(operands.begin(), operands.end(), reg) - operands.begin();
      const AsyncValue::TypeId type = entries[user]->operand_types[i];
      if (users_take(reg, type)) {
        plan.is_unboxed_argument = true;
        has_unboxed_ = true;
        for (uint32_t a = 0; a < decoded_.argument_registers.size(); ++a) {
          if (decoded_.argument_registers[a] == reg) {
            unboxed_arguments_.push_back({a, reg, type});
          }
        }
      }
      continue;
    }
    if (definitions[reg] != 1 || entries[definer[reg]] == nullptr) continue;
    plan.is_unboxed = users_take(reg, entries[definer[reg]]->result_type);
    has_unboxed_ |= plan.is_unboxed;
  }
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    if (entries[k] == nullptr) continue;
    KernelPlan& kernel = kernels_[k];
    uint8_t unboxed_operands = 0;
    uint8_t checked_operands = 0;
    uint8_t owned_boxed_operands = 0;
    for (size_t i = 0; i < kernel.operands.size(); ++i) {
      const RegisterPlan& operand = registers_[kernel.operands[i]];
      if (operand.is_unboxed) checked_operands |= 1u << i;
      if (operand.is_unboxed || operand.is_unboxed_argument) {
        unboxed_operands |= 1u << i;
      } else if (!operand.is_argument) {
        owned_boxed_operands |= 1u << i;
      }
    }
    const bool unboxed_result = registers_[kernel.results[0]].is_unboxed;
    // Kernels touching only boxed values gain nothing (every operand and
    // the result are async values either way): they keep the frame path.
    if (unboxed_operands == 0 && !unboxed_result) continue;
    kernel.unboxed = entries[k];
    kernel.operand_types = entries[k]->operand_types;
    kernel.unboxed_operands = unboxed_operands;
    kernel.checked_operands = checked_operands;
    kernel.owned_boxed_operands = owned_boxed_operands;
    kernel.unboxed_result = unboxed_result;
  }
}

void BefFunction::CountVisits() {
  visits_in_order_ = true;
  for (KernelPlan& kernel : kernels_) {
    const int32_t argument_uses = ArgumentOperands(kernel);
    const int32_t num_operands = kernel.operands.size();
    if (kernel.non_strict) {
      kernel.ready_count = num_operands > 0 ? 2 : 1;
      kernel.ready_count_with_arguments =
          std::max(0, kernel.ready_count - argument_uses);
      kernel.visit_is_only_event_with_arguments =
          argument_uses == num_operands &&
          kernel.ready_count_with_arguments == 1;
    } else {
      kernel.ready_count = num_operands + 1;
      kernel.ready_count_with_arguments = num_operands - argument_uses + 1;
    }
  }
  initially_ready_.clear();
  ready_with_arguments_.clear();
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    if (kernels_[k].ready_count_with_arguments == 0) {
      ready_with_arguments_.push_back(k);
    }
  }
}

int32_t BefFunction::ArgumentOperands(const KernelPlan& kernel) const {
  int32_t count = 0;
  for (uint32_t reg : kernel.operands) count += registers_[reg].is_argument;
  return count;
}

void BefFunction::SplitUsersByStream() {
  const absl::Span<const uint32_t> streams = decoded_.kernel_streams;
  const uint32_t entry_stream = streams[0];
  std::vector<uint32_t> definer(registers_.size(), entry_stream);
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    kernels_[k].stream = streams[k + 1];
    for (uint32_t reg : kernels_[k].results) definer[reg] = streams[k + 1];
  }
  for (uint32_t reg = 0; reg < registers_.size(); ++reg) {
    RegisterPlan& plan = registers_[reg];
    const size_t begin = plan.users.data() - pool_.data();
    auto first = pool_.begin() + begin;
    auto last = first + plan.users.size();
    std::reverse(first, last);  // Back to program order.
    auto split = std::stable_partition(first, last, [&](uint32_t user) {
      return kernels_[user].stream == definer[reg];
    });
    const size_t inline_count = split - first;
    plan.outline_users = plan.users.subspan(inline_count);
    plan.users = plan.users.subspan(0, inline_count);
  }
  // The entry is a kernel whose results are the arguments, plus one
  // result that every kernel without operands uses: kernels become ready
  // in that order, argument by argument. (No kernel is non-strict here:
  // those functions never get streams.)
  ready_with_arguments_.clear();
  std::vector<int32_t> argument_uses(kernels_.size());
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    argument_uses[k] = ArgumentOperands(kernels_[k]);
    if (kernels_[k].operands.empty()) ready_with_arguments_.push_back(k);
  }
  for (uint32_t reg : decoded_.argument_registers) {
    const RegisterPlan& plan = registers_[reg];
    for (auto users : {plan.users, plan.outline_users}) {
      for (uint32_t user : users) {
        // Ready once its last argument operand is counted, if it has no
        // others.
        if (--argument_uses[user] == 0 &&
            kernels_[user].ready_count_with_arguments == 0) {
          ready_with_arguments_.push_back(user);
        }
      }
    }
  }
  // Moves the kernels of other streams than the entry's to `outline`.
  auto split_off = [&](std::vector<uint32_t>& ready,
                       std::vector<uint32_t>& outline) {
    auto split = std::stable_partition(
        ready.begin(), ready.end(),
        [&](uint32_t k) { return kernels_[k].stream == entry_stream; });
    outline.assign(split, ready.end());
    ready.erase(split, ready.end());
  };
  split_off(initially_ready_, initially_outline_);
  split_off(ready_with_arguments_, outline_with_arguments_);
}

}  // namespace asyncrt::internal
