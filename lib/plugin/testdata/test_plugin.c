/* A device plug-in for the loader's tests, built several times with
 * different definitions to be each of the bad plug-ins the loader must
 * refuse (and, with none, a good one):
 *   TEST_PLUGIN_NO_INIT        exports no AsyncRT_InitPlugin
 *   TEST_PLUGIN_MAJOR/_MINOR   reports that API version
 *   TEST_PLUGIN_TYPE           its device type (default "syncdev")
 *   TEST_PLUGIN_FAIL_INIT      init reports an error
 *   TEST_PLUGIN_OMIT_DTOD      leaves memcpy_dtod unset
 *   TEST_PLUGIN_FAIL_DEVICE    creating device 1 fails
 *   TEST_PLUGIN_SOME_GRAPH_FNS has begin_capture but not the other three
 * Its device is synchronous: work runs as it is enqueued and callbacks are
 * called before host_callback returns, which the runtime must handle as
 * well as a real device's later completion. It counts its live devices and
 * platforms (TestPluginLive) so tests can see that nothing leaks. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/c/device_plugin.h"

#ifndef TEST_PLUGIN_MAJOR
#define TEST_PLUGIN_MAJOR ASYNCRT_PLUGIN_API_MAJOR
#endif
#ifndef TEST_PLUGIN_MINOR
#define TEST_PLUGIN_MINOR ASYNCRT_PLUGIN_API_MINOR
#endif
#ifndef TEST_PLUGIN_TYPE
#define TEST_PLUGIN_TYPE "syncdev"
#endif

static atomic_int live_devices;
static atomic_int live_platforms;

ASYNCRT_PLUGIN_EXPORT int TestPluginLive(void) {
  return atomic_load(&live_devices) + atomic_load(&live_platforms);
}

static const AsyncRT_RuntimeApi* api;

static void* Allocate(const AsyncRT_Device* d, uint64_t size, uint64_t a) {
  (void)d;
  return aligned_alloc(a, (size + a - 1) / a * a + a);
}
static void Deallocate(const AsyncRT_Device* d, void* memory, uint64_t s) {
  (void)d;
  (void)s;
  free(memory);
}
static void CreateStream(const AsyncRT_Device* d, AsyncRT_Stream* stream,
                         AsyncRT_Status* status) {
  (void)d;
  (void)status;
  *stream = (AsyncRT_Stream)malloc(1);
}
static void DestroyStream(const AsyncRT_Device* d, AsyncRT_Stream stream) {
  (void)d;
  free(stream);
}
static void CreateEvent(const AsyncRT_Device* d, AsyncRT_Event* event,
                        AsyncRT_Status* status) {
  (void)d;
  (void)status;
  *event = (AsyncRT_Event)malloc(1);
}
static void DestroyEvent(const AsyncRT_Device* d, AsyncRT_Event event) {
  (void)d;
  free(event);
}
static void RecordEvent(const AsyncRT_Device* d, AsyncRT_Stream s,
                        AsyncRT_Event e, AsyncRT_Status* status) {
  (void)d;
  (void)s;
  (void)e;
  (void)status;
}
static AsyncRT_EventStatus QueryEvent(const AsyncRT_Device* d,
                                      AsyncRT_Event e) {
  (void)d;
  (void)e;
  return ASYNCRT_EVENT_COMPLETE;
}
static void WaitForEvent(const AsyncRT_Device* d, AsyncRT_Stream s,
                         AsyncRT_Event e, AsyncRT_Status* status) {
  (void)d;
  (void)s;
  (void)e;
  (void)status;
}
static void Memcpy(const AsyncRT_Device* d, AsyncRT_Stream s, void* dst,
                   const void* src, uint64_t size, AsyncRT_Status* status) {
  (void)d;
  (void)s;
  (void)status;
  memcpy(dst, src, size);
}
static void HostCallback(const AsyncRT_Device* d, AsyncRT_Stream s,
                         AsyncRT_CallbackFn callback, void* arg,
                         AsyncRT_Status* status) {
  (void)d;
  (void)s;
  (void)status;
  callback(arg, ASYNCRT_OK, NULL);
}

static void CreateDevice(const AsyncRT_Platform* platform,
                         AsyncRT_Device* device, AsyncRT_Status* status) {
  (void)platform;
#ifdef TEST_PLUGIN_FAIL_DEVICE
  if (device->ordinal == 1) {
    api->set_status(status, ASYNCRT_UNAVAILABLE, "device 1 is unplugged");
    return;
  }
#else
  (void)status;
#endif
  device->device_handle = NULL;
  device->memory_limit_bytes = 1 << 20;
  device->physical_description = "synchronous test device";
  atomic_fetch_add(&live_devices, 1);
}
static void DestroyDevice(const AsyncRT_Platform* platform,
                          AsyncRT_Device* device) {
  (void)platform;
  (void)device;
  atomic_fetch_sub(&live_devices, 1);
}
static void DestroyPlatform(AsyncRT_Platform* platform) {
  (void)platform;
  atomic_fetch_sub(&live_platforms, 1);
}

/* Copies its input: enough to run an op on the device. */
static void Identity(AsyncRT_KernelContext* context, void* data,
                     AsyncRT_Status* status) {
  AsyncRT_TensorView in, out;
  (void)data;
  in.struct_size = ASYNCRT_TENSOR_VIEW_STRUCT_SIZE;
  out.struct_size = ASYNCRT_TENSOR_VIEW_STRUCT_SIZE;
  api->get_input(context, 0, &in, status);
  api->allocate_output(context, 0, &out, status);
  if (out.size_bytes != in.size_bytes) {
    api->set_status(status, ASYNCRT_INTERNAL, "sizes differ");
    return;
  }
  memcpy(out.data, in.data, in.size_bytes);
}

#ifdef TEST_PLUGIN_SOME_GRAPH_FNS
static void BeginCapture(const AsyncRT_Device* device, AsyncRT_Stream stream,
                         AsyncRT_Status* status) {
  (void)device;
  (void)stream;
  (void)status;
}
#endif

#ifndef TEST_PLUGIN_NO_INIT
ASYNCRT_PLUGIN_EXPORT void AsyncRT_InitPlugin(AsyncRT_PluginParams* params,
                                              AsyncRT_Status* status) {
  AsyncRT_Platform* platform = params->platform;
  AsyncRT_DeviceFns* fns = params->device_fns;
  AsyncRT_KernelDef kernel;
  api = params->api;
  params->plugin_api_major = TEST_PLUGIN_MAJOR;
  params->plugin_api_minor = TEST_PLUGIN_MINOR;
  params->plugin_api_patch = 0;
#ifdef TEST_PLUGIN_FAIL_INIT
  api->set_status(status, ASYNCRT_UNAVAILABLE, "no accelerator found");
  return;
#endif
  atomic_fetch_add(&live_platforms, 1);
  platform->struct_size = ASYNCRT_PLATFORM_STRUCT_SIZE;
  platform->name = "synchronous test platform";
  platform->device_type = TEST_PLUGIN_TYPE;
  platform->device_count = 2;
  platform->create_device = CreateDevice;
  platform->destroy_device = DestroyDevice;
  platform->destroy_platform = DestroyPlatform;
  fns->struct_size = ASYNCRT_DEVICE_FNS_STRUCT_SIZE;
  fns->allocate = Allocate;
  fns->deallocate = Deallocate;
  fns->create_stream = CreateStream;
  fns->destroy_stream = DestroyStream;
  fns->create_event = CreateEvent;
  fns->destroy_event = DestroyEvent;
  fns->record_event = RecordEvent;
  fns->query_event = QueryEvent;
  fns->wait_for_event = WaitForEvent;
  fns->memcpy_htod = Memcpy;
  fns->memcpy_dtoh = Memcpy;
#ifndef TEST_PLUGIN_OMIT_DTOD
  fns->memcpy_dtod = Memcpy;
#endif
  fns->host_callback = HostCallback;
#ifdef TEST_PLUGIN_SOME_GRAPH_FNS
  fns->begin_capture = BeginCapture;
#endif
  memset(&kernel, 0, sizeof(kernel));
  kernel.struct_size = ASYNCRT_KERNEL_DEF_STRUCT_SIZE;
  kernel.op_name = "test_plugin.identity";
  kernel.compute = Identity;
  api->register_kernel(params->registrar, &kernel, status);
}
#endif
