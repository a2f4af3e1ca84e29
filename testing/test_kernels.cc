// Test kernels of the tfrt_test dialect (each kernel's contract is its ODS
// op in include/asyncrt/dialects/tfrt_test/tfrt_test_ops.td and the lit
// tests that run it) and the native functions test programs call.
#include "testing/test_kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/host_context/async_dispatch.h"

namespace asyncrt {
namespace {

template <typename... Args>
Chain PrintLine(const char* format, Args... args) {
  std::printf(format, args...);
  std::fflush(stdout);
  return Chain();
}

// The attribute the op names `name`, if `matches` accepts it. Kernels read
// attributes by name: a program may add others (`_tfrt_cost`), which sort
// anywhere among them.
absl::StatusOr<const bef::Attribute*> NamedAttribute(
    AsyncKernelFrame* frame, absl::string_view name,
    bool (*matches)(const bef::Attribute&), absl::string_view expected) {
  const bef::Attribute* attribute = frame->GetAttribute(name);
  if (attribute == nullptr || !matches(*attribute)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", frame->kernel_name(), "' expects attribute '",
                     name, "' to be ", expected));
  }
  return attribute;
}

bool AnyAttribute(const bef::Attribute&) { return true; }

template <typename T>
bool IsScalarOf(const bef::Attribute& attribute) {
  return internal::AttributeKindMatches<T>(attribute.kind);
}

bool IsString(const bef::Attribute& attribute) {
  return attribute.kind == bef::AttributeKind::kString;
}

// The scalar attribute `name` as a T.
template <typename T>
absl::StatusOr<T> NamedScalar(AsyncKernelFrame* frame, absl::string_view name) {
  absl::StatusOr<const bef::Attribute*> attribute =
      NamedAttribute(frame, name, IsScalarOf<T>, "a scalar");
  if (!attribute.ok()) return attribute.status();
  const bef::Attribute& value = **attribute;
  return value.scalar<T>();
}

// The string attribute `name`.
absl::StatusOr<std::string> NamedString(AsyncKernelFrame* frame,
                                        absl::string_view name) {
  auto attribute = NamedAttribute(frame, name, IsString, "a string");
  if (!attribute.ok()) return attribute.status();
  return std::string((*attribute)->bytes);
}

//===--- Printing and strings
//-----------------------------------------------===//

Chain PrintHello() { return PrintLine("hello host executor!\n"); }

// tfrt_test.get_string {value}.
absl::StatusOr<std::string> GetString(AsyncKernelFrame* frame) {
  return NamedString(frame, "value");
}

Chain PrintString(const std::string& value) {
  return PrintLine("string = %s\n", value.c_str());
}

std::string AppendString(const std::string& a, const std::string& b) {
  return a + b;
}

// (chain, i1) as TFRT declares it, or (i1[, chain]).
absl::StatusOr<Chain> PrintBool(RemainingArguments args) {
  const bool leading_chain = args.size() == 2 && args[0]->IsType<Chain>();
  const size_t index = leading_chain ? 1 : 0;
  if (args.size() == 0 || args.size() > 2 || !args[index]->IsType<bool>()) {
    return absl::InvalidArgumentError(
        "tfrt_test.print_bool takes (!tfrt.chain, i1)");
  }
  return PrintLine("%s\n", args[index]->get<bool>() ? "true" : "false");
}

// tfrt_test.print_typed_attr %ch {value}: `TYPE: value` (`I64: 1`,
// `F32: 5.000000e-01`, `I1: 0`).
absl::StatusOr<Chain> PrintTypedAttr(Argument<Chain>, AsyncKernelFrame* frame) {
  auto value = NamedAttribute(frame, "value", AnyAttribute, "present");
  if (!value.ok()) return value.status();
  const bef::Attribute& a = **value;
  switch (a.kind) {
    case bef::AttributeKind::kBool:
      return PrintLine("I1: %d\n", a.scalar<bool>() ? 1 : 0);
    case bef::AttributeKind::kI8:
      return PrintLine("I8: %d\n", a.scalar<int8_t>());
    case bef::AttributeKind::kI16:
      return PrintLine("I16: %d\n", a.scalar<int16_t>());
    case bef::AttributeKind::kI32:
      return PrintLine("I32: %" PRId32 "\n", a.scalar<int32_t>());
    case bef::AttributeKind::kI64:
      return PrintLine("I64: %" PRId64 "\n", a.scalar<int64_t>());
    case bef::AttributeKind::kUI8:
      return PrintLine("UI8: %u\n", a.scalar<uint8_t>());
    case bef::AttributeKind::kUI16:
      return PrintLine("UI16: %u\n", a.scalar<uint16_t>());
    case bef::AttributeKind::kUI32:
      return PrintLine("UI32: %" PRIu32 "\n", a.scalar<uint32_t>());
    case bef::AttributeKind::kUI64:
      return PrintLine("UI64: %" PRIu64 "\n", a.scalar<uint64_t>());
    case bef::AttributeKind::kF32:
      return PrintLine("F32: %e\n", static_cast<double>(a.scalar<float>()));
    case bef::AttributeKind::kF64:
      return PrintLine("F64: %e\n", a.scalar<double>());
    default:
      return absl::InvalidArgumentError(
          "tfrt_test.print_typed_attr prints integer and float attributes");
  }
}

//===--- Values
//---------------------------------------------------------------===//

// count3.i32 and count3.i64 (wrapping).
template <typename T>
std::tuple<T, T, T> Count3(T x) {
  using U = std::make_unsigned_t<T>;
  auto plus = [x](U n) { return static_cast<T>(static_cast<U>(x) + n); };
  return {plus(1), plus(2), plus(3)};
}

// Copies on the blocking pool after a short sleep: a result that is not
// available when the kernel returns.
template <typename T>
AsyncValueRef<T> CopyWithDelay(Argument<T> value,
                               const ExecutionContext& exec_ctx) {
  auto result = MakeUnconstructedAsyncValueRef<T>();
  bool queued =
      EnqueueBlockingWork(exec_ctx.host(), [result, value = value.ValueRef()] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        result.emplace(value.get());
      });
  if (!queued) result.SetError(absl::ResourceExhaustedError("queue full"));
  return result;
}

AsyncValueRef<int32_t> AsyncAddI32(Argument<int32_t> a, Argument<int32_t> b,
                                   const ExecutionContext& exec_ctx) {
  return EnqueueWorkWithResult(
      exec_ctx.host(),
      [a = a.ValueRef(), b = b.ValueRef()] { return a.get() + b.get(); });
}

// async_constant.TYPE {value}.
template <typename T>
absl::StatusOr<AsyncValueRef<T>> AsyncConstant(
    AsyncKernelFrame* frame, const ExecutionContext& exec_ctx) {
  absl::StatusOr<T> value = NamedScalar<T>(frame, "value");
  if (!value.ok()) return value.status();
  T v = *value;
  return EnqueueWorkWithResult(exec_ctx.host(), [v] { return v; });
}

AsyncValueRef<int32_t> AsyncCopyI32(Argument<int32_t> value,
                                    const ExecutionContext& exec_ctx) {
  return EnqueueWorkWithResult(exec_ctx.host(),
                               [v = value.ValueRef()] { return v.get(); });
}

// (chain, x...) -> x...
void Identity(RemainingArguments args, RemainingResults results) {
  for (size_t i = 0; i + 1 < args.size() && i < results.size(); ++i) {
    results.Set(i, FormRef(args[i + 1]));
  }
}

void MultiArgResult(RemainingArguments args, RemainingResults results) {
  for (size_t i = 0; i < args.size() && i < results.size(); ++i) {
    results.Set(i, FormRef(args[i]));
  }
}

// {value = [["string", [1 : i32, 0 : i32]], [1.0 : f32]]} flattened into
// results in order.
absl::Status Flat(AsyncKernelFrame* frame, RemainingResults results) {
  auto attribute = NamedAttribute(
      frame, "value",
      [](const bef::Attribute& a) {
        return a.kind == bef::AttributeKind::kAggregate;
      },
      "an aggregate");
  if (!attribute.ok()) return attribute.status();
  AggregateAttribute value(**attribute, frame->bef_file());
  size_t next = 0;
  std::function<void(const bef::Attribute&)> visit =
      [&](const bef::Attribute& attribute) {
        if (next >= results.size()) return;
        switch (attribute.kind) {
          case bef::AttributeKind::kAggregate:
            for (uint32_t element : attribute.elements) {
              visit(value.file().attribute(element));
            }
            break;
          case bef::AttributeKind::kString:
            results.Emplace<std::string>(next++, std::string(attribute.bytes));
            break;
          case bef::AttributeKind::kI32:
            results.Emplace<int32_t>(next++, attribute.scalar<int32_t>());
            break;
          case bef::AttributeKind::kF32:
            results.Emplace<float>(next++, attribute.scalar<float>());
            break;
          case bef::AttributeKind::kArray:
            if (attribute.element_kind == bef::AttributeKind::kI32) {
              for (int32_t v : attribute.array<int32_t>()) {
                if (next < results.size()) results.Emplace<int32_t>(next++, v);
              }
            } else if (attribute.element_kind == bef::AttributeKind::kF32) {
              for (float v : attribute.array<float>()) {
                if (next < results.size()) results.Emplace<float>(next++, v);
              }
            }
            break;
          default:
            break;
        }
      };
  visit(value.get());
  return absl::OkStatus();
}

//===--- Async value API checks
//---------------------------------------------===//

// Reads one payload through the concrete type and both of its bases.
struct NamedBase1 {
  virtual ~NamedBase1() = default;
  std::string base1 = "base1";
};
struct NamedBase2 {
  virtual ~NamedBase2() = default;
  std::string base2 = "base2";
};
struct FinalClass final : NamedBase1, NamedBase2 {
  std::string name = "final_class";
  int value = 3;
};

std::string AsyncValueGet() {
  auto value = MakeAvailableAsyncValueRef<FinalClass>();
  const NamedBase1& as_base1 = value.get();
  const NamedBase2& as_base2 = value.get();
  return as_base1.base1 + ":" + as_base2.base2 + ":" + value->name + ":" +
         std::to_string(value->value);
}

// Walks AsyncValueRef through its states, recording what it observes:
// available, unavailable, the continuation firing on emplace, available.
std::string AsyncValueRefStates() {
  std::string trace;
  auto describe = [&trace](const AsyncValueRef<int32_t>& value) {
    if (!trace.empty()) trace += ";";
    trace += value.IsAvailable() ? "available:" + std::to_string(value.get())
                                 : std::string("unavailable");
  };
  describe(MakeAvailableAsyncValueRef<int32_t>(2));
  auto later = MakeUnconstructedAsyncValueRef<int32_t>();
  describe(later);
  later.AndThen(
      [&trace, later] { trace += ";(" + std::to_string(later.get()) + ")"; });
  later.emplace(3);
  describe(later);
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  AsyncValueRef<int32_t> forwarded(indirect);
  describe(forwarded);
  indirect->ForwardTo(MakeAvailableAsyncValueRef<int32_t>(4));
  describe(forwarded);
  return trace;
}

// Whether the argument's async value has no other reference (through an
// indirect value, the value it points at must be unique too).
absl::StatusOr<bool> GetUniqueness(RemainingArguments args) {
  if (args.size() == 0) {
    return absl::InvalidArgumentError("tfrt_test.get_uniqueness takes a value");
  }
  const AsyncValue* value = args[0];
  if (!value->IsUnique()) return false;
  if (value->IsIndirect()) {
    const AsyncValue* target =
        static_cast<const IndirectAsyncValue*>(value)->target();
    return target == nullptr || target->IsUnique();
  }
  return true;
}

// The argument, seen through a new IndirectAsyncValue.
absl::StatusOr<RCReference<AsyncValue>> MakeIndirect(RemainingArguments args) {
  if (args.size() == 0) {
    return absl::InvalidArgumentError("tfrt_test.make_indirect takes a value");
  }
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  indirect->ForwardTo(FormRef(args[0]));
  return RCReference<AsyncValue>(std::move(indirect));
}

//===--- Errors and cancellation
//------------------------------------------------===//

absl::StatusOr<Chain> Fail() {
  return absl::InternalError("something bad happened");
}

void PartialFail(Result<int32_t> ok, Result<int32_t> failed,
                 AsyncKernelFrame* frame) {
  ok.Emplace(1);
  frame->ReportError(absl::InternalError("something bad happened"));
}

AsyncValueRef<int32_t> ReportErrorAsync(const ExecutionContext& exec_ctx) {
  auto result = MakeUnconstructedAsyncValueRef<int32_t>();
  EnqueueWork(exec_ctx.host(), [result, exec_ctx] {
    RCReference<AsyncValue> error = EmitErrorAsync(
        exec_ctx, absl::InternalError("something bad happened asynchronously"));
    result.SetError(error->GetError());
  });
  return result;
}

// 0 stays 0; anything else becomes an error reported later.
AsyncValueRef<int32_t> ReportErrorConcreteAsync(
    int32_t input, const ExecutionContext& exec_ctx) {
  auto result = MakeUnconstructedAsyncValueRef<int32_t>();
  EnqueueWork(exec_ctx.host(), [result, exec_ctx, input] {
    if (input == 0) {
      result.emplace(0);
      return;
    }
    RCReference<AsyncValue> error = EmitErrorAsync(
        exec_ctx, absl::InternalError("something bad happened asynchronously"));
    result.SetError(error->GetError());
  });
  return result;
}

RCReference<AsyncValue> ReportErrorIndirectAsync(
    int32_t input, const ExecutionContext& exec_ctx) {
  RCReference<IndirectAsyncValue> result = MakeIndirectAsyncValue();
  EnqueueWork(exec_ctx.host(), [result, exec_ctx, input] {
    if (input == 0) {
      result->ForwardTo(MakeAvailableAsyncValueRef<int32_t>(0));
      return;
    }
    result->ForwardTo(EmitErrorAsync(
        exec_ctx,
        absl::InternalError("something bad happened asynchronously")));
  });
  return result;
}

std::tuple<int32_t, Chain> Cancel(const ExecutionContext& exec_ctx) {
  exec_ctx.request_context()->Cancel();
  return {0, Chain()};
}

//===--- Sync kernels (for tfrt.sync functions)
//---------------------------------===//

// fail_s and error_s: TFRT's fail_s reports through the frame and error_s
// returns the error; here both return it, and it is reported at the
// kernel's location and becomes the result.
absl::StatusOr<int32_t> ErrorSync() {
  return absl::InternalError("something bad happened");
}

// a + the sum of the rest (sync_sum and sync_sum2 differ only in how TFRT
// declares the repeated arguments).
absl::StatusOr<int32_t> SyncSum(int32_t first, RemainingArguments rest) {
  uint32_t sum = static_cast<uint32_t>(first);
  for (size_t i = 0; i < rest.size(); ++i) {
    if (!rest[i]->IsType<int32_t>()) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i + 1, " is not an i32"));
    }
    sum += static_cast<uint32_t>(rest[i]->get<int32_t>());
  }
  return static_cast<int32_t>(sum);
}

// The sum of every i32 attribute.
int32_t SyncSumAttributes(AsyncKernelFrame* frame) {
  uint32_t sum = 0;
  for (size_t i = 0; i < frame->GetNumAttributes(); ++i) {
    const bef::Attribute& attribute = frame->GetAttributeAt(i);
    if (attribute.kind == bef::AttributeKind::kI32) {
      sum += static_cast<uint32_t>(attribute.scalar<int32_t>());
    }
  }
  return static_cast<int32_t>(sum);
}

// tfrt_test.invoke_sync_function.<args>.<results> {fn = @f}: calls the
// tfrt.sync function @f and returns its results, which are available when
// it returns.
void InvokeSyncFunction(RemainingArguments args, RemainingResults results,
                        const Function* fn, AsyncKernelFrame* frame) {
  if (fn->num_arguments() != args.size() ||
      fn->num_results() != results.size()) {
    frame->ReportError(absl::InvalidArgumentError(
        absl::StrCat("function '", fn->name(), "' takes ", fn->num_arguments(),
                     " arguments and returns ", fn->num_results())));
    return;
  }
  std::vector<RCReference<AsyncValue>> values(results.size());
  fn->Execute(frame->GetExecutionContext(), args.values(),
              absl::MakeSpan(values));
  for (size_t i = 0; i < values.size(); ++i) {
    results.Set(i, std::move(values[i]));
  }
}

//===--- Resources and contexts
//-------------------------------------------------===//

struct TestResource {
  TestResource() { PrintLine("Allocated TestResource\n"); }
  ~TestResource() { PrintLine("Destroyed TestResource\n"); }
};
using TestResourceHandle = std::unique_ptr<TestResource>;

std::tuple<TestResourceHandle, Chain> AllocateResource() {
  return {std::make_unique<TestResource>(), Chain()};
}

Chain DeallocateResource(Argument<TestResourceHandle> resource) {
  resource->reset();
  return PrintLine("tfrt_test.deallocate_resource done\n");
}

class SampleSharedContext {
 public:
  explicit SampleSharedContext(HostContext*)
      : name_("sample_shared_context" +
              std::to_string(instances_.fetch_add(1))) {}
  const std::string& name() const { return name_; }

 private:
  static inline std::atomic<int> instances_{0};
  std::string name_;
};

std::tuple<std::string, Chain> UseSampleSharedContext(HostContext* host) {
  return {host->GetOrCreateSharedContext<SampleSharedContext>().name(),
          Chain()};
}

// Leaks 4 bytes through the host allocator, for the leak-check allocator's
// report.
void MemoryLeakOneInt32(HostContext* host) {
  host->allocator()->Allocate<int32_t>(1);
}

Chain Logging(const std::string& text) {
  for (const char* level : {"INFO", "WARNING", "ERROR"}) {
    std::fprintf(stderr, "from TFRT_LOG(%s): %s\n", level, text.c_str());
  }
  for (const char* level : {"INFO", "WARNING", "ERROR"}) {
    std::fprintf(stderr, "from TFRT_LOG_IF(%s, true): %s\n", level,
                 text.c_str());
  }
  std::fflush(stderr);
  return Chain();
}

// Runs its region on the work queue; results become available when it has.
void DoAsync(RemainingArguments args, RemainingResults results,
             const Function* body, const ExecutionContext& exec_ctx) {
  std::vector<RCReference<IndirectAsyncValue>> outputs;
  for (size_t i = 0; i < results.size(); ++i) {
    outputs.push_back(MakeIndirectAsyncValue());
    results.Set(i, outputs.back());
  }
  std::vector<RCReference<AsyncValue>> inputs;
  for (size_t i = 0; i < args.size(); ++i) inputs.push_back(FormRef(args[i]));
  EnqueueWork(exec_ctx.host(), [body, exec_ctx, inputs = std::move(inputs),
                                outputs = std::move(outputs)] {
    std::vector<AsyncValue*> raw;
    for (const auto& input : inputs) raw.push_back(input.get());
    std::vector<RCReference<AsyncValue>> values(body->num_results());
    body->Execute(exec_ctx, raw, absl::MakeSpan(values));
    for (size_t i = 0; i < outputs.size() && i < values.size(); ++i) {
      outputs[i]->ForwardTo(std::move(values[i]));
    }
  });
}

//===--- Timing, atomics and misc
//-----------------------------------------------===//

// tfrt_test.usleep: no result; sleeps and prints on the blocking pool.
// bef_executor's quiesce after each function waits for it.
absl::Status Usleep(int32_t microseconds, const ExecutionContext& exec_ctx) {
  bool queued = EnqueueBlockingWork(exec_ctx.host(), [microseconds] {
    std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
    PrintLine("Slept for %d microseconds\n", microseconds);
  });
  if (!queued) return absl::ResourceExhaustedError("blocking queue full");
  return absl::OkStatus();
}

// Sleeps on the blocking pool (the only place a kernel may sleep).
AsyncValueRef<Chain> BlockingUsleep(int32_t microseconds,
                                    const ExecutionContext& exec_ctx) {
  auto done = MakeUnconstructedAsyncValueRef<Chain>();
  bool queued = EnqueueBlockingWork(exec_ctx.host(), [done, microseconds] {
    std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
    PrintLine("Slept for %d microseconds\n", microseconds);
    done.emplace();
  });
  if (!queued) done.SetError(absl::ResourceExhaustedError("queue full"));
  return done;
}

AsyncValueRef<int32_t> AsyncCopy2I32(Argument<int32_t> value,
                                     const ExecutionContext& exec_ctx) {
  // Two hops through the queue: the copy is unavailable for longer.
  auto result = MakeUnconstructedAsyncValueRef<int32_t>();
  HostContext* host = exec_ctx.host();
  EnqueueWork(host, [host, result, v = value.ValueRef()] {
    EnqueueWork(host, [result, v] { result.emplace(v.get()); });
  });
  return result;
}

std::tuple<RCReference<AsyncValue>, RCReference<AsyncValue>> ShareToTwo(
    RemainingArguments args) {
  return {FormRef(args[0]), FormRef(args[0])};
}

using AtomicI32 = std::shared_ptr<std::atomic<int32_t>>;
AtomicI32 AtomicCreate() { return std::make_shared<std::atomic<int32_t>>(0); }
Chain AtomicInc(const AtomicI32& atomic) {
  atomic->fetch_add(1);
  return Chain();
}
Chain AtomicAdd(const AtomicI32& atomic, int32_t value) {
  atomic->fetch_add(value);
  return Chain();
}
// (i32, !tfrt.chain), as TFRT declares it; a program may leave the chain out.
absl::StatusOr<int32_t> AtomicGet(const AtomicI32& atomic,
                                  RemainingResults rest) {
  if (rest.size() > 1) {
    return absl::InvalidArgumentError(
        "tfrt_test.atomic.get.i32 returns (i32, !tfrt.chain)");
  }
  if (rest.size() == 1) rest.Emplace<Chain>(0);
  return atomic->load();
}

// Waits until the work queue has nothing left to run. Only a thread outside
// the queue can wait for it: on one of its threads (the kernel became ready
// in a continuation there) waiting would deadlock, so that is an error.
absl::Status Quiesce(const ExecutionContext& exec_ctx) {
  const ConcurrentWorkQueue& queue = exec_ctx.host()->work_queue();
  if (queue.IsInWorkerThread() || queue.IsInBlockingThread()) {
    return absl::FailedPreconditionError(
        "tfrt_test.quiesce cannot wait for the work queue from one of its "
        "own threads");
  }
  exec_ctx.host()->Quiesce();
  return absl::OkStatus();
}

// tfrt_test.get_thread_id(ch): 0 on a thread outside the work queue's
// workers (the caller's, and every task of the single-threaded queue, which
// runs there); on a worker, 1 + how many workers asked before it (in this
// process), so the first worker to ask is 1 whichever worker took the task,
// as TFRT's scheduling.mlir expects.
int32_t GetThreadId(Argument<Chain>, const ExecutionContext& exec_ctx) {
  if (!exec_ctx.host()->work_queue().IsInWorkerThread()) return 0;
  static std::atomic<int32_t> workers_seen{0};
  thread_local const int32_t id = 1 + workers_seen.fetch_add(1);
  return id;
}

// tfrt_test.unique_loc {name}: an error if another kernel (another name) of
// the same request ran at the same location, i.e. if the converter gave two
// kernels one location. Running the same kernel again (in a loop) is fine.
class UniqueLocations {
 public:
  explicit UniqueLocations(HostContext*) {}
  // The name seen first at (request, location).
  std::string Record(int64_t request, intptr_t location,
                     absl::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_.try_emplace({request, location}, name).first->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<int64_t, intptr_t>, std::string> seen_;
};

absl::StatusOr<Chain> UniqueLoc(AsyncKernelFrame* frame,
                                const ExecutionContext& exec_ctx) {
  absl::StatusOr<std::string> name = NamedString(frame, "name");
  if (!name.ok()) return name.status();
  std::string first =
      exec_ctx.host()->GetOrCreateSharedContext<UniqueLocations>().Record(
          exec_ctx.request_context()->id(), exec_ctx.location().data(), *name);
  if (first != *name) {
    return absl::InternalError(absl::StrCat("tfrt_test.unique_loc '", *name,
                                            "' has the same location as '",
                                            first, "'"));
  }
  return Chain();
}

// A chain, once the operand is available (the executor runs a kernel only
// then).
absl::StatusOr<Chain> AsChain(RemainingArguments args) {
  if (args.size() == 0) {
    return absl::InvalidArgumentError("tfrt_test.as_chain takes a value");
  }
  return Chain();
}

// {id, _tfrt_cost}: prints the id; the cost must be positive.
absl::StatusOr<RCReference<AsyncValue>> TestCost(RemainingArguments args,
                                                 AsyncKernelFrame* frame) {
  const bef::Attribute* id = frame->GetAttribute("id");
  const bef::Attribute* cost = frame->GetAttribute("_tfrt_cost");
  if (id == nullptr || cost == nullptr || !id->IsScalar() ||
      !cost->IsScalar()) {
    return absl::InvalidArgumentError(
        "test_cost needs integer 'id' and "
        "'_tfrt_cost' attributes");
  }
  if (static_cast<int64_t>(cost->bits) <= 0) {
    return absl::InvalidArgumentError("_tfrt_cost must be positive");
  }
  PrintLine("id: %lld\n", static_cast<long long>(id->bits));
  if (args.size() == 0) return RCReference<AsyncValue>(GetReadyChain());
  return FormRef(args[0]);
}

// Prints the kernel's name scope (from an MLIR name location).
Chain PrintDebugInfo(const ExecutionContext& exec_ctx) {
  std::optional<DecodedLocation> location = exec_ctx.location().Decode();
  if (!location || location->name.empty()) {
    return PrintLine("Kernel has no debug info\n");
  }
  return PrintLine("%s\n", location->name.c_str());
}

absl::StatusOr<Chain> ErrorChain() {
  return absl::InternalError("error chain");
}

//===--- tfrt_test.benchmark
//------------------------------------------------===//

// Runs the body (a region, or @target_fn for sync_benchmark) repeatedly,
// one run after the previous one's results are available, then prints the
// statistics. Runs chain through continuations rather than blocking, so it
// works on the single-threaded queue too.
int64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

struct BenchmarkRun {
  std::string name;
  const Function* body;
  ExecutionContext exec_ctx;
  std::vector<RCReference<AsyncValue>> args;
  int64_t warmup_left;
  int64_t max_count;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::time_point start;
  int64_t cpu_start;
  std::vector<int64_t> wall_ns, cpu_ns;
  AsyncValueRef<Chain> done;
};

void PrintBenchmark(const std::string& name,
                    const std::vector<int64_t>& wall_ns,
                    const std::vector<int64_t>& cpu_ns);

void PrintBenchmark(const BenchmarkRun& run) {
  PrintBenchmark(run.name, run.wall_ns, run.cpu_ns);
}

void PrintBenchmark(const std::string& name,
                    const std::vector<int64_t>& wall_ns,
                    const std::vector<int64_t>& cpu_ns) {
  auto percentile = [](std::vector<int64_t> v, double p) -> long long {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
  };
  int64_t total_wall = 0, total_cpu = 0;
  for (int64_t t : wall_ns) total_wall += t;
  for (int64_t t : cpu_ns) total_cpu += t;
  const char* n = name.c_str();
  PrintLine("BM:%s:Duration(ns): %lld\n", n,
            static_cast<long long>(total_wall));
  PrintLine("BM:%s:Count: %zu\n", n, wall_ns.size());
  PrintLine("BM:%s:Time Min(ns): %lld\n", n, percentile(wall_ns, 0));
  PrintLine("BM:%s:Time 50%%(ns): %lld\n", n, percentile(wall_ns, 0.5));
  PrintLine("BM:%s:Time 95%%(ns): %lld\n", n, percentile(wall_ns, 0.95));
  PrintLine("BM:%s:Time 99%%(ns): %lld\n", n, percentile(wall_ns, 0.99));
  PrintLine("BM:%s:CPU Min(ns): %lld\n", n, percentile(cpu_ns, 0));
  PrintLine("BM:%s:CPU 50%%(ns): %lld\n", n, percentile(cpu_ns, 0.5));
  PrintLine("BM:%s:CPU 95%%(ns): %lld\n", n, percentile(cpu_ns, 0.95));
  PrintLine("BM:%s:CPU 99%%(ns): %lld\n", n, percentile(cpu_ns, 0.99));
  PrintLine("BM:%s:CPU utilization(percent): %f\n", n,
            total_wall > 0 ? 100.0 * total_cpu / total_wall : 0.0);
}

void BenchmarkNext(std::shared_ptr<BenchmarkRun> run) {
  auto now = std::chrono::steady_clock::now();
  bool measuring = run->warmup_left == 0;
  if (measuring &&
      (static_cast<int64_t>(run->wall_ns.size()) >= run->max_count ||
       now >= run->deadline)) {
    PrintBenchmark(*run);
    run->done.emplace();
    return;
  }
  std::vector<AsyncValue*> args;
  for (const auto& arg : run->args) args.push_back(arg.get());
  auto results = std::make_shared<std::vector<RCReference<AsyncValue>>>(
      run->body->num_results());
  run->start = now;
  run->cpu_start = ProcessCpuNs();
  run->body->Execute(run->exec_ctx, args, absl::MakeSpan(*results));
  std::vector<AsyncValue*> pending;
  for (const auto& result : *results) pending.push_back(result.get());
  RunWhenReady(absl::MakeConstSpan(pending), [run, results] {
    auto elapsed = std::chrono::steady_clock::now() - run->start;
    if (run->warmup_left > 0) {
      --run->warmup_left;
    } else {
      run->wall_ns.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed)
              .count());
      run->cpu_ns.push_back(ProcessCpuNs() - run->cpu_start);
    }
    // Continue from the work queue, not the stack, so long runs do not
    // nest continuations.
    EnqueueWork(run->exec_ctx.host(), [run] { BenchmarkNext(run); });
  });
}

AsyncValueRef<Chain> Benchmark(RemainingArguments args, AsyncKernelFrame* frame,
                               const Function* body,
                               const ExecutionContext& exec_ctx) {
  auto attribute = [&](absl::string_view name, int64_t fallback) -> int64_t {
    const bef::Attribute* a = frame->GetAttribute(name);
    return a && a->IsScalar() ? a->scalar<int32_t>() : fallback;
  };
  auto run = std::make_shared<BenchmarkRun>(
      BenchmarkRun{"",
                   body,
                   exec_ctx,
                   {},
                   attribute("num_warmup_runs", 1),
                   std::max<int64_t>(1, attribute("max_count", 1)),
                   std::chrono::steady_clock::now() +
                       std::chrono::seconds(attribute("duration_secs", 1)),
                   {},
                   0,
                   {},
                   {},
                   MakeUnconstructedAsyncValueRef<Chain>()});
  if (const bef::Attribute* name = frame->GetAttribute("name")) {
    run->name = std::string(name->bytes);
  } else if (const bef::Attribute* target = frame->GetAttribute("target_fn")) {
    run->name = std::string(frame->bef_file().functions()[target->index].name);
  }
  for (size_t i = 0; i < args.size(); ++i)
    run->args.push_back(FormRef(args[i]));
  AsyncValueRef<Chain> done = run->done;
  BenchmarkNext(std::move(run));
  return done;
}

// tfrt_test.sync_benchmark @fn(args...): times a tfrt.sync function on the
// calling thread, each run finishing before the kernel goes on. No results.
absl::Status SyncBenchmark(RemainingArguments args, const Function* target,
                           AsyncKernelFrame* frame,
                           const ExecutionContext& exec_ctx) {
  auto attribute = [&](absl::string_view name, int64_t fallback) -> int64_t {
    const bef::Attribute* a = frame->GetAttribute(name);
    return a && a->IsScalar() ? a->scalar<int32_t>() : fallback;
  };
  const int64_t warmup = attribute("num_warmup_runs", 1);
  const int64_t max_count = std::max<int64_t>(1, attribute("max_count", 1));
  std::vector<RCReference<AsyncValue>> results(target->num_results());
  bool failed = false;
  auto run_once = [&]() -> absl::Status {
    target->Execute(exec_ctx, args.values(), absl::MakeSpan(results));
    for (RCReference<AsyncValue>& result : results) {
      if (!result->IsAvailable()) {
        return absl::FailedPreconditionError(
            absl::StrCat("sync_benchmark: @", target->name(),
                         " did not finish synchronously"));
      }
      // Reported already, where it was created: stop without a report.
      if (result->IsError()) failed = true;
      result.reset();
    }
    return absl::OkStatus();
  };
  for (int64_t i = 0; i < warmup && !failed; ++i) {
    if (absl::Status status = run_once(); !status.ok()) return status;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(attribute("duration_secs", 1));
  std::vector<int64_t> wall_ns, cpu_ns;
  while (!failed && static_cast<int64_t>(wall_ns.size()) < max_count &&
         std::chrono::steady_clock::now() < deadline) {
    const auto start = std::chrono::steady_clock::now();
    const int64_t cpu_start = ProcessCpuNs();
    if (absl::Status status = run_once(); !status.ok()) return status;
    cpu_ns.push_back(ProcessCpuNs() - cpu_start);
    wall_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  if (!failed) PrintBenchmark(target->name(), wall_ns, cpu_ns);
  return absl::OkStatus();
}

//===--- tfrt_tutorial and vt
//-----------------------------------------------===//

struct Coordinate {
  int32_t x = 0;
  int32_t y = 0;
};

// (i32 x, i32 y) operands, as TFRT's tutorial declares it, or {x, y}
// attributes.
absl::StatusOr<Coordinate> CreateCoordinate(RemainingArguments args,
                                            AsyncKernelFrame* frame) {
  size_t values = args.size();
  if (values > 0 && args[values - 1]->IsType<Chain>()) --values;
  if (values == 2) {
    if (!args[0]->IsType<int32_t>() || !args[1]->IsType<int32_t>()) {
      return absl::InvalidArgumentError(
          "tfrt_tutorial.create_coordinate takes (i32, i32)");
    }
    return Coordinate{args[0]->get<int32_t>(), args[1]->get<int32_t>()};
  }
  const bef::Attribute* x = frame->GetAttribute("x");
  const bef::Attribute* y = frame->GetAttribute("y");
  if (values != 0 || x == nullptr || y == nullptr ||
      x->kind != bef::AttributeKind::kI32 ||
      y->kind != bef::AttributeKind::kI32) {
    return absl::InvalidArgumentError(
        "tfrt_tutorial.create_coordinate takes (i32, i32) or {x, y} i32 "
        "attributes");
  }
  return Coordinate{x->scalar<int32_t>(), y->scalar<int32_t>()};
}

Chain PrintCoordinate(const Coordinate& c) {
  return PrintLine("(%d, %d)\n", c.x, c.y);
}

// A value type that reports its lifetime, for tests of copies and moves.
// A moved-from value holds -1 and dies silently.
class VtValue {
 public:
  explicit VtValue(int32_t v) : value_(v) {
    PrintLine("constructed vt.value(%d)\n", value_);
  }
  VtValue(const VtValue& other) : value_(other.value_) {
    PrintLine("copy constructed vt.value(%d)\n", value_);
  }
  VtValue(VtValue&& other) noexcept : value_(other.value_) {
    other.value_ = -1;
    PrintLine("move constructed vt.value(%d)\n", value_);
  }
  VtValue& operator=(const VtValue&) = delete;
  VtValue& operator=(VtValue&&) = delete;
  ~VtValue() {
    if (value_ != -1) PrintLine("destroyed vt.value(%d)\n", value_);
  }
  int32_t value() const { return value_; }

 private:
  int32_t value_;
};

// Both make the value, then move it into the result's async value.
void VtConstant(Result<VtValue> result, AsyncKernelFrame* frame) {
  absl::StatusOr<int32_t> value = NamedScalar<int32_t>(frame, "value");
  if (!value.ok()) return frame->ReportError(value.status());
  VtValue made(*value);
  result.Emplace(std::move(made));
}
void VtAdd(const VtValue& a, const VtValue& b, Result<VtValue> result) {
  VtValue sum(a.value() + b.value());
  result.Emplace(std::move(sum));
}
Chain VtPrint(const VtValue& v) {
  return PrintLine("print vt_value(%d)\n", v.value());
}

//===--- Native functions
//-------------------------------------------------------===//

void NativeAdd(const ExecutionContext&, absl::Span<AsyncValue* const> args,
               absl::Span<RCReference<AsyncValue>> results) {
  results[0] = MakeAvailableAsyncValueRef<int32_t>(args[0]->get<int32_t>() +
                                                   args[1]->get<int32_t>());
}

void NativeAsyncAdd(const ExecutionContext& exec_ctx,
                    absl::Span<AsyncValue* const> args,
                    absl::Span<RCReference<AsyncValue>> results) {
  results[0] = EnqueueWorkWithResult(
      exec_ctx.host(), [a = AsyncValueRef<int32_t>(FormRef(args[0])),
                        b = AsyncValueRef<int32_t>(FormRef(args[1]))] {
        return a.get() + b.get();
      });
}

// A native function has no source location to report at: its error is
// only a value.
void NativeError(const ExecutionContext&, absl::Span<AsyncValue* const>,
                 absl::Span<RCReference<AsyncValue>> results) {
  RCReference<AsyncValue> error =
      MakeErrorAsyncValueRef(absl::InternalError("something bad happened"));
  for (auto& result : results) result = error;
}

void NativeSink(const ExecutionContext&, absl::Span<AsyncValue* const>,
                absl::Span<RCReference<AsyncValue>> results) {
  for (auto& result : results) result = GetReadyChain();
}

}  // namespace

void RegisterTestKernels(KernelRegistry& registry) {
  auto add = [&](absl::string_view name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
  };
  add("tfrt_test.print_hello", ASYNCRT_KERNEL(PrintHello));
  add("tfrt_test.get_string", ASYNCRT_KERNEL(GetString));
  add("tfrt_test.print_string", ASYNCRT_KERNEL(PrintString));
  add("tfrt_test.append_string", ASYNCRT_KERNEL(AppendString));
  add("tfrt_test.print_bool", ASYNCRT_KERNEL(PrintBool));
  add("tfrt_test.count3.i32", ASYNCRT_KERNEL(Count3<int32_t>));
  add("tfrt_test.count3.i64", ASYNCRT_KERNEL(Count3<int64_t>));
  add("tfrt_test.copy.with_delay.i32", ASYNCRT_KERNEL(CopyWithDelay<int32_t>));
  add("tfrt_test.copy.with_delay.i64", ASYNCRT_KERNEL(CopyWithDelay<int64_t>));
  add("tfrt_test.async_add.i32", ASYNCRT_KERNEL(AsyncAddI32));
  add("tfrt_test.async_constant.i1", ASYNCRT_KERNEL(AsyncConstant<bool>));
  add("tfrt_test.async_constant.i32", ASYNCRT_KERNEL(AsyncConstant<int32_t>));
  add("tfrt_test.async_copy.i32", ASYNCRT_KERNEL(AsyncCopyI32));
  add("tfrt_test.identity", ASYNCRT_KERNEL(Identity));
  add("tfrt_test.multi_arg_result", ASYNCRT_KERNEL(MultiArgResult));
  add("tfrt_test.flat", ASYNCRT_KERNEL(Flat));
  add("tfrt_test.fail", ASYNCRT_KERNEL(Fail));
  add("tfrt_test.partial_fail", ASYNCRT_KERNEL(PartialFail));
  add("tfrt_test.report_error_async", ASYNCRT_KERNEL(ReportErrorAsync));
  add("tfrt_test.report_error_concrete_async",
      ASYNCRT_KERNEL(ReportErrorConcreteAsync));
  add("tfrt_test.report_error_indirect_async",
      ASYNCRT_KERNEL(ReportErrorIndirectAsync));
  add("tfrt_test.cancel", ASYNCRT_KERNEL(Cancel));
  add("tfrt_test.allocate_resource", ASYNCRT_KERNEL(AllocateResource));
  add("tfrt_test.deallocate_resource", ASYNCRT_KERNEL(DeallocateResource));
  add("tfrt_test.use_sample_shared_context",
      ASYNCRT_KERNEL(UseSampleSharedContext));
  add("tfrt_test.memory_leak_one_int32", ASYNCRT_KERNEL(MemoryLeakOneInt32));
  add("tfrt_test.logging", ASYNCRT_KERNEL(Logging));
  add("tfrt_test.async_value_get", ASYNCRT_KERNEL(AsyncValueGet));
  add("tfrt_test.usleep", ASYNCRT_KERNEL(Usleep));
  add("tfrt_test.blocking.usleep", ASYNCRT_KERNEL(BlockingUsleep));
  add("tfrt_test.async_copy_2.i32", ASYNCRT_KERNEL(AsyncCopy2I32));
  add("tfrt_test.async_copy.with_delay.i32",
      ASYNCRT_KERNEL(CopyWithDelay<int32_t>));
  add("tfrt_test.share_to_two", ASYNCRT_KERNEL(ShareToTwo));
  add("tfrt_test.atomic.create.i32", ASYNCRT_KERNEL(AtomicCreate));
  add("tfrt_test.atomic.inc.i32", ASYNCRT_KERNEL(AtomicInc));
  add("tfrt_test.atomic.add.i32", ASYNCRT_KERNEL(AtomicAdd));
  add("tfrt_test.atomic.get.i32", ASYNCRT_KERNEL(AtomicGet));
  add("tfrt_test.quiesce", ASYNCRT_KERNEL(Quiesce));
  add("tfrt_test.as_chain", ASYNCRT_KERNEL(AsChain));
  add("tfrt_test.print_typed_attr", ASYNCRT_KERNEL(PrintTypedAttr));
  add("tfrt_test.unique_loc", ASYNCRT_KERNEL(UniqueLoc));
  add("tfrt_test.get_thread_id", ASYNCRT_KERNEL(GetThreadId));
  add("tfrt_test.get_uniqueness", ASYNCRT_KERNEL(GetUniqueness));
  add("tfrt_test.make_indirect", ASYNCRT_KERNEL(MakeIndirect));
  add("tfrt_test.test_cost", ASYNCRT_KERNEL(TestCost));
  add("tfrt_test.print_debug_info", ASYNCRT_KERNEL(PrintDebugInfo));
  add("tfrt_test.error_chain", ASYNCRT_KERNEL(ErrorChain));
  add("tfrt_tutorial.create_coordinate", ASYNCRT_KERNEL(CreateCoordinate));
  add("tfrt_tutorial.print_coordinate", ASYNCRT_KERNEL(PrintCoordinate));
  add("vt.constant", ASYNCRT_KERNEL(VtConstant));
  add("vt.add", ASYNCRT_KERNEL(VtAdd));
  add("vt.print", ASYNCRT_KERNEL(VtPrint));
  add("tfrt_test.benchmark", ASYNCRT_KERNEL(Benchmark));
  add("tfrt_test.sync_benchmark", ASYNCRT_KERNEL(SyncBenchmark));
  add("tfrt_test.async_value_ref", ASYNCRT_KERNEL(AsyncValueRefStates));
  add("tfrt_test.do.async", ASYNCRT_KERNEL(DoAsync));
  add("tfrt_test.fail_s", ASYNCRT_KERNEL(ErrorSync));
  add("tfrt_test.error_s", ASYNCRT_KERNEL(ErrorSync));
  add("tfrt_test.sync_sum", ASYNCRT_KERNEL(SyncSum));
  add("tfrt_test.sync_sum2", ASYNCRT_KERNEL(SyncSum));
  add("tfrt_test.sync_sum_attributes", ASYNCRT_KERNEL(SyncSumAttributes));
  add("tfrt_test.invoke_sync_function.i32_i32.i32",
      ASYNCRT_KERNEL(InvokeSyncFunction));
  add("tfrt_test.invoke_sync_function.i32_i32.i32_i32",
      ASYNCRT_KERNEL(InvokeSyncFunction));
}

absl::Span<const NativeFunctionRegistration> TestNativeFunctions() {
  static constexpr NativeFunctionRegistration kFunctions[] = {
      {"native_add", NativeAdd},         {"native_async_add", NativeAsyncAdd},
      {"native_error", NativeError},     {"native_sink", NativeSink},
      {"native_async_sink", NativeSink},
  };
  return kFunctions;
}

}  // namespace asyncrt
