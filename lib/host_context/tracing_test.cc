#include "asyncrt/host_context/tracing.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace asyncrt::tracing {
namespace {

std::string TempPath(const char* name) {
  return absl::StrCat(::testing::TempDir(), "/", name, "_", getpid(), ".json");
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file),
                     std::istreambuf_iterator<char>());
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(ChromeTraceTest, RecordsScopesOfEveryLevelFromEveryThread) {
  std::string path = TempPath("scopes");
  ASSERT_FALSE(IsEnabled(Level::kDefault));
  ASSERT_TRUE(StartChromeTrace(path).ok());
  EXPECT_TRUE(IsChromeTraceActive());
  EXPECT_TRUE(IsEnabled(Level::kDebug));
  {
    ScopedTrace outer(Level::kDefault, "outer \"quoted\"", "prog.mlir:3:5");
    ScopedTrace inner(Level::kDebug, [] { return std::string("inner"); });
  }
  std::thread worker([] { ScopedTrace scope(Level::kVerbose, "on worker"); });
  worker.join();
  BeginAsyncSpan("call f", 42);
  EndAsyncSpan("call f", 42);
  ASSERT_TRUE(StopChromeTrace().ok());
  EXPECT_FALSE(IsChromeTraceActive());
  EXPECT_FALSE(IsEnabled(Level::kDefault));

  std::string json = ReadFile(path);
  EXPECT_TRUE(absl::StartsWith(json,
                               "{\"displayTimeUnit\":\"ns\","
                               "\"traceEvents\":["));
  EXPECT_TRUE(absl::EndsWith(json, "]}\n"));
  EXPECT_EQ(Count(json, "\"ph\":\"X\""), 3);
  EXPECT_TRUE(absl::StrContains(json, "\"name\":\"outer \\\"quoted\\\"\""));
  EXPECT_TRUE(
      absl::StrContains(json, "\"args\":{\"location\":\"prog.mlir:3:5\"}"));
  EXPECT_TRUE(absl::StrContains(json, "\"name\":\"on worker\""));
  EXPECT_EQ(Count(json, "\"ph\":\"b\""), 1);
  EXPECT_EQ(Count(json, "\"ph\":\"e\""), 1);
  EXPECT_TRUE(absl::StrContains(json, "\"id\":\"0x2a\""));
  // Two threads recorded: two thread-name records.
  EXPECT_EQ(Count(json, "\"thread_name\""), 2);
  std::remove(path.c_str());
}

TEST(ChromeTraceTest, NothingIsRecordedWhenOff) {
  std::string path = TempPath("off");
  { ScopedTrace before(Level::kDefault, "before the trace"); }
  ASSERT_TRUE(StartChromeTrace(path).ok());
  ASSERT_TRUE(StopChromeTrace().ok());
  { ScopedTrace after(Level::kDefault, "after the trace"); }
  std::string json = ReadFile(path);
  EXPECT_FALSE(absl::StrContains(json, "before the trace"));
  EXPECT_FALSE(absl::StrContains(json, "after the trace"));
  std::remove(path.c_str());
}

TEST(ChromeTraceTest, ErrorsAreStatuses) {
  EXPECT_TRUE(StopChromeTrace().ok());  // Nothing started.
  EXPECT_EQ(StartChromeTrace("/nonexistent-dir/trace.json").code(),
            absl::StatusCode::kInvalidArgument);
  std::string path = TempPath("twice");
  ASSERT_TRUE(StartChromeTrace(path).ok());
  EXPECT_EQ(StartChromeTrace(path).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(StopChromeTrace().ok());
  std::remove(path.c_str());
}

TEST(ChromeTraceTest, TextScopesStillPrintOnlyTheirLevel) {
  std::string path = TempPath("text");
  Enable(Level::kDefault);
  ASSERT_TRUE(StartChromeTrace(path).ok());
  ::testing::internal::CaptureStdout();
  {
    ScopedTrace shown(Level::kDefault, "shown");
    ScopedTrace hidden(Level::kDebug, "hidden");
  }
  std::fflush(stdout);
  std::string text = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(StopChromeTrace().ok());
  Disable();
  EXPECT_EQ(text, "Scope:shown\nEnd Scope\n");
  std::string json = ReadFile(path);
  EXPECT_TRUE(absl::StrContains(json, "\"name\":\"hidden\""));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace asyncrt::tracing
