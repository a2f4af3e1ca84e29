#include "backends/cpu/nn/vector_math.h"

#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace internal {

// Names a build in test names and messages.
void PrintTo(const VectorMathVariant& variant, std::ostream* os) {
  *os << variant.isa;
}

}  // namespace internal
namespace {

double ExactGelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

struct Case {
  VectorFunction function;
  double (*exact)(double);
  const char* name;
};

const Case kCases[] = {
    {VectorFunction::kTanh, [](double x) { return std::tanh(x); }, "tanh"},
    {VectorFunction::kErf, [](double x) { return std::erf(x); }, "erf"},
    {VectorFunction::kGelu, ExactGelu, "gelu"},
};

std::vector<float> Inputs() {
  std::vector<float> x;
  for (int i = -20000; i <= 20000; ++i) x.push_back(i * 1e-3f);  // [-20, 20]
  for (float special : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f}) {
    x.push_back(special);
  }
  return x;
}

// Each build this CPU runs (SSE, AVX2, AVX-512), and the one
// ApplyVectorFunction picks.
class VectorMathTest
    : public ::testing::TestWithParam<internal::VectorMathVariant> {};

INSTANTIATE_TEST_SUITE_P(
    Builds, VectorMathTest,
    ::testing::ValuesIn(internal::SupportedVectorMathVariants().begin(),
                        internal::SupportedVectorMathVariants().end()),
    [](const ::testing::TestParamInfo<internal::VectorMathVariant>& info) {
      return std::string(info.param.isa);
    });

TEST(VectorMathChoiceTest, UsesTheWidestBuild) {
  const std::vector<float> x = Inputs();
  std::vector<float> chosen(x.size()), widest(x.size());
  ApplyVectorFunction(VectorFunction::kGelu, x.data(), chosen.data(), x.size());
  internal::SupportedVectorMathVariants().back().apply(
      VectorFunction::kGelu, x.data(), widest.data(), x.size());
  EXPECT_EQ(chosen, widest);
}

// Within 1e-6 relative of the exact value (or 1e-12 absolute near 0), as
// close as the scalar libm versions the ops used before, against doubles.
TEST_P(VectorMathTest, CloseToTheExactFunction) {
  const internal::VectorFunctionImpl apply = GetParam().apply;
  const std::vector<float> x = Inputs();
  std::vector<float> y(x.size());
  for (const Case& c : kCases) {
    apply(c.function, x.data(), y.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double exact = c.exact(x[i]);
      const double scalar_float_error =
          c.function == VectorFunction::kGelu
              ? std::fabs(ExactGelu(x[i]) -
                          0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678f)))
              : 0.0;
      EXPECT_NEAR(y[i], exact,
                  1e-6 * std::fabs(exact) + 1e-12 + 2 * scalar_float_error)
          << c.name << "(" << x[i] << ")";
    }
  }
}

// The same value gives the same bits wherever it sits: in a full packet, in
// the partial last one, alone, or computed in place. The fused kernel and
// the nn ops rely on it to agree bit for bit.
TEST_P(VectorMathTest, ResultsDoNotDependOnPosition) {
  const internal::VectorFunctionImpl apply = GetParam().apply;
  const std::vector<float> x = Inputs();
  for (const Case& c : kCases) {
    std::vector<float> all(x.size());
    apply(c.function, x.data(), all.data(), x.size());
    for (size_t offset : {size_t{1}, size_t{3}, size_t{7}}) {
      std::vector<float> shifted(x.size() - offset);
      apply(c.function, x.data() + offset, shifted.data(), shifted.size());
      for (size_t i = 0; i < shifted.size(); ++i) {
        ASSERT_EQ(shifted[i], all[i + offset]) << c.name << "(" << x[i] << ")";
      }
    }
    for (size_t i = 0; i < x.size(); i += 997) {
      float alone;
      apply(c.function, &x[i], &alone, 1);
      EXPECT_EQ(alone, all[i]) << c.name << "(" << x[i] << ")";
    }
    std::vector<float> in_place = x;
    apply(c.function, in_place.data(), in_place.data(), in_place.size());
    EXPECT_EQ(in_place, all) << c.name;
  }
}

TEST_P(VectorMathTest, NanStaysNan) {
  const float nan = std::nanf("");
  for (const Case& c : kCases) {
    float y = 0;
    GetParam().apply(c.function, &nan, &y, 1);
    EXPECT_TRUE(std::isnan(y)) << c.name;
  }
}

}  // namespace
}  // namespace asyncrt::nn
