// Differential test of the executor: random BEF programs (built with
// BefWriter) run by the reference executor (ExecutorMode::kReference) and
// the fast one, each on a single-threaded queue ("s") and a pool of two
// workers ("mstd:2"). All four runs must agree on every result (value or
// error), on the diagnostics reported (as a multiset: their order depends
// on threads) and on how many kernels ran.
//
// Programs are random DAGs of 1 to 60 kernels over i32 values: sync and
// async arithmetic, kernels that fail on some inputs (now or later, on the
// work queue), a variadic sum (wide kernels), a two-result kernel, a
// non-strict select, and the real control flow kernels tfrt.call (of BEF
// and tfrt.sync functions), tfrt.if and tfrt.repeat.i32 running generated
// bodies. Some functions carry random streams (the fast executor's stream
// schedule). The main function's arguments are available, one is published
// after the call started, or one is an error.
//
// ASYNCRT_DIFFERENTIAL_PROGRAMS=N (default 200) and
// ASYNCRT_DIFFERENTIAL_SEED=S (default fixed) for longer runs; program i
// of seed S is generated from S + i, so a failure names what to rerun.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/kernels/tfrt_kernels.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

//===--- Kernels ----------------------------------------------------------===//

// Kernel runs of the current program (runs are sequential and quiesced).
std::atomic<int> kernel_runs{0};

int32_t Wrap(int64_t value) {
  return static_cast<int32_t>(static_cast<uint32_t>(value));
}

int32_t Const(Attribute<int32_t> value) {
  kernel_runs++;
  return *value;
}
int32_t Add(int32_t a, int32_t b) {
  kernel_runs++;
  return Wrap(int64_t{a} + b);
}
int32_t Mul(int32_t a, int32_t b) {
  kernel_runs++;
  return Wrap(int64_t{a} * b);
}
// Fails on multiples of 7.
absl::StatusOr<int32_t> Check(int32_t a) {
  kernel_runs++;
  if (a % 7 == 0) {
    return absl::InvalidArgumentError(absl::StrCat("check: ", a, " % 7 == 0"));
  }
  return Wrap(int64_t{a} - 3);
}
// a + b, computed later on the work queue.
AsyncValueRef<int32_t> AsyncAdd(Argument<int32_t> a, Argument<int32_t> b,
                                const ExecutionContext& exec_ctx) {
  kernel_runs++;
  return EnqueueWorkWithResult(
      exec_ctx.host(), [a = *a, b = *b] { return Wrap(int64_t{a} + b); });
}
// a + 1, or an error reported from the work queue for multiples of 5.
void AsyncCheck(AsyncKernelFrame* frame) {
  kernel_runs++;
  const int32_t a = frame->GetArgAt(0)->get<int32_t>();
  RCReference<IndirectAsyncValue> result = MakeIndirectAsyncValue();
  frame->SetResultAt(0, result);
  EnqueueWork(frame->GetHostContext(),
              [a, result, exec_ctx = frame->GetExecutionContext()] {
                if (a % 5 == 0) {
                  result->ForwardTo(EmitErrorAsync(
                      exec_ctx, absl::InvalidArgumentError(absl::StrCat(
                                    "async check: ", a, " % 5 == 0"))));
                } else {
                  result->ForwardTo(MakeAvailableAsyncValueRef<int32_t>(
                      Wrap(int64_t{a} + 1)));
                }
              });
}
int32_t Sum(RemainingArguments args) {
  kernel_runs++;
  int64_t sum = 0;
  for (size_t i = 0; i < args.size(); ++i) sum += args[i]->get<int32_t>();
  return Wrap(sum);
}
// (a / d, a % d) for d = b mod 9; an error if d is 0.
void DivMod(AsyncKernelFrame* frame) {
  kernel_runs++;
  const int32_t a = frame->GetArgAt(0)->get<int32_t>();
  const int32_t d = (frame->GetArgAt(1)->get<int32_t>() % 9 + 9) % 9;
  if (d == 0) {
    frame->ReportError(absl::InvalidArgumentError(absl::StrCat(
        "divmod: ", frame->GetArgAt(1)->get<int32_t>(), " mod 9 == 0")));
    return;
  }
  frame->EmplaceResultAt<int32_t>(0, a / d);
  frame->EmplaceResultAt<int32_t>(1, a % d);
}
bool Odd(int32_t a) {
  kernel_runs++;
  return (a & 1) != 0;
}
// A loop count: 0 to 3.
int32_t Small(int32_t a) {
  kernel_runs++;
  return (a % 4 + 4) % 4;
}
// Non-strict: waits for its condition alone, then forwards `if_odd` or
// `if_even`, which may still be pending, placeholders or errors.
void Select(AsyncKernelFrame* frame) {
  kernel_runs++;
  RCReference<IndirectAsyncValue> result = MakeIndirectAsyncValue();
  frame->SetResultAt(0, result);
  std::vector<RCReference<AsyncValue>> kept;
  for (AsyncValue* argument : frame->GetArguments()) {
    kept.push_back(FormRef(argument));
  }
  AsyncValue* condition = kept[0].get();
  condition->AndThen([result, kept = std::move(kept)] {
    if (kept[0]->IsError()) {
      result->ForwardTo(kept[0]);
    } else {
      result->ForwardTo(kept[(kept[0]->get<int32_t>() & 1) != 0 ? 1 : 2]);
    }
  });
}

void RegisterKernels(KernelRegistry& registry) {
  MustAddKernel(registry, "dt.const.i32", ASYNCRT_KERNEL(Const));
  MustAddKernel(registry, "dt.add.i32", ASYNCRT_KERNEL(Add));
  MustAddKernel(registry, "dt.mul.i32", ASYNCRT_KERNEL(Mul));
  MustAddKernel(registry, "dt.check.i32", ASYNCRT_KERNEL(Check));
  MustAddKernel(registry, "dt.async_add.i32", ASYNCRT_KERNEL(AsyncAdd));
  MustAddKernel(registry, "dt.async_check.i32", AsyncCheck);
  MustAddKernel(registry, "dt.sum.i32", ASYNCRT_KERNEL(Sum));
  MustAddKernel(registry, "dt.divmod.i32", DivMod);
  MustAddKernel(registry, "dt.odd.i32", ASYNCRT_KERNEL(Odd));
  MustAddKernel(registry, "dt.small.i32", ASYNCRT_KERNEL(Small));
  MustAddKernel(registry, "dt.select.i32", Select,
                KernelStrictness::kNonStrict);
  RegisterControlFlowKernels(registry);  // tfrt.call, tfrt.if, ...
}

//===--- Random programs --------------------------------------------------===//

// How the main function's two arguments are passed.
enum class ArgumentKind { kAvailable, kFirstPending, kSecondError };

struct Program {
  std::vector<uint8_t> bytes;
  std::string listing;  // For failure messages.
  ArgumentKind arguments;
  int32_t first, second;
};

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {
    i32_ = writer_.AddType("i32");
  }

  Program Generate() {
    Program program;
    MakeFunction("main", 2, Uniform(1, 4), Uniform(1, 60), /*depth=*/0,
                 bef::FunctionKind::kBef);
    auto bytes = writer_.Finish();
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    if (bytes.ok()) program.bytes = *std::move(bytes);
    program.listing = listing_;
    program.arguments = static_cast<ArgumentKind>(Uniform(0, 2));
    program.first = Uniform(-50, 50);
    program.second = Uniform(-50, 50);
    return program;
  }

 private:
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }

  // Declares and defines a function of i32s; returns its index.
  uint32_t MakeFunction(const std::string& name, int num_arguments,
                        int num_results, int num_kernels, int depth,
                        bef::FunctionKind kind) {
    const uint32_t index = writer_.DeclareFunction(
        name, kind, std::vector<uint32_t>(num_arguments, i32_),
        std::vector<uint32_t>(num_results, i32_));
    names_.resize(index + 1);
    names_[index] = name;
    Body body;
    body.name = name;
    body.sync = kind == bef::FunctionKind::kSync;
    body.depth = depth;
    for (int i = 0; i < num_arguments; ++i) {
      body.spec.argument_registers.push_back(body.spec.num_registers);
      body.values.push_back(body.spec.num_registers++);
    }
    body.text =
        absl::StrCat(name, kind == bef::FunctionKind::kSync ? " sync" : "", "(",
                     absl::StrJoin(body.values, ", "), "):\n");
    for (int i = 0; i < num_kernels; ++i) AddKernel(body);
    for (int i = 0; i < num_results; ++i) {
      body.spec.result_registers.push_back(Pick(body));
    }
    absl::StrAppend(&body.text, "  return ",
                    absl::StrJoin(body.spec.result_registers, ", "), "\n");
    if (Chance(40)) {
      // Streams (the entry's, then each kernel's), as the converter records
      // them: the fast executor then schedules by stream, unless the
      // function has non-strict kernels. Any assignment is valid.
      body.spec.kernel_streams.resize(body.spec.kernels.size() + 1);
      for (uint32_t& stream : body.spec.kernel_streams) stream = Uniform(0, 2);
      absl::StrAppend(&body.text, "  streams ",
                      absl::StrJoin(body.spec.kernel_streams, ", "), "\n");
    }
    writer_.DefineFunction(index, std::move(body.spec));
    listing_ += body.text;
    return index;
  }

  struct Body {
    std::string name;
    bool sync = false;
    int depth = 0;
    bef::FunctionBodySpec spec;
    std::vector<uint32_t> values;  // Its i32 registers.
    std::string text;
  };

  // A random i32 register of `body`, most often a recent one.
  uint32_t Pick(Body& body) {
    if (body.values.empty()) AddConst(body);
    const int size = body.values.size();
    if (Chance(60))
      return body.values[Uniform(std::max(0, size - 4), size - 1)];
    return body.values[Uniform(0, size - 1)];
  }

  // Adds `name` with `operands`; returns its `num_results` result registers
  // (i32s unless `bool_result`).
  std::vector<uint32_t> Emit(
      Body& body, absl::string_view name, std::vector<uint32_t> operands,
      int num_results,
      std::vector<std::pair<uint32_t, uint32_t>> attributes = {},
      std::vector<uint32_t> regions = {}, bool bool_result = false) {
    bef::KernelSpec kernel;
    kernel.kernel_name = writer_.AddKernelName(name);
    kernel.location = writer_.AddLocation("dt.mlir", ++line_, 3);
    kernel.operands = std::move(operands);
    for (int i = 0; i < num_results; ++i) {
      kernel.results.push_back(body.spec.num_registers++);
      if (!bool_result) body.values.push_back(kernel.results.back());
    }
    kernel.attributes = std::move(attributes);
    kernel.functions = std::move(regions);
    absl::StrAppend(&body.text, "  ", absl::StrJoin(kernel.results, ", "),
                    " = ", name, "(", absl::StrJoin(kernel.operands, ", "),
                    ") line ", line_, "\n");
    body.spec.kernels.push_back(kernel);
    return body.spec.kernels.back().results;
  }

  void AddConst(Body& body) {
    const int32_t value = Uniform(-30, 30);
    Emit(body, "dt.const.i32", {}, 1,
         {{writer_.AddString("value"), writer_.AddI32Attribute(value)}});
    absl::StrAppend(&body.text, "    (", value, ")\n");
  }

  void AddKernel(Body& body) {
    // tfrt.sync bodies: synchronous kernels only.
    const int choice = Uniform(0, body.sync ? 6 : 13);
    const bool nest = body.depth < 2;
    switch (choice) {
      case 0:
        return AddConst(body);
      case 1:
        Emit(body, "dt.add.i32", {Pick(body), Pick(body)}, 1);
        return;
      case 2:
        Emit(body, "dt.mul.i32", {Pick(body), Pick(body)}, 1);
        return;
      case 3:
        Emit(body, "dt.check.i32", {Pick(body)}, 1);
        return;
      case 4: {
        // Sometimes wider than the executor's inline frames (8).
        std::vector<uint32_t> operands(Uniform(0, 11));
        for (uint32_t& operand : operands) operand = Pick(body);
        Emit(body, "dt.sum.i32", std::move(operands), 1);
        return;
      }
      case 5:
        Emit(body, "dt.divmod.i32", {Pick(body), Pick(body)}, 2);
        return;
      case 6:
        Emit(body, "dt.add.i32", {Pick(body), Pick(body)}, 1);
        return;
      case 7:
      case 8:
        Emit(body, "dt.async_add.i32", {Pick(body), Pick(body)}, 1);
        return;
      case 9:
        Emit(body, "dt.async_check.i32", {Pick(body)}, 1);
        return;
      case 10:
        Emit(body, "dt.select.i32", {Pick(body), Pick(body), Pick(body)}, 1);
        return;
      case 11:
        if (nest) return AddCall(body);
        break;
      case 12:
        if (nest) return AddIf(body);
        break;
      case 13:
        if (nest) return AddRepeat(body);
        break;
    }
    Emit(body, "dt.check.i32", {Pick(body)}, 1);
  }

  std::string NewName() { return absl::StrCat("f", ++functions_); }
  int CalleeKernels() { return Uniform(1, 8); }

  // tfrt.call @f(args): a BEF or tfrt.sync function.
  void AddCall(Body& body) {
    const int num_arguments = Uniform(0, 3), num_results = Uniform(1, 2);
    const uint32_t callee = MakeFunction(
        NewName(), num_arguments, num_results, CalleeKernels(), body.depth + 1,
        Chance(30) ? bef::FunctionKind::kSync : bef::FunctionKind::kBef);
    std::vector<uint32_t> operands(num_arguments);
    for (uint32_t& operand : operands) operand = Pick(body);
    Emit(body, "tfrt.call", std::move(operands), num_results,
         {{writer_.AddString("callee"), writer_.AddFunctionAttribute(callee)}});
    absl::StrAppend(&body.text, "    (calls ", names_[callee], ")\n");
  }

  // tfrt.if %odd(x), args: then and else bodies of one signature.
  void AddIf(Body& body) {
    const int num_arguments = Uniform(0, 3), num_results = Uniform(1, 2);
    const uint32_t then_branch =
        MakeFunction(NewName(), num_arguments, num_results, CalleeKernels(),
                     body.depth + 1, bef::FunctionKind::kBef);
    const uint32_t else_branch =
        MakeFunction(NewName(), num_arguments, num_results, CalleeKernels(),
                     body.depth + 1, bef::FunctionKind::kBef);
    const uint32_t condition =
        Emit(body, "dt.odd.i32", {Pick(body)}, 1, {}, {}, true)[0];
    std::vector<uint32_t> operands = {condition};
    for (int i = 0; i < num_arguments; ++i) operands.push_back(Pick(body));
    Emit(body, "tfrt.if", std::move(operands), num_results, {},
         {then_branch, else_branch});
    absl::StrAppend(&body.text, "    (then ", names_[then_branch], ", else ",
                    names_[else_branch], ")\n");
  }

  // tfrt.repeat.i32 %small(x), state: a body from the state to the state.
  void AddRepeat(Body& body) {
    const int size = Uniform(1, 3);
    const uint32_t loop_body =
        MakeFunction(NewName(), size, size, CalleeKernels(), body.depth + 1,
                     bef::FunctionKind::kBef);
    std::vector<uint32_t> operands = {
        Emit(body, "dt.small.i32", {Pick(body)}, 1)[0]};
    for (int i = 0; i < size; ++i) operands.push_back(Pick(body));
    Emit(body, "tfrt.repeat.i32", std::move(operands), size, {}, {loop_body});
    absl::StrAppend(&body.text, "    (body ", names_[loop_body], ")\n");
  }

  std::mt19937 rng_;
  bef::BefWriter writer_;
  uint32_t i32_;
  int line_ = 0;
  int functions_ = 0;
  std::string listing_;
  std::vector<std::string> names_;  // By function index.
};

//===--- Runs -------------------------------------------------------------===//

// What a run shows: each result, the diagnostics (sorted) and the number
// of kernel runs.
struct Outcome {
  std::vector<std::string> results;
  std::vector<std::string> diagnostics;
  int kernel_runs = 0;

  bool operator==(const Outcome& other) const {
    return results == other.results && diagnostics == other.diagnostics &&
           kernel_runs == other.kernel_runs;
  }
  std::string ToString() const {
    return absl::StrCat(
        "results {", absl::StrJoin(results, "; "), "}\n    diagnostics {",
        absl::StrJoin(diagnostics, "; "), "}\n    kernel runs ", kernel_runs);
  }
};

class Host {
 public:
  explicit Host(const char* queue)
      : host_(
            [this](const DecodedDiagnostic& d) {
              std::lock_guard<std::mutex> lock(mutex_);
              diagnostics_.push_back(d.ToString());
            },
            CreateMallocAllocator(), *CreateWorkQueue(queue)) {
    RegisterKernels(host_.registry());
  }

  // Also checks, in builds that count async values, that the run left none
  // alive.
  Outcome Run(const Program& program, ExecutorMode mode) {
    const std::optional<int64_t> live = AsyncValue::NumLiveValues();
    Outcome outcome = RunOnce(program, mode);
    host_.Quiesce();
    if (live) {
      EXPECT_EQ(*AsyncValue::NumLiveValues(), *live)
          << "async values leaked ("
          << (mode == ExecutorMode::kFast ? "fast" : "reference") << ")\n"
          << program.listing;
    }
    return outcome;
  }

 private:
  Outcome RunOnce(const Program& program, ExecutorMode mode) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      diagnostics_.clear();
    }
    kernel_runs = 0;
    Outcome outcome;
    auto file = bef::BefFile::Open(program.bytes);
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return outcome;
    auto loaded = BefProgram::Load(*std::move(file), &host_, {mode});
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (!loaded.ok()) return outcome;
    const Function& main = *(*loaded)->GetFunction("main");
    AsyncValueRef<int32_t> first =
        program.arguments == ArgumentKind::kFirstPending
            ? MakeUnconstructedAsyncValueRef<int32_t>()
            : MakeAvailableAsyncValueRef<int32_t>(program.first);
    RCReference<AsyncValue> second =
        program.arguments == ArgumentKind::kSecondError
            ? RCReference<AsyncValue>(MakeErrorAsyncValueRef("bad argument"))
            : RCReference<AsyncValue>(
                  MakeAvailableAsyncValueRef<int32_t>(program.second));
    AsyncValue* arguments[] = {first.GetAsyncValue(), second.get()};
    std::vector<RCReference<AsyncValue>> results(main.num_results());
    main.Execute(
        ExecutionContext(*RequestContextBuilder(&host_, nullptr).Build()),
        arguments, absl::MakeSpan(results));
    if (program.arguments == ArgumentKind::kFirstPending) {
      first.emplace(program.first);
    }
    host_.Await(results);
    host_.Quiesce();  // Kernels whose results nobody waits for.
    for (const auto& result : results) {
      if (result->IsError()) {
        outcome.results.push_back(
            absl::StrCat("error ", result->GetError().ToString()));
      } else {
        outcome.results.push_back(absl::StrCat(result->get<int32_t>()));
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      outcome.diagnostics = diagnostics_;
    }
    std::sort(outcome.diagnostics.begin(), outcome.diagnostics.end());
    outcome.kernel_runs = kernel_runs.load();
    return outcome;
  }

  std::mutex mutex_;
  std::vector<std::string> diagnostics_;  // Guarded by mutex_.
  HostContext host_;
};

int EnvOr(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

TEST(DifferentialTest, FastExecutorMatchesTheReference) {
  const int num_programs = EnvOr("ASYNCRT_DIFFERENTIAL_PROGRAMS", 200);
  const uint32_t seed = EnvOr("ASYNCRT_DIFFERENTIAL_SEED", 20261125);
  Host single("s"), pool("mstd:2");
  int failures = 0, errors = 0;
  for (int i = 0; i < num_programs && failures < 3; ++i) {
    const Program program = Generator(seed + i).Generate();
    const Outcome reference = single.Run(program, ExecutorMode::kReference);
    for (const auto& [host, mode, name] :
         {std::tuple(&single, ExecutorMode::kFast, "fast, s"),
          std::tuple(&pool, ExecutorMode::kReference, "reference, mstd:2"),
          std::tuple(&pool, ExecutorMode::kFast, "fast, mstd:2")}) {
      const Outcome outcome = host->Run(program, mode);
      if (outcome == reference) continue;
      ++failures;
      ADD_FAILURE() << "program " << i << " of seed " << seed
                    << " (ASYNCRT_DIFFERENTIAL_SEED=" << seed + i
                    << " ASYNCRT_DIFFERENTIAL_PROGRAMS=1)\n"
                    << program.listing << "arguments " << program.first << ", "
                    << program.second << " (kind "
                    << static_cast<int>(program.arguments) << ")\n"
                    << "  reference, s:\n    " << reference.ToString() << "\n  "
                    << name << ":\n    " << outcome.ToString();
      break;
    }
    errors += !reference.diagnostics.empty();
  }
  // The programs do fail often enough to test error paths.
  if (num_programs >= 50) {
    EXPECT_GT(errors, num_programs / 10);
  }
}

}  // namespace
}  // namespace asyncrt
