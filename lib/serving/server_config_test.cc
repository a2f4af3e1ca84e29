// TF Serving's config files in text format: models with policies and
// labels, monitoring, and the errors for bad files.
#include "asyncrt/serving/server_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ServerConfigTest, ModelsPoliciesAndLabels) {
  absl::StatusOr<std::vector<ModelConfig>> models = ParseModelConfigText(R"(
    model_config_list {
      config {
        name: 'a'
        base_path: '/models/a'
        model_platform: 'tensorflow'
        model_version_policy { specific { versions: 1 versions: 3 } }
        version_labels { key: 'stable' value: 1 }
        version_labels { key: 'canary' value: 3 }
      }
      config { name: "b" base_path: "/models/b"
               model_version_policy { latest { num_versions: 2 } } }
      config { name: "c" base_path: "/models/c" model_version_policy { all {} } }
    })");
  ASSERT_TRUE(models.ok()) << models.status();
  ASSERT_EQ(models->size(), 3u);
  EXPECT_EQ((*models)[0].policy.kind, VersionPolicy::Kind::kSpecific);
  EXPECT_THAT((*models)[0].policy.specific, ElementsAre(1, 3));
  EXPECT_EQ((*models)[0].labels.at("canary"), 3);
  EXPECT_EQ((*models)[1].policy.kind, VersionPolicy::Kind::kLatest);
  EXPECT_EQ((*models)[1].policy.latest, 2);
  EXPECT_EQ((*models)[2].policy.kind, VersionPolicy::Kind::kAll);
}

TEST(ServerConfigTest, BadFilesAreErrors) {
  auto error = [](absl::string_view text) {
    absl::StatusOr<std::vector<ModelConfig>> models = ParseModelConfigText(text);
    EXPECT_FALSE(models.ok()) << text;
    return std::string(models.status().message());
  };
  EXPECT_THAT(error("model_config_list { config { name: "),
              HasSubstr("model config: line 1"));
  EXPECT_THAT(error("model_config_list { config { nme: 'a' } }"),
              HasSubstr("nme"));
  EXPECT_THAT(error("model_config_list { config { name: 'a' } }"),
              HasSubstr("needs a name and a base_path"));
  EXPECT_THAT(error("model_config_list { config { name: 'a' base_path: 'x' } "
                    "config { name: 'a' base_path: 'y' } }"),
              HasSubstr("configured twice"));
  EXPECT_THAT(error("model_config_list { config { name: 'a' base_path: 'x' "
                    "model_version_policy { specific { versions: 1 } } "
                    "version_labels { key: 's' value: 2 } } }"),
              HasSubstr("names version 2"));
  EXPECT_THAT(error(""), HasSubstr("no models"));
}

TEST(ServerConfigTest, Monitoring) {
  absl::StatusOr<MonitoringOptions> options = ParseMonitoringConfigText(
      "prometheus_config { enable: true, path: '/metrics' }");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->prometheus_enabled);
  EXPECT_EQ(options->prometheus_path, "/metrics");
  EXPECT_FALSE(ParseMonitoringConfigText("prometheus_config { x: 1 }").ok());
}

}  // namespace
}  // namespace asyncrt::serving
