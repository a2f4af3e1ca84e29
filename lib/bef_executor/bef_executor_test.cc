// Tests of the executor and the kernel adapter on BEF programs built with
// BefWriter (no MLIR): dataflow order, async kernels, late results, error
// propagation and reporting, cancellation, calls, native functions, unknown
// kernels, and concurrent calls under the work-stealing pool.
//
// Every executor test runs in both modes: ExecutorMode::kFast (the
// optimised executor) and kReference (the statement of its semantics,
// reference_executor.cc). Assertions about a fast-path detail (unboxed
// values, reused spent arguments, batches and streams on the work queue)
// are checked in kFast only, each with a comment.
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

const char* ModeName(ExecutorMode mode) {
  return mode == ExecutorMode::kFast ? "fast" : "reference";
}

}  // namespace

// How gtest (and the ctest names gtest_discover_tests makes) shows a mode.
void PrintTo(ExecutorMode mode, std::ostream* os) { *os << ModeName(mode); }

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

//===--- Test kernels
//-------------------------------------------------------===//

std::atomic<int> kernels_run{0};

int32_t ConstI32(Attribute<int32_t> value) {
  kernels_run.fetch_add(1);
  return *value;
}
int32_t AddI32(int32_t a, int32_t b) {
  kernels_run.fetch_add(1);
  return a + b;
}
// Computes on the work queue: the result is unavailable when it returns.
AsyncValueRef<int32_t> AsyncAddI32(Argument<int32_t> a, Argument<int32_t> b,
                                   const ExecutionContext& exec_ctx) {
  return EnqueueWorkWithResult(
      exec_ctx.host(),
      [a = a.ValueRef(), b = b.ValueRef()] { return a.get() + b.get(); });
}
int64_t WidenI32(int32_t a) { return a; }
int32_t Sum4(int32_t a, int32_t b, int32_t c, int32_t d) {
  return a + b + c + d;
}
// Kernels whose results show the order of their operands.
int32_t Negate(int32_t a) { return -a; }
int32_t Subtract(int32_t a, int32_t b) { return a - b; }
int32_t Digits3(int32_t a, int32_t b, int32_t c) {
  return a * 100 + b * 10 + c;
}
int32_t Digits4(int32_t a, int32_t b, int32_t c, int32_t d) {
  return a * 1000 + b * 100 + c * 10 + d;
}
int32_t Sum5(int32_t a, int32_t b, int32_t c, int32_t d, int32_t e) {
  return a + b + c + d + e;
}
double Scale(double x, float factor, bool negate) {
  return (negate ? -x : x) * factor;
}
absl::StatusOr<int32_t> CheckedDiv(int32_t a, int32_t b) {
  if (b == 0) return absl::InvalidArgumentError("Divide by zero");
  return a / b;
}
std::tuple<int32_t, int32_t> Split(int32_t a) { return {a / 10, a % 10}; }
Chain NewChain() { return Chain(); }
Chain CancelRequest(const ExecutionContext& exec_ctx) {
  exec_ctx.request_context()->Cancel();
  return Chain();
}
int32_t SumAll(RemainingArguments args) {
  int32_t sum = 0;
  for (size_t i = 0; i < args.size(); ++i) sum += args[i]->get<int32_t>();
  return sum;
}
std::string Describe(StringAttribute prefix, ArrayAttribute<int32_t> values) {
  std::string text = prefix.str();
  for (int32_t v : values.data()) text += ":" + std::to_string(v);
  return text;
}
// Calls its function operand with its arguments.
void Call(RemainingArguments args, RemainingResults results,
          const Function* callee, const ExecutionContext& exec_ctx) {
  std::vector<RCReference<AsyncValue>> values(callee->num_results());
  callee->Execute(exec_ctx, args.values(), absl::MakeSpan(values));
  for (size_t i = 0; i < values.size(); ++i) results.Set(i, values[i]);
}

// A result that only the test publishes: deterministically "not yet
// available" when the kernel returns.
AsyncValueRef<int32_t> deferred_result;
AsyncValueRef<int32_t> Deferred(int32_t) {
  deferred_result = MakeUnconstructedAsyncValueRef<int32_t>();
  return deferred_result;
}

// Like test.deferred, for many calls at once: each run adds its result to
// the list, for the test to fulfil later.
std::mutex pending_mutex;
std::vector<AsyncValueRef<int32_t>> pending_results;
AsyncValueRef<int32_t> DeferredInList(int32_t) {
  auto result = MakeUnconstructedAsyncValueRef<int32_t>();
  std::lock_guard<std::mutex> lock(pending_mutex);
  pending_results.push_back(result);
  return result;
}

// Per-kernel state: counts how often it is made and destroyed.
std::atomic<int> states_made{0};
std::atomic<int> states_destroyed{0};
struct CountingState final : KernelState {
  explicit CountingState(int32_t base) : base(base) { states_made++; }
  ~CountingState() override { states_destroyed++; }
  const int32_t base;
};
// Adds the argument to its attribute, which it reads once per kernel.
void AddToBase(AsyncKernelFrame* frame) {
  CountingState* state = frame->GetOrCreateState<CountingState>([&] {
    return std::make_unique<CountingState>(
        static_cast<int32_t>(frame->GetAttributeAt(0).bits));
  });
  frame->EmplaceResultAt<int32_t>(
      0, state->base + frame->GetArgAt(0)->get<int32_t>());
}

// Like test.const.i32, and records which async value holds its result.
std::atomic<AsyncValue*> recorded_value{nullptr};
void ConstRecorded(AsyncKernelFrame* frame) {
  frame->EmplaceResultAt<int32_t>(
      0, static_cast<int32_t>(frame->GetAttributeAt(0).bits));
  recorded_value = frame->GetResults()[0].get();
}

std::mutex thread_ids_mutex;
std::set<std::thread::id> thread_ids;
// Adds like test.add.i32 and counts the runs on one of the queue's workers.
std::atomic<int> runs_on_workers{0};
int32_t AddOnWorker(int32_t a, int32_t b, HostContext* host) {
  if (host->work_queue().CurrentWorkerIndex() >= 0) runs_on_workers++;
  return a + b;
}

// Adds like test.add.i32 and records which thread ran it.
int32_t RecordThread(int32_t a, int32_t b) {
  std::lock_guard<std::mutex> lock(thread_ids_mutex);
  thread_ids.insert(std::this_thread::get_id());
  return a + b;
}

void NativeAdd(const ExecutionContext&, absl::Span<AsyncValue* const> args,
               absl::Span<RCReference<AsyncValue>> results) {
  results[0] = MakeAvailableAsyncValueRef<int32_t>(args[0]->get<int32_t>() +
                                                   args[1]->get<int32_t>());
}

void RegisterTestKernels(KernelRegistry& registry) {
  auto add = [&](absl::string_view name, KernelDefinition fn) {
    ASSERT_TRUE(registry.AddKernel(name, fn).ok()) << name;
  };
  add("test.const.i32", ASYNCRT_KERNEL(ConstI32));
  add("test.add.i32", ASYNCRT_KERNEL(AddI32));
  add("test.async_add.i32", ASYNCRT_KERNEL(AsyncAddI32));
  add("test.widen.i64", ASYNCRT_KERNEL(WidenI32));
  add("test.sum4.i32", ASYNCRT_KERNEL(Sum4));
  add("test.sum5.i32", ASYNCRT_KERNEL(Sum5));
  add("test.negate.i32", ASYNCRT_KERNEL(Negate));
  add("test.subtract.i32", ASYNCRT_KERNEL(Subtract));
  add("test.digits3.i32", ASYNCRT_KERNEL(Digits3));
  add("test.digits4.i32", ASYNCRT_KERNEL(Digits4));
  add("test.div.i32", ASYNCRT_KERNEL(CheckedDiv));
  add("test.split", ASYNCRT_KERNEL(Split));
  add("test.new_chain", ASYNCRT_KERNEL(NewChain));
  add("test.cancel", ASYNCRT_KERNEL(CancelRequest));
  add("test.sum", ASYNCRT_KERNEL(SumAll));
  add("test.describe", ASYNCRT_KERNEL(Describe));
  add("test.call", ASYNCRT_KERNEL(Call));
  add("test.record_thread", ASYNCRT_KERNEL(RecordThread));
  add("test.add_on_worker.i32", ASYNCRT_KERNEL(AddOnWorker));
  add("test.deferred", ASYNCRT_KERNEL(Deferred));
  add("test.deferred_in_list", ASYNCRT_KERNEL(DeferredInList));
  add("test.add_to_base", AddToBase);
  add("test.const_recorded.i32", ConstRecorded);
  ASSERT_TRUE(registry
                  .AddKernel("test.nonstrict_call", ASYNCRT_KERNEL(Call),
                             KernelStrictness::kNonStrict)
                  .ok());
}

//===--- Test infrastructure ----------------------------------------------===//

// Builds one-function-at-a-time programs with named registers.
class ProgramBuilder {
 public:
  ProgramBuilder() { i32_ = writer_.AddType("i32"); }

  uint32_t Declare(absl::string_view name, int num_args, int num_results,
                   bef::FunctionKind kind = bef::FunctionKind::kBef) {
    return writer_.DeclareFunction(name, kind,
                                   std::vector<uint32_t>(num_args, i32_),
                                   std::vector<uint32_t>(num_results, i32_));
  }

  // Adds a kernel to the current body; returns its result registers.
  std::vector<uint32_t> Kernel(absl::string_view name,
                               std::vector<uint32_t> operands, int num_results,
                               std::vector<uint32_t> attributes = {},
                               std::vector<uint32_t> functions = {}) {
    bef::KernelSpec kernel;
    kernel.kernel_name = writer_.AddKernelName(name);
    kernel.location = writer_.AddLocation("t.mlir", ++line_, 5);
    kernel.operands = std::move(operands);
    for (int i = 0; i < num_results; ++i) {
      kernel.results.push_back(body_.num_registers++);
    }
    for (size_t i = 0; i < attributes.size(); ++i) {
      kernel.attributes.emplace_back(writer_.AddString("a" + std::to_string(i)),
                                     attributes[i]);
    }
    kernel.functions = std::move(functions);
    body_.kernels.push_back(kernel);
    return body_.kernels.back().results;
  }
  uint32_t Const(int32_t value) {
    return Kernel("test.const.i32", {}, 1, {writer_.AddI32Attribute(value)})[0];
  }
  std::vector<uint32_t> Arguments(int count) {
    std::vector<uint32_t> regs;
    for (int i = 0; i < count; ++i) {
      regs.push_back(body_.num_registers++);
      body_.argument_registers.push_back(regs.back());
    }
    return regs;
  }
  // The entry's stream, then one per kernel of the current body.
  void Streams(std::vector<uint32_t> streams) {
    body_.kernel_streams = std::move(streams);
  }
  void Define(uint32_t function, std::vector<uint32_t> results) {
    body_.result_registers = std::move(results);
    writer_.DefineFunction(function, std::move(body_));
    body_ = bef::FunctionBodySpec();
  }
  bef::BefWriter& writer() { return writer_; }
  int line() const { return line_; }

  std::unique_ptr<bef::BefFile> Finish() {
    auto bytes = writer_.Finish();
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    auto file = bef::BefFile::Open(*bytes);
    EXPECT_TRUE(file.ok()) << file.status();
    return *std::move(file);
  }

 private:
  bef::BefWriter writer_;
  bef::FunctionBodySpec body_;
  uint32_t i32_;
  int line_ = 0;
};

// An executor mode and a work queue ("s" or "mstd:2").
struct ExecutorParam {
  ExecutorMode mode;
  const char* queue;
};
void PrintTo(const ExecutorParam& param, std::ostream* os) {
  *os << ModeName(param.mode) << ", " << param.queue;
}

class ExecutorTest : public ::testing::TestWithParam<ExecutorParam> {
 protected:
  ExecutorTest()
      : host_(
            [this](const DecodedDiagnostic& d) {
              std::lock_guard<std::mutex> lock(mutex_);
              diagnostics_.push_back(d.ToString());
            },
            CreateMallocAllocator(), *CreateWorkQueue(GetParam().queue)) {
    RegisterTestKernels(host_.registry());
    EXPECT_TRUE(host_.GetOrCreateSharedContext<NativeFunctionRegistry>()
                    .Add("native_add", NativeAdd)
                    .ok());
  }

  bool fast() const { return GetParam().mode == ExecutorMode::kFast; }
  BefProgramOptions options() const { return {GetParam().mode}; }

  RCReference<BefProgram> Load(ProgramBuilder& builder) {
    auto program = BefProgram::Load(builder.Finish(), &host_, options());
    EXPECT_TRUE(program.ok()) << program.status();
    return program.ok() ? *std::move(program) : RCReference<BefProgram>();
  }

  // Runs `name` with i32 arguments and waits for its results.
  std::vector<RCReference<AsyncValue>> Run(
      const BefProgram& program, absl::string_view name,
      std::vector<int32_t> arguments = {},
      RCReference<RequestContext> request = nullptr) {
    if (!request) request = *RequestContextBuilder(&host_, nullptr).Build();
    const Function* function = program.GetFunction(name);
    EXPECT_NE(function, nullptr) << name;
    std::vector<AsyncValueRef<int32_t>> owned;
    std::vector<AsyncValue*> args;
    for (int32_t value : arguments) {
      owned.push_back(MakeAvailableAsyncValueRef<int32_t>(value));
      args.push_back(owned.back().GetAsyncValue());
    }
    std::vector<RCReference<AsyncValue>> results(function->num_results());
    function->Execute(ExecutionContext(request), args, absl::MakeSpan(results));
    host_.Await(results);
    return results;
  }

  // Starts `function` and returns its results without waiting for them.
  std::vector<RCReference<AsyncValue>> Start(
      const Function& function, absl::Span<AsyncValue* const> arguments = {}) {
    std::vector<RCReference<AsyncValue>> results(function.num_results());
    auto request = *RequestContextBuilder(&host_, nullptr).Build();
    function.Execute(ExecutionContext(request), arguments,
                     absl::MakeSpan(results));
    return results;
  }

  // Drops `results`, waits for work still on the pool, and checks that the
  // call left no async value alive (in builds that count them).
  void ExpectNoValuesLeft(std::vector<RCReference<AsyncValue>>& results,
                          std::optional<int64_t> live_before) {
    results.clear();
    host_.Quiesce();
    if (live_before) {
      EXPECT_EQ(*AsyncValue::NumLiveValues(), *live_before);
    }
  }

  std::vector<std::string> Diagnostics() {
    std::lock_guard<std::mutex> lock(mutex_);
    return diagnostics_;
  }

  std::mutex mutex_;
  std::vector<std::string> diagnostics_;
  HostContext host_;
};

INSTANTIATE_TEST_SUITE_P(
    ModesAndQueues, ExecutorTest,
    ::testing::Values(ExecutorParam{ExecutorMode::kFast, "s"},
                      ExecutorParam{ExecutorMode::kFast, "mstd:2"},
                      ExecutorParam{ExecutorMode::kReference, "s"},
                      ExecutorParam{ExecutorMode::kReference, "mstd:2"}),
    [](const auto& info) {
      return std::string(ModeName(info.param.mode)) + "_" +
             (std::string(info.param.queue) == "s" ? "s" : "mstd");
    });

//===--- Dataflow
//-------------------------------------------------------------===//

TEST_P(ExecutorTest, SerialChain) {
  ProgramBuilder b;
  uint32_t main = b.Declare("chain", 0, 1);
  uint32_t one = b.Const(1);
  uint32_t acc = one;
  for (int i = 0; i < 100; ++i)
    acc = b.Kernel("test.add.i32", {acc, one}, 1)[0];
  b.Define(main, {acc});
  auto program = Load(b);
  auto results = Run(*program, "chain");
  EXPECT_EQ(results[0]->get<int32_t>(), 101);
}

//===--- Unboxed values ---------------------------------------------------===//

// f(x) = (x + x) + x: both adds read the argument unboxed.
void DefineTripler(ProgramBuilder& b) {
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t x = b.Arguments(1)[0];
  uint32_t doubled = b.Kernel("test.add.i32", {x, x}, 1)[0];
  b.Define(f, {b.Kernel("test.add.i32", {doubled, x}, 1)[0]});
}

// Plain kernels (ASYNCRT_KERNEL of scalars) pass values to each other in the
// call's registers: only values that leave them (function results, operands
// of other kernels) become async values.
TEST_P(ExecutorTest, PlainKernelsPassValuesUnboxed) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t x = b.Arguments(1)[0];
  // A fan-out (no argument to reuse) and dead results.
  uint32_t doubled = b.Kernel("test.add.i32", {x, x}, 1)[0];
  uint32_t acc = doubled;
  for (int i = 0; i < 50; ++i) {
    b.Kernel("test.add.i32", {doubled, x}, 1);
    acc = b.Kernel("test.add.i32", {acc, doubled}, 1)[0];
  }
  b.Define(f, {acc});
  auto program = Load(b);
  std::optional<int64_t> created = AsyncValue::NumCreatedValues();
  std::optional<int64_t> live = AsyncValue::NumLiveValues();
  auto results = Run(*program, "f", {3});
  EXPECT_EQ(results[0]->get<int32_t>(), 6 * 51);
  if (!created) GTEST_SKIP() << "built without ASYNCRT_ASYNC_VALUE_ACCOUNTING";
  // The argument, the result and the request's own; boxed, the 100 dead
  // results and the fan-out's value would each have been one more. (Fast
  // path only: the reference executor boxes every value.)
  if (fast()) {
    EXPECT_LE(*AsyncValue::NumCreatedValues() - *created, 4);
  }
  ExpectNoValuesLeft(results, live);  // Dead kernels may still be running.
}

TEST_P(ExecutorTest, ErrorsPassThroughUnboxedValues) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 2);
  uint32_t x = b.Arguments(1)[0];
  uint32_t quotient = b.Kernel("test.div.i32", {x, b.Const(0)}, 1)[0];
  int div_line = b.line();
  // Unboxed from here: the error travels in the registers, once per use.
  uint32_t a = b.Kernel("test.add.i32", {quotient, x}, 1)[0];
  uint32_t c = b.Kernel("test.add.i32", {a, a}, 1)[0];
  uint32_t d = b.Kernel("test.add.i32", {a, x}, 1)[0];
  uint32_t dead = b.Kernel("test.add.i32", {quotient, x}, 1)[0];
  (void)dead;
  uint32_t e = b.Kernel("test.add.i32", {c, d}, 1)[0];
  uint32_t fine = b.Kernel("test.add.i32", {x, x}, 1)[0];
  uint32_t fine2 = b.Kernel("test.add.i32", {fine, x}, 1)[0];
  b.Define(f, {e, fine2});
  auto program = Load(b);
  std::optional<int64_t> live = AsyncValue::NumLiveValues();
  int before = kernels_run.load();
  auto results = Run(*program, "f", {7});
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_EQ(results[0]->GetError().message(), "Divide by zero");
  EXPECT_EQ(results[1]->get<int32_t>(), 21);
  EXPECT_EQ(kernels_run.load() - before, 3);  // The const and `fine`s.
  EXPECT_THAT(Diagnostics(),
              ElementsAre(absl::StrCat("t.mlir:", div_line,
                                       ":5: error: Divide by zero")));
  ExpectNoValuesLeft(results, live);
}

TEST_P(ExecutorTest, BoxedOperandOfTheWrongTypeForAnUnboxedKernel) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t x = b.Arguments(1)[0];
  // An i64 read as an i32: `wide` stays boxed, and the add that reads it
  // (unboxed for `doubled`) reports the mismatch as the frame path would.
  uint32_t wide = b.Kernel("test.widen.i64", {x}, 1)[0];
  uint32_t doubled = b.Kernel("test.add.i32", {x, x}, 1)[0];
  uint32_t bad = b.Kernel("test.add.i32", {doubled, wide}, 1)[0];
  int bad_line = b.line();
  uint32_t after = b.Kernel("test.add.i32", {bad, x}, 1)[0];
  b.Define(f, {after});
  auto program = Load(b);
  auto results = Run(*program, "f", {1});
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_EQ(results[0]->GetError().message(),
            "kernel 'test.add.i32' argument 1 has the wrong type");
  EXPECT_THAT(Diagnostics(),
              ElementsAre(absl::StrCat(
                  "t.mlir:", bad_line,
                  ":5: error: kernel 'test.add.i32' argument 1 has the "
                  "wrong type")));
}

// Arguments that only plain kernels read are copied into value slots when
// a call starts; one that is pending, an error, indirect or of another type
// sends the call's unboxed kernels to the path that reads it boxed.
TEST_P(ExecutorTest, UnboxedArgumentsOfEveryKind) {
  ProgramBuilder b;
  DefineTripler(b);
  auto program = Load(b);
  const Function& function = *program->GetFunction("f");
  auto call = [&](RCReference<AsyncValue> argument) {
    AsyncValue* args[] = {argument.get()};
    auto results = Start(function, args);
    return results;
  };

  auto direct = call(MakeAvailableAsyncValueRef<int32_t>(5));
  host_.Await(direct);
  EXPECT_EQ(direct[0]->get<int32_t>(), 15);

  RCReference<IndirectAsyncValue> forwarded = MakeIndirectAsyncValue();
  forwarded->ForwardTo(MakeAvailableAsyncValueRef<int32_t>(6));
  auto indirect = call(forwarded);
  host_.Await(indirect);
  EXPECT_EQ(indirect[0]->get<int32_t>(), 18);

  auto later = MakeUnconstructedAsyncValueRef<int32_t>();
  auto pending = call(FormRef(later.GetAsyncValue()));
  later.emplace(7);
  host_.Await(pending);
  EXPECT_EQ(pending[0]->get<int32_t>(), 21);

  auto failed = call(MakeErrorAsyncValueRef("bad argument"));
  host_.Await(failed);
  ASSERT_TRUE(failed[0]->IsError());
  EXPECT_EQ(failed[0]->GetError().message(), "bad argument");
  EXPECT_TRUE(Diagnostics().empty());  // Reported by whoever made it.

  auto wide = call(MakeAvailableAsyncValueRef<int64_t>(8));
  host_.Await(wide);
  ASSERT_TRUE(wide[0]->IsError());
  EXPECT_EQ(wide[0]->GetError().message(),
            "kernel 'test.add.i32' argument 0 has the wrong type");
}

// Kernels whose operands and result are all unboxed run back to back
// (CallState::RunDirectKernels), each reading its own operands' slots,
// whether its result has one user or several.
TEST_P(ExecutorTest, DirectKernelsReadTheirOperandsInOrder) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t x = b.Arguments(1)[0];
  uint32_t negated = b.Kernel("test.negate.i32", {x}, 1)[0];
  uint32_t difference = b.Kernel("test.subtract.i32", {x, negated}, 1)[0];
  uint32_t three = b.Kernel("test.digits3.i32", {difference, x, negated}, 1)[0];
  uint32_t four =
      b.Kernel("test.digits4.i32", {three, difference, negated, x}, 1)[0];
  // Boxed: a function result.
  b.Define(f, {b.Kernel("test.subtract.i32", {four, x}, 1)[0]});
  auto program = Load(b);
  for (int32_t x : {2, 3}) {
    const int32_t three = 2 * x * 100 + x * 10 - x;
    const int32_t four = three * 1000 + 2 * x * 100 - x * 10 + x;
    EXPECT_EQ(Run(*program, "f", {x})[0]->get<int32_t>(), four - x);
  }
}

TEST_P(ExecutorTest, WideKernelsBesideUnboxedOnes) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t x = b.Arguments(1)[0];
  uint32_t a = b.Kernel("test.add.i32", {x, x}, 1)[0];
  // Four operands: unboxed; five: the frame path, so `a` and `four` are
  // boxed for it.
  uint32_t four = b.Kernel("test.sum4.i32", {a, x, a, x}, 1)[0];
  uint32_t five = b.Kernel("test.sum5.i32", {four, a, x, four, x}, 1)[0];
  b.Define(f, {b.Kernel("test.add.i32", {five, five}, 1)[0]});
  auto program = Load(b);
  auto results = Run(*program, "f", {1});
  // a = 2, four = 6, five = 6 + 2 + 1 + 6 + 1 = 16.
  EXPECT_EQ(results[0]->get<int32_t>(), 32);
}

// An unboxed kernel with a boxed result takes a spent operand's value for
// it, as the frame path does, and drops the others' references.
TEST_P(ExecutorTest, UnboxedKernelsReuseSpentOperands) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 2);
  uint32_t x = b.Arguments(1)[0];
  uint32_t shared = b.Const(1);  // Also a result: never unique here.
  uint32_t spent = b.Kernel("test.const_recorded.i32", {}, 1,
                            {b.writer().AddI32Attribute(2)})[0];
  uint32_t doubled = b.Kernel("test.add.i32", {x, x}, 1)[0];
  uint32_t sum =
      b.Kernel("test.sum4.i32", {shared, spent, doubled, doubled}, 1)[0];
  b.Define(f, {sum, shared});
  auto program = Load(b);
  std::optional<int64_t> live = AsyncValue::NumLiveValues();
  auto results = Run(*program, "f", {10});
  EXPECT_EQ(results[0]->get<int32_t>(), 43);
  EXPECT_EQ(results[1]->get<int32_t>(), 1);
  // Fast path only: the reference executor never reuses a spent value.
  if (fast()) {
    EXPECT_EQ(results[0].get(), recorded_value.load());
  }
  ExpectNoValuesLeft(results, live);
}

TEST_P(ExecutorTest, CancellationStopsUnboxedKernels) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t x = b.Arguments(1)[0];
  uint32_t chain = b.Kernel("test.cancel", {}, 1)[0];
  uint32_t sum = b.Kernel("test.add.i32", {x, x}, 1)[0];
  // Cancelled by now: these pass the cancellation on, unboxed and boxed.
  uint32_t late = b.Kernel(
      "test.add.i32", {x, b.Kernel("test.add.i32", {x, x, chain}, 1)[0]}, 1)[0];
  uint32_t total = b.Kernel("test.add.i32", {sum, late}, 1)[0];
  b.Define(f, {b.Kernel("test.add.i32", {total, x}, 1)[0]});
  auto program = Load(b);
  auto results = Run(*program, "f", {1});
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_EQ(results[0]->GetError(), absl::CancelledError("Cancelled"));
  EXPECT_TRUE(Diagnostics().empty());
}

// A kernel returning plain data writes it into the async value of an
// argument at its last use instead of allocating one; a value that others
// still see keeps its own.
TEST_P(ExecutorTest, ReturnedScalarsReuseSpentArguments) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 3);
  auto x = b.Arguments(1);
  uint32_t five = b.Kernel("test.const_recorded.i32", {}, 1,
                           {b.writer().AddI32Attribute(5)})[0];
  uint32_t sum = b.Kernel("test.add.i32", {five, x[0]}, 1)[0];
  uint32_t seven = b.Const(7);
  uint32_t shared_sum = b.Kernel("test.add.i32", {seven, x[0]}, 1)[0];
  b.Define(f, {sum, shared_sum, seven});
  auto program = Load(b);
  auto results = Run(*program, "f", {100});
  EXPECT_EQ(results[0]->get<int32_t>(), 105);
  // Fast path only: the reference executor never reuses a spent value.
  if (fast()) {
    EXPECT_EQ(results[0].get(), recorded_value.load());
  }
  EXPECT_EQ(results[1]->get<int32_t>(), 107);
  EXPECT_EQ(results[2]->get<int32_t>(), 7);
  EXPECT_NE(results[1].get(), results[2].get());
}

TEST_P(ExecutorTest, ArgumentsAndMultipleResults) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 2, 3);
  auto args = b.Arguments(2);
  uint32_t sum = b.Kernel("test.add.i32", {args[0], args[1]}, 1)[0];
  auto digits = b.Kernel("test.split", {sum}, 2);
  // A function may return an argument and the same register twice.
  b.Define(f, {digits[0], digits[1], args[0]});
  auto program = Load(b);
  auto results = Run(*program, "f", {40, 2});
  EXPECT_EQ(results[0]->get<int32_t>(), 4);
  EXPECT_EQ(results[1]->get<int32_t>(), 2);
  EXPECT_EQ(results[2]->get<int32_t>(), 40);
}

TEST_P(ExecutorTest, AsyncKernelsAndLateResults) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 2);
  uint32_t two = b.Const(2);
  uint32_t x = two;
  // Each add waits for the previous async add: the graph resumes on
  // whichever thread publishes each value.
  for (int i = 0; i < 20; ++i)
    x = b.Kernel("test.async_add.i32", {x, two}, 1)[0];
  uint32_t y = b.Kernel("test.add.i32", {x, two}, 1)[0];
  b.Define(f, {x, y});
  auto program = Load(b);
  auto results = Run(*program, "f");
  EXPECT_EQ(results[0]->get<int32_t>(), 42);
  EXPECT_EQ(results[1]->get<int32_t>(), 44);
}

// A call that finishes inside Execute borrows its caller's context and
// program; one still running when Execute returns must hold them itself.
TEST_P(ExecutorTest, PendingCallOutlivesItsCallersReferences) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 1);
  uint32_t one = b.Const(1);
  uint32_t later = b.Kernel("test.deferred", {one}, 1)[0];
  b.Define(f, {b.Kernel("test.add.i32", {later, one}, 1)[0]});
  RCReference<BefProgram> program = Load(b);
  std::vector<RCReference<AsyncValue>> results;
  {
    RCReference<RequestContext> request =
        *RequestContextBuilder(&host_, nullptr).Build();
    results.resize(1);
    program->GetFunction("f")->Execute(ExecutionContext(request), {},
                                       absl::MakeSpan(results));
  }
  program.reset();  // Only the pending call holds the program now.
  ASSERT_FALSE(results[0]->IsAvailable());
  deferred_result.emplace(41);
  deferred_result.reset();
  host_.Await(results);
  EXPECT_EQ(results[0]->get<int32_t>(), 42);
}

// Calls f(a, b) = (a + a, a + b) from C++ with a = 5 available and b not
// yet: the first result does not wait for b, the second follows it. With
// `streams`, a + a is in another stream than the entry and starts from the
// work queue while the call defines `a`.
void CheckCallWithPendingArgument(HostContext& host, ExecutorMode mode,
                                  const std::vector<uint32_t>& streams) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 2, 2);
  auto args = b.Arguments(2);
  uint32_t now = b.Kernel("test.add.i32", {args[0], args[0]}, 1)[0];
  uint32_t later = b.Kernel("test.add.i32", {args[0], args[1]}, 1)[0];
  if (!streams.empty()) b.Streams(streams);
  b.Define(f, {now, later});
  auto program = BefProgram::Load(b.Finish(), &host, {mode});
  ASSERT_TRUE(program.ok()) << program.status();
  auto ready = MakeAvailableAsyncValueRef<int32_t>(5);
  auto pending = MakeUnconstructedAsyncValueRef<int32_t>();
  AsyncValue* arguments[] = {ready.GetAsyncValue(), pending.GetAsyncValue()};
  std::vector<RCReference<AsyncValue>> results(2);
  auto request = *RequestContextBuilder(&host, nullptr).Build();
  (*program)->GetFunction("f")->Execute(ExecutionContext(request), arguments,
                                        absl::MakeSpan(results));
  // Without streams it ran inline; with them, once the queue has run.
  if (streams.empty()) {
    EXPECT_TRUE(results[0]->IsAvailable());
  }
  host.Quiesce();
  ASSERT_TRUE(results[0]->IsAvailable());
  EXPECT_EQ(results[0]->get<int32_t>(), 10);
  EXPECT_TRUE(results[1]->IsUnavailable());
  pending.emplace(7);
  host.Await(results);
  EXPECT_EQ(results[1]->get<int32_t>(), 12);
}

TEST_P(ExecutorTest, UnavailableArgumentsResumeTheCall) {
  CheckCallWithPendingArgument(host_, GetParam().mode, {});
}

TEST_P(ExecutorTest, StreamsStartWhenSomeArgumentsAreUnavailable) {
  // The reference executor ignores streams: the call runs as without them.
  CheckCallWithPendingArgument(host_, GetParam().mode, {0, 1, 0});
}

TEST_P(ExecutorTest, AttributesAndVariadicArguments) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 1);
  auto& w = b.writer();
  int32_t values[] = {7, 8};
  uint32_t text =
      b.Kernel("test.describe", {}, 1,
               {w.AddStringAttribute("v"),
                w.AddArrayAttribute(
                    bef::AttributeKind::kI32, 2,
                    absl::MakeConstSpan(
                        reinterpret_cast<const uint8_t*>(values), 8))})[0];
  uint32_t sum =
      b.Kernel("test.sum", {b.Const(1), b.Const(2), b.Const(3)}, 1)[0];
  b.Define(f, {sum});
  (void)text;
  auto program = Load(b);
  auto results = Run(*program, "f");
  EXPECT_EQ(results[0]->get<int32_t>(), 6);
}

TEST_P(ExecutorTest, TrailingChainIsIgnored) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 1);
  uint32_t chain = b.Kernel("test.new_chain", {}, 1)[0];
  uint32_t sum =
      b.Kernel("test.add.i32", {b.Const(1), b.Const(2), chain}, 1)[0];
  b.Define(f, {sum});
  auto program = Load(b);
  EXPECT_EQ(Run(*program, "f")[0]->get<int32_t>(), 3);
  EXPECT_TRUE(Diagnostics().empty());
}

//===--- Errors
//-----------------------------------------------------------------===//

TEST_P(ExecutorTest, ErrorIsReportedOnceAndPropagated) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 2);
  uint32_t zero = b.Const(0);
  uint32_t quotient = b.Kernel("test.div.i32", {b.Const(4), zero}, 1)[0];
  int div_line = b.line();
  uint32_t after = b.Kernel("test.add.i32", {quotient, zero}, 1)[0];
  uint32_t unaffected = b.Kernel("test.add.i32", {zero, zero}, 1)[0];
  b.Define(f, {after, unaffected});
  auto program = Load(b);
  int before = kernels_run.load();
  auto results = Run(*program, "f");
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_EQ(results[0]->GetError().message(), "Divide by zero");
  EXPECT_EQ(results[1]->get<int32_t>(), 0);
  // The two constants and the unaffected add ran; the add after the
  // failure did not.
  EXPECT_EQ(kernels_run.load() - before, 3);
  EXPECT_THAT(Diagnostics(),
              ElementsAre(absl::StrCat("t.mlir:", div_line,
                                       ":5: error: Divide by zero")));
}

TEST_P(ExecutorTest, TypeMismatchIsAnErrorNotACrash) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 1);
  uint32_t chain = b.Kernel("test.new_chain", {}, 1)[0];
  uint32_t bad = b.Kernel("test.add.i32", {chain, chain}, 1)[0];
  b.Define(f, {bad});
  auto program = Load(b);
  auto results = Run(*program, "f");
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_THAT(std::string(results[0]->GetError().message()),
              HasSubstr("argument 0 has the wrong type"));
}

TEST_P(ExecutorTest, ArityMismatchIsAnError) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 1);
  uint32_t one = b.Const(1);
  uint32_t bad = b.Kernel("test.add.i32", {one, one, one}, 1)[0];
  b.Define(f, {bad});
  auto program = Load(b);
  auto results = Run(*program, "f");
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_THAT(std::string(results[0]->GetError().message()),
              HasSubstr("takes 2 arguments, got 3"));
}

TEST_P(ExecutorTest, CancellationStopsLaterKernels) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 1);
  uint32_t chain = b.Kernel("test.cancel", {}, 1)[0];
  uint32_t one =
      b.Kernel("test.add.i32", {b.Const(1), b.Const(1), chain}, 1)[0];
  b.Define(f, {one});
  auto program = Load(b);
  auto results = Run(*program, "f");
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_EQ(results[0]->GetError(), absl::CancelledError("Cancelled"));
  EXPECT_TRUE(Diagnostics().empty());  // Cancellation reports nothing.
}

TEST_P(ExecutorTest, UnknownKernelFailsLoadWithItsLocation) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 0, 0);
  b.Kernel("test.const.i32", {}, 1, {b.writer().AddI32Attribute(1)});
  b.Kernel("no.such.kernel", {}, 0);
  b.Define(f, {});
  auto program = BefProgram::Load(b.Finish(), &host_, options());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Diagnostics(),
              ElementsAre("t.mlir:2:5: error: unknown kernel name "
                          "'no.such.kernel'"));
}

//===--- Calls
//--------------------------------------------------------------------===//

TEST_P(ExecutorTest, CallsBefAndNativeFunctions) {
  ProgramBuilder b;
  uint32_t main = b.Declare("main", 0, 2);
  uint32_t twice = b.Declare("twice", 1, 1);
  uint32_t native = b.Declare("native_add", 2, 1, bef::FunctionKind::kNative);
  uint32_t three = b.Const(3);
  uint32_t six = b.Kernel("test.call", {three}, 1, {}, {twice})[0];
  uint32_t nine = b.Kernel("test.call", {six, three}, 1, {}, {native})[0];
  b.Define(main, {six, nine});
  auto arg = b.Arguments(1)[0];
  b.Define(twice, {b.Kernel("test.async_add.i32", {arg, arg}, 1)[0]});
  auto program = Load(b);
  auto results = Run(*program, "main");
  EXPECT_EQ(results[0]->get<int32_t>(), 6);
  EXPECT_EQ(results[1]->get<int32_t>(), 9);
}

// (x, y) -> (x, x + y): the first result needs only the first argument.
void DefineFirstAndSum(ProgramBuilder& b, uint32_t function) {
  auto args = b.Arguments(2);
  b.Define(function,
           {args[0], b.Kernel("test.add.i32", {args[0], args[1]}, 1)[0]});
}

TEST_P(ExecutorTest, NonStrictKernelRunsBeforeItsOperandsExist) {
  // `late` is not even defined when the call runs (its producer waits on a
  // deferred value): the callee gets a placeholder for it, returns its first
  // argument at once, and its sum follows the deferred value.
  ProgramBuilder b;
  uint32_t main = b.Declare("main", 0, 2);
  uint32_t first_and_sum = b.Declare("first_and_sum", 2, 2);
  uint32_t one = b.Const(1);
  uint32_t deferred = b.Kernel("test.deferred", {one}, 1)[0];
  uint32_t late = b.Kernel("test.add.i32", {deferred, one}, 1)[0];
  auto results = b.Kernel("test.nonstrict_call", {one, late}, 2, {},
                          {first_and_sum});
  b.Define(main, results);
  DefineFirstAndSum(b, first_and_sum);
  auto program = Load(b);
  std::vector<RCReference<AsyncValue>> values =
      Start(*program->GetFunction("main"));
  ASSERT_TRUE(values[0]->IsAvailable());
  EXPECT_EQ(values[0]->get<int32_t>(), 1);
  EXPECT_TRUE(values[1]->IsUnavailable());
  deferred_result.emplace(40);
  host_.Await(values);
  EXPECT_EQ(values[1]->get<int32_t>(), 42);
}

TEST_P(ExecutorTest, NonStrictKernelReceivesErrorOperands) {
  // A strict kernel would not run with an error operand; a non-strict one
  // does, and only what uses the error fails.
  ProgramBuilder b;
  uint32_t main = b.Declare("main", 0, 2);
  uint32_t first_and_sum = b.Declare("first_and_sum", 2, 2);
  uint32_t seven = b.Const(7);
  uint32_t error = b.Kernel("test.div.i32", {seven, b.Const(0)}, 1)[0];
  auto results = b.Kernel("test.nonstrict_call", {seven, error}, 2, {},
                          {first_and_sum});
  b.Define(main, results);
  DefineFirstAndSum(b, first_and_sum);
  auto program = Load(b);
  auto values = Run(*program, "main");
  EXPECT_EQ(values[0]->get<int32_t>(), 7);
  ASSERT_TRUE(values[1]->IsError());
  EXPECT_THAT(values[1]->GetError().message(), HasSubstr("Divide by zero"));
  EXPECT_EQ(Diagnostics().size(), 1u);
}

TEST_P(ExecutorTest, CallWithTheWrongArityIsAnError) {
  // A kernel calling a function with too few arguments (a corrupted or
  // hand-made file) gets an error value, not a crash.
  ProgramBuilder b;
  uint32_t main = b.Declare("main", 0, 1);
  uint32_t two_args = b.Declare("two_args", 2, 1);
  uint32_t r = b.Kernel("test.call", {b.Const(1)}, 1, {}, {two_args})[0];
  b.Define(main, {r});
  auto args = b.Arguments(2);
  b.Define(two_args, {b.Kernel("test.add.i32", {args[0], args[1]}, 1)[0]});
  auto program = Load(b);
  auto results = Run(*program, "main");
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_THAT(std::string(results[0]->GetError().message()),
              HasSubstr("called with 1 arguments and 1 results; it takes 2"));
}

TEST_P(ExecutorTest, UnknownNativeFunctionFailsLoad) {
  ProgramBuilder b;
  b.Declare("no_such_native", 0, 0, bef::FunctionKind::kNative);
  auto program = BefProgram::Load(b.Finish(), &host_, options());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(
      Diagnostics(),
      ElementsAre(HasSubstr("unknown native function 'no_such_native'")));
}

TEST_P(ExecutorTest, SyncFunctionsRejectDeferredResults) {
  ProgramBuilder b;
  uint32_t ok = b.Declare("sync_ok", 1, 1, bef::FunctionKind::kSync);
  uint32_t arg = b.Arguments(1)[0];
  b.Define(ok, {b.Kernel("test.add.i32", {arg, arg}, 1)[0]});
  uint32_t bad = b.Declare("sync_bad", 1, 1, bef::FunctionKind::kSync);
  arg = b.Arguments(1)[0];
  b.Define(bad, {b.Kernel("test.deferred", {arg}, 1)[0]});
  auto program = Load(b);
  EXPECT_EQ(Run(*program, "sync_ok", {4})[0]->get<int32_t>(), 8);
  auto results = Run(*program, "sync_bad", {4});
  ASSERT_TRUE(results[0]->IsError());
  EXPECT_THAT(std::string(results[0]->GetError().message()),
              HasSubstr("not yet available, in a tfrt.sync function"));
  deferred_result.emplace(0);
  deferred_result.reset();
}

TEST_P(ExecutorTest, WideGraphsRunToCompletion) {
  // 200 ready kernels at once: with a multi-threaded queue the executor
  // hands batches of them to other workers.
  ProgramBuilder b;
  uint32_t f = b.Declare("wide", 1, 1);
  uint32_t arg = b.Arguments(1)[0];
  std::vector<uint32_t> parts;
  for (int i = 0; i < 200; ++i) {
    parts.push_back(b.Kernel("test.record_thread", {arg, arg}, 1)[0]);
  }
  b.Define(f, {b.Kernel("test.sum", parts, 1)[0]});
  auto program = Load(b);
  {
    std::lock_guard<std::mutex> lock(thread_ids_mutex);
    thread_ids.clear();
  }
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(Run(*program, "wide", {round})[0]->get<int32_t>(),
              200 * 2 * round);
  }
  host_.Quiesce();
  std::lock_guard<std::mutex> lock(thread_ids_mutex);
  if (host_.work_queue().GetParallelismLevel() <= 1) {
    EXPECT_EQ(thread_ids.size(), 1u) << "single-threaded queue offloaded";
  } else if (fast()) {
    // Fast path only: the reference executor runs every kernel on the
    // thread that made it ready.
    EXPECT_GT(thread_ids.size(), 1u) << "no batch went to the work queue";
  }
}

//===--- Concurrency
//------------------------------------------------------------===//

// Calls `function` (i32 -> i32) from 4 threads, `iterations` times each
// with distinct inputs, then quiesces; counts results other than
// `expected(input)`.
int CountWrongConcurrentResults(HostContext& host, const Function& function,
                                int iterations,
                                int32_t (*expected)(int32_t)) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto request = *RequestContextBuilder(&host, nullptr).Build();
      ExecutionContext exec_ctx(request);
      for (int i = 0; i < iterations; ++i) {
        int32_t input = t * 1000 + i;
        auto value = MakeAvailableAsyncValueRef<int32_t>(input);
        AsyncValue* args[] = {value.GetAsyncValue()};
        RCReference<AsyncValue> result;
        function.Execute(exec_ctx, args, absl::MakeSpan(&result, 1));
        BlockUntilReady(result.get());
        if (result->get<int32_t>() != expected(input)) wrong.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  host.Quiesce();
  return wrong.load();
}

TEST(KernelAdapterTest, UnboxedEntryForFunctionsOfPlainValuesOnly) {
  const UnboxedKernel* add = ASYNCRT_KERNEL(AddI32).unboxed;
  ASSERT_NE(add, nullptr);
  ASSERT_EQ(add->num_operands, 2u);
  EXPECT_EQ(add->operand_types[0], AsyncValue::TypeIdOf<int32_t>());
  EXPECT_EQ(add->operand_types[1], AsyncValue::TypeIdOf<int32_t>());
  EXPECT_EQ(add->result_type, AsyncValue::TypeIdOf<int32_t>());
  // Values travel as the low bytes of 64-bit words.
  const uint64_t result = add->invoke(40, uint64_t{0xffffffff}, 0, 0);
  int32_t sum;
  std::memcpy(&sum, &result, sizeof(sum));
  EXPECT_EQ(sum, 39);
  RCReference<AsyncValue> boxed = TakeRef(add->box(result));
  EXPECT_EQ(boxed->get<int32_t>(), 39);

  const UnboxedKernel* widen = ASYNCRT_KERNEL(WidenI32).unboxed;
  ASSERT_NE(widen, nullptr);
  EXPECT_EQ(widen->result_type, AsyncValue::TypeIdOf<int64_t>());
  EXPECT_NE(ASYNCRT_KERNEL(NewChain).unboxed, nullptr);  // Chain is plain.

  // Anything else keeps the frame path only.
  EXPECT_EQ(ASYNCRT_KERNEL(CheckedDiv).unboxed, nullptr);     // StatusOr
  EXPECT_EQ(ASYNCRT_KERNEL(Split).unboxed, nullptr);          // tuple
  EXPECT_EQ(ASYNCRT_KERNEL(ConstI32).unboxed, nullptr);       // attribute
  EXPECT_EQ(ASYNCRT_KERNEL(SumAll).unboxed, nullptr);         // variadic
  EXPECT_EQ(ASYNCRT_KERNEL(AddOnWorker).unboxed, nullptr);    // context
  EXPECT_EQ(ASYNCRT_KERNEL(AsyncAddI32).unboxed, nullptr);    // async
  EXPECT_EQ(ASYNCRT_KERNEL(Describe).unboxed, nullptr);       // string
  EXPECT_EQ(ASYNCRT_KERNEL(CancelRequest).unboxed, nullptr);  // context
  EXPECT_EQ(ASYNCRT_KERNEL(Sum5).unboxed, nullptr);           // > 4 operands
  EXPECT_NE(ASYNCRT_KERNEL(Sum4).unboxed, nullptr);
}

TEST(KernelAdapterTest, UnboxedEntryPassesEachTypeInItsLowBytes) {
  const UnboxedKernel* scale = ASYNCRT_KERNEL(Scale).unboxed;
  ASSERT_NE(scale, nullptr);
  uint64_t x = 0, factor = ~uint64_t{0}, negate = ~uint64_t{0};
  const double x_value = 1.5;
  const float factor_value = 4.0f;
  const bool negate_value = true;
  // Whatever the bytes above each value hold.
  std::memcpy(&x, &x_value, sizeof(x_value));
  std::memcpy(&factor, &factor_value, sizeof(factor_value));
  std::memcpy(&negate, &negate_value, sizeof(negate_value));
  const uint64_t result = scale->invoke(x, factor, negate, 12345);
  double value;
  std::memcpy(&value, &result, sizeof(value));
  EXPECT_EQ(value, -6.0);
}

TEST(KernelRegistryTest, NonStrictKernelsHaveNoUnboxedEntry) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.AddKernel("add", ASYNCRT_KERNEL(AddI32)).ok());
  ASSERT_TRUE(registry
                  .AddKernel("add.nonstrict", ASYNCRT_KERNEL(AddI32),
                             KernelStrictness::kNonStrict)
                  .ok());
  EXPECT_NE(registry.GetUnboxedKernel("add"), nullptr);
  EXPECT_EQ(registry.GetUnboxedKernel("add.nonstrict"), nullptr);
  EXPECT_EQ(registry.GetUnboxedKernel("missing"), nullptr);
  EXPECT_EQ(registry.GetKernel("add"), ASYNCRT_KERNEL(AddI32).kernel);
}

// Tests of concurrent calls, in both modes.
class ExecutorStressTest : public ::testing::TestWithParam<ExecutorMode> {
 protected:
  BefProgramOptions options() const { return {GetParam()}; }
};
class KernelStateTest : public ExecutorStressTest {};

INSTANTIATE_TEST_SUITE_P(Modes, ExecutorStressTest,
                         ::testing::Values(ExecutorMode::kFast,
                                           ExecutorMode::kReference),
                         [](const auto& info) { return ModeName(info.param); });
INSTANTIATE_TEST_SUITE_P(Modes, KernelStateTest,
                         ::testing::Values(ExecutorMode::kFast,
                                           ExecutorMode::kReference),
                         [](const auto& info) { return ModeName(info.param); });

// A host with the test kernels and a two-worker pool.
std::unique_ptr<HostContext> MakePoolHost() {
  auto host = std::make_unique<HostContext>(PrintingDiagnosticHandler(),
                                            CreateMallocAllocator(),
                                            *CreateWorkQueue("mstd:2"));
  RegisterTestKernels(host->registry());
  return host;
}

TEST_P(KernelStateTest, MadeOncePerKernelAndFreedWithTheProgram) {
  std::unique_ptr<HostContext> owned_host = MakePoolHost();
  HostContext& host = *owned_host;
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t arg = b.Arguments(1)[0];
  uint32_t ten = b.Kernel("test.add_to_base", {arg}, 1,
                          {b.writer().AddI32Attribute(10)})[0];
  uint32_t more = b.Kernel("test.add_to_base", {ten}, 1,
                           {b.writer().AddI32Attribute(100)})[0];
  b.Define(f, {more});
  states_made = 0;
  states_destroyed = 0;
  {
    auto program = *BefProgram::Load(b.Finish(), &host, options());
    const Function* function = program->GetFunction("f");
    // Concurrent first runs race to install the state: one wins per kernel.
    EXPECT_EQ(CountWrongConcurrentResults(host, *function, 200,
                                          [](int32_t x) { return x + 110; }),
              0);
    // Two kernels keep one state each; racing losers were dropped at once.
    EXPECT_EQ(states_made.load() - states_destroyed.load(), 2);
    EXPECT_LE(states_made.load(), 8);
  }
  EXPECT_EQ(states_made.load(), states_destroyed.load());
}

// Loads the function "f" (i32 -> i32) that `b` defines on a host with two
// workers and counts wrong results of concurrent calls.
int CountWrongConcurrentCalls(ProgramBuilder& b, int32_t (*expected)(int32_t),
                              ExecutorMode mode) {
  std::unique_ptr<HostContext> owned_host = MakePoolHost();
  HostContext& host = *owned_host;
  auto program = *BefProgram::Load(b.Finish(), &host, {mode});
  return CountWrongConcurrentResults(host, *program->GetFunction("f"), 300,
                                     expected);
}

TEST_P(ExecutorStressTest, ConcurrentCallsOfOneFunction) {
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t arg = b.Arguments(1)[0];
  // A diamond of async and sync kernels per call.
  uint32_t left = b.Kernel("test.async_add.i32", {arg, arg}, 1)[0];
  uint32_t right = b.Kernel("test.add.i32", {arg, arg}, 1)[0];
  uint32_t joined = b.Kernel("test.async_add.i32", {left, right}, 1)[0];
  b.Define(f, {joined});
  EXPECT_EQ(CountWrongConcurrentCalls(
                b, [](int32_t x) { return 4 * x; }, GetParam()),
            0);
}

// Calls still running when Execute returns, started from 4 threads whose
// requests and the program are dropped before the calls resume: the calls
// pin what they borrowed (see CallState::Pin) on the calling threads, then
// resume and release it on the two threads that publish their values and
// on the queue's workers.
TEST_P(ExecutorStressTest, PendingCallsOutliveTheirCallersReferences) {
  std::unique_ptr<HostContext> owned_host = MakePoolHost();
  HostContext& host = *owned_host;
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t x = b.Kernel("test.deferred_in_list", {b.Arguments(1)[0]}, 1)[0];
  for (int i = 0; i < 3; ++i) x = b.Kernel("test.async_add.i32", {x, x}, 1)[0];
  b.Define(f, {x});
  RCReference<BefProgram> program =
      *BefProgram::Load(b.Finish(), &host, options());
  const Function& function = *program->GetFunction("f");
  constexpr int kThreads = 4, kCalls = 100;
  std::vector<std::vector<RCReference<AsyncValue>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        auto value = MakeAvailableAsyncValueRef<int32_t>(0);
        AsyncValue* args[] = {value.GetAsyncValue()};
        RCReference<AsyncValue> result;
        function.Execute(
            ExecutionContext(*RequestContextBuilder(&host, nullptr).Build()),
            args, absl::MakeSpan(&result, 1));
        results[t].push_back(std::move(result));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  program.reset();  // Only the pending calls hold it now.
  std::vector<AsyncValueRef<int32_t>> pending;
  {
    std::lock_guard<std::mutex> lock(pending_mutex);
    pending.swap(pending_results);
  }
  ASSERT_EQ(pending.size(), size_t{kThreads * kCalls});
  std::thread publisher([&] {
    for (size_t i = 0; i < pending.size(); i += 2) pending[i].emplace(1);
  });
  for (size_t i = 1; i < pending.size(); i += 2) pending[i].emplace(1);
  publisher.join();
  host.Quiesce();
  for (const auto& per_thread : results) {
    for (const auto& result : per_thread) {
      ASSERT_TRUE(result->IsAvailable());
      EXPECT_EQ(result->get<int32_t>(), 8);
    }
  }
}

TEST_P(ExecutorStressTest, KernelsOfOtherStreamsStartOnTheQueue) {
  // With streams, `right` (stream 1) and `five` (stream 2, ready at the
  // start) run as work queue tasks while the entry's stream goes on inline;
  // the joins wait for them, on whichever thread finishes last.
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t arg = b.Arguments(1)[0];
  uint32_t left = b.Kernel("test.add.i32", {arg, arg}, 1)[0];
  uint32_t right = b.Kernel("test.add_on_worker.i32", {arg, arg}, 1)[0];
  uint32_t sum = b.Kernel("test.add.i32", {left, right}, 1)[0];
  uint32_t five = b.Const(5);
  uint32_t total = b.Kernel("test.add.i32", {sum, five}, 1)[0];
  b.Streams({0, 0, 1, 0, 2, 0});
  b.Define(f, {total});
  runs_on_workers = 0;
  EXPECT_EQ(CountWrongConcurrentCalls(
                b, [](int32_t x) { return 4 * x + 5; }, GetParam()),
            0);
  // Every call ran `right` as a task (4 threads x 300 calls). Fast path
  // only: the reference executor ignores streams.
  if (GetParam() == ExecutorMode::kFast) {
    EXPECT_EQ(runs_on_workers.load(), 1200);
  }
}

// An argument that unboxed kernels read, published by another thread while
// the call is being set up: the kernels it starts there must already know
// to read it boxed.
TEST_P(ExecutorStressTest, PendingUnboxedArgumentsRaceTheCallsSetUp) {
  std::unique_ptr<HostContext> owned_host = MakePoolHost();
  HostContext& host = *owned_host;
  ProgramBuilder b;
  DefineTripler(b);
  RCReference<BefProgram> program =
      *BefProgram::Load(b.Finish(), &host, options());
  const Function& function = *program->GetFunction("f");
  auto request = *RequestContextBuilder(&host, nullptr).Build();
  int wrong = 0;
  for (int i = 0; i < 500; ++i) {
    auto argument = MakeUnconstructedAsyncValueRef<int32_t>();
    std::atomic<bool> go{false};
    std::thread publisher([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      argument.emplace(i);
    });
    AsyncValue* args[] = {argument.GetAsyncValue()};
    std::vector<RCReference<AsyncValue>> results(1);
    go.store(true, std::memory_order_release);
    function.Execute(ExecutionContext(request), args, absl::MakeSpan(results));
    publisher.join();
    host.Await(results);
    wrong += results[0]->get<int32_t>() != 3 * i;
  }
  EXPECT_EQ(wrong, 0);
}

TEST_P(ExecutorStressTest, NonStrictPlaceholdersRaceTheirDefiners) {
  // The non-strict call runs while `late` is computed on another thread:
  // either it installs a placeholder that the definer forwards, or it finds
  // the value. Both orders must give the same result and free everything.
  std::unique_ptr<HostContext> owned_host = MakePoolHost();
  HostContext& host = *owned_host;
  ProgramBuilder b;
  uint32_t f = b.Declare("f", 1, 1);
  uint32_t sum = b.Declare("sum", 2, 1);
  uint32_t arg = b.Arguments(1)[0];
  uint32_t early = b.Kernel("test.add.i32", {arg, arg}, 1)[0];
  uint32_t pending = b.Kernel("test.async_add.i32", {arg, arg}, 1)[0];
  uint32_t late = b.Kernel("test.add.i32", {pending, arg}, 1)[0];
  uint32_t result =
      b.Kernel("test.nonstrict_call", {early, late}, 1, {}, {sum})[0];
  b.Define(f, {result});
  auto sum_args = b.Arguments(2);
  b.Define(sum, {b.Kernel("test.add.i32", {sum_args[0], sum_args[1]}, 1)[0]});
  auto program = *BefProgram::Load(b.Finish(), &host, options());
  const Function* function = program->GetFunction("f");
  EXPECT_EQ(CountWrongConcurrentResults(host, *function, 300,
                                        [](int32_t x) { return 5 * x; }),
            0);
}

}  // namespace
}  // namespace asyncrt
