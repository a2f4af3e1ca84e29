// corert.execute_sequence from hand-written BEF: attributes from anywhere
// are checked (an error result, never a crash), arguments are never written
// into, a site serves other handlers, and threads share a site's prepared
// ops and shape memos (ThreadSanitizer).
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

// The attributes of one corert.execute_sequence, as BEF attribute indices
// of `writer` (kNone: left out).
struct SequenceSpec {
  static constexpr uint32_t kNone = ~uint32_t{0};
  uint32_t op_names = kNone;
  uint32_t op_attrs = kNone;
  uint32_t op_operand_counts = kNone;
  uint32_t op_operands = kNone;
  uint32_t num_results = 1;
};

uint32_t Strings(bef::BefWriter& w, const std::vector<std::string>& values) {
  std::vector<uint32_t> elements;
  for (const std::string& value : values) {
    elements.push_back(w.AddStringAttribute(value));
  }
  return w.AddAggregateAttribute(elements);
}

uint32_t I32s(bef::BefWriter& w, const std::vector<int32_t>& values) {
  if (values.empty()) return w.AddAggregateAttribute({});
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return w.AddArrayAttribute(AttributeKind::kI32, values.size(), bytes);
}

uint32_t NoAttrs(bef::BefWriter& w, size_t num_ops) {
  std::vector<uint32_t> empty(num_ops, w.AddAggregateAttribute({}));
  return w.AddAggregateAttribute(empty);
}

// graph(%handler, %a) -> one corert.execute_sequence(%handler, %a).
std::vector<uint8_t> SequenceProgram(
    const std::function<SequenceSpec(bef::BefWriter&)>& make_spec) {
  bef::BefWriter w;
  uint32_t handler_type = w.AddType("!corert.ophandler");
  uint32_t handle_type = w.AddType("!corert.tensorhandle");
  SequenceSpec spec = make_spec(w);
  bef::KernelSpec k;
  k.kernel_name = w.AddKernelName("corert.execute_sequence");
  k.location = w.AddLocation("test.mlir", 1, 1);
  k.operands = {0, 1};
  for (auto [name, index] :
       {std::pair{"op_names", spec.op_names}, {"op_attrs", spec.op_attrs},
        {"op_operand_counts", spec.op_operand_counts},
        {"op_operands", spec.op_operands}}) {
    if (index != SequenceSpec::kNone) {
      k.attributes.push_back({w.AddString(name), index});
    }
  }
  bef::FunctionBodySpec body;
  body.argument_registers = {0, 1};
  body.num_registers = 2;
  for (uint32_t i = 0; i < spec.num_results; ++i) {
    k.results.push_back(body.num_registers++);
  }
  body.kernels.push_back(k);
  body.result_registers = {k.results.empty() ? 1 : k.results[0]};
  uint32_t fn = w.DeclareFunction("graph", bef::FunctionKind::kBef,
                                  {handler_type, handle_type}, {handle_type});
  w.DefineFunction(fn, body);
  return *w.Finish();
}

// ((a + a) + a) + a: three tfrt_test.add, each reading %a.
SequenceSpec ThreeAdds(bef::BefWriter& w) {
  return {Strings(w, {"tfrt_test.add", "tfrt_test.add", "tfrt_test.add"}),
          NoAttrs(w, 3), I32s(w, {2, 2, 2}), I32s(w, {0, 0, 1, 0, 2, 0})};
}

class ExecuteSequenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions options;
    options.work_queue = "mstd:2";
    runtime_ = *Runtime::Create(options);
    cpu_ = runtime_->core_runtime().GetOpHandler("cpu");
    ASSERT_NE(cpu_, nullptr);
    exec_ctx_.emplace(*runtime_->CreateExecutionContext());
  }

  TensorHandle Vector(std::vector<int32_t> values) {
    return *runtime_->core_runtime().MakeDenseTensorHandle<int32_t>(
        {static_cast<int64_t>(values.size())}, values);
  }

  // graph(handler, a)'s result, as text or the error's message.
  std::string Call(const BefProgram& program, OpHandler* handler,
                   const TensorHandle& a) {
    auto handler_value = MakeAvailableAsyncValueRef<OpHandler*>(handler);
    auto a_value = MakeAvailableAsyncValueRef<TensorHandle>(a.CopyRef());
    AsyncValue* args[] = {handler_value.GetAsyncValue(),
                          a_value.GetAsyncValue()};
    std::vector<RCReference<AsyncValue>> results(1);
    program.GetFunction("graph")->Execute(*exec_ctx_, args,
                                          absl::MakeSpan(results));
    runtime_->host().Await(results);
    if (results[0]->IsError()) {
      return std::string(results[0]->GetError().message());
    }
    const Tensor* tensor = runtime_->core_runtime().Await(results[0]->get<TensorHandle>());
    const auto* dense = dynamic_cast<const DenseHostTensor*>(tensor);
    if (dense == nullptr) return "<not a dense host tensor>";
    std::string text;
    for (int32_t value : dense->elements<int32_t>()) {
      absl::StrAppend(&text, text.empty() ? "" : " ", value);
    }
    return text;
  }

  RCReference<BefProgram> Load(std::vector<uint8_t> bef) {
    absl::StatusOr<RCReference<BefProgram>> program =
        runtime_->LoadBef(std::move(bef));
    EXPECT_TRUE(program.ok()) << program.status();
    return program.ok() ? *std::move(program) : RCReference<BefProgram>();
  }

  std::unique_ptr<Runtime> runtime_;
  OpHandler* cpu_ = nullptr;
  std::optional<ExecutionContext> exec_ctx_;
};

// %a is read by every op and held by the caller: never written into.
TEST_F(ExecuteSequenceTest, RunsTheChainWithoutWritingItsArguments) {
  RCReference<BefProgram> program = Load(SequenceProgram(ThreeAdds));
  ASSERT_NE(program, nullptr);
  TensorHandle a = Vector({1, 2, 3});
  for (int call = 0; call < 3; ++call) {
    EXPECT_EQ(Call(*program, cpu_, a), "4 8 12");
  }
  const auto& dense =
      static_cast<const DenseHostTensor&>(*runtime_->core_runtime().Await(a));
  EXPECT_EQ(dense.elements<int32_t>()[2], 3);
}

// A second handler (a site's ops were prepared on its first) prepares its
// own ops for the call, with the same results; a handler without the op
// fails.
TEST_F(ExecuteSequenceTest, OtherHandlersGetTheirOwnOps) {
  RCReference<BefProgram> program = Load(SequenceProgram(ThreeAdds));
  ASSERT_NE(program, nullptr);
  CoreRuntime& core = runtime_->core_runtime();
  OpHandler* null = core.CreateNullOpHandler();
  OpHandler* other_cpu = *core.CreateCpuOpHandler(null);
  TensorHandle a = Vector({5});
  EXPECT_EQ(Call(*program, cpu_, a), "20");
  EXPECT_EQ(Call(*program, other_cpu, a), "20");
  EXPECT_EQ(Call(*program, null, a),
            "tfrt_test.add was not supported by NullOpHandler.");
  EXPECT_EQ(Call(*program, cpu_, a), "20");
}

// Attributes that do not describe a chain: an error naming the problem at
// every call, never a crash or a read out of bounds.
TEST_F(ExecuteSequenceTest, MalformedAttributesAreErrors) {
  struct Case {
    std::string what;
    std::function<SequenceSpec(bef::BefWriter&)> spec;
    std::string error;
  };
  const std::string needs =
      "corert.execute_sequence: needs op_names, op_attrs, op_operand_counts "
      "and op_operands";
  std::vector<Case> cases = {
      {"no attributes", [](bef::BefWriter&) { return SequenceSpec(); },
       needs},
      {"no ops",
       [](bef::BefWriter& w) {
         return SequenceSpec{Strings(w, {}), NoAttrs(w, 0), I32s(w, {}),
                             I32s(w, {})};
       },
       needs},
      {"operands of the wrong type",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_operands = Strings(w, {"0"});
         return spec;
       },
       needs},
      {"names that are not strings",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_names = I32s(w, {1, 2, 3});
         return spec;
       },
       needs},
      {"a name that is not a string",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_names = w.AddAggregateAttribute(
             {w.AddI32Attribute(1), w.AddStringAttribute("tfrt_test.add"),
              w.AddStringAttribute("tfrt_test.add")});
         return spec;
       },
       "corert.execute_sequence: op_names must be strings"},
      {"fewer counts than ops",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_operand_counts = I32s(w, {2, 2});
         return spec;
       },
       "corert.execute_sequence: needs op_attrs and op_operand_counts for "
       "each op"},
      {"counts past the operands",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_operand_counts = I32s(w, {2, 2, 3});
         return spec;
       },
       "corert.execute_sequence: op_operand_counts do not match op_operands"},
      {"a negative count",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_operand_counts = I32s(w, {2, -1, 2});
         return spec;
       },
       "corert.execute_sequence: op_operand_counts do not match op_operands"},
      {"operands left over",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_operands = I32s(w, {0, 0, 1, 0, 2, 0, 0});
         return spec;
       },
       "corert.execute_sequence: op_operand_counts do not match op_operands"},
      {"a value not yet made",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_operands = I32s(w, {0, 0, 2, 0, 2, 0});
         return spec;
       },
       "corert.execute_sequence: op 1 (tfrt_test.add) reads value 2, not an "
       "argument or an earlier result"},
      {"a negative value",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.op_operands = I32s(w, {0, -1, 1, 0, 2, 0});
         return spec;
       },
       "corert.execute_sequence: op 0 (tfrt_test.add) reads value -1, not "
       "an argument or an earlier result"},
      {"two results",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         spec.num_results = 2;
         return spec;
       },
       "corert.execute_sequence: has one result"},
      {"op attributes that are not pairs",
       [](bef::BefWriter& w) {
         SequenceSpec spec = ThreeAdds(w);
         uint32_t empty = w.AddAggregateAttribute({});
         spec.op_attrs = w.AddAggregateAttribute(
             {empty, w.AddAggregateAttribute({w.AddI32Attribute(1)}), empty});
         return spec;
       },
       "op attributes must be [\"key\", value] pairs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    RCReference<BefProgram> program = Load(SequenceProgram(c.spec));
    ASSERT_NE(program, nullptr);
    for (int call = 0; call < 2; ++call) {
      EXPECT_EQ(Call(*program, cpu_, Vector({1})), c.error);
    }
  }
}

// Threads calling one program share the site's ops and memos, each call
// with its own shape.
TEST_F(ExecuteSequenceTest, ConcurrentCallsShareTheSite) {
  RCReference<BefProgram> program = Load(SequenceProgram(ThreeAdds));
  ASSERT_NE(program, nullptr);
  constexpr int kThreads = 4;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const int n = (i + t) % 7 + 1;
        std::string expected;
        for (int j = 0; j < n; ++j) {
          absl::StrAppend(&expected, j ? " " : "", 4 * (t + 1));
        }
        if (Call(*program, cpu_, Vector(std::vector<int32_t>(n, t + 1))) !=
            expected) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace asyncrt
