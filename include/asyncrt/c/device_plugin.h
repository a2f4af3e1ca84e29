/* AsyncRT's device plug-in API: how a hardware maker adds a device to
 * AsyncRT without touching its code, as TensorFlow's PluggableDevice does.
 *
 * A plug-in is a shared library that exports one function,
 * AsyncRT_InitPlugin. The runtime loads it (ASYNCRT_PLUGIN_PATH, the tools'
 * --plugins=, RuntimeOptions::device_plugins), calls it once, and the
 * plug-in
 *   - fills in its platform (name, device type, device count, device
 *     creation) and the device functions (memory, streams, events, copies,
 *     host callbacks), and
 *   - registers kernels: an op name with a C function that runs the op on
 *     one of its devices, reading inputs and attributes and allocating
 *     outputs through the runtime's functions (AsyncRT_RuntimeApi).
 * The runtime then makes one device per ordinal, each with its op handler,
 * and runs the op set's shape functions for the plug-in's ops as for every
 * device: a kernel gets its outputs' dtypes and shapes ready-made.
 *
 * Plain C (C99): no C++ type crosses this boundary, so a plug-in built with
 * any compiler and standard library loads into any runtime of a compatible
 * version.
 *
 * Versions: this header is version MAJOR.MINOR.PATCH. A plug-in reports the
 * version it was built with; the runtime accepts the same MAJOR and a MINOR
 * no newer than its own, and rejects anything else with an error that names
 * both versions. Within a MAJOR version structs only grow at their end:
 * every struct that crosses the boundary begins with `struct_size`, set by
 * whoever fills the struct to the size it knows (the *_STRUCT_SIZE macros),
 * so a newer runtime reads only the members an older plug-in has, and an
 * older plug-in never touches the members it does not know. The structs
 * the runtime allocates for the plug-in to fill (platform, device
 * functions) have room for a newer plug-in's larger versions, so such a
 * plug-in can fill them in before the runtime refuses it by version.
 *
 * Threads: the runtime calls a plug-in's functions from any of its threads,
 * concurrently (one stream may be used from several threads at once; calls
 * that enqueue onto a stream are ordered by the order in which they return).
 * Nothing the runtime calls may block, except destroy_stream, which waits
 * for the stream's work. A plug-in calls the runtime's functions from any
 * thread.
 *
 * Ownership: strings and structs the plug-in hands over stay valid until
 * the object they describe is destroyed (the platform's until
 * destroy_platform, a device's until destroy_device). Runtime-owned objects
 * (status, kernel context, registrar) are valid only during the call that
 * passes them.
 */
#ifndef ASYNCRT_C_DEVICE_PLUGIN_H_
#define ASYNCRT_C_DEVICE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ASYNCRT_PLUGIN_API_MAJOR 1
#define ASYNCRT_PLUGIN_API_MINOR 4
#define ASYNCRT_PLUGIN_API_PATCH 0

/* The size of `type` up to and including `last_member`: what a struct's
 * struct_size says for the version whose last member that is. */
#define ASYNCRT_STRUCT_SIZE(type, last_member) \
  (offsetof(type, last_member) + sizeof(((type*)0)->last_member))

#if defined(__GNUC__)
#define ASYNCRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define ASYNCRT_PLUGIN_EXPORT
#endif

/*===--- Status --------------------------------------------------------===*/

/* absl::StatusCode's values. */
typedef enum AsyncRT_Code {
  ASYNCRT_OK = 0,
  ASYNCRT_CANCELLED = 1,
  ASYNCRT_UNKNOWN = 2,
  ASYNCRT_INVALID_ARGUMENT = 3,
  ASYNCRT_NOT_FOUND = 5,
  ASYNCRT_RESOURCE_EXHAUSTED = 8,
  ASYNCRT_FAILED_PRECONDITION = 9,
  ASYNCRT_UNIMPLEMENTED = 12,
  ASYNCRT_INTERNAL = 13,
  ASYNCRT_UNAVAILABLE = 14
} AsyncRT_Code;

/* Where a function reports failure. The runtime passes a plug-in's
 * functions one, OK, which they set (AsyncRT_RuntimeApi.set_status) to
 * fail; the runtime's own functions set the plug-in's, which it reads
 * with AsyncRT_RuntimeApi.status_code. */
typedef struct AsyncRT_Status AsyncRT_Status;

/* Called by a plug-in when work it was given is done: `code` is ASYNCRT_OK
 * or the error, `message` (may be NULL) its text, valid during the call. */
typedef void (*AsyncRT_CallbackFn)(void* arg, AsyncRT_Code code,
                                   const char* message);

/*===--- Tensors -------------------------------------------------------===*/

typedef enum AsyncRT_DType {
  ASYNCRT_DTYPE_INVALID = 0,
  ASYNCRT_DTYPE_BOOL = 1,
  ASYNCRT_DTYPE_I8 = 2,
  ASYNCRT_DTYPE_I16 = 3,
  ASYNCRT_DTYPE_I32 = 4,
  ASYNCRT_DTYPE_I64 = 5,
  ASYNCRT_DTYPE_U8 = 6,
  ASYNCRT_DTYPE_F16 = 7,
  ASYNCRT_DTYPE_BF16 = 8,
  ASYNCRT_DTYPE_F32 = 9,
  ASYNCRT_DTYPE_F64 = 10
} AsyncRT_DType;

/* A dense, row-major tensor in a device's memory, as a kernel sees it. */
typedef struct AsyncRT_TensorView {
  size_t struct_size;
  AsyncRT_DType dtype;
  int32_t rank;
  const int64_t* dims; /* `rank` sizes; valid during the kernel call. */
  void* data;          /* A device address. */
  uint64_t size_bytes;
} AsyncRT_TensorView;
#define ASYNCRT_TENSOR_VIEW_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_TensorView, size_bytes)

/*===--- Devices, streams and events -----------------------------------===*/

/* Opaque to the runtime: the plug-in's own stream and event objects. */
typedef struct AsyncRT_StreamImpl* AsyncRT_Stream;
typedef struct AsyncRT_EventImpl* AsyncRT_Event;
/* A recorded sequence of a stream's work that can be run again (since 1.2;
 * CUDA's graphs). */
typedef struct AsyncRT_GraphImpl* AsyncRT_Graph;

typedef enum AsyncRT_EventStatus {
  ASYNCRT_EVENT_PENDING = 0,
  ASYNCRT_EVENT_COMPLETE = 1,
  ASYNCRT_EVENT_ERROR = 2
} AsyncRT_EventStatus;

typedef struct AsyncRT_Device {
  size_t struct_size; /* Set by the runtime. */
  void* ext;          /* Reserved: NULL. */
  int32_t ordinal;    /* Set by the runtime: 0 .. device_count - 1. */
  /* Set by create_device: the plug-in's state for this device. */
  void* device_handle;
  /* Set by create_device where known (0, -1 and NULL where not): */
  uint64_t memory_limit_bytes;
  int32_t numa_node;
  const char* bus_id;               /* "0000:17:00.0" */
  const char* physical_description; /* For people: the hardware's name. */
  /* Since 1.3, set by the runtime (check struct_size before reading): the
   * most of the device's memory this runtime may use (its user's setting,
   * RuntimeOptions::device_memory_limits); 0 when none was asked for. The
   * plug-in keeps what it takes from the device (handed out plus cached)
   * within it and reports a memory_limit_bytes no larger. The runtime
   * caps the memory it holds at the smaller of the two either way. */
  uint64_t requested_memory_limit_bytes;
} AsyncRT_Device;
#define ASYNCRT_DEVICE_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_Device, requested_memory_limit_bytes)

/* A plug-in's own accounting of a device's memory (since 1.1): what it
 * keeps beyond what the runtime holds, as a caching allocator does. */
typedef struct AsyncRT_MemoryStats {
  size_t struct_size; /* Set by the runtime. */
  /* Handed out and not given back (as the plug-in rounds requests). */
  uint64_t in_use_bytes;
  /* Taken from the device, free, and kept for reuse. */
  uint64_t cached_bytes;
  /* The most in use plus cached at once. */
  uint64_t peak_reserved_bytes;
  /* Requests served from cached memory, and those that were not. */
  uint64_t cache_hits;
  uint64_t cache_misses;
} AsyncRT_MemoryStats;
#define ASYNCRT_MEMORY_STATS_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_MemoryStats, cache_misses)

/* Every function takes the device it acts on. Required unless marked
 * optional. Enqueueing functions return at once; the work they enqueue
 * runs in order on the stream, and once work on a stream fails, its later
 * work is skipped and its later callbacks get that first error (as CUDA's
 * streams behave). A non-OK status from an enqueueing function means
 * nothing was enqueued. */
typedef struct AsyncRT_DeviceFns {
  size_t struct_size; /* Set by the plug-in: ASYNCRT_DEVICE_FNS_STRUCT_SIZE. */
  void* ext;          /* Reserved: NULL. */

  /* Device memory: NULL when there is not enough. `size` is never 0;
   * `alignment` is a power of two. The runtime runs a device's kernels and
   * its copies within the device on one stream (the first it creates), and
   * frees in that stream's order, as cudaFreeAsync does: deallocate may
   * come while work queued on that stream still reads the memory, so
   * memory handed out again must only be used by work queued after (which
   * the runtime's own use always is). Copies to and from the host may run
   * on streams of their own (one per direction), each first waiting for an
   * event recorded on the first stream (so they come after its earlier
   * use of their memory); memory such a copy used is freed only once the
   * copy is done. Host code never touches device memory. */
  void* (*allocate)(const AsyncRT_Device* device, uint64_t size,
                    uint64_t alignment);
  void (*deallocate)(const AsyncRT_Device* device, void* memory,
                     uint64_t size);
  /* Optional: host memory the device copies to and from fastest (pinned).
   * Without them the runtime stages in ordinary host memory. */
  void* (*host_memory_allocate)(const AsyncRT_Device* device, uint64_t size,
                                uint64_t alignment);
  void (*host_memory_deallocate)(const AsyncRT_Device* device, void* memory,
                                 uint64_t size);
  /* Optional: 1 with the device's free and total bytes, 0 if unknown. */
  int (*memory_usage)(const AsyncRT_Device* device, int64_t* free_bytes,
                      int64_t* total_bytes);

  void (*create_stream)(const AsyncRT_Device* device, AsyncRT_Stream* stream,
                        AsyncRT_Status* status);
  /* Runs what is queued on the stream (may block for it), then frees it. */
  void (*destroy_stream)(const AsyncRT_Device* device, AsyncRT_Stream stream);

  void (*create_event)(const AsyncRT_Device* device, AsyncRT_Event* event,
                       AsyncRT_Status* status);
  /* May come while work that records or waits for the event is still
   * queued: the plug-in keeps what that work needs until it is done. */
  void (*destroy_event)(const AsyncRT_Device* device, AsyncRT_Event event);
  /* The event completes once the work enqueued on `stream` before it is
   * done (with the stream's error, if that work failed). The runtime
   * records each event once; query_event of an event not recorded yet is
   * ASYNCRT_EVENT_COMPLETE. */
  void (*record_event)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                       AsyncRT_Event event, AsyncRT_Status* status);
  AsyncRT_EventStatus (*query_event)(const AsyncRT_Device* device,
                                     AsyncRT_Event event);
  /* Work enqueued on `stream` later starts only after `event` (of any
   * stream of this platform) completes; an event that failed fails the
   * stream. */
  void (*wait_for_event)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                         AsyncRT_Event event, AsyncRT_Status* status);

  /* Asynchronous copies on `stream`: host to device, device to host and
   * within the device. The caller keeps both buffers until the copy is
   * done (an event or host callback after it). */
  void (*memcpy_htod)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                      void* device_dst, const void* host_src, uint64_t size,
                      AsyncRT_Status* status);
  void (*memcpy_dtoh)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                      void* host_dst, const void* device_src, uint64_t size,
                      AsyncRT_Status* status);
  void (*memcpy_dtod)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                      void* device_dst, const void* device_src, uint64_t size,
                      AsyncRT_Status* status);

  /* Calls `callback(arg, code, message)` once everything enqueued on
   * `stream` before has finished, with ASYNCRT_OK or the stream's first
   * error, on any thread of the plug-in. The callback returns quickly (the
   * runtime hands the rest to its own threads). */
  void (*host_callback)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                        AsyncRT_CallbackFn callback, void* arg,
                        AsyncRT_Status* status);

  /* Since 1.1, optional: fills `stats` (struct_size set by the runtime)
   * and returns 1; 0 if the plug-in keeps no such accounting. */
  int (*memory_stats)(const AsyncRT_Device* device,
                      AsyncRT_MemoryStats* stats);

  /* Since 1.2, optional (all four or none): graphs, recorded once and run
   * again with one call, as CUDA's graphs are.
   *
   * begin_capture: from now until end_capture on the calling thread, what
   * the calling thread enqueues on `stream` (kernels, device-to-device
   * copies) is recorded, not run, and the device memory it allocates comes
   * from the graph's own memory, which nothing else uses while the graph
   * lives (a replay writes the same addresses). Other threads' work on the
   * stream runs as usual. Host callbacks and events enqueued by the
   * capturing thread come after the recorded work once it runs. Memory
   * the capturing thread frees that is not the graph's goes back after the
   * recorded work has run. Copies from or to host memory, and waits for
   * events, cannot be recorded: they make end_capture fail. */
  void (*begin_capture)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                        AsyncRT_Status* status);
  /* Ends the calling thread's capture and enqueues one run of the recorded
   * work on `stream`, then the callbacks and events enqueued during the
   * capture. On success `*graph` is the graph, for launch_graph; on
   * failure nothing recorded runs, the callbacks enqueued during the
   * capture are called with the error, and memory the capture allocated is
   * the device's again once the runtime frees it. */
  void (*end_capture)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                      AsyncRT_Graph* graph, AsyncRT_Status* status);
  /* Enqueues a run of `graph` on `stream`: the recorded work, on the same
   * memory (the runtime refreshes what the graph reads before). */
  void (*launch_graph)(const AsyncRT_Device* device, AsyncRT_Stream stream,
                       AsyncRT_Graph graph, AsyncRT_Status* status);
  /* May come while a run is queued (the plug-in keeps what it needs). The
   * graph's memory goes back to the device as the runtime frees it. */
  void (*destroy_graph)(const AsyncRT_Device* device, AsyncRT_Graph graph);
} AsyncRT_DeviceFns;
#define ASYNCRT_DEVICE_FNS_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_DeviceFns, destroy_graph)
#define ASYNCRT_DEVICE_FNS_1_1_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_DeviceFns, memory_stats)
#define ASYNCRT_DEVICE_FNS_1_0_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_DeviceFns, host_callback)

typedef struct AsyncRT_Platform {
  size_t struct_size; /* Set by the plug-in: ASYNCRT_PLATFORM_STRUCT_SIZE. */
  void* ext;          /* Reserved: NULL. */
  const char* name;   /* For people: "Example simulated accelerator". */
  /* The device type: lower-case letters, digits and '_', starting with a
   * letter ("sim"); devices are named "SIM:0", "SIM:1"... Must not be a
   * type the runtime already has ("cpu", another plug-in's). */
  const char* device_type;
  int32_t device_count;
  void* platform_handle; /* The plug-in's own state. */

  /* Fills in `device` (ordinal set) for use. */
  void (*create_device)(const struct AsyncRT_Platform* platform,
                        AsyncRT_Device* device, AsyncRT_Status* status);
  void (*destroy_device)(const struct AsyncRT_Platform* platform,
                         AsyncRT_Device* device);
  /* Optional: called after the platform's last device is destroyed (when
   * the runtime that loaded it is gone); no call follows until the runtime
   * calls AsyncRT_InitPlugin again. */
  void (*destroy_platform)(struct AsyncRT_Platform* platform);
} AsyncRT_Platform;
#define ASYNCRT_PLATFORM_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_Platform, destroy_platform)

/*===--- Kernels -------------------------------------------------------===*/

/* One op call on one device, valid during the kernel call. */
typedef struct AsyncRT_KernelContext AsyncRT_KernelContext;

/* Runs an op: reads its inputs, allocates its outputs, and enqueues the
 * computation on the context's stream. It returns at once; a failure
 * before anything is enqueued goes in `status`, a failure of the enqueued
 * work fails the stream. The outputs' dtypes and shapes come from the op's
 * shape function (shared by every device). */
typedef void (*AsyncRT_KernelFn)(AsyncRT_KernelContext* context,
                                 void* kernel_data, AsyncRT_Status* status);

typedef struct AsyncRT_KernelDef {
  size_t struct_size; /* Set by the plug-in: ASYNCRT_KERNEL_DEF_STRUCT_SIZE. */
  void* ext;          /* Reserved: NULL. */
  const char* op_name; /* An op of the runtime's op set: "nn.relu". */
  AsyncRT_KernelFn compute;
  /* Passed to `compute`; lives until destroy_platform (a library that
   * loaded stays loaded for the process). */
  void* kernel_data;
} AsyncRT_KernelDef;
#define ASYNCRT_KERNEL_DEF_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_KernelDef, kernel_data)

/* Registers kernels during AsyncRT_InitPlugin. */
typedef struct AsyncRT_Registrar AsyncRT_Registrar;

/*===--- What the runtime offers a plug-in -----------------------------===*/

typedef struct AsyncRT_RuntimeApi {
  size_t struct_size; /* Set by the runtime: ASYNCRT_RUNTIME_API_STRUCT_SIZE. */
  void* ext;
  /* The runtime's version of this header. */
  uint32_t api_major;
  uint32_t api_minor;
  uint32_t api_patch;

  /* Fails `status` with `code` and `message` (copied). */
  void (*set_status)(AsyncRT_Status* status, AsyncRT_Code code,
                     const char* message);
  /* The code of a status the runtime's functions set (ASYNCRT_OK if they
   * succeeded). */
  AsyncRT_Code (*status_code)(const AsyncRT_Status* status);

  /* Adds a kernel for the platform's device type. */
  void (*register_kernel)(AsyncRT_Registrar* registrar,
                          const AsyncRT_KernelDef* kernel,
                          AsyncRT_Status* status);

  /* In a kernel: */
  int32_t (*num_inputs)(const AsyncRT_KernelContext* context);
  int32_t (*num_outputs)(const AsyncRT_KernelContext* context);
  /* Input `index`'s tensor (view->struct_size set by the caller). */
  void (*get_input)(const AsyncRT_KernelContext* context, int32_t index,
                    AsyncRT_TensorView* view, AsyncRT_Status* status);
  /* Allocates output `index` in the device's memory with the dtype and
   * shape of the op's shape function, and describes it in `view`. */
  void (*allocate_output)(AsyncRT_KernelContext* context, int32_t index,
                          AsyncRT_TensorView* view, AsyncRT_Status* status);
  /* 1 with the attribute's value if the op has an integer (a float)
   * attribute `name`; 0 otherwise. */
  int (*get_attr_int)(const AsyncRT_KernelContext* context, const char* name,
                      int64_t* value);
  int (*get_attr_float)(const AsyncRT_KernelContext* context,
                        const char* name, double* value);
  /* 1 with the bytes (not NUL-terminated; valid during the kernel call)
   * of string attribute `name`; 0 if the op has none. */
  int (*get_attr_string)(const AsyncRT_KernelContext* context,
                         const char* name, const char** data, size_t* size);
  /* The device the op runs on, and the stream its work goes on. */
  const AsyncRT_Device* (*kernel_device)(const AsyncRT_KernelContext* context);
  AsyncRT_Stream (*kernel_stream)(const AsyncRT_KernelContext* context);

  /* Since 1.1 (check struct_size before calling): */
  /* 1 if the op has an integer-array attribute `name` (perm, axes, ...),
   * with its length in `*count` and its first min(count, capacity) values
   * copied to `values`; 0 otherwise. */
  int (*get_attr_ints)(const AsyncRT_KernelContext* context,
                       const char* name, int64_t* values, size_t capacity,
                       size_t* count);
  /* 1 with the dtype of attribute `name` (a dtype attribute, or a string
   * naming one: "f32"); 0 if the op has none. */
  int (*get_attr_dtype)(const AsyncRT_KernelContext* context,
                        const char* name, AsyncRT_DType* dtype);

  /* Since 1.2 (check struct_size before calling): */
  /* Makes output `output_index` the memory of input `input_index`, without
   * a copy (reshape, squeeze, identity), and describes it in `view`: the
   * output's dtype and shape are the shape function's, and its size in
   * bytes must be the input's (InvalidArgument otherwise). Tensors never
   * change once made, so sharing their memory is safe. */
  void (*alias_input)(AsyncRT_KernelContext* context, int32_t input_index,
                      int32_t output_index, AsyncRT_TensorView* view,
                      AsyncRT_Status* status);

  /* Since 1.4 (check struct_size before calling): */
  /* 1 if the op has a float-array attribute `name` (Resize's scales, ...),
   * with its length in `*count` and its first min(count, capacity) values
   * copied to `values`; 0 otherwise. */
  int (*get_attr_floats)(const AsyncRT_KernelContext* context, const char* name,
                         double* values, size_t capacity, size_t* count);
} AsyncRT_RuntimeApi;
#define ASYNCRT_RUNTIME_API_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_RuntimeApi, get_attr_floats)
#define ASYNCRT_RUNTIME_API_1_2_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_RuntimeApi, alias_input)
#define ASYNCRT_RUNTIME_API_1_1_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_RuntimeApi, get_attr_dtype)
#define ASYNCRT_RUNTIME_API_1_0_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_RuntimeApi, kernel_stream)

/*===--- The plug-in's entry point -------------------------------------===*/

typedef struct AsyncRT_PluginParams {
  size_t struct_size; /* Set by the runtime. */
  void* ext;
  /* The runtime's functions; valid for the life of the process. */
  const AsyncRT_RuntimeApi* api;
  /* Set by the plug-in: the header version it was built with
   * (ASYNCRT_PLUGIN_API_MAJOR, _MINOR, _PATCH). */
  uint32_t plugin_api_major;
  uint32_t plugin_api_minor;
  uint32_t plugin_api_patch;
  /* Allocated by the runtime, filled by the plug-in. */
  AsyncRT_Platform* platform;
  AsyncRT_DeviceFns* device_fns;
  /* For api->register_kernel during the call. */
  AsyncRT_Registrar* registrar;
} AsyncRT_PluginParams;
#define ASYNCRT_PLUGIN_PARAMS_STRUCT_SIZE \
  ASYNCRT_STRUCT_SIZE(AsyncRT_PluginParams, registrar)

#define ASYNCRT_PLUGIN_INIT_SYMBOL "AsyncRT_InitPlugin"
typedef void (*AsyncRT_InitPluginFn)(AsyncRT_PluginParams* params,
                                     AsyncRT_Status* status);

/* What a plug-in defines. A failure goes in `status`; the runtime then
 * makes no further call (destroy_platform included) and unloads the
 * library. */
ASYNCRT_PLUGIN_EXPORT void AsyncRT_InitPlugin(AsyncRT_PluginParams* params,
                                              AsyncRT_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ASYNCRT_C_DEVICE_PLUGIN_H_ */
