// An example kernel plug-in for `bef_executor --shared_libs`: a shared
// library that registers its kernels through the exported entry point. Its
// AsyncRT symbols resolve against the executable that loads it.
#include <cstdio>

#include "asyncrt/bef_executor/kernel_utils.h"

namespace {

asyncrt::Chain PluginHello(asyncrt::StringAttribute name) {
  std::printf("hello from the plug-in, %.*s\n",
              static_cast<int>(name.get().size()), name.get().data());
  std::fflush(stdout);
  return asyncrt::Chain();
}

}  // namespace

extern "C" void asyncrt_register_kernels(asyncrt::KernelRegistry* registry) {
  (void)registry->AddKernel("plugin.hello", ASYNCRT_KERNEL(PluginHello));
}
