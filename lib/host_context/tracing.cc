#include "asyncrt/host_context/tracing.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace asyncrt::tracing {
namespace internal {
std::atomic<int> enabled_level{0};
}  // namespace internal

namespace {

std::atomic<int> text_level{0};
std::atomic<bool> chrome_active{false};

void UpdateEnabledLevel() {
  int level = text_level.load(std::memory_order_relaxed);
  if (chrome_active.load(std::memory_order_relaxed)) {
    level = static_cast<int>(Level::kDebug);
  }
  internal::enabled_level.store(level, std::memory_order_relaxed);
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

//===--- Chrome trace recording -------------------------------------------===//

struct Event {
  char phase;  // 'X' complete, 'b'/'e' async begin/end.
  std::string name;
  std::string location;
  int64_t start_ns;
  int64_t duration_ns;
  uint64_t id;
};

struct OpenScope {
  std::string name;
  std::string location;
  int64_t start_ns;
};

// One per thread that ever recorded, kept by the registry after the thread
// exits so its events reach the file.
struct ThreadBuffer {
  std::mutex mutex;  // Uncontended but for StopChromeTrace.
  int tid = 0;
  std::vector<Event> events;
  std::vector<OpenScope> open;
};

struct Recorder {
  std::mutex mutex;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  std::FILE* file = nullptr;
  std::string path;
  int next_tid = 1;
};

// Leaked: threads may record during static destruction.
Recorder& GetRecorder() {
  static auto* recorder = new Recorder;
  return *recorder;
}

ThreadBuffer& ThisThreadBuffer() {
  thread_local std::shared_ptr<ThreadBuffer> buffer = [] {
    auto made = std::make_shared<ThreadBuffer>();
    Recorder& recorder = GetRecorder();
    std::lock_guard<std::mutex> lock(recorder.mutex);
    made->tid = recorder.next_tid++;
    recorder.buffers.push_back(made);
    return made;
  }();
  return *buffer;
}

void AppendJsonString(std::string& out, absl::string_view text) {
  out.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// Trace event format: ts and dur in microseconds.
void AppendEvent(std::string& out, const Event& event, int pid, int tid) {
  out.append("{\"name\":");
  AppendJsonString(out, event.name);
  absl::StrAppendFormat(&out, ",\"ph\":\"%c\",\"pid\":%d,\"tid\":%d",
                        event.phase, pid, tid);
  absl::StrAppendFormat(&out, ",\"ts\":%.3f", event.start_ns / 1000.0);
  if (event.phase == 'X') {
    absl::StrAppendFormat(&out, ",\"dur\":%.3f", event.duration_ns / 1000.0);
    out.append(",\"cat\":\"scope\"");
  } else {
    absl::StrAppendFormat(&out, ",\"cat\":\"function\",\"id\":\"0x%x\"",
                          event.id);
  }
  if (!event.location.empty()) {
    out.append(",\"args\":{\"location\":");
    AppendJsonString(out, event.location);
    out.push_back('}');
  }
  out.push_back('}');
}

void Record(Event event) {
  ThreadBuffer& buffer = ThisThreadBuffer();
  std::lock_guard<std::mutex> lock(buffer.mutex);
  buffer.events.push_back(std::move(event));
}

}  // namespace

void Enable(Level level) {
  text_level.store(static_cast<int>(level), std::memory_order_relaxed);
  UpdateEnabledLevel();
}

void Disable() {
  text_level.store(0, std::memory_order_relaxed);
  UpdateEnabledLevel();
}

absl::Status StartChromeTrace(const std::string& path) {
  Recorder& recorder = GetRecorder();
  std::lock_guard<std::mutex> lock(recorder.mutex);
  if (recorder.file != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a Chrome trace is already being recorded to '", recorder.path, "'"));
  }
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write the trace file '", path, "'"));
  }
  recorder.file = file;
  recorder.path = path;
  for (auto& buffer : recorder.buffers) {
    std::lock_guard<std::mutex> buffer_lock(buffer->mutex);
    buffer->events.clear();
    buffer->open.clear();
  }
  chrome_active.store(true, std::memory_order_relaxed);
  UpdateEnabledLevel();
  return absl::OkStatus();
}

absl::Status StopChromeTrace() {
  Recorder& recorder = GetRecorder();
  std::lock_guard<std::mutex> lock(recorder.mutex);
  if (recorder.file == nullptr) return absl::OkStatus();
  chrome_active.store(false, std::memory_order_relaxed);
  UpdateEnabledLevel();
  const int pid = static_cast<int>(getpid());
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto separate = [&] {
    if (!first) out.append(",\n");
    first = false;
  };
  for (auto& buffer : recorder.buffers) {
    std::lock_guard<std::mutex> buffer_lock(buffer->mutex);
    if (buffer->events.empty()) continue;
    separate();
    absl::StrAppendFormat(&out,
                          "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                          "\"tid\":%d,\"args\":{\"name\":\"thread %d\"}}",
                          pid, buffer->tid, buffer->tid);
    for (const Event& event : buffer->events) {
      separate();
      AppendEvent(out, event, pid, buffer->tid);
    }
    buffer->events.clear();
    buffer->open.clear();
  }
  out.append("]}\n");
  bool written =
      std::fwrite(out.data(), 1, out.size(), recorder.file) == out.size();
  written = std::fclose(recorder.file) == 0 && written;
  recorder.file = nullptr;
  if (!written) {
    return absl::DataLossError(
        absl::StrCat("could not write the trace file '", recorder.path, "'"));
  }
  return absl::OkStatus();
}

bool IsChromeTraceActive() {
  return chrome_active.load(std::memory_order_relaxed);
}

void BeginScope(Level level, absl::string_view name,
                absl::string_view location) {
  if (text_level.load(std::memory_order_relaxed) >= static_cast<int>(level)) {
    // One write per line keeps lines from different threads whole.
    std::string line = "Scope:";
    line.append(name.data(), name.size());
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  if (chrome_active.load(std::memory_order_relaxed)) {
    ThreadBuffer& buffer = ThisThreadBuffer();
    std::lock_guard<std::mutex> lock(buffer.mutex);
    buffer.open.push_back({std::string(name), std::string(location), NowNs()});
  }
}

void EndScope(Level level) {
  if (text_level.load(std::memory_order_relaxed) >= static_cast<int>(level)) {
    std::fputs("End Scope\n", stdout);
  }
  if (chrome_active.load(std::memory_order_relaxed)) {
    ThreadBuffer& buffer = ThisThreadBuffer();
    std::lock_guard<std::mutex> lock(buffer.mutex);
    // Empty when recording started inside this scope.
    if (buffer.open.empty()) return;
    OpenScope scope = std::move(buffer.open.back());
    buffer.open.pop_back();
    int64_t now = NowNs();
    buffer.events.push_back({'X', std::move(scope.name),
                             std::move(scope.location), scope.start_ns,
                             now - scope.start_ns, 0});
  }
}

void BeginAsyncSpan(absl::string_view name, uint64_t id) {
  if (!chrome_active.load(std::memory_order_relaxed)) return;
  Record({'b', std::string(name), std::string(), NowNs(), 0, id});
}

void EndAsyncSpan(absl::string_view name, uint64_t id) {
  if (!chrome_active.load(std::memory_order_relaxed)) return;
  Record({'e', std::string(name), std::string(), NowNs(), 0, id});
}

}  // namespace asyncrt::tracing
