#include "asyncrt/bef_executor/function.h"

namespace asyncrt {
namespace {
thread_local int run_on_calling_thread_depth = 0;
}  // namespace

ScopedRunOnCallingThread::ScopedRunOnCallingThread() {
  ++run_on_calling_thread_depth;
}

ScopedRunOnCallingThread::~ScopedRunOnCallingThread() {
  --run_on_calling_thread_depth;
}

bool ScopedRunOnCallingThread::Active() {
  return run_on_calling_thread_depth > 0;
}

}  // namespace asyncrt
