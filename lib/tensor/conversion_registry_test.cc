// Tests of TensorType, the conversion registry and ConvertTensor, including
// concurrent registration and conversion.
#include "asyncrt/tensor/conversion_registry.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/coo_host_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/scalar_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::HasSubstr;

//===--- TensorType -------------------------------------------------------===//

TEST(TensorTypeTest, InterningAndNames) {
  TensorType a = TensorType::Register("TensorTypeTest.A");
  TensorType b = TensorType::Register("TensorTypeTest.B");
  EXPECT_EQ(a, TensorType::Register(std::string("TensorTypeTest.A")));
  EXPECT_NE(a, b);
  EXPECT_EQ(a.name(), "TensorTypeTest.A");
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(DenseHostTensorType().name(), "DenseHost");
  EXPECT_EQ(StringHostTensorType().name(), "StringHost");
  EXPECT_EQ(CooHostTensorType().name(), "CooHost");
  EXPECT_EQ(ScalarHostTensorType().name(), "ScalarHost");
  EXPECT_EQ(TensorType::Register("DenseHost"), DenseHostTensorType());
  EXPECT_EQ(TensorType().name(), "<invalid>");
  EXPECT_EQ(TensorType().id(), 0);
  absl::flat_hash_set<TensorType> set = {a, b, a, DenseHostTensorType()};
  EXPECT_EQ(set.size(), 3u);
}

//===--- ConvertTensor ----------------------------------------------------===//

class ConversionTest : public ::testing::Test {
 protected:
  explicit ConversionTest(std::unique_ptr<HostAllocator> allocator =
                              CreateMallocAllocator())
      : host_(
            [this](const DecodedDiagnostic& diagnostic) {
              std::lock_guard<std::mutex> lock(mutex_);
              diagnostics_.push_back(diagnostic.ToString());
            },
            std::move(allocator), *CreateWorkQueue("s")),
        exec_ctx_(*RequestContextBuilder(&host_, nullptr).Build()) {}

  RCReference<AsyncValue> Convert(const Tensor& src, TensorType dst) {
    return ConvertTensor(src, host_.host_device(), host_.host_device(), dst,
                         exec_ctx_);
  }

  std::vector<std::string> Diagnostics() {
    std::lock_guard<std::mutex> lock(mutex_);
    return diagnostics_;
  }

  std::mutex mutex_;
  std::vector<std::string> diagnostics_;
  HostContext host_;
  ExecutionContext exec_ctx_;
};

TEST_F(ConversionTest, ScalarToDense) {
  ScalarHostTensor scalar(TensorShape({2, 2}), int32_t{3});
  RCReference<AsyncValue> result = Convert(scalar, DenseHostTensorType());
  ASSERT_TRUE(result->IsConcrete());
  ASSERT_TRUE(result->IsType<DenseHostTensor>());
  const auto& dense = result->get<DenseHostTensor>();
  EXPECT_EQ(dense.ToString(),
            "DenseHostTensor dtype = i32, shape = [2, 2], values = [3, 3, 3, "
            "3]");
  EXPECT_TRUE(Diagnostics().empty());
}

TEST_F(ConversionTest, MissingConversionIsAnError) {
  auto strings = *StringHostTensor::CreateUninitialized(TensorShape({1}));
  RCReference<AsyncValue> result = Convert(strings, DenseHostTensorType());
  ASSERT_TRUE(result->IsError());
  EXPECT_EQ(result->GetError().message(),
            "Cannot implictly convert StringHost to DenseHost");
  EXPECT_EQ(result->GetError().code(), absl::StatusCode::kInvalidArgument);
  // Returned, not reported: the caller reports it once.
  EXPECT_TRUE(Diagnostics().empty());
}

TEST_F(ConversionTest, SameTypeIsACopyRef) {
  auto dense = *DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF32, {2}), *host_.allocator());
  RCReference<AsyncValue> result = Convert(dense, DenseHostTensorType());
  ASSERT_TRUE(result->IsType<DenseHostTensor>());
  EXPECT_EQ(result->get<DenseHostTensor>().data(), dense.data());
  EXPECT_FALSE(dense.IsBufferUnique());

  auto strings = *StringHostTensor::CreateFromStrings(TensorShape({1}), {"s"});
  RCReference<AsyncValue> same = Convert(strings, StringHostTensorType());
  ASSERT_TRUE(same->IsType<StringHostTensor>());
  EXPECT_EQ(same->get<StringHostTensor>().strings().data(),
            strings.strings().data());

  ScalarHostTensor scalar(TensorShape({4}), 1.0f);
  RCReference<AsyncValue> scalar_copy = Convert(scalar, ScalarHostTensorType());
  ASSERT_TRUE(scalar_copy->IsType<ScalarHostTensor>());
  EXPECT_EQ(scalar_copy->get<ScalarHostTensor>().GetValue<float>(), 1.0f);
}

TEST_F(ConversionTest, DenseToCooAndBack) {
  auto dense = *DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kI64, {2, 2}), *host_.allocator());
  auto elements = dense.elements<int64_t>();
  elements[0] = 0;
  elements[1] = 5;
  elements[2] = 0;
  elements[3] = 6;
  RCReference<AsyncValue> coo = Convert(dense, CooHostTensorType());
  ASSERT_TRUE(coo->IsType<CooHostTensor>());
  EXPECT_EQ(coo->get<CooHostTensor>().ToString(),
            "CooHostTensor dtype = i64, shape = [2, 2], indices = [0, 1, 1, "
            "1], values = [5, 6]");
  RCReference<AsyncValue> back =
      Convert(coo->get<CooHostTensor>(), DenseHostTensorType());
  ASSERT_TRUE(back->IsType<DenseHostTensor>());
  EXPECT_TRUE(DenseTensorEqual(back->get<DenseHostTensor>(), dense));
  // No conversion from COO to scalar.
  RCReference<AsyncValue> none =
      Convert(coo->get<CooHostTensor>(), ScalarHostTensorType());
  ASSERT_TRUE(none->IsError());
  EXPECT_EQ(none->GetError().message(),
            "Cannot implictly convert CooHost to ScalarHost");
}

TEST_F(ConversionTest, CooToDenseBoundsErrorIsAnErrorValue) {
  auto indices = *DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kI64, {1, 1}), *host_.allocator());
  indices.elements<int64_t>()[0] = 5;
  auto values = *DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kI32, {1}), *host_.allocator());
  values.elements<int32_t>()[0] = 1;
  CooHostTensor coo(TensorShape({2}), DType::kI32, std::move(indices),
                    std::move(values));
  RCReference<AsyncValue> result = Convert(coo, DenseHostTensorType());
  ASSERT_TRUE(result->IsError());
  EXPECT_THAT(result->GetError().message(), HasSubstr("out of bounds"));
}

class SmallAllocatorConversionTest : public ConversionTest {
 protected:
  SmallAllocatorConversionTest()
      : ConversionTest(CreateFixedSizeAllocator(256)) {}
};

TEST_F(SmallAllocatorConversionTest, AllocationFailureIsAnErrorValue) {
  ScalarHostTensor scalar(TensorShape({1024}), int32_t{3});
  RCReference<AsyncValue> result = Convert(scalar, DenseHostTensorType());
  ASSERT_TRUE(result->IsError());
  EXPECT_EQ(result->GetError().code(), absl::StatusCode::kResourceExhausted);
}

TEST(TensorConversionRegistryTest, RegisterFindReplace) {
  TensorConversionRegistry registry;
  TensorType a = TensorType::Register("RegistryTest.A");
  TensorType b = TensorType::Register("RegistryTest.B");
  EXPECT_EQ(registry.Find(a, b), nullptr);
  TensorConversionFn first = [](const Tensor&, const Device&, const Device&,
                                TensorType, const ExecutionContext&) {
    return MakeErrorAsyncValueRef("first");
  };
  TensorConversionFn second = [](const Tensor&, const Device&, const Device&,
                                 TensorType, const ExecutionContext&) {
    return MakeErrorAsyncValueRef("second");
  };
  registry.Register(a, b, first);
  EXPECT_EQ(registry.Find(a, b), first);
  EXPECT_EQ(registry.Find(b, a), nullptr);
  registry.Register(a, b, second);
  EXPECT_EQ(registry.Find(a, b), second);
  // The global registry has the host conversions.
  auto& global = TensorConversionRegistry::Global();
  EXPECT_NE(global.Find(ScalarHostTensorType(), DenseHostTensorType()),
            nullptr);
  EXPECT_NE(global.Find(CooHostTensorType(), DenseHostTensorType()), nullptr);
  EXPECT_NE(global.Find(DenseHostTensorType(), CooHostTensorType()), nullptr);
  EXPECT_NE(global.Find(DenseHostTensorType(), DenseHostTensorType()),
            nullptr);
  EXPECT_NE(global.Find(StringHostTensorType(), StringHostTensorType()),
            nullptr);
  EXPECT_EQ(global.Find(StringHostTensorType(), DenseHostTensorType()),
            nullptr);
}

//===--- Concurrency ------------------------------------------------------===//

// A tensor type for the concurrency test, converted to DenseHost by a
// function registered while other threads convert.
class CountingTensor final : public Tensor {
 public:
  CountingTensor() : Tensor(TensorMetadata(DType::kI32, {})) {}
  TensorType tensor_type() const override {
    return TensorType::Register("ConcurrencyTest.Counting");
  }
  void Print(std::string* out) const override { out->append("Counting"); }
};

TEST_F(ConversionTest, ConcurrentRegistrationAndConversion) {
  constexpr int kThreads = 8;
  constexpr int kIterations = 200;
  std::vector<std::vector<int32_t>> ids(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ScalarHostTensor scalar(TensorShape({4}), int32_t{t});
      auto counting = MakeAvailableAsyncValueRef<CountingTensor>();
      for (int i = 0; i < kIterations; ++i) {
        // Every thread registers the same names: all must agree on ids.
        ids[t].push_back(
            TensorType::Register(absl::StrCat("ConcurrencyTest.", i % 50))
                .id());
        if (i == kIterations / 2) {
          TensorConversionRegistry::Global().Register(
              TensorType::Register("ConcurrencyTest.Counting"),
              DenseHostTensorType(),
              [](const Tensor&, const Device&, const Device&, TensorType,
                 const ExecutionContext& exec_ctx) -> RCReference<AsyncValue> {
                return MakeAvailableAsyncValueRef<ScalarHostTensor>(
                    TensorShape(), int32_t{0});
              });
          RegisterTensorPayloadType<CountingTensor>();
        }
        RCReference<AsyncValue> dense = Convert(scalar, DenseHostTensorType());
        if (!dense->IsType<DenseHostTensor>() ||
            dense->get<DenseHostTensor>().elements<int32_t>()[3] != t) {
          failures.fetch_add(1);
        }
        // Lookups race with the registrations above.
        TensorConversionRegistry::Global().Find(
            TensorType::Register("ConcurrencyTest.Counting"),
            DenseHostTensorType());
        const Tensor* found = GetTensorIfPresent(*counting.GetAsyncValue());
        if (found != nullptr && found != &counting.get()) failures.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]);
  auto counting = MakeAvailableAsyncValueRef<CountingTensor>();
  EXPECT_EQ(GetTensorIfPresent(*counting.GetAsyncValue()), &counting.get());
}

}  // namespace
}  // namespace asyncrt
