/* An example AsyncRT device plug-in: a simulated accelerator.
 *
 * Every device owns an arena of host memory that stands in for its own
 * memory, and every stream is a host thread that runs the stream's work in
 * order, as an accelerator's command queue would. It is built against the
 * plug-in C API alone (asyncrt/c/device_plugin.h), in C99 with POSIX
 * threads, to show what a hardware maker writes: the platform, the device
 * functions and a few kernels (nn.relu, nn.add, nn.matmul on f32), and
 * graphs: a thread's work recorded once and run again (as CUDA's graphs).
 *
 * Settings (read once, in AsyncRT_InitPlugin):
 *   ASYNCRT_SIM_DEVICE_COUNT   devices, 1 to 8 (default 1).
 *   ASYNCRT_SIM_MEMORY_BYTES   each device's memory (default 64 MiB).
 *   ASYNCRT_SIM_FAIL_OP        an op name whose enqueued work fails on its
 *                              stream: a way to test how errors on a
 *                              device's stream reach the program.
 *   ASYNCRT_SIM_LOG_GRAPHS=1   a line on stderr per graph recorded, run or
 *                              failed: how tests see that a graph replays.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/c/device_plugin.h"

#if defined(__GNUC__)
#define SIM_PRINTF_FORMAT(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SIM_PRINTF_FORMAT(fmt, args)
#endif

enum {
  kSimMaxDevices = 8,
  /* Allocation granularity and smallest alignment: a cache line, so two
   * allocations never share one. */
  kSimBlockBytes = 64,
  /* The arena's own alignment (a page, as device memory would be). */
  kSimArenaAlignment = 4096,
  kSimMessageBytes = 256
};

#define SIM_DEFAULT_MEMORY_BYTES ((uint64_t)64 << 20)

/*===--- Settings ------------------------------------------------------===*/

/* Set by AsyncRT_InitPlugin before the runtime makes any other call, and
 * only read afterwards, so they need no lock. */
static const AsyncRT_RuntimeApi* g_api;
static int32_t g_device_count;
static uint64_t g_memory_bytes;
static char g_fail_op[64];
static int g_log_graphs;

/* Fails `status` with a formatted message (the runtime copies it); no-op
 * for a null status. */
static void SIM_PRINTF_FORMAT(3, 4)
    sim_fail(AsyncRT_Status* status, AsyncRT_Code code, const char* format,
             ...) {
  char message[kSimMessageBytes];
  va_list args;
  if (status == NULL) return;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  g_api->set_status(status, code, message);
}

/* Parses a decimal unsigned integer that is the whole string; 0 if it is
 * not one. */
static int parse_u64(const char* text, uint64_t* value) {
  char* end = NULL;
  unsigned long long parsed;
  if (text == NULL || *text < '0' || *text > '9') return 0;
  errno = 0;
  parsed = strtoull(text, &end, 10);
  if (*end != '\0' || errno == ERANGE) return 0;
  *value = (uint64_t)parsed;
  return 1;
}

/* Malformed or out-of-range settings fall back to the defaults. */
static void read_settings(void) {
  uint64_t value;
  const char* fail_op = getenv("ASYNCRT_SIM_FAIL_OP");

  g_device_count = 1;
  if (parse_u64(getenv("ASYNCRT_SIM_DEVICE_COUNT"), &value) && value >= 1 &&
      value <= kSimMaxDevices) {
    g_device_count = (int32_t)value;
  }

  /* Whole blocks only; anything below one block falls back. */
  g_memory_bytes = SIM_DEFAULT_MEMORY_BYTES;
  if (parse_u64(getenv("ASYNCRT_SIM_MEMORY_BYTES"), &value) &&
      value >= kSimBlockBytes && value <= SIZE_MAX) {
    g_memory_bytes = value - value % kSimBlockBytes;
  }

  g_fail_op[0] = '\0';
  if (fail_op != NULL && strlen(fail_op) < sizeof(g_fail_op)) {
    strcpy(g_fail_op, fail_op);
  }
  g_log_graphs = getenv("ASYNCRT_SIM_LOG_GRAPHS") != NULL &&
                 strcmp(getenv("ASYNCRT_SIM_LOG_GRAPHS"), "1") == 0;
}

/*===--- Device memory: an arena with a first-fit allocator -------------===*/

/* The allocator's bookkeeping lives in host memory, never in the arena, as
 * a real device's would: kernels that write past their buffers cannot
 * corrupt it, and the arena holds nothing but tensors. */
typedef struct SimBlock {
  uintptr_t start;
  uint64_t size; /* A multiple of kSimBlockBytes. */
  int used;
  struct SimBlock* prev;
  struct SimBlock* next;
} SimBlock;

typedef struct SimArena {
  pthread_mutex_t mutex;
  void* base;
  uint64_t size;
  uint64_t used_bytes; /* Guarded by `mutex`, as is the block list. */
  uint64_t peak_bytes; /* The most used_bytes has been; `mutex`. */
  /* Every block, free or used, in address order: a free block's
   * neighbours are the ones to coalesce with. */
  SimBlock* blocks;
} SimArena;

static int arena_init(SimArena* arena, uint64_t size) {
  SimBlock* block = (SimBlock*)calloc(1, sizeof(SimBlock));
  if (block == NULL) return 0;
  if (posix_memalign(&arena->base, kSimArenaAlignment, (size_t)size) != 0) {
    free(block);
    return 0;
  }
  if (pthread_mutex_init(&arena->mutex, NULL) != 0) {
    free(arena->base);
    free(block);
    return 0;
  }
  block->start = (uintptr_t)arena->base;
  block->size = size;
  arena->size = size;
  arena->used_bytes = 0;
  arena->peak_bytes = 0;
  arena->blocks = block;
  return 1;
}

static void arena_destroy(SimArena* arena) {
  SimBlock* block = arena->blocks;
  while (block != NULL) {
    SimBlock* next = block->next;
    free(block);
    block = next;
  }
  pthread_mutex_destroy(&arena->mutex);
  free(arena->base);
}

/* Whether [address, address + size) lies in the arena. */
static int arena_contains(const SimArena* arena, const void* address,
                          uint64_t size) {
  uintptr_t start = (uintptr_t)address;
  uintptr_t base = (uintptr_t)arena->base;
  return start >= base && start - base <= arena->size &&
         size <= arena->size - (start - base);
}

static void insert_block_after(SimBlock* block, SimBlock* added) {
  added->prev = block;
  added->next = block->next;
  if (block->next != NULL) block->next->prev = added;
  block->next = added;
}

/* Unlinks `block` (never the first block) and frees it. */
static void remove_block(SimBlock* block) {
  block->prev->next = block->next;
  if (block->next != NULL) block->next->prev = block->prev;
  free(block);
}

static void* arena_allocate(SimArena* arena, uint64_t size,
                            uint64_t alignment) {
  SimBlock* spare[2];
  SimBlock* block;
  void* result = NULL;

  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return NULL;
  if (alignment < kSimBlockBytes) alignment = kSimBlockBytes;
  /* Also keeps the rounding below from overflowing. */
  if (size > arena->size || alignment > arena->size) return NULL;
  /* A zero-byte allocation still gets an address of its own. */
  if (size == 0) size = 1;
  size = (size + kSimBlockBytes - 1) / kSimBlockBytes * kSimBlockBytes;

  /* Splitting a block takes up to two new blocks (the alignment padding
   * before and the rest after); getting them before taking the lock keeps
   * malloc out of the critical section and failure simple. */
  spare[0] = (SimBlock*)calloc(1, sizeof(SimBlock));
  spare[1] = (SimBlock*)calloc(1, sizeof(SimBlock));
  if (spare[0] == NULL || spare[1] == NULL) {
    free(spare[0]);
    free(spare[1]);
    return NULL;
  }

  pthread_mutex_lock(&arena->mutex);
  for (block = arena->blocks; block != NULL; block = block->next) {
    uintptr_t start;
    uint64_t padding;
    if (block->used) continue;
    start =
        (block->start + (uintptr_t)alignment - 1) & ~((uintptr_t)alignment - 1);
    padding = start - block->start;
    if (padding > block->size || block->size - padding < size) continue;

    /* Both pieces are whole blocks: start, alignment and size all are. */
    if (padding > 0) {
      SimBlock* front = spare[0];
      spare[0] = NULL;
      /* The padding stays free in front; `block` becomes the rest. */
      front->start = block->start;
      front->size = padding;
      front->prev = block->prev;
      front->next = block;
      if (block->prev != NULL) {
        block->prev->next = front;
      } else {
        arena->blocks = front;
      }
      block->prev = front;
      block->start = start;
      block->size -= padding;
    }
    if (block->size > size) {
      SimBlock* rest = spare[1];
      spare[1] = NULL;
      rest->start = start + (uintptr_t)size;
      rest->size = block->size - size;
      insert_block_after(block, rest);
      block->size = size;
    }
    block->used = 1;
    arena->used_bytes += size;
    if (arena->used_bytes > arena->peak_bytes) {
      arena->peak_bytes = arena->used_bytes;
    }
    result = (void*)start;
    break;
  }
  pthread_mutex_unlock(&arena->mutex);

  free(spare[0]);
  free(spare[1]);
  return result;
}

static void arena_deallocate(SimArena* arena, void* memory) {
  SimBlock* block;
  if (memory == NULL) return;
  pthread_mutex_lock(&arena->mutex);
  /* A linear search: fine for an example; a real allocator would index
   * its blocks by address. */
  for (block = arena->blocks; block != NULL; block = block->next) {
    if (block->used && block->start == (uintptr_t)memory) break;
  }
  /* Memory this arena never handed out is the caller's bug; there is no
   * status to report it in, and ignoring it keeps the arena intact. */
  if (block != NULL) {
    block->used = 0;
    arena->used_bytes -= block->size;
    if (block->next != NULL && !block->next->used) {
      block->size += block->next->size;
      remove_block(block->next);
    }
    if (block->prev != NULL && !block->prev->used) {
      block->prev->size += block->size;
      remove_block(block);
    }
  }
  pthread_mutex_unlock(&arena->mutex);
}

/*===--- Devices -------------------------------------------------------===*/

typedef struct SimGraphBlock SimGraphBlock;

typedef struct SimDevice {
  int32_t ordinal;
  SimArena arena;
  char description[96];
  /* Guarded by `graph_mutex`: the blocks graphs keep (see Graphs), and
   * the device's stream (the runtime's one; null before and after). */
  pthread_mutex_t graph_mutex;
  SimGraphBlock* graph_blocks;
  struct AsyncRT_StreamImpl* stream;
} SimDevice;

static SimDevice* sim_device(const AsyncRT_Device* device) {
  return (SimDevice*)device->device_handle;
}

/* Fails `status` unless [address, address + size) is in `device`'s memory:
 * a host pointer passed as a device address would otherwise be written
 * silently, which a real device would fault on. */
static int check_device_range(const SimDevice* device, const void* address,
                              uint64_t size, const char* what,
                              AsyncRT_Status* status) {
  if (size == 0 || arena_contains(&device->arena, address, size)) return 1;
  sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
           "sim: %s (%llu bytes at %p) is not in the memory of SIM:%d", what,
           (unsigned long long)size, address, (int)device->ordinal);
  return 0;
}

/*===--- Events --------------------------------------------------------===*/

/* An event may be recorded again before its last recording completed, and
 * a wait enqueued in between must still wait for the recording it saw, as
 * with CUDA's events: so recordings are numbered, and the event is pending
 * until the latest one is reached. */
struct AsyncRT_EventImpl {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  /* Guarded by `mutex`: */
  int references;     /* The runtime's, and one per queued record or wait. */
  uint64_t recorded;  /* Recordings enqueued so far. */
  uint64_t completed; /* The latest recording that a stream reached. */
  AsyncRT_Code code;  /* The outcome of recording `completed`. */
  char message[kSimMessageBytes];
};

/* The runtime may destroy an event while streams still hold work that
 * records or waits for it; the last reference frees it. */
static void event_release(AsyncRT_Event event) {
  int references;
  pthread_mutex_lock(&event->mutex);
  references = --event->references;
  pthread_mutex_unlock(&event->mutex);
  if (references == 0) {
    pthread_cond_destroy(&event->cond);
    pthread_mutex_destroy(&event->mutex);
    free(event);
  }
}

/*===--- Streams -------------------------------------------------------===*/

/* Runs one piece of a stream's work: ASYNCRT_OK, or an error with its text
 * written to `message`. */
typedef AsyncRT_Code (*SimWorkFn)(void* arg, char* message,
                                  size_t message_size);

typedef enum SimItemKind {
  SIM_ITEM_WORK,
  SIM_ITEM_RECORD,
  SIM_ITEM_WAIT,
  SIM_ITEM_CALLBACK
} SimItemKind;

typedef struct SimItem {
  struct SimItem* next;
  SimItemKind kind;
  /* SIM_ITEM_WORK: `arg` is one malloc'ed block, freed once run or
   * skipped. */
  SimWorkFn work;
  void* arg;
  /* SIM_ITEM_RECORD and SIM_ITEM_WAIT: the recording made or awaited. */
  AsyncRT_Event event;
  uint64_t recording;
  /* SIM_ITEM_CALLBACK: */
  AsyncRT_CallbackFn callback;
  void* callback_arg;
} SimItem;

struct AsyncRT_StreamImpl {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  /* Guarded by `mutex`: the queue, and whether the stream is closing. */
  SimItem* head;
  SimItem* tail;
  int closing;
  pthread_t thread;
  /* Touched by the stream's thread only: the first error (sticky). */
  AsyncRT_Code code;
  char message[kSimMessageBytes];
};

static void stream_fail(AsyncRT_Stream stream, AsyncRT_Code code,
                        const char* message) {
  if (stream->code != ASYNCRT_OK) return;
  stream->code = code;
  snprintf(stream->message, sizeof(stream->message), "%s", message);
}

static void run_record(AsyncRT_Stream stream, SimItem* item) {
  AsyncRT_Event event = item->event;
  pthread_mutex_lock(&event->mutex);
  /* Recordings on different streams may complete out of order; an older
   * one must not overwrite a newer one's outcome. */
  if (item->recording > event->completed) {
    event->completed = item->recording;
    event->code = stream->code;
    snprintf(event->message, sizeof(event->message), "%s", stream->message);
    pthread_cond_broadcast(&event->cond);
  }
  pthread_mutex_unlock(&event->mutex);
  event_release(event);
}

static void run_wait(AsyncRT_Stream stream, SimItem* item) {
  AsyncRT_Event event = item->event;
  /* A failed stream skips its work, so there is nothing to hold back. */
  if (stream->code == ASYNCRT_OK) {
    AsyncRT_Code code;
    char message[kSimMessageBytes];
    pthread_mutex_lock(&event->mutex);
    while (event->completed < item->recording) {
      pthread_cond_wait(&event->cond, &event->mutex);
    }
    code = event->code;
    memcpy(message, event->message, sizeof(message));
    pthread_mutex_unlock(&event->mutex);
    if (code != ASYNCRT_OK) stream_fail(stream, code, message);
  }
  event_release(event);
}

static void run_item(AsyncRT_Stream stream, SimItem* item) {
  switch (item->kind) {
    case SIM_ITEM_WORK:
      if (stream->code == ASYNCRT_OK) {
        char message[kSimMessageBytes];
        AsyncRT_Code code;
        message[0] = '\0';
        code = item->work(item->arg, message, sizeof(message));
        if (code != ASYNCRT_OK) stream_fail(stream, code, message);
      }
      free(item->arg);
      break;
    case SIM_ITEM_RECORD:
      run_record(stream, item);
      break;
    case SIM_ITEM_WAIT:
      run_wait(stream, item);
      break;
    case SIM_ITEM_CALLBACK:
      /* Callbacks run on a failed stream too: they are how its error is
       * reported. */
      item->callback(item->callback_arg, stream->code,
                     stream->code == ASYNCRT_OK ? NULL : stream->message);
      break;
  }
  free(item);
}

static void* stream_main(void* arg) {
  AsyncRT_Stream stream = (AsyncRT_Stream)arg;
  for (;;) {
    SimItem* item;
    pthread_mutex_lock(&stream->mutex);
    while (stream->head == NULL && !stream->closing) {
      pthread_cond_wait(&stream->cond, &stream->mutex);
    }
    item = stream->head;
    if (item != NULL) {
      stream->head = item->next;
      if (stream->head == NULL) stream->tail = NULL;
    }
    pthread_mutex_unlock(&stream->mutex);
    /* Closing, with nothing left to run. */
    if (item == NULL) return NULL;
    run_item(stream, item);
  }
}

static SimItem* new_item(SimItemKind kind, AsyncRT_Status* status) {
  SimItem* item = (SimItem*)calloc(1, sizeof(SimItem));
  if (item == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for stream work");
    return NULL;
  }
  item->kind = kind;
  return item;
}

/* Appending cannot fail, so every check and allocation happens before, and
 * a failed enqueueing call leaves nothing behind. */
static void stream_append(AsyncRT_Stream stream, SimItem* item) {
  pthread_mutex_lock(&stream->mutex);
  if (stream->tail != NULL) {
    stream->tail->next = item;
  } else {
    stream->head = item;
  }
  stream->tail = item;
  pthread_cond_signal(&stream->cond);
  pthread_mutex_unlock(&stream->mutex);
}

/*===--- Graphs --------------------------------------------------------===*/

/* Between begin_capture and end_capture, the capturing thread's work for
 * the stream is kept in the capture instead of the stream, and the device
 * memory it allocates is the graph's: a run writes those blocks again, so
 * they go back to the arena only once the graph is destroyed (here they
 * are never reused within the graph either: simpler, and a simulator). */
struct SimGraphBlock {
  SimGraphBlock* next;
  void* address;
  /* The open capture that allocated it (several threads may capture at
   * once); null once the capture ends. */
  struct SimCapture* capture;
  AsyncRT_Graph graph; /* Null while its capture is open. */
  int released;        /* The runtime freed it. */
};

typedef struct SimCapture {
  SimDevice* device;
  AsyncRT_Stream stream;
  SimItem* head; /* Recorded work, in order. */
  SimItem* tail;
  SimItem* callbacks; /* Held host callbacks, most recent first. */
  void** frees;       /* Other memory freed meanwhile: after the run. */
  size_t num_frees;
  size_t frees_capacity;
  const char* broken; /* What could not be recorded, or null. */
} SimCapture;

struct AsyncRT_GraphImpl {
  SimDevice* device;
  SimItem* items; /* Work items; their args live with the graph. */
};

static __thread SimCapture* t_capture = NULL;

static SimCapture* capture_of(AsyncRT_Stream stream) {
  return t_capture != NULL && t_capture->stream == stream ? t_capture : NULL;
}

static SimCapture* capture_on(const SimDevice* device) {
  return t_capture != NULL && t_capture->device == device ? t_capture : NULL;
}

/* Enqueues `work(arg)`, taking `arg` (freed even when this fails). */
static void stream_enqueue_work(AsyncRT_Stream stream, SimWorkFn work,
                                void* arg, AsyncRT_Status* status) {
  SimCapture* capture = capture_of(stream);
  SimItem* item = new_item(SIM_ITEM_WORK, status);
  if (item == NULL) {
    free(arg);
    return;
  }
  item->work = work;
  item->arg = arg;
  if (capture != NULL) {
    if (capture->tail != NULL) {
      capture->tail->next = item;
    } else {
      capture->head = item;
    }
    capture->tail = item;
    return;
  }
  stream_append(stream, item);
}

static void free_items(SimItem* item) {
  while (item != NULL) {
    SimItem* next = item->next;
    free(item->arg);
    free(item);
    item = next;
  }
}

/* A run of a graph: its items' work, in order, on the stream's thread. */
static AsyncRT_Code run_graph(void* arg, char* message, size_t message_size) {
  AsyncRT_Graph graph = *(AsyncRT_Graph*)arg;
  SimItem* item;
  for (item = graph->items; item != NULL; item = item->next) {
    AsyncRT_Code code = item->work(item->arg, message, message_size);
    if (code != ASYNCRT_OK) return code;
  }
  return ASYNCRT_OK;
}

static void enqueue_graph_run(AsyncRT_Stream stream, AsyncRT_Graph graph,
                              AsyncRT_Status* status) {
  AsyncRT_Graph* arg = (AsyncRT_Graph*)malloc(sizeof(AsyncRT_Graph));
  if (arg == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for a graph's run");
    return;
  }
  *arg = graph;
  stream_enqueue_work(stream, run_graph, arg, status);
}

/* Frees the graph and gives back the blocks the runtime has freed (the
 * others are ordinary blocks from now on). */
static void free_graph(AsyncRT_Graph graph) {
  SimDevice* device = graph->device;
  SimGraphBlock** link;
  pthread_mutex_lock(&device->graph_mutex);
  link = &device->graph_blocks;
  while (*link != NULL) {
    SimGraphBlock* block = *link;
    if (block->graph != graph) {
      link = &block->next;
      continue;
    }
    *link = block->next;
    if (block->released) arena_deallocate(&device->arena, block->address);
    free(block);
  }
  pthread_mutex_unlock(&device->graph_mutex);
  free_items(graph->items);
  free(graph);
}

/* destroy_graph's callback: after every run queued before it. */
static void free_graph_callback(void* arg, AsyncRT_Code code,
                                const char* message) {
  (void)code;
  (void)message;
  free_graph((AsyncRT_Graph)arg);
}

static void sim_begin_capture(const AsyncRT_Device* device,
                              AsyncRT_Stream stream, AsyncRT_Status* status) {
  SimCapture* capture;
  if (t_capture != NULL) {
    sim_fail(status, ASYNCRT_FAILED_PRECONDITION,
             "sim: this thread is already recording a graph");
    return;
  }
  capture = (SimCapture*)calloc(1, sizeof(SimCapture));
  if (capture == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for a capture");
    return;
  }
  capture->device = sim_device(device);
  capture->stream = stream;
  t_capture = capture;
}

/* Ends `capture`: the blocks it allocated become `graph`'s (or, without a
 * graph, ordinary ones, given back if the runtime freed them). */
static void settle_capture_blocks(SimCapture* capture, AsyncRT_Graph graph) {
  SimDevice* device = capture->device;
  SimGraphBlock** link;
  size_t i;
  pthread_mutex_lock(&device->graph_mutex);
  link = &device->graph_blocks;
  while (*link != NULL) {
    SimGraphBlock* block = *link;
    if (block->capture != capture) {
      link = &block->next;
      continue;
    }
    block->capture = NULL;
    if (graph != NULL) {
      block->graph = graph;
      link = &block->next;
      continue;
    }
    *link = block->next;
    if (block->released) arena_deallocate(&device->arena, block->address);
    free(block);
  }
  pthread_mutex_unlock(&device->graph_mutex);
  for (i = 0; i < capture->num_frees; ++i) {
    arena_deallocate(&device->arena, capture->frees[i]);
  }
  free(capture->frees);
}

static void sim_end_capture(const AsyncRT_Device* device,
                            AsyncRT_Stream stream, AsyncRT_Graph* graph_out,
                            AsyncRT_Status* status) {
  SimCapture* capture = capture_of(stream);
  AsyncRT_Graph graph = NULL;
  SimItem* callback;
  (void)device;
  if (capture == NULL) {
    sim_fail(status, ASYNCRT_FAILED_PRECONDITION,
             "sim: this thread is not recording a graph of this stream");
    return;
  }
  t_capture = NULL;
  if (capture->broken != NULL) {
    sim_fail(status, ASYNCRT_FAILED_PRECONDITION,
             "sim: a graph cannot record %s", capture->broken);
    if (g_log_graphs) {
      fprintf(stderr, "sim: graph not recorded: it has %s\n",
              capture->broken);
    }
  } else {
    graph = (AsyncRT_Graph)calloc(1, sizeof(struct AsyncRT_GraphImpl));
    if (graph == NULL) {
      sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
               "sim: out of host memory for a graph");
    } else {
      graph->device = capture->device;
      graph->items = capture->head;
      capture->head = NULL;
      enqueue_graph_run(stream, graph, status);
      if (g_api->status_code(status) != ASYNCRT_OK) {
        free_items(graph->items);
        free(graph);
        graph = NULL;
      } else if (g_log_graphs) {
        size_t count = 0;
        SimItem* item;
        for (item = graph->items; item != NULL; item = item->next) ++count;
        fprintf(stderr, "sim: graph recorded: %zu items\n", count);
      }
    }
  }
  free_items(capture->head);
  settle_capture_blocks(capture, graph);
  /* Held callbacks: after the run, or now with the error. */
  callback = capture->callbacks;
  while (callback != NULL) {
    SimItem* next = callback->next;
    callback->next = NULL;
    if (graph != NULL) {
      stream_append(stream, callback);
    } else {
      callback->callback(callback->callback_arg, ASYNCRT_FAILED_PRECONDITION,
                         "sim: the graph being recorded failed");
      free(callback);
    }
    callback = next;
  }
  free(capture);
  if (graph != NULL) *graph_out = graph;
}

static void sim_launch_graph(const AsyncRT_Device* device,
                             AsyncRT_Stream stream, AsyncRT_Graph graph,
                             AsyncRT_Status* status) {
  (void)device;
  if (g_log_graphs) fprintf(stderr, "sim: graph launched\n");
  enqueue_graph_run(stream, graph, status);
}

static void sim_destroy_graph(const AsyncRT_Device* device,
                              AsyncRT_Graph graph) {
  SimDevice* sim = sim_device(device);
  SimItem* item;
  AsyncRT_Stream stream;
  pthread_mutex_lock(&sim->graph_mutex);
  stream = sim->stream;
  pthread_mutex_unlock(&sim->graph_mutex);
  /* Queued runs still read it: free it after them (callbacks run on a
   * failed stream too). Without a stream, nothing is queued. */
  item = stream != NULL ? new_item(SIM_ITEM_CALLBACK, NULL) : NULL;
  if (item == NULL) {
    free_graph(graph);
    return;
  }
  item->callback = free_graph_callback;
  item->callback_arg = graph;
  stream_append(stream, item);
}

/*===--- Device functions ----------------------------------------------===*/

static void* sim_allocate(const AsyncRT_Device* device, uint64_t size,
                          uint64_t alignment) {
  SimDevice* sim = sim_device(device);
  void* memory = arena_allocate(&sim->arena, size, alignment);
  SimCapture* capture = capture_on(sim);
  if (memory != NULL && capture != NULL) {
    /* The graph's (see Graphs). */
    SimGraphBlock* block = (SimGraphBlock*)calloc(1, sizeof(SimGraphBlock));
    if (block == NULL) {
      arena_deallocate(&sim->arena, memory);
      return NULL;
    }
    block->address = memory;
    block->capture = capture;
    pthread_mutex_lock(&sim->graph_mutex);
    block->next = sim->graph_blocks;
    sim->graph_blocks = block;
    pthread_mutex_unlock(&sim->graph_mutex);
  }
  return memory;
}

static void sim_deallocate(const AsyncRT_Device* device, void* memory,
                           uint64_t size) {
  SimDevice* sim = sim_device(device);
  SimCapture* capture = capture_on(sim);
  SimGraphBlock* block;
  (void)size; /* The arena knows each block's size. */
  pthread_mutex_lock(&sim->graph_mutex);
  for (block = sim->graph_blocks; block != NULL; block = block->next) {
    if (block->address == memory) {
      /* A graph's: back to the arena with the graph. */
      block->released = 1;
      pthread_mutex_unlock(&sim->graph_mutex);
      return;
    }
  }
  pthread_mutex_unlock(&sim->graph_mutex);
  if (capture != NULL) {
    /* Recorded work, not run yet, may read it. */
    if (capture->num_frees == capture->frees_capacity) {
      size_t capacity = capture->frees_capacity ? 2 * capture->frees_capacity
                                                : 16;
      void** grown = (void**)realloc(capture->frees, capacity * sizeof(void*));
      if (grown == NULL) {
        capture->broken = "a free (out of host memory)";
        return; /* Leaked rather than reused too early. */
      }
      capture->frees = grown;
      capture->frees_capacity = capacity;
    }
    capture->frees[capture->num_frees++] = memory;
    return;
  }
  arena_deallocate(&sim->arena, memory);
}

/* Host memory the simulated device copies from is ordinary memory; what a
 * real plug-in returns here is pinned (page-locked) memory. */
static void* sim_host_memory_allocate(const AsyncRT_Device* device,
                                      uint64_t size, uint64_t alignment) {
  void* memory = NULL;
  (void)device;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return NULL;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (size > SIZE_MAX || alignment > SIZE_MAX) return NULL;
  if (posix_memalign(&memory, (size_t)alignment,
                     size == 0 ? 1 : (size_t)size) != 0) {
    return NULL;
  }
  return memory;
}

static void sim_host_memory_deallocate(const AsyncRT_Device* device,
                                       void* memory, uint64_t size) {
  (void)device;
  (void)size;
  free(memory);
}

static int sim_memory_usage(const AsyncRT_Device* device, int64_t* free_bytes,
                            int64_t* total_bytes) {
  SimArena* arena = &sim_device(device)->arena;
  pthread_mutex_lock(&arena->mutex);
  *free_bytes = (int64_t)(arena->size - arena->used_bytes);
  pthread_mutex_unlock(&arena->mutex);
  *total_bytes = (int64_t)arena->size;
  return 1;
}

/* The arena hands out exactly what is asked and caches nothing: in use is
 * what is allocated. */
static int sim_memory_stats(const AsyncRT_Device* device,
                            AsyncRT_MemoryStats* stats) {
  SimArena* arena = &sim_device(device)->arena;
  pthread_mutex_lock(&arena->mutex);
  stats->in_use_bytes = arena->used_bytes;
  stats->peak_reserved_bytes = arena->peak_bytes;
  pthread_mutex_unlock(&arena->mutex);
  stats->cached_bytes = 0;
  stats->cache_hits = 0;
  stats->cache_misses = 0;
  return 1;
}

static void sim_create_stream(const AsyncRT_Device* device,
                              AsyncRT_Stream* stream_out,
                              AsyncRT_Status* status) {
  AsyncRT_Stream stream =
      (AsyncRT_Stream)calloc(1, sizeof(struct AsyncRT_StreamImpl));
  (void)device;
  if (stream == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for a stream");
    return;
  }
  stream->code = ASYNCRT_OK;
  if (pthread_mutex_init(&stream->mutex, NULL) != 0) {
    free(stream);
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: cannot create a stream's mutex");
    return;
  }
  if (pthread_cond_init(&stream->cond, NULL) != 0) {
    pthread_mutex_destroy(&stream->mutex);
    free(stream);
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: cannot create a stream's condition variable");
    return;
  }
  if (pthread_create(&stream->thread, NULL, stream_main, stream) != 0) {
    pthread_cond_destroy(&stream->cond);
    pthread_mutex_destroy(&stream->mutex);
    free(stream);
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: cannot start a stream's thread");
    return;
  }
  pthread_mutex_lock(&sim_device(device)->graph_mutex);
  if (sim_device(device)->stream == NULL) sim_device(device)->stream = stream;
  pthread_mutex_unlock(&sim_device(device)->graph_mutex);
  *stream_out = stream;
}

static void sim_destroy_stream(const AsyncRT_Device* device,
                               AsyncRT_Stream stream) {
  if (stream == NULL) return;
  pthread_mutex_lock(&sim_device(device)->graph_mutex);
  if (sim_device(device)->stream == stream) sim_device(device)->stream = NULL;
  pthread_mutex_unlock(&sim_device(device)->graph_mutex);
  pthread_mutex_lock(&stream->mutex);
  stream->closing = 1;
  pthread_cond_signal(&stream->cond);
  pthread_mutex_unlock(&stream->mutex);
  /* The thread runs what is queued before it sees `closing`. */
  pthread_join(stream->thread, NULL);
  pthread_cond_destroy(&stream->cond);
  pthread_mutex_destroy(&stream->mutex);
  free(stream);
}

static void sim_create_event(const AsyncRT_Device* device,
                             AsyncRT_Event* event_out, AsyncRT_Status* status) {
  AsyncRT_Event event =
      (AsyncRT_Event)calloc(1, sizeof(struct AsyncRT_EventImpl));
  (void)device;
  if (event == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for an event");
    return;
  }
  if (pthread_mutex_init(&event->mutex, NULL) != 0) {
    free(event);
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: cannot create an event's mutex");
    return;
  }
  if (pthread_cond_init(&event->cond, NULL) != 0) {
    pthread_mutex_destroy(&event->mutex);
    free(event);
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: cannot create an event's condition variable");
    return;
  }
  /* Never recorded: complete, and waiting for it waits for nothing. */
  event->references = 1;
  event->code = ASYNCRT_OK;
  *event_out = event;
}

static void sim_destroy_event(const AsyncRT_Device* device,
                              AsyncRT_Event event) {
  (void)device;
  if (event != NULL) event_release(event);
}

static void sim_record_event(const AsyncRT_Device* device,
                             AsyncRT_Stream stream, AsyncRT_Event event,
                             AsyncRT_Status* status) {
  SimItem* item;
  SimCapture* capture = capture_of(stream);
  (void)device;
  if (capture != NULL) {
    /* An event would mark nothing of a later run: the capture fails (the
     * stream itself is fine). */
    capture->broken = "an event";
    return;
  }
  item = new_item(SIM_ITEM_RECORD, status);
  if (item == NULL) return;
  pthread_mutex_lock(&event->mutex);
  ++event->references;
  item->recording = ++event->recorded;
  pthread_mutex_unlock(&event->mutex);
  item->event = event;
  stream_append(stream, item);
}

static AsyncRT_EventStatus sim_query_event(const AsyncRT_Device* device,
                                           AsyncRT_Event event) {
  AsyncRT_EventStatus result;
  (void)device;
  pthread_mutex_lock(&event->mutex);
  if (event->completed < event->recorded) {
    result = ASYNCRT_EVENT_PENDING;
  } else if (event->code == ASYNCRT_OK) {
    result = ASYNCRT_EVENT_COMPLETE;
  } else {
    result = ASYNCRT_EVENT_ERROR;
  }
  pthread_mutex_unlock(&event->mutex);
  return result;
}

static void sim_wait_for_event(const AsyncRT_Device* device,
                               AsyncRT_Stream stream, AsyncRT_Event event,
                               AsyncRT_Status* status) {
  SimItem* item;
  SimCapture* capture = capture_of(stream);
  (void)device;
  if (capture != NULL) {
    capture->broken = "a wait for an event";
    return;
  }
  item = new_item(SIM_ITEM_WAIT, status);
  if (item == NULL) return;
  /* The wait is for the recordings enqueued so far, not later ones, so a
   * stream never waits for work enqueued after it. */
  pthread_mutex_lock(&event->mutex);
  ++event->references;
  item->recording = event->recorded;
  pthread_mutex_unlock(&event->mutex);
  item->event = event;
  stream_append(stream, item);
}

typedef struct SimCopy {
  void* dst;
  const void* src;
  size_t size;
} SimCopy;

static AsyncRT_Code run_copy(void* arg, char* message, size_t message_size) {
  SimCopy* copy = (SimCopy*)arg;
  (void)message;
  (void)message_size;
  /* memmove: a copy within the device may overlap. */
  if (copy->size > 0) memmove(copy->dst, copy->src, copy->size);
  return ASYNCRT_OK;
}

static void enqueue_copy(AsyncRT_Stream stream, void* dst, const void* src,
                         uint64_t size, AsyncRT_Status* status) {
  SimCopy* copy;
  if (size > SIZE_MAX) {
    sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
             "sim: a copy of %llu bytes is too large for this host",
             (unsigned long long)size);
    return;
  }
  copy = (SimCopy*)malloc(sizeof(SimCopy));
  if (copy == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for a copy");
    return;
  }
  copy->dst = dst;
  copy->src = src;
  copy->size = (size_t)size;
  stream_enqueue_work(stream, run_copy, copy, status);
}

/* A later run would copy from or to a host buffer that has moved on. */
static int refuse_host_copy_in_capture(AsyncRT_Stream stream,
                                       AsyncRT_Status* status) {
  SimCapture* capture = capture_of(stream);
  if (capture == NULL) return 0;
  capture->broken = "a copy from or to host memory";
  sim_fail(status, ASYNCRT_FAILED_PRECONDITION,
           "sim: a graph cannot record a copy from or to host memory");
  return 1;
}

static void sim_memcpy_htod(const AsyncRT_Device* device, AsyncRT_Stream stream,
                            void* device_dst, const void* host_src,
                            uint64_t size, AsyncRT_Status* status) {
  if (!check_device_range(sim_device(device), device_dst, size,
                          "memcpy_htod's destination", status) ||
      refuse_host_copy_in_capture(stream, status)) {
    return;
  }
  enqueue_copy(stream, device_dst, host_src, size, status);
}

static void sim_memcpy_dtoh(const AsyncRT_Device* device, AsyncRT_Stream stream,
                            void* host_dst, const void* device_src,
                            uint64_t size, AsyncRT_Status* status) {
  if (!check_device_range(sim_device(device), device_src, size,
                          "memcpy_dtoh's source", status) ||
      refuse_host_copy_in_capture(stream, status)) {
    return;
  }
  enqueue_copy(stream, host_dst, device_src, size, status);
}

static void sim_memcpy_dtod(const AsyncRT_Device* device, AsyncRT_Stream stream,
                            void* device_dst, const void* device_src,
                            uint64_t size, AsyncRT_Status* status) {
  SimDevice* sim = sim_device(device);
  if (!check_device_range(sim, device_src, size, "memcpy_dtod's source",
                          status) ||
      !check_device_range(sim, device_dst, size, "memcpy_dtod's destination",
                          status)) {
    return;
  }
  enqueue_copy(stream, device_dst, device_src, size, status);
}

static void sim_host_callback(const AsyncRT_Device* device,
                              AsyncRT_Stream stream,
                              AsyncRT_CallbackFn callback, void* arg,
                              AsyncRT_Status* status) {
  SimItem* item = new_item(SIM_ITEM_CALLBACK, status);
  SimCapture* capture = capture_of(stream);
  (void)device;
  if (item == NULL) return;
  item->callback = callback;
  item->callback_arg = arg;
  if (capture != NULL) {
    /* After the recorded work's run (see sim_end_capture). */
    item->next = capture->callbacks;
    capture->callbacks = item;
    return;
  }
  stream_append(stream, item);
}

/*===--- Kernels -------------------------------------------------------===*/

/* Reads input `index`; 0 (with `status` set by the runtime) on failure. */
static int get_input(const AsyncRT_KernelContext* context, int32_t index,
                     AsyncRT_TensorView* view, AsyncRT_Status* status) {
  memset(view, 0, sizeof(*view));
  view->struct_size = ASYNCRT_TENSOR_VIEW_STRUCT_SIZE;
  g_api->get_input(context, index, view, status);
  return g_api->status_code(status) == ASYNCRT_OK;
}

/* As get_input, for allocating output `index`. */
static int allocate_output(AsyncRT_KernelContext* context, int32_t index,
                           AsyncRT_TensorView* view, AsyncRT_Status* status) {
  memset(view, 0, sizeof(*view));
  view->struct_size = ASYNCRT_TENSOR_VIEW_STRUCT_SIZE;
  g_api->allocate_output(context, index, view, status);
  return g_api->status_code(status) == ASYNCRT_OK;
}

/* The number of f32 elements of `view`, after checking that its dims are
 * sane, its bytes hold them and they are in `device`'s memory; -1 (status
 * set) otherwise. `what` names the tensor in errors ("nn.add input 1"). */
static int64_t f32_elements(const SimDevice* device,
                            const AsyncRT_TensorView* view, const char* what,
                            AsyncRT_Status* status) {
  int64_t elements = 1;
  int32_t i;
  if (view->rank < 0 || (view->rank > 0 && view->dims == NULL)) {
    sim_fail(status, ASYNCRT_INVALID_ARGUMENT, "sim: %s has rank %d", what,
             (int)view->rank);
    return -1;
  }
  for (i = 0; i < view->rank; ++i) {
    int64_t dim = view->dims[i];
    if (dim < 0 || (dim > 0 && elements > INT64_MAX / 4 / dim)) {
      sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
               "sim: %s has an invalid dimension %lld", what, (long long)dim);
      return -1;
    }
    elements *= dim;
  }
  if (view->size_bytes < (uint64_t)elements * sizeof(float) ||
      (uint64_t)elements * sizeof(float) > SIZE_MAX) {
    sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
             "sim: %s has %lld elements but %llu bytes", what,
             (long long)elements, (unsigned long long)view->size_bytes);
    return -1;
  }
  if (!check_device_range(device, view->data,
                          (uint64_t)elements * sizeof(float), what, status)) {
    return -1;
  }
  return elements;
}

static int check_f32(const AsyncRT_TensorView* view, const char* op,
                     AsyncRT_Status* status) {
  if (view->dtype == ASYNCRT_DTYPE_F32) return 1;
  sim_fail(status, ASYNCRT_UNIMPLEMENTED, "sim: %s supports f32 only", op);
  return 0;
}

static int check_num_inputs(const AsyncRT_KernelContext* context,
                            int32_t expected, const char* op,
                            AsyncRT_Status* status) {
  int32_t inputs = g_api->num_inputs(context);
  if (inputs == expected) return 1;
  sim_fail(status, ASYNCRT_UNIMPLEMENTED, "sim: %s supports %d inputs, not %d",
           op, (int)expected, (int)inputs);
  return 0;
}

/* ASYNCRT_SIM_FAIL_OP: the op's work fails on its stream instead of
 * running, as a device fault would, after the kernel itself succeeded. */
typedef struct SimInjectedFailure {
  const char* op; /* A string literal. */
} SimInjectedFailure;

static AsyncRT_Code run_injected_failure(void* arg, char* message,
                                         size_t message_size) {
  const SimInjectedFailure* failure = (const SimInjectedFailure*)arg;
  snprintf(message, message_size,
           "sim: %s failed on the device (ASYNCRT_SIM_FAIL_OP)", failure->op);
  return ASYNCRT_INTERNAL;
}

/* Enqueues `work(arg)` on the kernel's stream, or the injected failure in
 * its place; takes `arg`. */
static void enqueue_kernel(const AsyncRT_KernelContext* context, const char* op,
                           SimWorkFn work, void* arg, AsyncRT_Status* status) {
  AsyncRT_Stream stream = g_api->kernel_stream(context);
  if (g_fail_op[0] != '\0' && strcmp(g_fail_op, op) == 0) {
    SimInjectedFailure* failure =
        (SimInjectedFailure*)malloc(sizeof(SimInjectedFailure));
    free(arg);
    if (failure == NULL) {
      sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
               "sim: out of host memory for %s", op);
      return;
    }
    failure->op = op;
    work = run_injected_failure;
    arg = failure;
  }
  stream_enqueue_work(stream, work, arg, status);
}

static void* new_args(size_t size, const char* op, AsyncRT_Status* status) {
  void* args = malloc(size);
  if (args == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for %s", op);
  }
  return args;
}

/* nn.relu ------------------------------------------------------------- */

/* What the stream needs of the tensors: the views' dims are only valid
 * during the kernel call, and the computation runs later. */
typedef struct SimUnaryArgs {
  const float* x;
  float* out;
  int64_t elements;
} SimUnaryArgs;

static AsyncRT_Code run_relu(void* arg, char* message, size_t message_size) {
  const SimUnaryArgs* args = (const SimUnaryArgs*)arg;
  int64_t i;
  (void)message;
  (void)message_size;
  /* `x < 0` is false for NaN, which stays NaN. */
  for (i = 0; i < args->elements; ++i) {
    float x = args->x[i];
    args->out[i] = x < 0.0f ? 0.0f : x;
  }
  return ASYNCRT_OK;
}

static void relu_kernel(AsyncRT_KernelContext* context, void* kernel_data,
                        AsyncRT_Status* status) {
  static const char kOp[] = "nn.relu";
  const SimDevice* device = sim_device(g_api->kernel_device(context));
  AsyncRT_TensorView x, out;
  int64_t elements, out_elements;
  SimUnaryArgs* args;
  (void)kernel_data;

  if (!check_num_inputs(context, 1, kOp, status)) return;
  if (!get_input(context, 0, &x, status)) return;
  if (!check_f32(&x, kOp, status)) return;
  elements = f32_elements(device, &x, "nn.relu input 0", status);
  if (elements < 0) return;

  if (!allocate_output(context, 0, &out, status)) return;
  if (!check_f32(&out, kOp, status)) return;
  out_elements = f32_elements(device, &out, "nn.relu output 0", status);
  if (out_elements < 0) return;
  if (out_elements != elements) {
    sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
             "sim: nn.relu's output has %lld elements, its input %lld",
             (long long)out_elements, (long long)elements);
    return;
  }

  args = (SimUnaryArgs*)new_args(sizeof(*args), kOp, status);
  if (args == NULL) return;
  args->x = (const float*)x.data;
  args->out = (float*)out.data;
  args->elements = elements;
  enqueue_kernel(context, kOp, run_relu, args, status);
}

/* nn.add -------------------------------------------------------------- */

typedef struct SimAddArgs {
  const float* a;
  const float* b;
  float* out;
  int64_t elements;
  int a_is_scalar;
  int b_is_scalar;
} SimAddArgs;

static AsyncRT_Code run_add(void* arg, char* message, size_t message_size) {
  const SimAddArgs* args = (const SimAddArgs*)arg;
  int64_t i;
  (void)message;
  (void)message_size;
  if (args->a_is_scalar) {
    /* Read before the loop: the output may be the other operand. */
    const float a = args->a[0];
    for (i = 0; i < args->elements; ++i) args->out[i] = a + args->b[i];
  } else if (args->b_is_scalar) {
    const float b = args->b[0];
    for (i = 0; i < args->elements; ++i) args->out[i] = args->a[i] + b;
  } else {
    for (i = 0; i < args->elements; ++i) {
      args->out[i] = args->a[i] + args->b[i];
    }
  }
  return ASYNCRT_OK;
}

static int same_shape(const AsyncRT_TensorView* a,
                      const AsyncRT_TensorView* b) {
  int32_t i;
  if (a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; ++i) {
    if (a->dims[i] != b->dims[i]) return 0;
  }
  return 1;
}

static void add_kernel(AsyncRT_KernelContext* context, void* kernel_data,
                       AsyncRT_Status* status) {
  static const char kOp[] = "nn.add";
  const SimDevice* device = sim_device(g_api->kernel_device(context));
  AsyncRT_TensorView a, b, out;
  int64_t a_elements, b_elements, elements, out_elements;
  int a_is_scalar = 0, b_is_scalar = 0;
  SimAddArgs* args;
  (void)kernel_data;

  if (!check_num_inputs(context, 2, kOp, status)) return;
  if (!get_input(context, 0, &a, status)) return;
  if (!get_input(context, 1, &b, status)) return;
  if (!check_f32(&a, kOp, status) || !check_f32(&b, kOp, status)) return;
  a_elements = f32_elements(device, &a, "nn.add input 0", status);
  if (a_elements < 0) return;
  b_elements = f32_elements(device, &b, "nn.add input 1", status);
  if (b_elements < 0) return;

  /* General broadcasting is the CPU's; this device keeps to the two cases
   * that need no index arithmetic. */
  if (same_shape(&a, &b)) {
    elements = a_elements;
  } else if (a_elements == 1) {
    a_is_scalar = 1;
    elements = b_elements;
  } else if (b_elements == 1) {
    b_is_scalar = 1;
    elements = a_elements;
  } else {
    sim_fail(status, ASYNCRT_UNIMPLEMENTED,
             "sim: nn.add supports equal shapes or a single-element operand");
    return;
  }

  if (!allocate_output(context, 0, &out, status)) return;
  if (!check_f32(&out, kOp, status)) return;
  out_elements = f32_elements(device, &out, "nn.add output 0", status);
  if (out_elements < 0) return;
  if (out_elements != elements) {
    sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
             "sim: nn.add's output has %lld elements, not %lld",
             (long long)out_elements, (long long)elements);
    return;
  }

  args = (SimAddArgs*)new_args(sizeof(*args), kOp, status);
  if (args == NULL) return;
  args->a = (const float*)a.data;
  args->b = (const float*)b.data;
  args->out = (float*)out.data;
  args->elements = elements;
  args->a_is_scalar = a_is_scalar;
  args->b_is_scalar = b_is_scalar;
  enqueue_kernel(context, kOp, run_add, args, status);
}

/* nn.matmul ----------------------------------------------------------- */

typedef struct SimMatmulArgs {
  const float* a;
  const float* b;
  float* out;
  int64_t m, k, n;
} SimMatmulArgs;

static AsyncRT_Code run_matmul(void* arg, char* message, size_t message_size) {
  const SimMatmulArgs* args = (const SimMatmulArgs*)arg;
  int64_t i, j, p;
  (void)message;
  (void)message_size;
  /* i-p-j order walks b and out by rows, the way they lie in memory. */
  for (i = 0; i < args->m; ++i) {
    float* row = args->out + i * args->n;
    for (j = 0; j < args->n; ++j) row[j] = 0.0f;
    for (p = 0; p < args->k; ++p) {
      const float a = args->a[i * args->k + p];
      const float* b_row = args->b + p * args->n;
      for (j = 0; j < args->n; ++j) row[j] += a * b_row[j];
    }
  }
  return ASYNCRT_OK;
}

static void matmul_kernel(AsyncRT_KernelContext* context, void* kernel_data,
                          AsyncRT_Status* status) {
  static const char kOp[] = "nn.matmul";
  const SimDevice* device = sim_device(g_api->kernel_device(context));
  AsyncRT_TensorView a, b, out;
  const char* activation;
  size_t activation_size;
  SimMatmulArgs* args;
  (void)kernel_data;

  /* A fused bias or sum (the model compiler's) comes as a third and fourth
   * input. */
  if (!check_num_inputs(context, 2, kOp, status)) return;
  /* A fused activation (the model compiler's) is the string attribute
   * "activation". */
  if (g_api->get_attr_string(context, "activation", &activation,
                             &activation_size) &&
      activation_size > 0) {
    sim_fail(status, ASYNCRT_UNIMPLEMENTED,
             "sim: nn.matmul supports no fused activation");
    return;
  }
  if (!get_input(context, 0, &a, status)) return;
  if (!get_input(context, 1, &b, status)) return;
  if (!check_f32(&a, kOp, status) || !check_f32(&b, kOp, status)) return;
  if (a.rank != 2 || b.rank != 2) {
    sim_fail(status, ASYNCRT_UNIMPLEMENTED,
             "sim: nn.matmul supports rank-2 operands only, not rank %d and "
             "%d",
             (int)a.rank, (int)b.rank);
    return;
  }
  if (f32_elements(device, &a, "nn.matmul input 0", status) < 0 ||
      f32_elements(device, &b, "nn.matmul input 1", status) < 0) {
    return;
  }
  if (a.dims[1] != b.dims[0]) {
    sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
             "sim: nn.matmul's operands [%lld, %lld] and [%lld, %lld] do "
             "not match",
             (long long)a.dims[0], (long long)a.dims[1], (long long)b.dims[0],
             (long long)b.dims[1]);
    return;
  }

  if (!allocate_output(context, 0, &out, status)) return;
  if (!check_f32(&out, kOp, status)) return;
  if (f32_elements(device, &out, "nn.matmul output 0", status) < 0) return;
  if (out.rank != 2 || out.dims[0] != a.dims[0] || out.dims[1] != b.dims[1]) {
    sim_fail(status, ASYNCRT_INVALID_ARGUMENT,
             "sim: nn.matmul's output is not [%lld, %lld]",
             (long long)a.dims[0], (long long)b.dims[1]);
    return;
  }

  args = (SimMatmulArgs*)new_args(sizeof(*args), kOp, status);
  if (args == NULL) return;
  args->a = (const float*)a.data;
  args->b = (const float*)b.data;
  args->out = (float*)out.data;
  args->m = a.dims[0];
  args->k = a.dims[1];
  args->n = b.dims[1];
  enqueue_kernel(context, kOp, run_matmul, args, status);
}

/*===--- The platform --------------------------------------------------===*/

static void sim_create_device(const AsyncRT_Platform* platform,
                              AsyncRT_Device* device, AsyncRT_Status* status) {
  SimDevice* sim;
  uint64_t memory_bytes;
  (void)platform;
  if (device->struct_size < ASYNCRT_DEVICE_STRUCT_SIZE) {
    sim_fail(status, ASYNCRT_FAILED_PRECONDITION,
             "sim: AsyncRT_Device has %zu bytes, fewer than the %zu of "
             "plug-in API %d.%d",
             device->struct_size, (size_t)ASYNCRT_DEVICE_STRUCT_SIZE,
             ASYNCRT_PLUGIN_API_MAJOR, ASYNCRT_PLUGIN_API_MINOR);
    return;
  }
  sim = (SimDevice*)calloc(1, sizeof(SimDevice));
  if (sim == NULL) {
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: out of host memory for SIM:%d", (int)device->ordinal);
    return;
  }
  sim->ordinal = device->ordinal;
  /* The runtime's user may ask for less memory than the plug-in's default
   * (API 1.3): the arena is then that size, in whole blocks (one at
   * least). */
  memory_bytes = g_memory_bytes;
  if (device->requested_memory_limit_bytes != 0 &&
      device->requested_memory_limit_bytes < memory_bytes) {
    memory_bytes = device->requested_memory_limit_bytes;
    memory_bytes -= memory_bytes % kSimBlockBytes;
    if (memory_bytes == 0) memory_bytes = kSimBlockBytes;
  }
  if (!arena_init(&sim->arena, memory_bytes)) {
    free(sim);
    sim_fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "sim: cannot allocate the %llu bytes of SIM:%d's memory "
             "(ASYNCRT_SIM_MEMORY_BYTES)",
             (unsigned long long)memory_bytes, (int)device->ordinal);
    return;
  }
  pthread_mutex_init(&sim->graph_mutex, NULL);
  snprintf(sim->description, sizeof(sim->description),
           "Example simulated accelerator (host threads, %llu MiB arena)",
           (unsigned long long)(memory_bytes >> 20));

  device->device_handle = sim;
  device->memory_limit_bytes = memory_bytes;
  device->numa_node = -1;
  device->bus_id = NULL;
  device->physical_description = sim->description;
}

static void sim_destroy_device(const AsyncRT_Platform* platform,
                               AsyncRT_Device* device) {
  SimDevice* sim = sim_device(device);
  (void)platform;
  if (sim == NULL) return;
  while (sim->graph_blocks != NULL) {
    SimGraphBlock* next = sim->graph_blocks->next;
    free(sim->graph_blocks);
    sim->graph_blocks = next;
  }
  pthread_mutex_destroy(&sim->graph_mutex);
  arena_destroy(&sim->arena);
  free(sim);
  device->device_handle = NULL;
  device->physical_description = NULL;
}

/* The runtime may call AsyncRT_InitPlugin again after this. */
static void sim_destroy_platform(AsyncRT_Platform* platform) {
  (void)platform;
  g_api = NULL;
  g_device_count = 0;
  g_memory_bytes = 0;
  g_fail_op[0] = '\0';
  g_log_graphs = 0;
}

ASYNCRT_PLUGIN_EXPORT void AsyncRT_InitPlugin(AsyncRT_PluginParams* params,
                                              AsyncRT_Status* status) {
  const AsyncRT_RuntimeApi* api = params->api;
  AsyncRT_Platform* platform;
  AsyncRT_DeviceFns* fns;
  AsyncRT_KernelDef kernel;
  static const struct {
    const char* op;
    AsyncRT_KernelFn compute;
  } kKernels[] = {{"nn.relu", relu_kernel},
                  {"nn.add", add_kernel},
                  {"nn.matmul", matmul_kernel}};
  /* Variables, not the macros: with MINOR 0 the comparison below would
   * be "unsigned < 0", which compilers warn of. */
  static const uint32_t kApiMajor = ASYNCRT_PLUGIN_API_MAJOR;
  static const uint32_t kApiMinor = ASYNCRT_PLUGIN_API_MINOR;
  size_t i;

  g_api = api;
  if (api->struct_size < ASYNCRT_RUNTIME_API_STRUCT_SIZE) {
    sim_fail(status, ASYNCRT_FAILED_PRECONDITION,
             "sim: AsyncRT_RuntimeApi has %zu bytes, fewer than the %zu of "
             "plug-in API %d.%d",
             api->struct_size, (size_t)ASYNCRT_RUNTIME_API_STRUCT_SIZE,
             ASYNCRT_PLUGIN_API_MAJOR, ASYNCRT_PLUGIN_API_MINOR);
    return;
  }
  /* The runtime checks the version only after this returns, but the
   * platform and device functions below are written at this header's
   * sizes into structs the runtime allocated at its own: a runtime older
   * than this header must be refused before writing them. */
  if (api->api_major != kApiMajor || api->api_minor < kApiMinor ||
      params->struct_size < ASYNCRT_PLUGIN_PARAMS_STRUCT_SIZE) {
    sim_fail(status, ASYNCRT_FAILED_PRECONDITION,
             "sim: built for plug-in API %d.%d.%d, the runtime has %u.%u.%u",
             ASYNCRT_PLUGIN_API_MAJOR, ASYNCRT_PLUGIN_API_MINOR,
             ASYNCRT_PLUGIN_API_PATCH, (unsigned)api->api_major,
             (unsigned)api->api_minor, (unsigned)api->api_patch);
    return;
  }
  params->plugin_api_major = ASYNCRT_PLUGIN_API_MAJOR;
  params->plugin_api_minor = ASYNCRT_PLUGIN_API_MINOR;
  params->plugin_api_patch = ASYNCRT_PLUGIN_API_PATCH;
  read_settings();

  platform = params->platform;
  platform->struct_size = ASYNCRT_PLATFORM_STRUCT_SIZE;
  platform->ext = NULL;
  platform->name = "Example simulated accelerator";
  platform->device_type = "sim";
  platform->device_count = g_device_count;
  platform->platform_handle = NULL;
  platform->create_device = sim_create_device;
  platform->destroy_device = sim_destroy_device;
  platform->destroy_platform = sim_destroy_platform;

  fns = params->device_fns;
  fns->struct_size = ASYNCRT_DEVICE_FNS_STRUCT_SIZE;
  fns->ext = NULL;
  fns->allocate = sim_allocate;
  fns->deallocate = sim_deallocate;
  fns->host_memory_allocate = sim_host_memory_allocate;
  fns->host_memory_deallocate = sim_host_memory_deallocate;
  fns->memory_usage = sim_memory_usage;
  fns->memory_stats = sim_memory_stats;
  fns->create_stream = sim_create_stream;
  fns->destroy_stream = sim_destroy_stream;
  fns->create_event = sim_create_event;
  fns->destroy_event = sim_destroy_event;
  fns->record_event = sim_record_event;
  fns->query_event = sim_query_event;
  fns->wait_for_event = sim_wait_for_event;
  fns->memcpy_htod = sim_memcpy_htod;
  fns->memcpy_dtoh = sim_memcpy_dtoh;
  fns->memcpy_dtod = sim_memcpy_dtod;
  fns->host_callback = sim_host_callback;
  fns->begin_capture = sim_begin_capture;
  fns->end_capture = sim_end_capture;
  fns->launch_graph = sim_launch_graph;
  fns->destroy_graph = sim_destroy_graph;

  /* A failed registration fails the init (status stays set). */
  for (i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    memset(&kernel, 0, sizeof(kernel));
    kernel.struct_size = ASYNCRT_KERNEL_DEF_STRUCT_SIZE;
    kernel.ext = NULL;
    kernel.op_name = kKernels[i].op;
    kernel.compute = kKernels[i].compute;
    kernel.kernel_data = NULL;
    api->register_kernel(params->registrar, &kernel, status);
    if (api->status_code(status) != ASYNCRT_OK) return;
  }
}
