// HostStream: a Stream whose work is host functions, run in order on a
// thread of the stream's own. It is the stream of simulated devices (the
// example plug-in's accelerator, tests) and the reference against which
// backends' streams are tested: its semantics are Stream's (stream.h), with
// nothing a real device adds.
//
// Ownership: the creator owns the stream; it must be destroyed before the
// HostContext whose blocking pool completes its events. Thread-safety: all
// members are thread-safe. Blocking: Enqueue, RecordEvent, WaitForEvent and
// AddCallback never block; the destructor blocks until every item already
// enqueued has run (a wait for an event that never completes would block
// it forever, as a CUDA stream would never drain).
#ifndef ASYNCRT_DEVICE_HOST_STREAM_H_
#define ASYNCRT_DEVICE_HOST_STREAM_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "asyncrt/device/stream.h"
#include "asyncrt/host_context/host_context.h"

namespace asyncrt {

class HostStream final : public Stream {
 public:
  // Starts the stream's thread. `host` completes events and runs callbacks
  // on its blocking pool.
  HostStream(Device& device, HostContext* host);
  // Runs everything enqueued, then stops the thread.
  ~HostStream() override;

  // Runs `work` on the stream's thread after everything enqueued before;
  // skipped if the stream has failed. A non-OK result fails the stream.
  void Enqueue(absl::AnyInvocable<absl::Status() &&> work);

  RCReference<DeviceEvent> RecordEvent() override;
  void WaitForEvent(RCReference<DeviceEvent> event) override;
  void AddCallback(absl::AnyInvocable<void(absl::Status) &&> callback) override;

  // The stream's first error, or OK. Reflects only work that has run.
  absl::Status status() const;

 private:
  // One queued item; exactly one member is set.
  struct Item {
    absl::AnyInvocable<absl::Status() &&> work;
    RCReference<DeviceEvent> record;
    RCReference<DeviceEvent> wait;
    absl::AnyInvocable<void(absl::Status) &&> callback;
  };

  void Push(Item item);
  void Run();

  HostContext* host_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  // Guarded by mutex_.
  std::deque<Item> queue_;
  bool stopping_ = false;
  absl::Status status_;
  // Last: started once the members above exist.
  std::thread thread_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_DEVICE_HOST_STREAM_H_
