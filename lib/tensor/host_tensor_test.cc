// Tests of the host tensor classes: DenseHostTensor, StringHostTensor,
// CooHostTensor, ScalarHostTensor, their printing and conversions, and
// GetTensorIfPresent.
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/tensor/coo_host_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/scalar_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"
#include "asyncrt/tensor/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class HostTensorTest : public ::testing::Test {
 protected:
  // A dense tensor of `shape` holding `values` (row-major).
  template <typename T>
  DenseHostTensor Make(std::vector<int64_t> shape, std::vector<T> values) {
    auto tensor = DenseHostTensor::CreateUninitialized(
        TensorMetadata(GetDType<T>(), shape), *allocator_);
    EXPECT_TRUE(tensor.has_value());
    auto elements = tensor->template elements<T>();
    EXPECT_EQ(elements.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) elements[i] = values[i];
    return *std::move(tensor);
  }

  // Bool storage cannot come from std::vector<bool>.
  DenseHostTensor MakeBool(std::vector<int64_t> shape,
                           std::vector<int> values) {
    auto tensor = DenseHostTensor::CreateUninitialized(
        TensorMetadata(DType::kI1, shape), *allocator_);
    EXPECT_TRUE(tensor.has_value());
    auto elements = tensor->elements<bool>();
    for (size_t i = 0; i < values.size(); ++i) elements[i] = values[i] != 0;
    return *std::move(tensor);
  }

  template <typename T>
  std::vector<T> Iota(int n) {
    std::vector<T> v(n);
    for (int i = 0; i < n; ++i) v[i] = static_cast<T>(i);
    return v;
  }

  std::unique_ptr<HostAllocator> allocator_ =
      CreateLeakCheckAllocator(CreateMallocAllocator());
};

//===--- DenseHostTensor --------------------------------------------------===//

TEST_F(HostTensorTest, DenseCreateUninitialized) {
  auto tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF64, {3, 5}), *allocator_);
  ASSERT_TRUE(tensor.has_value());
  EXPECT_EQ(tensor->NumElements(), 15);
  EXPECT_EQ(tensor->DataSizeInBytes(), 15u * 8);
  EXPECT_EQ(tensor->buffer()->size(), 15u * 8);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor->data()) % kTensorAlignment, 0u);
  EXPECT_EQ(tensor->tensor_type(), DenseHostTensorType());
  EXPECT_EQ(tensor->tensor_type().name(), "DenseHost");
  EXPECT_TRUE(tensor->IsBufferUnique());

  // Strings, invalid dtypes and negative dimensions are rejected.
  EXPECT_FALSE(DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kString, {2}), *allocator_));
  EXPECT_FALSE(DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kInvalid, {2}), *allocator_));
  EXPECT_FALSE(DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF32, {2, -3}), *allocator_));
  EXPECT_FALSE(DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF64, {INT64_MAX / 4, 8}), *allocator_));
}

TEST_F(HostTensorTest, DenseAllocationFailure) {
  auto fixed = CreateFixedSizeAllocator(1024);
  EXPECT_TRUE(DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kI32, {16}), *fixed));
  EXPECT_FALSE(DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kI32, {1024}), *fixed));
}

TEST_F(HostTensorTest, DenseMakeUninitializedAsyncValue) {
  AsyncValueRef<DenseHostTensor> value =
      DenseHostTensor::MakeUninitializedAsyncValue(
          TensorMetadata(DType::kI32, {2, 3}), *allocator_);
  ASSERT_TRUE(value);
  EXPECT_TRUE(value.IsConcrete());
  EXPECT_EQ(value->metadata(), TensorMetadata(DType::kI32, {2, 3}));
  EXPECT_EQ(value->buffer()->size(), 6u * 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(value->data()) % kTensorAlignment, 0u);
  EXPECT_TRUE(value->IsBufferUnique());
  EXPECT_EQ(GetTensorIfPresent(*value.GetAsyncValue()), &value.get());

  // The same rejections and failures as CreateUninitialized.
  EXPECT_FALSE(DenseHostTensor::MakeUninitializedAsyncValue(
      TensorMetadata(DType::kString, {2}), *allocator_));
  EXPECT_FALSE(DenseHostTensor::MakeUninitializedAsyncValue(
      TensorMetadata(DType::kF32, {2, -3}), *allocator_));
  auto fixed = CreateFixedSizeAllocator(1024);
  EXPECT_FALSE(DenseHostTensor::MakeUninitializedAsyncValue(
      TensorMetadata(DType::kI32, {1024}), *fixed));
}

TEST_F(HostTensorTest, DenseCopyRefSharesTheBuffer) {
  DenseHostTensor a = Make<int32_t>({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(a.IsBufferUnique());
  {
    DenseHostTensor b = a.CopyRef();
    EXPECT_FALSE(a.IsBufferUnique());
    EXPECT_EQ(b.data(), a.data());
    b.elements<int32_t>()[0] = 42;
    EXPECT_EQ(a.elements<int32_t>()[0], 42);
  }
  EXPECT_TRUE(a.IsBufferUnique());
  DenseHostTensor moved = std::move(a);
  EXPECT_THAT(moved.elements<int32_t>(), ElementsAre(42, 2, 3, 4));
  RCReference<HostBuffer> buffer = moved.ReleaseBuffer();
  EXPECT_TRUE(buffer);
  EXPECT_FALSE(moved.buffer());
  EXPECT_FALSE(moved.IsBufferUnique());
}

TEST_F(HostTensorTest, DenseOverSliceOfExternalBuffer) {
  alignas(8) int32_t storage[6] = {0, 1, 2, 3, 4, 5};
  auto external = HostBuffer::CreateFromExternal(storage, sizeof(storage),
                                                 [](void*, size_t) {});
  auto slice = HostBuffer::CreateSlice(external, 8, 16);
  DenseHostTensor tensor(TensorMetadata(DType::kI32, {2, 2}), std::move(slice));
  EXPECT_EQ(tensor.ToString(),
            "DenseHostTensor dtype = i32, shape = [2, 2], values = [2, 3, 4, "
            "5]");
}

TEST_F(HostTensorTest, DensePrinting) {
  EXPECT_EQ(Make<int32_t>({2, 2}, {1, 2, 3, 4}).ToString(),
            "DenseHostTensor dtype = i32, shape = [2, 2], values = [1, 2, 3, "
            "4]");
  EXPECT_EQ(Make<int32_t>({}, {5}).ToString(),
            "DenseHostTensor dtype = i32, shape = [], values = [5]");
  EXPECT_EQ(Make<float>({2}, {1.0f, -0.5f}).ToString(),
            "DenseHostTensor dtype = f32, shape = [2], values = "
            "[1.000000e+00, -5.000000e-01]");
  EXPECT_EQ(MakeBool({3}, {1, 0, 1}).ToString(),
            "DenseHostTensor dtype = i1, shape = [3], values = [1, 0, 1]");
  EXPECT_EQ(Make<int8_t>({2}, {65, -1}).ToString(),
            "DenseHostTensor dtype = i8, shape = [2], values = [65, -1]");
  EXPECT_EQ(Make<BFloat16>({1}, {BFloat16::FromFloat(2.5f)}).ToString(),
            "DenseHostTensor dtype = bf16, shape = [1], values = "
            "[bf16(16416)]");
  EXPECT_EQ(Make<Half>({1}, {Half::FromFloat(-1.0f)}).ToString(),
            "DenseHostTensor dtype = f16, shape = [1], values = [fp16(48128)]");
  EXPECT_EQ(Make<std::complex<float>>({1}, {{1.0f, 2.0f}}).ToString(),
            "DenseHostTensor dtype = complex64, shape = [1], values = "
            "[(1.000000e+00,2.000000e+00)]");
  EXPECT_EQ(Make<int64_t>({0, 3}, {}).ToString(),
            "DenseHostTensor dtype = i64, shape = [0, 3], values = []");
}

TEST_F(HostTensorTest, DensePrintingStopsAfterSixteenValues) {
  EXPECT_EQ(Make<int32_t>({16}, Iota<int32_t>(16)).ToString(),
            "DenseHostTensor dtype = i32, shape = [16], values = [0, 1, 2, 3, "
            "4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]");
  EXPECT_EQ(Make<int32_t>({17}, Iota<int32_t>(17)).ToString(),
            "DenseHostTensor dtype = i32, shape = [17], values = [0, 1, 2, 3, "
            "4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ...]");
  EXPECT_EQ(Make<int32_t>({10, 10}, Iota<int32_t>(100)).ToString(),
            "DenseHostTensor dtype = i32, shape = [10, 10], values = [0, 1, 2, "
            "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ...]");
}

TEST_F(HostTensorTest, DenseEqualAndAllClose) {
  DenseHostTensor a = Make<float>({3}, {1.0f, 2.0f, 3.0f});
  DenseHostTensor b = Make<float>({3}, {1.0f, 2.0f, 3.0f});
  DenseHostTensor c = Make<float>({3}, {1.0f, 2.0f, 3.001f});
  DenseHostTensor reshaped = Make<float>({1, 3}, {1.0f, 2.0f, 3.0f});
  EXPECT_TRUE(DenseTensorEqual(a, b));
  EXPECT_FALSE(DenseTensorEqual(a, c));
  EXPECT_FALSE(DenseTensorEqual(a, reshaped));
  EXPECT_TRUE(DenseTensorAllClose(a, c, 1e-3, 0));
  EXPECT_FALSE(DenseTensorAllClose(a, c, 1e-5, 1e-5));
  EXPECT_TRUE(DenseTensorAllClose(a, c, 0, 1e-2));
  EXPECT_FALSE(DenseTensorAllClose(a, reshaped, 1, 1));
  DenseHostTensor d1 = Make<double>({2}, {1.0, std::nan("")});
  DenseHostTensor d2 = Make<double>({2}, {1.0, std::nan("")});
  EXPECT_FALSE(DenseTensorAllClose(d1, d2, 1, 1));
  DenseHostTensor i = Make<int32_t>({1}, {1});
  EXPECT_FALSE(DenseTensorAllClose(i, i, 1, 1));  // not a float dtype
}

//===--- StringHostTensor -------------------------------------------------===//

TEST_F(HostTensorTest, StringTensor) {
  auto tensor = StringHostTensor::CreateUninitialized(TensorShape({2}));
  ASSERT_TRUE(tensor.has_value());
  EXPECT_EQ(tensor->dtype(), DType::kString);
  EXPECT_EQ(tensor->tensor_type().name(), "StringHost");
  EXPECT_THAT(tensor->strings(), ElementsAre("", ""));
  tensor->strings()[0] = "a";
  tensor->strings()[1] = "b";
  EXPECT_EQ(tensor->ToString(),
            "StringHostTensor shape = [2], values = [\"a\", \"b\"]");
  StringHostTensor copy = tensor->CopyRef();
  copy.strings()[1] = "changed";
  EXPECT_EQ(tensor->strings()[1], "changed");
  EXPECT_FALSE(StringHostTensor::CreateUninitialized(TensorShape({-1})));
}

TEST_F(HostTensorTest, StringTensorPrintingLimit) {
  std::vector<std::string> strings;
  for (int i = 0; i < 20; ++i) strings.push_back(std::to_string(i));
  auto tensor =
      StringHostTensor::CreateFromStrings(TensorShape({4, 5}), strings);
  ASSERT_TRUE(tensor.has_value());
  EXPECT_EQ(tensor->ToString(),
            "StringHostTensor shape = [4, 5], values = [\"0\", \"1\", \"2\", "
            "\"3\", \"4\", \"5\", \"6\", \"7\", \"8\", \"9\", \"10\", \"11\", "
            "\"12\", \"13\", \"14\", \"15\", ...]");
  EXPECT_FALSE(
      StringHostTensor::CreateFromStrings(TensorShape({3}), {"a", "b"}));
  auto scalar = StringHostTensor::CreateFromStrings(TensorShape(), {"x"});
  EXPECT_EQ(scalar->ToString(), "StringHostTensor shape = [], values = [\"x\"]");
}

//===--- CooHostTensor ----------------------------------------------------===//

TEST_F(HostTensorTest, DenseToCooUsesTfrtIndexOrder) {
  // Shape [3, 2], all non-zero: the reversed-dimension unravelling.
  DenseHostTensor dense = Make<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto coo = ConvertDenseToCoo(dense, *allocator_);
  ASSERT_TRUE(coo.ok()) << coo.status();
  EXPECT_EQ(coo->ToString(),
            "CooHostTensor dtype = i32, shape = [3, 2], indices = [0, 0, 0, 1, "
            "0, 2, 1, 0, 1, 1, 1, 2], values = [1, 2, 3, 4, 5, 6]");
  EXPECT_EQ(coo->tensor_type(), CooHostTensorType());
  EXPECT_EQ(coo->NumStored(), 6);
}

TEST_F(HostTensorTest, DenseToCooKeepsOnlyNonZeros) {
  DenseHostTensor dense = Make<int32_t>({2, 2}, {4, 0, 0, 4});
  auto coo = ConvertDenseToCoo(dense, *allocator_);
  ASSERT_TRUE(coo.ok());
  EXPECT_EQ(coo->ToString(),
            "CooHostTensor dtype = i32, shape = [2, 2], indices = [0, 0, 1, "
            "1], values = [4, 4]");
  DenseHostTensor zeros = Make<float>({2, 3}, {0, -0.0f, 0, 0, 0, 0});
  auto empty = ConvertDenseToCoo(zeros, *allocator_);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->ToString(),
            "CooHostTensor dtype = f32, shape = [2, 3], indices = [], values = "
            "[]");
  // Square shapes round-trip exactly through dense.
  auto back = ConvertCooToDense(*coo, *allocator_);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(DenseTensorEqual(*back, dense));
  auto zeros_back = ConvertCooToDense(*empty, *allocator_);
  ASSERT_TRUE(zeros_back.ok());
  EXPECT_THAT(zeros_back->elements<float>(), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST_F(HostTensorTest, DenseToCooOfBool) {
  DenseHostTensor flags = MakeBool({4}, {0, 1, 0, 1});
  auto coo = ConvertDenseToCoo(flags, *allocator_);
  ASSERT_TRUE(coo.ok());
  EXPECT_EQ(coo->ToString(),
            "CooHostTensor dtype = i1, shape = [4], indices = [1, 3], values = "
            "[1, 1]");
}

TEST_F(HostTensorTest, CooToDensePlacesRowMajor) {
  DenseHostTensor indices = Make<int64_t>({2, 2}, {0, 1, 2, 0});
  DenseHostTensor values = Make<float>({2}, {1.5f, -2.0f});
  CooHostTensor coo(TensorShape({3, 2}), DType::kF32, std::move(indices),
                    std::move(values));
  auto dense = ConvertCooToDense(coo, *allocator_);
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ(dense->shape(), TensorShape({3, 2}));
  EXPECT_THAT(dense->elements<float>(), ElementsAre(0, 1.5f, 0, 0, -2.0f, 0));
}

TEST_F(HostTensorTest, CooToDenseChecksBounds) {
  auto make = [&](std::vector<int64_t> coords) {
    return CooHostTensor(TensorShape({3, 2}), DType::kI32,
                         Make<int64_t>({1, 2}, coords), Make<int32_t>({1}, {7}));
  };
  for (auto coords : std::vector<std::vector<int64_t>>{
           {3, 0}, {0, 2}, {-1, 0}, {0, -1}, {INT64_MAX, 0}}) {
    auto dense = ConvertCooToDense(make(coords), *allocator_);
    ASSERT_FALSE(dense.ok());
    EXPECT_EQ(dense.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(dense.status().message(), HasSubstr("out of bounds"));
  }
  EXPECT_TRUE(ConvertCooToDense(make({2, 1}), *allocator_).ok());
}

TEST_F(HostTensorTest, CooToDenseChecksShapes) {
  // Indices of rank 3 coordinates for a rank-2 tensor.
  CooHostTensor wrong_rank(TensorShape({3, 2}), DType::kI32,
                           Make<int64_t>({1, 3}, {0, 0, 0}),
                           Make<int32_t>({1}, {7}));
  auto dense = ConvertCooToDense(wrong_rank, *allocator_);
  ASSERT_FALSE(dense.ok());
  EXPECT_THAT(dense.status().message(), HasSubstr("indices"));
  // Two indices rows but one value.
  CooHostTensor wrong_count(TensorShape({3, 2}), DType::kI32,
                            Make<int64_t>({2, 2}, {0, 0, 1, 1}),
                            Make<int32_t>({1}, {7}));
  EXPECT_FALSE(ConvertCooToDense(wrong_count, *allocator_).ok());
}

TEST_F(HostTensorTest, CooEqualityAndCopyRef) {
  auto a = ConvertDenseToCoo(Make<int32_t>({2, 2}, {1, 0, 0, 2}), *allocator_);
  auto b = ConvertDenseToCoo(Make<int32_t>({2, 2}, {1, 0, 0, 2}), *allocator_);
  auto c = ConvertDenseToCoo(Make<int32_t>({2, 2}, {1, 0, 2, 0}), *allocator_);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(CooTensorEqual(*a, *b));
  EXPECT_FALSE(CooTensorEqual(*a, *c));
  CooHostTensor copy = a->CopyRef();
  EXPECT_TRUE(CooTensorEqual(*a, copy));
  EXPECT_EQ(copy.values().data(), a->values().data());
}

//===--- ScalarHostTensor -------------------------------------------------===//

TEST_F(HostTensorTest, ScalarPrintingAndValue) {
  ScalarHostTensor scalar(TensorShape({2, 2}), int32_t{1});
  EXPECT_EQ(scalar.dtype(), DType::kI32);
  EXPECT_EQ(scalar.GetValue<int32_t>(), 1);
  EXPECT_EQ(scalar.ToString(),
            "ScalarHostTensor dtype = i32, shape = [2, 2], value = 1");
  ScalarHostTensor f(TensorShape({3}), 2.5f);
  EXPECT_EQ(f.ToString(),
            "ScalarHostTensor dtype = f32, shape = [3], value = 2.500000e+00");
  ScalarHostTensor c(TensorShape(), std::complex<double>(1, -1));
  EXPECT_EQ(c.GetValue<std::complex<double>>(), std::complex<double>(1, -1));
  int64_t raw = -7;
  ScalarHostTensor from_bytes(TensorMetadata(DType::kI64, {5}), &raw);
  EXPECT_EQ(from_bytes.GetValue<int64_t>(), -7);
  EXPECT_EQ(from_bytes.tensor_type().name(), "ScalarHost");
}

TEST_F(HostTensorTest, ScalarToDense) {
  ScalarHostTensor scalar(TensorShape({2, 3}), 7.0);
  auto dense = ConvertScalarToDense(scalar, *allocator_);
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ(dense->metadata(), scalar.metadata());
  EXPECT_THAT(dense->elements<double>(), ElementsAre(7, 7, 7, 7, 7, 7));
  auto fixed = CreateFixedSizeAllocator(64);
  ScalarHostTensor big(TensorShape({1000}), int32_t{1});
  auto failed = ConvertScalarToDense(big, *fixed);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kResourceExhausted);
}

//===--- GetTensorIfPresent -----------------------------------------------===//

TEST_F(HostTensorTest, GetTensorIfPresentFindsEveryHostType) {
  auto dense = MakeAvailableAsyncValueRef<DenseHostTensor>(
      Make<int32_t>({1}, {3}));
  auto strings = MakeAvailableAsyncValueRef<StringHostTensor>(
      *StringHostTensor::CreateUninitialized(TensorShape({1})));
  auto coo = MakeAvailableAsyncValueRef<CooHostTensor>(
      *ConvertDenseToCoo(Make<int32_t>({1}, {3}), *allocator_));
  auto scalar = MakeAvailableAsyncValueRef<ScalarHostTensor>(
      TensorShape({2}), int32_t{4});
  const Tensor* t = GetTensorIfPresent(*dense.GetAsyncValue());
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t, &dense.get());
  EXPECT_EQ(t->tensor_type(), DenseHostTensorType());
  EXPECT_EQ(GetTensorIfPresent(*strings.GetAsyncValue()), &strings.get());
  EXPECT_EQ(GetTensorIfPresent(*coo.GetAsyncValue()), &coo.get());
  const AsyncValue& const_scalar = *scalar.GetAsyncValue();
  EXPECT_EQ(GetTensorIfPresent(const_scalar), &scalar.get());
}

TEST_F(HostTensorTest, GetTensorIfPresentRejectsOtherValues) {
  auto number = MakeAvailableAsyncValueRef<int32_t>(1);
  EXPECT_EQ(GetTensorIfPresent(*number.GetAsyncValue()), nullptr);
  auto error = MakeErrorAsyncValueRef<DenseHostTensor>(
      absl::InternalError("boom"));
  EXPECT_EQ(GetTensorIfPresent(*error.GetAsyncValue()), nullptr);
  auto pending = MakeUnconstructedAsyncValueRef<DenseHostTensor>();
  EXPECT_EQ(GetTensorIfPresent(*pending.GetAsyncValue()), nullptr);
  pending.emplace(Make<int32_t>({1}, {9}));
  EXPECT_EQ(GetTensorIfPresent(*pending.GetAsyncValue()), &pending.get());
}

TEST_F(HostTensorTest, GetTensorIfPresentThroughIndirectValue) {
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  EXPECT_EQ(GetTensorIfPresent(*indirect), nullptr);
  auto scalar = MakeAvailableAsyncValueRef<ScalarHostTensor>(TensorShape(),
                                                             int32_t{4});
  indirect->ForwardTo(scalar.CopyRef());
  EXPECT_EQ(GetTensorIfPresent(*indirect), &scalar.get());
}

// A tensor class defined outside the library.
class TestTensor final : public Tensor {
 public:
  TestTensor() : Tensor(TensorMetadata(DType::kI32, {})) {}
  TensorType tensor_type() const override {
    return TensorType::Register("TestTensor");
  }
  void Print(std::string* out) const override { out->append("TestTensor"); }
};

TEST_F(HostTensorTest, RegisteredPayloadTypesAreFound) {
  auto value = MakeAvailableAsyncValueRef<TestTensor>();
  RegisterTensorPayloadType<TestTensor>();
  RegisterTensorPayloadType<TestTensor>();  // idempotent
  Tensor* tensor = GetTensorIfPresent(*value.GetAsyncValue());
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->ToString(), "TestTensor");
  EXPECT_EQ(tensor->tensor_type().name(), "TestTensor");
}

}  // namespace
}  // namespace asyncrt
