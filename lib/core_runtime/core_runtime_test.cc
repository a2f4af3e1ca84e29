#include "asyncrt/core_runtime/core_runtime.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/kernels/core_runtime_kernels.h"
#include "asyncrt/tensor/scalar_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

//===--- OpAttrs ----------------------------------------------------------===//

TEST(OpAttrsTest, ScalarsArraysAndStrings) {
  OpAttrs attrs;
  attrs.Set("axis", int32_t{1});
  attrs.Set("flag", true);
  attrs.Set("scale", 0.5f);
  attrs.Set("type", DType::kF32);
  attrs.SetArray<int64_t>("shape", {2, 3});
  attrs.SetString("name", "relu");
  EXPECT_EQ(attrs.size(), 6u);
  EXPECT_EQ(attrs.Get<int32_t>("axis"), 1);
  EXPECT_EQ(attrs.Get<bool>("flag"), true);
  EXPECT_EQ(attrs.Get<float>("scale"), 0.5f);
  EXPECT_EQ(attrs.Get<DType>("type"), DType::kF32);
  EXPECT_EQ(attrs.GetString("name"), "relu");
  auto shape = attrs.GetArray<int64_t>("shape");
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(std::vector<int64_t>(shape->begin(), shape->end()),
            (std::vector<int64_t>{2, 3}));
  // Wrong type or missing: nullopt, not a reinterpretation.
  EXPECT_FALSE(attrs.Get<int64_t>("axis").has_value());
  EXPECT_FALSE(attrs.Get<int32_t>("missing").has_value());
  EXPECT_FALSE(attrs.GetArray<int32_t>("shape").has_value());
  EXPECT_EQ(attrs.GetInteger("axis"), 1);
  auto widened = attrs.GetIntegerArray("shape");
  ASSERT_TRUE(widened.has_value());
  EXPECT_EQ(widened->size(), 2u);
}

TEST(OpAttrsTest, SettingAgainReplaces) {
  OpAttrs attrs;
  attrs.Set("a", int32_t{1});
  attrs.Set("a", int32_t{2});
  EXPECT_EQ(attrs.size(), 1u);
  EXPECT_EQ(attrs.Get<int32_t>("a"), 2);
}

TEST(OpAttrsTest, DenseAndShape) {
  OpAttrs attrs;
  int32_t values[] = {1, 2, 3, 4};
  int64_t dims[] = {2, 2};
  attrs.SetDense("dense", DType::kI32, dims, values, sizeof(values));
  int64_t partial[] = {1, -1, 3};
  attrs.SetShape("shape", absl::MakeConstSpan(partial));
  attrs.SetShape("unranked", std::nullopt);
  auto dense = attrs.GetDense("dense");
  ASSERT_TRUE(dense.has_value());
  EXPECT_EQ(dense->dtype, DType::kI32);
  EXPECT_EQ(dense->NumElements(), 4);
  EXPECT_EQ(static_cast<const int32_t*>(dense->data)[3], 4);
  auto shape = attrs.GetShape("shape");
  ASSERT_TRUE(shape.has_value());
  EXPECT_TRUE(shape->ranked);
  EXPECT_EQ(shape->dims[1], -1);
  EXPECT_FALSE(attrs.GetShape("unranked")->ranked);
}

TEST(OpAttrsTest, AggregatesHoldMixedAndNestedValues) {
  OpAttrs inner;
  inner.Set("0", int64_t{9});
  inner.SetString("1", "text");
  OpAttrs elements;
  int32_t values[] = {1, 2, 3, 4};
  int64_t dims[] = {2, 2};
  elements.SetDense("0", DType::kI32, dims, values, sizeof(values));
  elements.Set("1", int64_t{7});
  int64_t partial[] = {1, -1};
  elements.SetShape("2", absl::MakeConstSpan(partial));
  elements.SetAggregate("3", inner);
  OpAttrs attrs;
  attrs.Set("before", 1);
  attrs.SetAggregate("aggregate", elements);
  attrs.Set("after", 2);

  // A copy and a frozen copy own their bytes: the source may go away.
  OpAttrsRef frozen = [&] {
    OpAttrs copy = attrs;
    return copy.Freeze();
  }();
  std::optional<OpAttrs> read = frozen->GetAggregate("aggregate");
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->size(), 4u);
  auto dense = read->GetDense("0");
  ASSERT_TRUE(dense.has_value());
  EXPECT_EQ(static_cast<const int32_t*>(dense->data)[2], 3);
  EXPECT_EQ(read->Get<int64_t>("1"), 7);
  EXPECT_EQ(read->GetShape("2")->dims[1], -1);
  std::optional<OpAttrs> nested = read->GetAggregate("3");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->Get<int64_t>("0"), 9);
  EXPECT_EQ(nested->GetString("1"), "text");
  EXPECT_FALSE(attrs.GetAggregate("before").has_value());
  EXPECT_EQ(frozen->Get<int32_t>("after"), 2);

  EXPECT_EQ(frozen->DebugString(),
            "OpAttrs contains 3 entries:\n"
            "  'after' type=I32 value=2\n"
            "  'aggregate' type=AGGREGATE value=elt_count=4 "
            "[{dtype=I32, rank=2, elt_count=4}, 7, <1x?>, "
            "elt_count=2 [9, text]]\n"
            "  'before' type=I32 value=1\n");
}

TEST(OpAttrsTest, PrintsSortedWithTfrtFormat) {
  OpAttrs attrs;
  EXPECT_EQ(attrs.DebugString(), "OpAttrs is empty\n");
  attrs.Set("value", 1.0f);
  attrs.SetArray<int32_t>("shape", {1, 65536});
  attrs.Set("type", DType::kF32);
  int32_t values[] = {1, 2, 3, 4};
  int64_t dims[] = {2, 2};
  attrs.SetDense("dense", DType::kI32, dims, values, sizeof(values));
  attrs.SetArray<int32_t>("long", {1, 2, 3, 4, 5, 6, 7, 8});
  attrs.Set("flag", false);
  EXPECT_EQ(attrs.DebugString(),
            "OpAttrs contains 6 entries:\n"
            "  'dense' type=DENSE value=dtype=I32, rank=2, elt_count=4\n"
            "  'flag' type=BOOL value=0\n"
            "  'long' type=I32 value=[1, 2, 3, 4, 5...]\n"
            "  'shape' type=I32 value=[1, 65536]\n"
            "  'type' type=DTYPE value=F32\n"
            "  'value' type=F32 value=1.000000e+00\n");
}

TEST(OpAttrsTest, SpillsPastInlineStorageAndFreezes) {
  OpAttrs attrs;
  for (int i = 0; i < 40; ++i) {
    attrs.SetArray<int64_t>(absl::StrCat("k", i), {i, i + 1, i + 2});
  }
  OpAttrsRef frozen = attrs.Freeze();
  attrs.Set("k0", int32_t{7});  // The frozen copy does not change.
  for (int i = 0; i < 40; ++i) {
    auto values = frozen->GetArray<int64_t>(absl::StrCat("k", i));
    ASSERT_TRUE(values.has_value()) << i;
    EXPECT_EQ((*values)[2], i + 2);
  }
  OpAttrsRef shared = frozen;
  EXPECT_EQ(&shared.get(), &frozen.get());
  EXPECT_TRUE(OpAttrsRef()->empty());
}

//===--- Eager execution --------------------------------------------------===//

class CoreRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto runtime = CoreRuntime::Create({.num_threads = 2});
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    cpu_ = runtime_->GetOpHandler("cpu");
    ASSERT_NE(cpu_, nullptr);
    auto exec_ctx = runtime_->CreateExecutionContext();
    ASSERT_TRUE(exec_ctx.ok());
    exec_ctx_.emplace(*std::move(exec_ctx));
  }

  TensorHandle Vector(std::vector<int32_t> values) {
    auto handle = runtime_->MakeDenseTensorHandle<int32_t>(
        {static_cast<int64_t>(values.size())}, values);
    EXPECT_TRUE(handle.ok());
    return *std::move(handle);
  }

  TensorHandle Run1(absl::string_view op, std::vector<TensorHandle*> args,
                    OpAttrs attrs = {}, OpHandler* handler = nullptr) {
    std::vector<TensorHandle> arg_handles;
    for (TensorHandle* arg : args) arg_handles.push_back(arg->CopyRef());
    TensorHandle result;
    runtime_->Execute(*exec_ctx_, op, handler ? handler : cpu_,
                      absl::MakeSpan(arg_handles), attrs.Freeze(),
                      absl::MakeSpan(&result, 1), nullptr);
    return result;
  }

  std::string Text(const TensorHandle& handle) {
    const Tensor* tensor = runtime_->Await(handle);
    if (!tensor) {
      const absl::Status* error = handle.GetErrorIfPresent();
      return error ? std::string(error->message()) : "<null>";
    }
    return tensor->ToString();
  }

  std::unique_ptr<CoreRuntime> runtime_;
  OpHandler* cpu_ = nullptr;
  std::optional<ExecutionContext> exec_ctx_;
};

TEST_F(CoreRuntimeTest, AddComputesWithMetadataKnownUpFront) {
  TensorHandle a = Vector({1, 0, 2, 0});
  TensorHandle sum = Run1("tfrt_test.add", {&a, &a});
  ASSERT_TRUE(sum.IsMetadataAvailable());
  EXPECT_EQ(sum.GetAvailableMetadata().DebugString(),
            "dtype = i32, shape = [4]");
  EXPECT_EQ(Text(sum),
            "DenseHostTensor dtype = i32, shape = [4], values = [2, 0, 4, 0]");
}

// Six arguments and five results: more than the core runtime keeps on the
// stack. Result i is argument i + 1, its metadata too.
absl::Status ShiftMetadata(ArgumentMetadata args, const OpAttrs&,
                           absl::Span<TensorMetadata> results) {
  for (size_t i = 0; i < results.size(); ++i) results[i] = args[i + 1];
  return absl::OkStatus();
}
void ShiftDispatch(OpInvocation& invocation) {
  for (size_t i = 0; i < invocation.results.size(); ++i) {
    invocation.results[i] = FormRef(invocation.arguments[i + 1]);
  }
}

TEST_F(CoreRuntimeTest, ManyArgumentsAndResults) {
  OpRegistry::Global().AddOp("test.shift", ShiftMetadata);
  OpRegistry::Global().AddDispatch("test.shift", "cpu", ShiftDispatch);
  std::vector<TensorHandle> args;
  for (int32_t i = 0; i < 6; ++i) args.push_back(Vector({i, i}));
  std::vector<TensorHandle> results(5);
  runtime_->Execute(*exec_ctx_, "test.shift", cpu_, absl::MakeSpan(args),
                    OpAttrs().Freeze(), absl::MakeSpan(results), nullptr);
  for (int32_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(results[i].IsMetadataAvailable());
    EXPECT_EQ(results[i].GetAvailableMetadata().DebugString(),
              "dtype = i32, shape = [2]");
    EXPECT_EQ(
        Text(results[i]),
        absl::StrCat("DenseHostTensor dtype = i32, shape = [2], values = [",
                     i + 1, ", ", i + 1, "]"));
  }
}

// The op site's cache reaches an implementation on every path that runs it
// during the call: the stack path (two arguments) and the general one (six
// arguments, five results); one whose arguments are still being computed
// runs later, with none.
const OpSiteCache* seen_site_cache = nullptr;
void SiteCacheDispatch(OpInvocation& invocation) {
  seen_site_cache = invocation.site_cache;
  ShiftDispatch(invocation);
}

TEST_F(CoreRuntimeTest, TheSiteCacheReachesOpsOnEveryPath) {
  if (OpRegistry::Global().Find("test.site_shift") == nullptr) {
    OpRegistry::Global().AddOp("test.site_shift", ShiftMetadata);
    OpRegistry::Global().AddDispatch("test.site_shift", "cpu",
                                     SiteCacheDispatch);
  }
  absl::StatusOr<CoreRuntimeOp> op = runtime_->MakeOp("test.site_shift", cpu_);
  ASSERT_TRUE(op.ok()) << op.status();
  for (size_t num_args : {2, 6}) {
    std::vector<TensorHandle> handles;
    for (size_t i = 0; i < num_args; ++i) {
      handles.push_back(Vector({static_cast<int32_t>(i)}));
    }
    std::vector<const TensorHandle*> args;
    for (const TensorHandle& handle : handles) args.push_back(&handle);
    std::vector<TensorHandle> results(num_args - 1);
    OpSiteCache cache;
    seen_site_cache = nullptr;
    (*op)(*exec_ctx_, args, /*consumed_arguments=*/0, OpAttrs().Freeze(),
          absl::MakeSpan(results), nullptr, nullptr, &cache);
    EXPECT_EQ(seen_site_cache, &cache) << num_args << " arguments";
    EXPECT_EQ(Text(results.back()),
              absl::StrCat("DenseHostTensor dtype = i32, shape = [1], values "
                           "= [",
                           num_args - 1, "]"));
  }
  // Pending: dispatched once the argument is computed, with no cache.
  AsyncValueRef<DenseHostTensor> later =
      MakeUnconstructedAsyncValueRef<DenseHostTensor>();
  const TensorMetadata one_i32(DType::kI32, TensorShape({1}));
  TensorHandle pending(nullptr, one_i32, FormRef(later.GetAsyncValue()));
  TensorHandle first = Vector({0});
  const TensorHandle* args[] = {&first, &pending};
  TensorHandle result;
  OpSiteCache cache;
  seen_site_cache = &cache;
  (*op)(*exec_ctx_, args, 0, OpAttrs().Freeze(), absl::MakeSpan(&result, 1),
        nullptr, nullptr, &cache);
  std::optional<DenseHostTensor> five = DenseHostTensor::CreateUninitialized(
      one_i32, *runtime_->GetHostContext()->allocator());
  ASSERT_TRUE(five.has_value());
  five->elements<int32_t>()[0] = 5;
  later.emplace(*std::move(five));
  EXPECT_EQ(Text(result),
            "DenseHostTensor dtype = i32, shape = [1], values = [5]");
  EXPECT_EQ(seen_site_cache, nullptr);
}

// Names the type of each argument's tensor as it reaches the dispatch
// function, in results of the argument's metadata.
void TensorTypeDispatch(OpInvocation& invocation) {
  for (size_t i = 0; i < invocation.results.size(); ++i) {
    const Tensor& tensor = invocation.argument(i);
    invocation.results[i] =
        tensor.tensor_type() == DenseHostTensorType()
            ? FormRef(invocation.arguments[i])
            : MakeErrorAsyncValueRef(absl::StrCat(
                  "argument ", i, " arrived as ", tensor.tensor_type().name()));
  }
}
absl::Status SameMetadata(ArgumentMetadata args, const OpAttrs&,
                          absl::Span<TensorMetadata> results) {
  for (size_t i = 0; i < results.size(); ++i) results[i] = args[i];
  return absl::OkStatus();
}

// Four arguments and results, the most the common path keeps on the
// stack: a scalar host tensor among them reaches an op that takes only
// dense ones converted (the common path hands it to the general one), and
// the chain asked for is ready.
TEST_F(CoreRuntimeTest, ArgumentsAnOpDoesNotTakeAreConverted) {
  OpRegistry::Global().AddOp("test.tensor_types", SameMetadata);
  OpRegistry::Global().AddDispatch("test.tensor_types", "cpu",
                                   TensorTypeDispatch);
  OpAttrs attrs;
  attrs.SetArray<int64_t>("shape", {2});
  attrs.Set("value", int32_t{7});
  TensorHandle scalar = Run1("tfrt_test.create_from_scalar", {}, attrs);
  ASSERT_NE(runtime_->Await(scalar), nullptr);
  for (bool with_scalar : {false, true}) {
    std::vector<TensorHandle> args;
    for (int32_t i = 0; i < 4; ++i) args.push_back(Vector({i, i}));
    if (with_scalar) args[2] = scalar.CopyRef();
    std::vector<TensorHandle> results(4);
    AsyncValueRef<Chain> chain;
    runtime_->Execute(*exec_ctx_, "test.tensor_types", cpu_,
                      absl::MakeSpan(args), OpAttrs().Freeze(),
                      absl::MakeSpan(results), &chain);
    ASSERT_TRUE(chain);
    EXPECT_TRUE(chain.IsConcrete());
    for (int32_t i = 0; i < 4; ++i) {
      EXPECT_EQ(Text(results[i]),
                with_scalar && i == 2
                    ? "DenseHostTensor dtype = i32, shape = [2], values = "
                      "[7, 7]"
                    : absl::StrCat("DenseHostTensor dtype = i32, shape = [2], "
                                   "values = [",
                                   i, ", ", i, "]"));
    }
  }
}

TEST_F(CoreRuntimeTest, ShapeErrorIsReportedWhenTheOpIsIssued) {
  OpAttrs a_attrs;
  a_attrs.SetArray<int64_t>("shape", {1, 1});
  a_attrs.SetArray<float>("values", {2.0f});
  TensorHandle a = Run1("tfrt_test.create_dense_tensor", {}, a_attrs);
  OpAttrs b_attrs;
  b_attrs.SetArray<int64_t>("shape", {2, 1});
  b_attrs.SetArray<float>("values", {2.0f});
  TensorHandle b = Run1("tfrt_test.create_dense_tensor", {}, b_attrs);
  TensorHandle product = Run1("tfrt_test.matmul", {&a, &b});
  // No waiting: the shape function failed synchronously.
  const absl::Status* error = product.GetErrorIfPresent();
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->message(), "matmul arguments have incompatible shapes");
}

TEST_F(CoreRuntimeTest, UnknownOpFallsBackToTheNullHandler) {
  TensorHandle result = Run1("tf.invalidop", {});
  const absl::Status* error = result.GetErrorIfPresent();
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->message(),
            "tf.invalidop was not supported by NullOpHandler.");
}

TEST_F(CoreRuntimeTest, AsyncOpWithoutShapeFunction) {
  OpAttrs attrs;
  attrs.SetArray<int64_t>("shape", {2, 2});
  attrs.Set("value", int32_t{1});
  TensorHandle scalar = Run1("tfrt_test.create_from_scalar", {}, attrs);
  TensorHandle later = Run1("tfrt_test.async.noop_no_md", {&scalar});
  TensorHandle sum = Run1("tfrt_test.add", {&later, &later});
  EXPECT_EQ(Text(sum),
            "ScalarHostTensor dtype = i32, shape = [2, 2], value = 2");
  EXPECT_TRUE(later.IsMetadataAvailable());
  auto metadata = later.GetAsyncMetadata();
  EXPECT_EQ(metadata->DebugString(), "dtype = i32, shape = [2, 2]");
}

TEST_F(CoreRuntimeTest, DataDependentShapeAndErrors) {
  TensorHandle a = Vector({1, 2, 3, 4, 5});
  TensorHandle odd = Run1("tfrt_test.odd_collector", {&a});
  EXPECT_EQ(Text(odd),
            "DenseHostTensor dtype = i32, shape = [3], values = [1, 3, 5]");
  TensorHandle bad = Run1("tfrt_test.error.tensor", {&a});
  TensorHandle after = Run1("tfrt_test.add", {&bad, &bad});
  EXPECT_EQ(Text(after), "error from test.error.tensor implementation");
}

TEST_F(CoreRuntimeTest, StringTensorsAreNotConvertedImplicitly) {
  auto strings = StringHostTensor::CreateUninitialized(TensorShape());
  ASSERT_TRUE(strings.has_value());
  strings->strings()[0] = "string";
  TensorMetadata metadata = strings->metadata();
  TensorHandle handle(
      &runtime_->GetHostContext()->host_device(), metadata,
      MakeAvailableAsyncValueRef<StringHostTensor>(std::move(*strings)));
  TensorHandle result = Run1("tfrt_test.identity_dense_only", {&handle});
  EXPECT_EQ(Text(result), "Cannot implictly convert StringHost to DenseHost");
}

TEST_F(CoreRuntimeTest, PreparedOpRunsRepeatedly) {
  absl::StatusOr<CoreRuntimeOp> add = runtime_->MakeOp("tfrt_test.add", cpu_);
  ASSERT_TRUE(add.ok());
  TensorHandle x = Vector({1});
  for (int i = 0; i < 10; ++i) {
    TensorHandle args[2] = {x.CopyRef(), x.CopyRef()};
    TensorHandle next;
    (*add)(*exec_ctx_, args, OpAttrsRef(), absl::MakeSpan(&next, 1), nullptr);
    x = std::move(next);
  }
  EXPECT_EQ(Text(x),
            "DenseHostTensor dtype = i32, shape = [1], values = [1024]");
}

// The data pointer of a handle's dense host tensor.
const void* BufferOf(const TensorHandle& handle) {
  return handle.GetAsyncTensor()->get<DenseHostTensor>().data();
}

TEST_F(CoreRuntimeTest, ConsumedUnsharedArgumentsLendTheirBuffers) {
  absl::StatusOr<CoreRuntimeOp> add = runtime_->MakeOp("tfrt_test.add", cpu_);
  ASSERT_TRUE(add.ok());
  TensorHandle ones = Vector({1, 1, 1});

  // Consumed and referenced by nothing else: the result is computed in
  // place, in the left argument's buffer.
  TensorHandle x = Vector({1, 2, 3});
  const void* x_buffer = BufferOf(x);
  const AsyncValue* x_value = x.GetAsyncTensor();
  TensorHandle args[2] = {std::move(x), ones.CopyRef()};
  TensorHandle sum;
  (*add)(*exec_ctx_, args, OpAttrsRef(), absl::MakeSpan(&sum, 1), nullptr,
         ArgumentUse::kConsume);
  EXPECT_EQ(BufferOf(sum), x_buffer);
  // Its async value too: no value made for the result, and the handle's
  // reference moved to it (no reference added, none dropped).
  EXPECT_EQ(sum.GetAsyncTensor(), x_value);
  EXPECT_TRUE(sum.GetAsyncTensor()->IsUnique());
  EXPECT_FALSE(args[0].IsValid());
  EXPECT_EQ(Text(sum),
            "DenseHostTensor dtype = i32, shape = [3], values = [2, 3, 4]");

  // Borrowed (the default): never written, even when unshared.
  TensorHandle y = Vector({5, 5, 5});
  const void* y_buffer = BufferOf(y);
  TensorHandle borrowed[2] = {std::move(y), ones.CopyRef()};
  TensorHandle result;
  (*add)(*exec_ctx_, borrowed, OpAttrsRef(), absl::MakeSpan(&result, 1),
         nullptr);
  EXPECT_NE(BufferOf(result), y_buffer);
  EXPECT_NE(result.GetAsyncTensor(), borrowed[0].GetAsyncTensor());
  EXPECT_EQ(Text(borrowed[0]),
            "DenseHostTensor dtype = i32, shape = [3], values = [5, 5, 5]");

  // Consumed but shared with a handle the caller kept: copied, not reused.
  TensorHandle z = Vector({7, 7, 7});
  TensorHandle kept = z.CopyRef();
  TensorHandle shared[2] = {std::move(z), ones.CopyRef()};
  TensorHandle other;
  (*add)(*exec_ctx_, shared, OpAttrsRef(), absl::MakeSpan(&other, 1), nullptr,
         ArgumentUse::kConsume);
  EXPECT_NE(BufferOf(other), BufferOf(kept));
  EXPECT_NE(other.GetAsyncTensor(), kept.GetAsyncTensor());
  EXPECT_EQ(Text(kept),
            "DenseHostTensor dtype = i32, shape = [3], values = [7, 7, 7]");
  EXPECT_EQ(Text(ones),
            "DenseHostTensor dtype = i32, shape = [3], values = [1, 1, 1]");
}

TEST_F(CoreRuntimeTest, ConsumedValueOverSharedBufferIsNotReused) {
  absl::StatusOr<CoreRuntimeOp> add = runtime_->MakeOp("tfrt_test.add", cpu_);
  ASSERT_TRUE(add.ok());
  TensorHandle ones = Vector({1, 1});
  // Two async values, each the only reference to its tensor, over one buffer.
  TensorHandle x = Vector({3, 4});
  const DenseHostTensor& x_tensor = x.GetAsyncTensor()->get<DenseHostTensor>();
  TensorHandle alias(
      x.device(), x_tensor.metadata(),
      MakeAvailableAsyncValueRef<DenseHostTensor>(x_tensor.CopyRef()));
  const AsyncValue* x_value = x.GetAsyncTensor();
  TensorHandle args[2] = {std::move(x), ones.CopyRef()};
  TensorHandle sum;
  (*add)(*exec_ctx_, args, OpAttrsRef(), absl::MakeSpan(&sum, 1), nullptr,
         ArgumentUse::kConsume);
  EXPECT_NE(sum.GetAsyncTensor(), x_value);
  EXPECT_NE(BufferOf(sum), BufferOf(alias));
  EXPECT_EQ(Text(sum),
            "DenseHostTensor dtype = i32, shape = [2], values = [4, 5]");
  EXPECT_EQ(Text(alias),
            "DenseHostTensor dtype = i32, shape = [2], values = [3, 4]");
}

TEST_F(CoreRuntimeTest, EagerExecuteConsumingReusesBuffers) {
  TensorHandle ones = Vector({1, 1});
  TensorHandle x = Vector({10, 20});
  const void* x_buffer = BufferOf(x);
  // x = x + ones, three times, each call giving x up: one buffer throughout.
  for (int i = 0; i < 3; ++i) {
    TensorHandle args[2] = {std::move(x), ones.CopyRef()};
    runtime_->Execute(*exec_ctx_, "tfrt_test.add", cpu_, args, OpAttrsRef(),
                      absl::MakeSpan(&x, 1), nullptr, ArgumentUse::kConsume);
  }
  EXPECT_EQ(BufferOf(x), x_buffer);
  EXPECT_EQ(Text(x),
            "DenseHostTensor dtype = i32, shape = [2], values = [13, 23]");

  // Only the second argument is the op's alone: its buffer is the one used.
  TensorHandle swapped[2] = {ones.CopyRef(), std::move(x)};
  runtime_->Execute(*exec_ctx_, "tfrt_test.add", cpu_, swapped, OpAttrsRef(),
                    absl::MakeSpan(&x, 1), nullptr, ArgumentUse::kConsume);
  EXPECT_EQ(BufferOf(x), x_buffer);
  EXPECT_EQ(Text(x),
            "DenseHostTensor dtype = i32, shape = [2], values = [14, 24]");
  EXPECT_EQ(Text(ones),
            "DenseHostTensor dtype = i32, shape = [2], values = [1, 1]");

  // Borrowing (the default), even a handle nothing else references: a new
  // buffer, the argument intact.
  TensorHandle args[2] = {Vector({10, 20}), ones.CopyRef()};
  const void* borrowed_buffer = BufferOf(args[0]);
  TensorHandle sum;
  runtime_->Execute(*exec_ctx_, "tfrt_test.add", cpu_, args, OpAttrsRef(),
                    absl::MakeSpan(&sum, 1), nullptr);
  EXPECT_NE(BufferOf(sum), borrowed_buffer);
  EXPECT_EQ(Text(args[0]),
            "DenseHostTensor dtype = i32, shape = [2], values = [10, 20]");
}

// Forwards its handle argument and records the async value carrying it.
AsyncValue* recorded_value = nullptr;
void RecordValue(AsyncKernelFrame* frame) {
  recorded_value = frame->GetArgAt(0);
  frame->SetResultAt(0, FormRef(recorded_value));
}

// A BEF function graph(%handler, %a) of corert.executeop "tfrt_test.add"
// kernels (and test.record_value), loaded on the fixture's host.
class AddGraph {
 public:
  static constexpr uint32_t kA = 1;  // The register of %a.

  explicit AddGraph(absl::string_view op_name = "tfrt_test.add") {
    uint32_t handler_type = w_.AddType("!corert.ophandler");
    uint32_t handle_type = w_.AddType("!corert.tensorhandle");
    loc_ = w_.AddLocation("test.mlir", 1, 1);
    executeop_ = w_.AddKernelName("corert.executeop");
    record_ = w_.AddKernelName("test.record_value");
    uint32_t empty = w_.AddAggregateAttribute({});
    add_attributes_ = {
        {w_.AddString("op_attrs"), empty},
        {w_.AddString("op_func_attrs"), empty},
        {w_.AddString("op_name"), w_.AddStringAttribute(op_name)}};
    fn_ = w_.DeclareFunction("graph", bef::FunctionKind::kBef,
                             {handler_type, handle_type}, {handle_type});
    body_.argument_registers = {0, kA};
    body_.num_registers = 2;
  }

  // The register of lhs + rhs.
  uint32_t Add(uint32_t lhs, uint32_t rhs) {
    return Kernel(executeop_, {0, lhs, rhs}, add_attributes_);
  }
  // The register of `handle`, passed on by test.record_value.
  uint32_t Record(uint32_t handle) { return Kernel(record_, {handle}, {}); }

  // The program of graph(handler, a) -> `result`, loaded on `host`.
  RCReference<BefProgram> Load(HostContext* host, uint32_t result) {
    body_.result_registers = {result};
    w_.DefineFunction(fn_, body_);
    auto bytes = w_.Finish();
    EXPECT_TRUE(bytes.ok());
    auto file = bef::BefFile::Open(*bytes);
    EXPECT_TRUE(file.ok());
    auto program = BefProgram::Load(*std::move(file), host);
    EXPECT_TRUE(program.ok()) << program.status();
    return program.ok() ? *std::move(program) : RCReference<BefProgram>();
  }

  // Calls a loaded graph(handler, a) and waits for its result.
  static RCReference<AsyncValue> Call(const BefProgram& program,
                                      HostContext* host, OpHandler* handler,
                                      TensorHandle a,
                                      const ExecutionContext& exec_ctx) {
    auto handler_value = MakeAvailableAsyncValueRef<OpHandler*>(handler);
    auto a_value = MakeAvailableAsyncValueRef<TensorHandle>(std::move(a));
    AsyncValue* args[] = {handler_value.GetAsyncValue(),
                          a_value.GetAsyncValue()};
    std::vector<RCReference<AsyncValue>> results(1);
    program.GetFunction("graph")->Execute(exec_ctx, args,
                                          absl::MakeSpan(results));
    host->Await(results);
    return std::move(results[0]);
  }

  // Runs graph(handler, a) to completion; returns its result.
  RCReference<AsyncValue> Run(HostContext* host, OpHandler* handler,
                              TensorHandle a, const ExecutionContext& exec_ctx,
                              uint32_t result) {
    RCReference<BefProgram> program = Load(host, result);
    if (program == nullptr) return MakeErrorAsyncValueRef("not loaded");
    return Call(*program, host, handler, std::move(a), exec_ctx);
  }

 private:
  uint32_t Kernel(uint32_t name, std::vector<uint32_t> operands,
                  std::vector<std::pair<uint32_t, uint32_t>> attributes) {
    bef::KernelSpec k;
    k.kernel_name = name;
    k.location = loc_;
    k.operands = std::move(operands);
    k.results = {body_.num_registers++};
    k.attributes = std::move(attributes);
    body_.kernels.push_back(k);
    return k.results[0];
  }

  bef::BefWriter w_;
  bef::FunctionBodySpec body_;
  uint32_t loc_, executeop_, record_, fn_;
  std::vector<std::pair<uint32_t, uint32_t>> add_attributes_;
};

class CoreRuntimeGraphOpTest : public CoreRuntimeTest {
 protected:
  void SetUp() override {
    CoreRuntimeTest::SetUp();
    host_ = runtime_->GetHostContext();
    RegisterCoreRuntimeKernels(host_->registry());
    ASSERT_TRUE(host_->registry()
                    .AddKernel("test.record_value", RecordValue,
                               KernelStrictness::kStrict)
                    .ok());
    CoreRuntime& attached = CoreRuntime::GetOrCreate(host_);
    graph_cpu_ = *attached.CreateCpuOpHandler(attached.CreateNullOpHandler());
  }

  std::string RunText(AddGraph& graph, uint32_t result) {
    RCReference<AsyncValue> value =
        graph.Run(host_, graph_cpu_, Vector({1, 2}), *exec_ctx_, result);
    last_result_ = value.get();
    if (!value->IsType<TensorHandle>()) return "<not a tensorhandle>";
    return Text(value->get<TensorHandle>());
  }

  HostContext* host_ = nullptr;
  OpHandler* graph_cpu_ = nullptr;
  const AsyncValue* last_result_ = nullptr;
};

// %x = add(%a, %a); %r = record(%x); %y = add(%r, %a). At the second add,
// %r is the op's alone.
TEST_F(CoreRuntimeGraphOpTest, ResultReusesTheAsyncValueOfASpentArgument) {
  AddGraph graph;
  uint32_t x = graph.Add(AddGraph::kA, AddGraph::kA);
  uint32_t y = graph.Add(graph.Record(x), AddGraph::kA);
  EXPECT_EQ(RunText(graph, y),
            "DenseHostTensor dtype = i32, shape = [2], values = [3, 6]");
  EXPECT_EQ(last_result_, recorded_value);
}

// %x = add(%a, %a); %y = add(%x, %a); %z = add(%x, %y). The kernel passes
// its argument handles in place; %x's tensor is referenced by its register
// alone, yet the second add must not write into it: %x is read again.
TEST_F(CoreRuntimeGraphOpTest, ArgumentsReadLaterAreNotWrittenInPlace) {
  AddGraph graph;
  uint32_t x = graph.Add(AddGraph::kA, AddGraph::kA);
  uint32_t y = graph.Add(x, AddGraph::kA);
  uint32_t z = graph.Add(x, y);
  EXPECT_EQ(RunText(graph, z),
            "DenseHostTensor dtype = i32, shape = [2], values = [5, 10]");
}

// test.counted_add: i32 a + b, counting its shape function's runs; rows of
// 7 elements are a shape error.
std::atomic<int> counted_add_shape_runs{0};
absl::Status CountedAddMetadata(ArgumentMetadata args, const OpAttrs&,
                                absl::Span<TensorMetadata> results) {
  counted_add_shape_runs.fetch_add(1, std::memory_order_relaxed);
  if (args[0] != args[1]) return absl::InvalidArgumentError("shapes differ");
  if (args[0].shape.GetNumElements() == 7) {
    return absl::InvalidArgumentError("test.counted_add refuses 7 elements");
  }
  results[0] = args[0];
  return absl::OkStatus();
}
void CountedAddDispatch(OpInvocation& invocation) {
  AsyncValueRef<DenseHostTensor> out =
      invocation.ReuseOrAllocateDense(invocation.result_metadata[0], 0b11);
  auto a = static_cast<const DenseHostTensor&>(invocation.argument(0))
               .elements<int32_t>();
  auto b = static_cast<const DenseHostTensor&>(invocation.argument(1))
               .elements<int32_t>();
  auto sum = out->elements<int32_t>();
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = a[i] + b[i];
  invocation.results[0] = std::move(out);
}

class CoreRuntimeGraphShapeTest : public CoreRuntimeGraphOpTest {
 protected:
  void SetUp() override {
    CoreRuntimeGraphOpTest::SetUp();
    if (OpRegistry::Global().Find("test.counted_add") == nullptr) {
      OpRegistry::Global().AddOp("test.counted_add", CountedAddMetadata);
      OpRegistry::Global().AddDispatch("test.counted_add", "cpu",
                                       CountedAddDispatch);
    }
    counted_add_shape_runs = 0;
  }

  // graph(a) = (a + a) + a, two sites of test.counted_add.
  RCReference<BefProgram> LoadTwoSites() {
    AddGraph graph("test.counted_add");
    uint32_t x = graph.Add(AddGraph::kA, AddGraph::kA);
    return graph.Load(host_, graph.Add(x, AddGraph::kA));
  }

  std::string CallText(const BefProgram& program, std::vector<int32_t> a) {
    RCReference<AsyncValue> value = AddGraph::Call(
        program, host_, graph_cpu_, Vector(std::move(a)), *exec_ctx_);
    if (value->IsError()) return std::string(value->GetError().message());
    if (!value->IsType<TensorHandle>()) return "<not a tensorhandle>";
    const TensorHandle& handle = value->get<TensorHandle>();
    EXPECT_TRUE(handle.IsMetadataAvailable());
    return absl::StrCat(handle.GetAvailableMetadata().DebugString(), ": ",
                        Text(handle));
  }
};

// A program's op site remembers its shape function's answer: called again
// with the same shapes, the function does not run; a new shape runs it
// once more per site, and each call gets the metadata of its own shapes.
TEST_F(CoreRuntimeGraphShapeTest, ShapeFunctionRunsOncePerShapeAndSite) {
  RCReference<BefProgram> program = LoadTwoSites();
  ASSERT_NE(program, nullptr);
  for (int call = 0; call < 3; ++call) {
    EXPECT_EQ(CallText(*program, {1, 2}),
              "dtype = i32, shape = [2]: DenseHostTensor dtype = i32, shape = "
              "[2], values = [3, 6]");
  }
  EXPECT_EQ(counted_add_shape_runs, 2);
  EXPECT_EQ(CallText(*program, {1, 2, 3}),
            "dtype = i32, shape = [3]: DenseHostTensor dtype = i32, shape = "
            "[3], values = [3, 6, 9]");
  EXPECT_EQ(CallText(*program, {1, 2}),
            "dtype = i32, shape = [2]: DenseHostTensor dtype = i32, shape = "
            "[2], values = [3, 6]");
  EXPECT_EQ(counted_add_shape_runs, 4);
}

// A shape error is not remembered: it is reported at every call, and the
// site still serves the shapes it accepts.
TEST_F(CoreRuntimeGraphShapeTest, ShapeErrorsAreReportedAtEveryCall) {
  RCReference<BefProgram> program = LoadTwoSites();
  ASSERT_NE(program, nullptr);
  const std::vector<int32_t> seven = {1, 2, 3, 4, 5, 6, 7};
  for (int call = 0; call < 2; ++call) {
    EXPECT_EQ(CallText(*program, seven), "test.counted_add refuses 7 elements");
  }
  EXPECT_EQ(CallText(*program, {5}),
            "dtype = i32, shape = [1]: DenseHostTensor dtype = i32, shape = "
            "[1], values = [15]");
  // The first site failed twice (its error propagates past the second).
  EXPECT_EQ(counted_add_shape_runs, 4);
}

// More shapes than a site remembers: the rest run the shape function at
// every call, with the right answers.
TEST_F(CoreRuntimeGraphShapeTest, SitesSeeingManyShapesStayCorrect) {
  RCReference<BefProgram> program = LoadTwoSites();
  ASSERT_NE(program, nullptr);
  for (int round = 0; round < 2; ++round) {
    for (int32_t n = 1; n <= ShapeMemo::kCapacity + 2; ++n) {
      std::vector<int32_t> a(n, n);
      std::string values;
      for (int32_t i = 0; i < n; ++i) {
        absl::StrAppend(&values, i ? ", " : "", 3 * n);
      }
      EXPECT_EQ(CallText(*program, a),
                absl::StrCat("dtype = i32, shape = [", n,
                             "]: DenseHostTensor dtype = i32, shape = [", n,
                             "], values = [", values, "]"));
    }
  }
  // Round one: every shape at both sites; round two: the two the memos
  // could not keep.
  EXPECT_EQ(counted_add_shape_runs, 2 * (ShapeMemo::kCapacity + 2) + 2 * 2);
}

// Threads calling one program share its sites' memos (ThreadSanitizer
// checks lookups racing records): each call gets its own shape's answer.
TEST_F(CoreRuntimeGraphShapeTest, ConcurrentCallsShareTheSites) {
  RCReference<BefProgram> program = LoadTwoSites();
  ASSERT_NE(program, nullptr);
  constexpr int kThreads = 4;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const int32_t n = (i + t) % (ShapeMemo::kCapacity + 2) + 1;
        RCReference<AsyncValue> value =
            AddGraph::Call(*program, host_, graph_cpu_,
                           Vector(std::vector<int32_t>(n, t + 1)), *exec_ctx_);
        const Tensor* tensor = value->IsType<TensorHandle>()
                                   ? runtime_->Await(value->get<TensorHandle>())
                                   : nullptr;
        const auto* dense = dynamic_cast<const DenseHostTensor*>(tensor);
        if (dense == nullptr || dense->shape() != TensorShape({n}) ||
            value->get<TensorHandle>().GetAvailableMetadata().shape !=
                TensorShape({n}) ||
            dense->elements<int32_t>()[n - 1] != 3 * (t + 1)) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, 0);
}

// A hand-made BEF file may give corert.executeop.seq no results at all: the
// kernel reports that it has nowhere to put its chain, and nothing breaks.
TEST(CoreRuntimeGraphTest, SequencedOpWithoutResultsIsAnError) {
  std::vector<std::string> diagnostics;
  std::mutex mutex;
  HostContext host(
      [&](const DecodedDiagnostic& d) {
        std::lock_guard<std::mutex> lock(mutex);
        diagnostics.push_back(d.ToString());
      },
      CreateMallocAllocator(), CreateSingleThreadedWorkQueue());
  RegisterCoreRuntimeKernels(host.registry());
  CoreRuntime& runtime = CoreRuntime::GetOrCreate(&host);
  OpHandler* cpu = *runtime.CreateCpuOpHandler(runtime.CreateNullOpHandler());

  bef::BefWriter w;
  uint32_t handler_type = w.AddType("!corert.ophandler");
  uint32_t chain_type = w.AddType("!tfrt.chain");
  uint32_t handle_type = w.AddType("!corert.tensorhandle");
  uint32_t empty = w.AddAggregateAttribute({});
  uint32_t fn = w.DeclareFunction("graph", bef::FunctionKind::kBef,
                                  {handler_type, chain_type, handle_type}, {});
  bef::KernelSpec k;
  k.kernel_name = w.AddKernelName("corert.executeop.seq");
  k.location = w.AddLocation("test.mlir", 3, 5);
  k.operands = {0, 1, 2, 2};
  k.attributes = {
      {w.AddString("op_attrs"), empty},
      {w.AddString("op_func_attrs"), empty},
      {w.AddString("op_name"), w.AddStringAttribute("tfrt_test.add")}};
  bef::FunctionBodySpec body;
  body.argument_registers = {0, 1, 2};
  body.num_registers = 3;
  body.kernels.push_back(k);
  w.DefineFunction(fn, body);
  auto bytes = w.Finish();
  ASSERT_TRUE(bytes.ok());
  auto file = bef::BefFile::Open(*bytes);
  ASSERT_TRUE(file.ok());
  auto program = BefProgram::Load(*std::move(file), &host);
  ASSERT_TRUE(program.ok()) << program.status();

  auto exec_ctx = runtime.CreateExecutionContext();
  ASSERT_TRUE(exec_ctx.ok());
  int32_t one = 1;
  auto a = runtime.MakeDenseTensorHandle<int32_t>({1}, absl::MakeSpan(&one, 1));
  ASSERT_TRUE(a.ok());
  auto handler = MakeAvailableAsyncValueRef<OpHandler*>(cpu);
  auto chain = MakeAvailableAsyncValueRef<Chain>();
  auto handle = MakeAvailableAsyncValueRef<TensorHandle>(*std::move(a));
  AsyncValue* args[] = {handler.GetAsyncValue(), chain.GetAsyncValue(),
                        handle.GetAsyncValue()};
  (*program)->GetFunction("graph")->Execute(*exec_ctx, args, {});
  host.Quiesce();
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_TRUE(
      absl::StrContains(diagnostics[0], "a sequenced op needs a chain result"))
      << diagnostics[0];
}

TEST_F(CoreRuntimeTest, LoggingHandlerWrapsAndCounts) {
  OpHandler* logging = runtime_->CreateLoggingOpHandler(cpu_, false);
  TensorHandle a = Vector({3});
  testing::internal::CaptureStdout();
  TensorHandle sum = Run1("tfrt_test.add", {&a, &a}, {}, logging);
  EXPECT_EQ(Text(sum),
            "DenseHostTensor dtype = i32, shape = [1], values = [6]");
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out,
            "[0] dispatch 'tfrt_test.add' 2 arguments, 1 result, "
            "no attributes\n");
}

// Many threads issue ops on shared inputs through one runtime; every result
// is right and nothing races (run under ThreadSanitizer too).
TEST_F(CoreRuntimeTest, ConcurrentExecuteFromManyThreads) {
  TensorHandle ones = Vector({1, 1, 1, 1});
  OpAttrs attrs;
  attrs.SetArray<int64_t>("shape", {2, 2});
  attrs.Set("value", int32_t{5});
  OpAttrsRef frozen = attrs.Freeze();
  constexpr int kThreads = 8;
  constexpr int kIterations = 300;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        TensorHandle args[2] = {ones.CopyRef(), ones.CopyRef()};
        TensorHandle sum;
        runtime_->Execute(*exec_ctx_, "tfrt_test.add", cpu_, args, OpAttrsRef(),
                          absl::MakeSpan(&sum, 1), nullptr);
        // An async op in the mix, so results complete on pool threads.
        TensorHandle scalar, later;
        runtime_->Execute(*exec_ctx_, "tfrt_test.create_from_scalar", cpu_, {},
                          frozen, absl::MakeSpan(&scalar, 1), nullptr);
        runtime_->Execute(*exec_ctx_, "tfrt_test.async.noop", cpu_,
                          absl::MakeSpan(&scalar, 1), OpAttrsRef(),
                          absl::MakeSpan(&later, 1), nullptr);
        const Tensor* s = runtime_->Await(sum);
        const Tensor* l = runtime_->Await(later);
        if (!s ||
            s->ToString() !=
                "DenseHostTensor dtype = i32, shape = [4], "
                "values = [2, 2, 2, 2]" ||
            !l ||
            l->ToString() !=
                "ScalarHostTensor dtype = i32, shape = "
                "[2, 2], value = 5") {
          wrong.fetch_add(1);
        }
        (void)t;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

//===--- OpRegistry -------------------------------------------------------===//

absl::Status NoMetadata(ArgumentMetadata, const OpAttrs&,
                        absl::Span<TensorMetadata>) {
  return absl::OkStatus();
}
void NoDispatch(OpInvocation&) {}
void OtherDispatch(OpInvocation&) {}

TEST(OpRegistryTest, LookupsRaceRegistrationSafely) {
  // Lookups take no lock: they must see complete entries while other
  // threads register (ThreadSanitizer checks the publication).
  OpRegistry registry;
  registry.AddOp("stable", NoMetadata);
  registry.AddDispatch("stable", "cpu", NoDispatch);
  const int cpu = OpRegistry::DeviceTypeId("cpu");
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        for (const OpEntry* entry :
             {registry.Find("stable"), registry.FindByCallSite("stable")}) {
          if (!entry || entry->metadata_fn != NoMetadata ||
              !entry->FindImplementation(cpu)) {
            wrong.fetch_add(1);
          }
        }
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    std::string name = absl::StrCat("op", i);
    registry.AddOp(name, NoMetadata);
    registry.AddDispatch(name, "cpu", NoDispatch);
  }
  done.store(true, std::memory_order_release);
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(wrong.load(), 0);
  for (int i = 0; i < 200; ++i) {
    EXPECT_NE(registry.Find(absl::StrCat("op", i)), nullptr) << i;
  }
}

TEST(OpRegistryTest, ListsTheOpsOfADeviceType) {
  OpRegistry registry;
  registry.AddOp("declared_only", NoMetadata);
  registry.AddDispatch("b", "cpu", NoDispatch);
  registry.AddDispatch("a", "cpu", NoDispatch);
  registry.AddDispatch("a", "sim", NoDispatch);
  EXPECT_EQ(registry.OpNamesFor("cpu"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(registry.OpNamesFor("sim"), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(registry.OpNamesFor("gpu").empty());
}

TEST(OpRegistryTest, ReRegistrationMakesANewEntryAndKeepsTheOld) {
  OpRegistry registry;
  registry.AddDispatch("op", "cpu", NoDispatch);
  const OpEntry* before = registry.Find("op");
  registry.AddDispatch("op", "cpu", OtherDispatch);
  registry.AddDispatch("op", "gpu", NoDispatch);
  const OpEntry* after = registry.Find("op");
  // The old entry stays valid and unchanged for whoever holds it.
  EXPECT_EQ(before->FindImplementation("cpu")->dispatch, NoDispatch);
  EXPECT_EQ(before->FindImplementation("gpu"), nullptr);
  EXPECT_EQ(after->FindImplementation("cpu")->dispatch, OtherDispatch);
  EXPECT_EQ(
      after->FindImplementation(OpRegistry::DeviceTypeId("gpu"))->dispatch,
      NoDispatch);
  EXPECT_EQ(OpRegistry::DeviceTypeId("gpu"), OpRegistry::DeviceTypeId("gpu"));
  EXPECT_NE(OpRegistry::DeviceTypeId("gpu"), OpRegistry::DeviceTypeId("cpu"));
  EXPECT_EQ(registry.Find("missing"), nullptr);
}

TEST(OpRegistryTest, CallSiteLookupsCheckTheNameAndTheTable) {
  OpRegistry registry;
  registry.AddDispatch("op.a", "cpu", NoDispatch);
  registry.AddDispatch("op.b", "cpu", OtherDispatch);
  // One buffer, reused for another name: the cached entry must not answer.
  char name[8] = "op.a";
  const OpEntry* a = registry.FindByCallSite(name);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->name, "op.a");
  EXPECT_EQ(registry.FindByCallSite(name), a);  // Cached.
  name[3] = 'b';
  const OpEntry* b = registry.FindByCallSite(name);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name, "op.b");
  name[3] = 'c';
  EXPECT_EQ(registry.FindByCallSite(name), nullptr);
  // A registration publishes a new table: a cached entry is looked up again.
  name[3] = 'a';
  EXPECT_EQ(registry.FindByCallSite(name), a);
  registry.AddDispatch("op.a", "cpu", OtherDispatch);
  const OpEntry* replaced = registry.FindByCallSite(name);
  ASSERT_NE(replaced, nullptr);
  EXPECT_NE(replaced, a);
  EXPECT_EQ(replaced->FindImplementation("cpu")->dispatch, OtherDispatch);
  // Another registry at the same call site has its own entries.
  OpRegistry other;
  EXPECT_EQ(other.FindByCallSite(name), nullptr);
  other.AddDispatch("op.a", "cpu", NoDispatch);
  EXPECT_EQ(other.FindByCallSite(name)->FindImplementation("cpu")->dispatch,
            NoDispatch);
  EXPECT_EQ(registry.FindByCallSite(name), replaced);
}

// The cached name is compared in words for names of 4 to 16 characters:
// every byte counts, whatever the length.
TEST(OpRegistryTest, CallSiteLookupsCompareEveryByteOfTheName) {
  OpRegistry registry;
  for (const char* op :
       {"o.x", "o.y", "op.ab_cd.x", "op.ab_ce.x", "op.name_longer_than_16.x",
        "op.name_longer_than_16.y", "op.name_longer_xhan_16.x"}) {
    registry.AddDispatch(op, "cpu", NoDispatch);
  }
  for (std::string first : {"o.x", "op.ab_cd.x", "op.name_longer_than_16.x"}) {
    char name[32] = {};
    first.copy(name, first.size());
    ASSERT_EQ(
        registry.FindByCallSite(absl::string_view(name, first.size()))->name,
        first);
    // One byte changed: at the end, then in the middle.
    for (size_t at : {first.size() - 1, first.size() / 2}) {
      std::string other = first;
      other[at] = other[at] == 'x' ? 'y' : other[at] == 'd' ? 'e' : 'x';
      std::memcpy(name, other.data(), other.size());
      const OpEntry* found =
          registry.FindByCallSite(absl::string_view(name, other.size()));
      if (found != nullptr) EXPECT_EQ(found->name, other);
      if (registry.Find(other) == nullptr) EXPECT_EQ(found, nullptr) << other;
      std::memcpy(name, first.data(), first.size());
      EXPECT_EQ(
          registry.FindByCallSite(absl::string_view(name, first.size()))->name,
          first);
    }
  }
}

}  // namespace
}  // namespace asyncrt
