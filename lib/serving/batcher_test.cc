// Dynamic batching: concurrent requests merge into fewer batches with the
// same answers as alone; padding to allowed sizes; requests that cannot
// stack; a model whose outputs drop the batch dimension.
#include "asyncrt/serving/batcher.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/serving/serving_test_util.h"

namespace asyncrt::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// "double": y = 2 x. "constant": returns a scalar whatever its input.
// "reverse": each string reversed.
class BatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            ("asyncrt_batcher_test_" + std::to_string(getpid()));
    testing::WriteBefVersion(base_ / "double", 1,
                             testing::TestModelBef("serving_test.double"));
    testing::WriteBefVersion(base_ / "constant", 1,
                             testing::TestModelBef("serving_test.scalar"));
    testing::WriteBefVersion(base_ / "reverse", 1,
                             testing::TestModelBef("serving_test.reverse"));
    runtime_ = testing::TestRuntime();
    repository_ = std::make_unique<ModelRepository>(
        *runtime_,
        std::vector<ModelConfig>{{"double", (base_ / "double").string(), {}},
                                 {"constant", (base_ / "constant").string(), {}},
                                 {"reverse", (base_ / "reverse").string(), {}}});
    ASSERT_TRUE(repository_->Poll().ok());
  }

  void TearDown() override {
    repository_.reset();
    runtime_.reset();
    std::filesystem::remove_all(base_);
  }

  DenseHostTensor Rows(std::vector<int64_t> shape, float first) {
    auto tensor = DenseHostTensor::CreateUninitialized(
        TensorMetadata(DType::kF32, TensorShape(shape)),
        *runtime_->host().allocator());
    auto elements = tensor->elements<float>();
    for (size_t i = 0; i < elements.size(); ++i) elements[i] = first + i;
    return std::move(*tensor);
  }

  std::shared_ptr<const Servable> Find(const std::string& name) {
    return *repository_->Find(name, std::nullopt);
  }

  std::filesystem::path base_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<ModelRepository> repository_;
};

TEST_F(BatcherTest, ConcurrentRequestsShareBatchesAndGetTheirOwnRows) {
  ServingMetrics metrics;
  BatchingOptions options;
  options.max_batch_size = 8;
  options.batch_timeout = absl::Milliseconds(50);
  Batcher batcher(*runtime_, options, &metrics);
  constexpr int kRequests = 8;
  std::vector<std::vector<float>> answers(kRequests);
  std::atomic<int> left{kRequests};
  testing::Notification all_done;
  for (int i = 0; i < kRequests; ++i) {
    std::vector<ServingTensor> inputs;
    inputs.push_back(Rows({1, 2}, 10.0f * i));
    batcher.Submit(Find("double"), std::move(inputs),
                   [&, i](absl::StatusOr<std::vector<ServingTensor>> out) {
                     if (out.ok()) {
                       auto e = (*out)[0].dense().elements<float>();
                       answers[i].assign(e.begin(), e.end());
                     }
                     if (left.fetch_sub(1) == 1) all_done.Notify();
                   });
  }
  all_done.WaitForNotification();
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_THAT(answers[i], ElementsAre(20.0f * i, 20.0f * i + 2)) << i;
  }
  const std::string text = metrics.PrometheusText(*repository_);
  // One full batch of 8.
  EXPECT_THAT(text, HasSubstr("asyncrt_serving_batch_size_count{model=\"double\",version=\"1\"} 1"));
  EXPECT_THAT(text, HasSubstr("asyncrt_serving_batch_size_sum{model=\"double\",version=\"1\"} 8"));
}

TEST_F(BatcherTest, PadsToAllowedSizesAndKeepsShapesApart) {
  BatchingOptions options;
  options.max_batch_size = 8;
  options.allowed_batch_sizes = {4, 8};
  options.batch_timeout = absl::Milliseconds(5);
  Batcher batcher(*runtime_, options, nullptr);
  std::atomic<int> left{2};
  testing::Notification done;
  std::vector<int64_t> first_dims, second_dims;
  std::vector<float> second_values;
  std::vector<ServingTensor> three;
  three.push_back(Rows({3, 2}, 1));
  batcher.Submit(Find("double"), std::move(three),
                 [&](absl::StatusOr<std::vector<ServingTensor>> out) {
                   ASSERT_TRUE(out.ok()) << out.status();
                   auto dims = (*out)[0].shape().GetDimensions();
                   first_dims.assign(dims.begin(), dims.end());
                   if (left.fetch_sub(1) == 1) done.Notify();
                 });
  // Rows of another shape cannot join that batch.
  std::vector<ServingTensor> wide;
  wide.push_back(Rows({1, 3}, 1));
  batcher.Submit(Find("double"), std::move(wide),
                 [&](absl::StatusOr<std::vector<ServingTensor>> out) {
                   ASSERT_TRUE(out.ok()) << out.status();
                   auto dims = (*out)[0].shape().GetDimensions();
                   second_dims.assign(dims.begin(), dims.end());
                   auto e = (*out)[0].dense().elements<float>();
                   second_values.assign(e.begin(), e.end());
                   if (left.fetch_sub(1) == 1) done.Notify();
                 });
  done.WaitForNotification();
  EXPECT_THAT(first_dims, ElementsAre(3, 2));
  EXPECT_THAT(second_dims, ElementsAre(1, 3));
  EXPECT_THAT(second_values, ElementsAre(2, 4, 6));
}

TEST_F(BatcherTest, StringRowsStackAndSplit) {
  BatchingOptions options;
  options.max_batch_size = 4;
  options.allowed_batch_sizes = {4};
  options.batch_timeout = absl::Milliseconds(50);
  Batcher batcher(*runtime_, options, nullptr);
  std::atomic<int> left{2};
  testing::Notification done;
  std::vector<std::vector<std::string>> answers(2);
  const std::vector<std::vector<std::string>> requests = {{"ab", "cd"},
                                                          {"xyz"}};
  for (int i = 0; i < 2; ++i) {
    std::vector<ServingTensor> inputs;
    inputs.push_back(*StringHostTensor::CreateFromStrings(
        TensorShape({static_cast<int64_t>(requests[i].size())}),
        requests[i]));
    batcher.Submit(Find("reverse"), std::move(inputs),
                   [&, i](absl::StatusOr<std::vector<ServingTensor>> out) {
                     ASSERT_TRUE(out.ok()) << out.status();
                     auto strings = (*out)[0].strings().strings();
                     answers[i].assign(strings.begin(), strings.end());
                     if (left.fetch_sub(1) == 1) done.Notify();
                   });
  }
  done.WaitForNotification();
  // One batch of 4 (3 rows and an empty one of padding), split back.
  EXPECT_THAT(answers[0], ElementsAre("ba", "dc"));
  EXPECT_THAT(answers[1], ElementsAre("zyx"));
}

TEST_F(BatcherTest, OutputsWithoutTheBatchDimensionFailTheBatch) {
  Batcher batcher(*runtime_, BatchingOptions{}, nullptr);
  testing::Notification done;
  absl::Status status;
  std::vector<ServingTensor> inputs;
  inputs.push_back(Rows({2, 2}, 1));
  batcher.Submit(Find("constant"), std::move(inputs),
                 [&](absl::StatusOr<std::vector<ServingTensor>> out) {
                   status = out.status();
                   done.Notify();
                 });
  done.WaitForNotification();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("batching needs outputs whose first "
                                          "dimension is the batch's (2)"));
}

TEST_F(BatcherTest, UnbatchableRequestsRunAlone) {
  Batcher batcher(*runtime_, BatchingOptions{}, nullptr);
  testing::Notification done;
  std::vector<float> values;
  std::vector<ServingTensor> inputs;
  inputs.push_back(Rows({}, 4));  // A scalar: no batch dimension.
  batcher.Submit(Find("double"), std::move(inputs),
                 [&](absl::StatusOr<std::vector<ServingTensor>> out) {
                   ASSERT_TRUE(out.ok()) << out.status();
                   auto e = (*out)[0].dense().elements<float>();
                   values.assign(e.begin(), e.end());
                   done.Notify();
                 });
  done.WaitForNotification();
  EXPECT_THAT(values, ElementsAre(8));
}

}  // namespace
}  // namespace asyncrt::serving
