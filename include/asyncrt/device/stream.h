// Streams and events: how work reaches a device in order, and how the host
// learns that it is done.
//
// A Stream is an in-order queue of a device's work (kernels, copies). An
// event marks a position in a stream: it is done once everything enqueued
// before that position has finished, and carries the stream's error if that
// work failed. Another stream can wait for an event (its later work starts
// only after the event), and the host learns of completion through the
// event's async value or a callback, never by blocking a worker thread:
// backends complete events and run callbacks on the host's blocking pool
// (CUDA: events polled there; a simulated device: its own thread hands
// completion over).
//
// Errors are sticky, as CUDA's are: once work on a stream fails, its later
// work is skipped and every later event and callback gets the first error.
//
// Ownership: a Stream belongs to whoever created it (a device backend) and
// must be destroyed before its HostContext; events are reference-counted
// and may outlive their stream. Thread-safety: every member of Stream and
// DeviceEvent is thread-safe; work is ordered by the order in which the
// calls return. Blocking: none of these calls blocks the caller, except a
// Stream's destructor (HostStream: until its queued work has run).
#ifndef ASYNCRT_DEVICE_STREAM_H_
#define ASYNCRT_DEVICE_STREAM_H_

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/host_context/device.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

class DeviceEvent : public ReferenceCounted<DeviceEvent> {
 public:
  DeviceEvent() : done_(MakeUnconstructedAsyncValueRef<Chain>()) {}
  virtual ~DeviceEvent() = default;

  // Available (a Chain) once the event's position in its stream is
  // reached, or an error if work before it failed. Continuations attached
  // to it run on the thread that completes it (the blocking pool): hop to
  // the work queue for anything long.
  const AsyncValueRef<Chain>& done() const { return done_; }
  bool IsDone() const { return done_.IsAvailable(); }

  // For the backend that owns the event: completes it, once.
  void Complete(absl::Status status);

 private:
  AsyncValueRef<Chain> done_;
};

class Stream {
 public:
  explicit Stream(Device& device) : device_(device) {}
  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // The device this stream's work runs on.
  Device& device() const { return device_; }

  // A new event at the current end of the stream.
  virtual RCReference<DeviceEvent> RecordEvent() = 0;

  // Work enqueued after this call starts only once `event` (of any stream)
  // is done. If the event failed, this stream fails with its error.
  virtual void WaitForEvent(RCReference<DeviceEvent> event) = 0;

  // Calls `callback` with OK or the stream's first error once everything
  // enqueued before is done, on the host's blocking pool.
  virtual void AddCallback(
      absl::AnyInvocable<void(absl::Status) &&> callback) = 0;

  // Available once everything enqueued so far is done (an event's value).
  AsyncValueRef<Chain> OnDone();

 private:
  Device& device_;
};

// Runs `task` on `host`'s blocking pool, where backends complete events
// and run stream callbacks; inline if the pool refuses it (its queue is
// full: late, but still correct).
void RunOnBlockingPool(HostContext* host, absl::AnyInvocable<void() &&> task);

}  // namespace asyncrt

#endif  // ASYNCRT_DEVICE_STREAM_H_
