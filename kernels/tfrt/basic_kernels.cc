// Kernels of the tfrt dialect's scalar ops: chains, constants, arithmetic,
// comparisons, casts and printing.
#include <cinttypes>
#include <complex>
#include <cstdio>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/kernels/tfrt_kernels.h"

namespace asyncrt {
namespace {

AsyncValueRef<Chain> NewChain() { return GetReadyChain(); }

// The executor runs a kernel only once all its operands are available, so
// merging is just producing a chain.
AsyncValueRef<Chain> MergeChains(RemainingArguments) { return GetReadyChain(); }

// The scalar attribute the op names `name`, as a T. Read by name: a program
// may give a kernel more attributes (`_tfrt_cost`), which sort anywhere.
template <typename T>
absl::StatusOr<T> ScalarAttribute(AsyncKernelFrame* frame,
                                  absl::string_view name) {
  const bef::Attribute* attribute = frame->GetAttribute(name);
  if (attribute == nullptr ||
      !internal::AttributeKindMatches<T>(attribute->kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", frame->kernel_name(), "' expects a scalar '",
                     name, "' attribute of its type"));
  }
  return attribute->scalar<T>();
}

// tfrt.constant.TYPE {value}.
template <typename T>
absl::StatusOr<T> Constant(AsyncKernelFrame* frame) {
  return ScalarAttribute<T>(frame, "value");
}

template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Wrap around, as the contract says, without signed-overflow UB.
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
T Minus(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}

// tfrt.constant.complexN {re, im}.
template <typename T>
absl::StatusOr<std::complex<T>> ComplexConstant(AsyncKernelFrame* frame) {
  absl::StatusOr<T> re = ScalarAttribute<T>(frame, "re");
  if (!re.ok()) return re.status();
  absl::StatusOr<T> im = ScalarAttribute<T>(frame, "im");
  if (!im.ok()) return im.status();
  return std::complex<T>(*re, *im);
}

template <typename T>
T Multiply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <typename T>
T Minimum(T a, T b) {
  return b < a ? b : a;
}

// Quotient and remainder; the one overflowing case wraps as in two's
// complement instead of trapping.
template <typename T>
absl::StatusOr<std::tuple<T, T>> DivInteger(T a, T b) {
  if (b == 0) return absl::InvalidArgumentError("Divide by zero");
  if (a == std::numeric_limits<T>::min() && b == -1) {
    return std::make_tuple(a, T{0});
  }
  return std::make_tuple(static_cast<T>(a / b), static_cast<T>(a % b));
}

template <typename T>
absl::StatusOr<T> DivFloat(T a, T b) {
  if (b == 0) return absl::InvalidArgumentError("Divide by zero");
  return a / b;
}

template <typename T>
bool Equal(T a, T b) {
  return a == b;
}
template <typename T>
bool LessEqual(T a, T b) {
  return a <= b;
}

template <typename From, typename To>
To Cast(From value) {
  return static_cast<To>(value);
}

// Prints and flushes, so lines interleave correctly with diagnostics on
// stderr when both go to one pipe.
template <typename... Args>
Chain Print(const char* format, Args... args) {
  std::printf(format, args...);
  std::fflush(stdout);
  return Chain();
}

Chain PrintI1(bool value) { return Print("int1 = %d\n", value ? 1 : 0); }
Chain PrintI32(int32_t value) { return Print("int32 = %" PRId32 "\n", value); }
Chain PrintI64(int64_t value) { return Print("int64 = %" PRId64 "\n", value); }
Chain PrintF32(float value) {
  return Print("f32 = %f\n", static_cast<double>(value));
}
Chain PrintF64(double value) { return Print("f64 = %f\n", value); }
Chain PrintComplex64(const std::complex<float>& value) {
  return Print("complex64 = %f+%fi\n", static_cast<double>(value.real()),
               static_cast<double>(value.imag()));
}
Chain PrintComplex128(const std::complex<double>& value) {
  return Print("complex128 = %f+%fi\n", value.real(), value.imag());
}

}  // namespace

void RegisterBasicKernels(KernelRegistry& registry) {
  auto add = [&](absl::string_view name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
  };
  add("tfrt.new.chain", ASYNCRT_KERNEL(NewChain));
  add("tfrt.merge.chains", ASYNCRT_KERNEL(MergeChains));

  add("tfrt.constant.i1", ASYNCRT_KERNEL(Constant<bool>));
  add("tfrt.constant.i32", ASYNCRT_KERNEL(Constant<int32_t>));
  add("tfrt.constant.i64", ASYNCRT_KERNEL(Constant<int64_t>));
  add("tfrt.constant.ui32", ASYNCRT_KERNEL(Constant<uint32_t>));
  add("tfrt.constant.f32", ASYNCRT_KERNEL(Constant<float>));
  add("tfrt.constant.f64", ASYNCRT_KERNEL(Constant<double>));

  // Sync versions, for tfrt.sync functions (they work anywhere: every
  // kernel here finishes before it returns).
  add("tfrt.constant_s.i1", ASYNCRT_KERNEL(Constant<bool>));
  add("tfrt.constant_s.i32", ASYNCRT_KERNEL(Constant<int32_t>));
  add("tfrt.constant_s.i64", ASYNCRT_KERNEL(Constant<int64_t>));
  add("tfrt.constant_s.f32", ASYNCRT_KERNEL(Constant<float>));
  add("tfrt.constant_s.f64", ASYNCRT_KERNEL(Constant<double>));
  add("tfrt.add_s.i32", ASYNCRT_KERNEL(Add<int32_t>));
  add("tfrt.add_s.i64", ASYNCRT_KERNEL(Add<int64_t>));
  add("tfrt.add_s.f32", ASYNCRT_KERNEL(Add<float>));
  add("tfrt.add_s.f64", ASYNCRT_KERNEL(Add<double>));
  add("tfrt.mul_s.i32", ASYNCRT_KERNEL(Multiply<int32_t>));
  add("tfrt.mul_s.i64", ASYNCRT_KERNEL(Multiply<int64_t>));
  add("tfrt.mul_s.f32", ASYNCRT_KERNEL(Multiply<float>));
  add("tfrt.mul_s.f64", ASYNCRT_KERNEL(Multiply<double>));

  add("tfrt.add.i32", ASYNCRT_KERNEL(Add<int32_t>));
  add("tfrt.add.i64", ASYNCRT_KERNEL(Add<int64_t>));
  add("tfrt.add.f32", ASYNCRT_KERNEL(Add<float>));
  add("tfrt.add.f64", ASYNCRT_KERNEL(Add<double>));
  add("tfrt.multiply.i32", ASYNCRT_KERNEL(Multiply<int32_t>));
  add("tfrt.multiply.i64", ASYNCRT_KERNEL(Multiply<int64_t>));
  add("tfrt.multiply.f32", ASYNCRT_KERNEL(Multiply<float>));
  add("tfrt.multiply.f64", ASYNCRT_KERNEL(Multiply<double>));
  add("tfrt.minimum.i32", ASYNCRT_KERNEL(Minimum<int32_t>));
  add("tfrt.minimum.i64", ASYNCRT_KERNEL(Minimum<int64_t>));
  add("tfrt.minimum.f32", ASYNCRT_KERNEL(Minimum<float>));
  add("tfrt.minimum.f64", ASYNCRT_KERNEL(Minimum<double>));
  add("tfrt.minus.i32", ASYNCRT_KERNEL(Minus<int32_t>));
  add("tfrt.minus.i64", ASYNCRT_KERNEL(Minus<int64_t>));
  add("tfrt.div.i32", ASYNCRT_KERNEL(DivInteger<int32_t>));
  add("tfrt.div.i64", ASYNCRT_KERNEL(DivInteger<int64_t>));
  add("tfrt.div.f32", ASYNCRT_KERNEL(DivFloat<float>));
  add("tfrt.div.f64", ASYNCRT_KERNEL(DivFloat<double>));
  add("tfrt.equal.i32", ASYNCRT_KERNEL(Equal<int32_t>));
  add("tfrt.equal.i64", ASYNCRT_KERNEL(Equal<int64_t>));
  add("tfrt.lessequal.i32", ASYNCRT_KERNEL(LessEqual<int32_t>));
  add("tfrt.lessequal.i64", ASYNCRT_KERNEL(LessEqual<int64_t>));

  add("tfrt.cast.i64_to_f32", ASYNCRT_KERNEL((Cast<int64_t, float>)));
  add("tfrt.cast.f32_to_i64", ASYNCRT_KERNEL((Cast<float, int64_t>)));
  add("tfrt.cast.i64_to_f64", ASYNCRT_KERNEL((Cast<int64_t, double>)));
  add("tfrt.cast.f64_to_i64", ASYNCRT_KERNEL((Cast<double, int64_t>)));

  add("tfrt.print.i1", ASYNCRT_KERNEL(PrintI1));
  add("tfrt.print.i32", ASYNCRT_KERNEL(PrintI32));
  add("tfrt.print.i64", ASYNCRT_KERNEL(PrintI64));
  add("tfrt.print.f32", ASYNCRT_KERNEL(PrintF32));
  add("tfrt.print.f64", ASYNCRT_KERNEL(PrintF64));
  add("tfrt.print.complex64", ASYNCRT_KERNEL(PrintComplex64));
  add("tfrt.print.complex128", ASYNCRT_KERNEL(PrintComplex128));
  add("tfrt.constant.complex64", ASYNCRT_KERNEL(ComplexConstant<float>));
  add("tfrt.constant.complex128", ASYNCRT_KERNEL(ComplexConstant<double>));
}

}  // namespace asyncrt
