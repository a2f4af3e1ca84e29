#include "backends/cpu/nn/onednn_util.h"

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "backends/cpu/nn/onednn_tensor.h"

namespace asyncrt::nn {
namespace {

Threading ThreadingFromEnvironment() {
  const char* value = std::getenv("ASYNCRT_NN_THREADING");
  return value != nullptr && std::string(value) == "throughput"
             ? Threading::kThroughput
             : Threading::kLatency;
}

std::atomic<Threading>& CurrentThreading() {
  static std::atomic<Threading> threading{ThreadingFromEnvironment()};
  return threading;
}

Denormals DenormalsFromEnvironment() {
  const char* value = std::getenv("ASYNCRT_NN_DENORMALS");
  return value != nullptr && std::string(value) == "keep" ? Denormals::kKeep
                                                          : Denormals::kFlush;
}

std::atomic<Denormals>& CurrentDenormals() {
  static std::atomic<Denormals> denormals{DenormalsFromEnvironment()};
  return denormals;
}

// MXCSR's sticky exception flags (invalid, denormal, divide by zero,
// overflow, underflow, precision).
constexpr unsigned kStatusFlags = 0x3f;
#if defined(__x86_64__) || defined(__i386__)
// MXCSR's flush-to-zero (results) and denormals-are-zero (inputs) bits.
constexpr unsigned kFlushBits = 0x8040;
unsigned ThreadFloatMode() { return _mm_getcsr(); }
void SetThreadFloatMode(unsigned mode) { _mm_setcsr(mode); }
#else
constexpr unsigned kFlushBits = 0;
unsigned ThreadFloatMode() { return 0; }
void SetThreadFloatMode(unsigned) {}
#endif

// `mode` with the policy's flush bits.
unsigned WithPolicy(unsigned mode, Denormals denormals) {
  return denormals == Denormals::kFlush ? mode | kFlushBits
                                        : mode & ~kFlushBits;
}

// The OpenMP team a primitive gets in latency mode: OpenMP's default for
// the process (OMP_NUM_THREADS, else the cores), read once from the
// initial thread's settings, not from a runtime worker's.
std::atomic<int> team_size_override{0};

int FullTeam() {
  static const int threads = omp_get_max_threads();
  const int override = team_size_override.load(std::memory_order_relaxed);
  return override > 0 ? override : threads;
}
[[maybe_unused]] const int full_team_at_startup = FullTeam();

std::mutex& LatencyMutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

std::atomic<int> running{0};
std::atomic<int> max_running{0};

// Counts the primitives running at once (relaxed: a statistic).
class RunningScope {
 public:
  RunningScope() {
    const int now = running.fetch_add(1, std::memory_order_relaxed) + 1;
    int max = max_running.load(std::memory_order_relaxed);
    while (now > max && !max_running.compare_exchange_weak(
                            max, now, std::memory_order_relaxed)) {
    }
  }
  ~RunningScope() { running.fetch_sub(1, std::memory_order_relaxed); }
};

// Scratchpad memory for the primitives run on this thread, kept between
// calls: a convolution's scratchpad can be megabytes, which malloc would
// map and unmap (and the kernel fault in again) on every call. Grows to the
// largest asked for; a primitive runs to completion before the next one on
// the thread starts, so one buffer serves them all.
void* ThreadScratchpad(size_t size) {
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (size > buffer.size) {
    std::free(buffer.data);
    const size_t rounded = (size + 4095) / 4096 * 4096;
    buffer.data = std::aligned_alloc(4096, rounded);
    buffer.size = buffer.data ? rounded : 0;
    if (!buffer.data) throw dnnl::error(dnnl_out_of_memory, "scratchpad");
  }
  return buffer.data;
}

}  // namespace

void SetThreading(Threading threading) {
  CurrentThreading().store(threading, std::memory_order_relaxed);
}

Threading GetThreading() {
  return CurrentThreading().load(std::memory_order_relaxed);
}

void SetDenormals(Denormals denormals) {
  CurrentDenormals().store(denormals, std::memory_order_relaxed);
}

Denormals GetDenormals() {
  return CurrentDenormals().load(std::memory_order_relaxed);
}

ScopedDenormals::ScopedDenormals() : saved_(ThreadFloatMode()) {
  const unsigned mode = WithPolicy(saved_, GetDenormals());
  if (mode != saved_) SetThreadFloatMode(mode);
}

ScopedDenormals::~ScopedDenormals() {
  // The controls as they were; the exception flags the op raised stay.
  const unsigned now = ThreadFloatMode();
  if ((now & ~kStatusFlags) != (saved_ & ~kStatusFlags)) {
    SetThreadFloatMode((now & kStatusFlags) | (saved_ & ~kStatusFlags));
  }
}

void SetTeamSize(int threads) {
  team_size_override.store(threads, std::memory_order_relaxed);
}

absl::StatusOr<Dims> IntArray(absl::string_view op, const OpAttrs& attrs,
                              absl::string_view name, size_t size,
                              int64_t fallback) {
  auto values = attrs.GetIntegerArray(name);
  if (!values) return Dims(size, fallback);
  if (values->size() != size) {
    return OpError(op, absl::StrCat("'", name, "' has ", values->size(),
                                    " values, expected ", size));
  }
  return Dims(values->begin(), values->end());
}

// N, C, spatial... with the spatial rank raised from 1 to 2.
dnnl::memory::dims Spatial2d(absl::Span<const int64_t> dims) {
  if (dims.size() != 3) return dnnl::memory::dims(dims.begin(), dims.end());
  return dnnl::memory::dims{dims[0], dims[1], 1, dims[2]};
}

bool OneDnnHasAvx512() {
  static const bool avx512 = [] {
    const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
    const int core = static_cast<int>(dnnl::cpu_isa::avx512_core);
    return (isa & core) == core;
  }();
  return avx512;
}

absl::Status CheckSpatialInput(absl::string_view op, const TensorShape& x) {
  if (x.GetRank() < 3 || x.GetRank() > 5) {
    return OpError(op, absl::StrCat("input must be N x C x W, N x C x H x W "
                                    "or N x C x D x H x W, got ",
                                    x.DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> IsChannelsLast(absl::string_view op,
                                    const OpAttrs& attrs) {
  std::optional<absl::string_view> format = attrs.GetString("data_format");
  if (!format || *format == "NCHW") return false;
  if (*format == "NHWC") return true;
  return OpError(
      op, absl::StrCat("unknown data_format \"", *format, "\" (NCHW, NHWC)"));
}

absl::Status ChannelsLastOrFirstMetadata(absl::string_view op,
                                         ArgumentMetadata args,
                                         const OpAttrs& attrs,
                                         absl::Span<TensorMetadata> results,
                                         OpMetadataFn channels_first) {
  absl::StatusOr<bool> channels_last = IsChannelsLast(op, attrs);
  if (!channels_last.ok()) return channels_last.status();
  if (!*channels_last) return channels_first(args, attrs, results);
  if (args.empty() || args[0].shape.GetRank() != 4) {
    return OpError(op, "data_format NHWC needs an N x H x W x C input");
  }
  // N x H x W x C <-> N x C x H x W.
  auto permuted = [](const TensorShape& shape, bool to_channels_last) {
    const auto d = shape.GetDimensions();
    return to_channels_last ? Dims{d[0], d[2], d[3], d[1]}
                            : Dims{d[0], d[3], d[1], d[2]};
  };
  std::vector<TensorMetadata> nchw;
  nchw.reserve(args.size());
  std::vector<const TensorMetadata*> pointers;
  for (size_t i = 0; i < args.size(); ++i) {
    nchw.push_back(
        args[i].shape.GetRank() == 4
            ? TensorMetadata(args[i].dtype, permuted(args[i].shape, false))
            : args[i]);
  }
  for (const TensorMetadata& metadata : nchw) pointers.push_back(&metadata);
  if (absl::Status status =
          channels_first(ArgumentMetadata(pointers), attrs, results);
      !status.ok()) {
    return status;
  }
  for (TensorMetadata& result : results) {
    if (result.shape.GetRank() == 4) {
      result = TensorMetadata(result.dtype, permuted(result.shape, true));
    }
  }
  return absl::OkStatus();
}

bool CpuRefusesChannelsLast(OpInvocation& invocation, absl::string_view op) {
  absl::StatusOr<bool> channels_last = IsChannelsLast(op, invocation.attrs);
  if (channels_last.ok() && !*channels_last) return false;
  FailAll(invocation, op,
          channels_last.ok()
              ? "data_format NHWC runs on devices that compute channels last "
                "(CUDA); the CPU computes NCHW"
              : channels_last.status().message());
  return true;
}

absl::Status CheckConvOperands(absl::string_view op, ArgumentMetadata args) {
  if (absl::Status status = RequireFloat(op, args); !status.ok()) {
    return status;
  }
  const TensorShape& x = args[0].shape;
  const TensorShape& w = args[1].shape;
  if (absl::Status status = CheckSpatialInput(op, x); !status.ok()) {
    return status;
  }
  if (w.GetRank() != x.GetRank()) {
    return OpError(op, absl::StrCat("weights ", w.DebugString(),
                                    " do not match input ", x.DebugString()));
  }
  return absl::OkStatus();
}

void ReleaseConstantPages(const HostBuffer& buffer) {
  if (!buffer.IsReadOnly() || buffer.size() == 0) return;
  static const uintptr_t page = sysconf(_SC_PAGESIZE);
  const auto begin = reinterpret_cast<uintptr_t>(buffer.data());
  // Whole pages inside the buffer only: its neighbours may be in use.
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + buffer.size()) / page * page;
  if (last > first) {
    madvise(reinterpret_cast<void*>(first), last - first, MADV_PAGEOUT);
  }
}

int UseCurrentTeam() {
  const int team =
      GetThreading() == Threading::kThroughput ? 1 : FullTeam();
  if (omp_get_max_threads() != team) omp_set_num_threads(team);
  // oneDNN computes on this thread's OpenMP team, whose other threads
  // (OpenMP keeps a team per thread that starts one) take the denormals
  // policy here, once per team size and policy: nothing of ours runs on
  // them around a primitive. This thread's own mode is ScopedDenormals'.
  struct Applied {
    int team = 0;
    Denormals denormals = Denormals::kKeep;
  };
  thread_local Applied applied;
  const Denormals denormals = GetDenormals();
  if (team > 1 && (applied.team != team || applied.denormals != denormals)) {
#pragma omp parallel num_threads(team)
    if (omp_get_thread_num() != 0) {
      SetThreadFloatMode(WithPolicy(ThreadFloatMode(), denormals));
    }
    applied = {team, denormals};
  }
  return team;
}

const DenseHostTensor* PlainArgument(
    OpInvocation& invocation, absl::string_view op, size_t index,
    std::vector<RCReference<AsyncValue>>& keep) {
  const Tensor& tensor = invocation.argument(index);
  if (tensor.tensor_type() == DenseHostTensorType()) {
    return static_cast<const DenseHostTensor*>(&tensor);
  }
  Device& host = invocation.host()->host_device();
  RCReference<AsyncValue> converted = ConvertTensor(
      tensor, host, host, DenseHostTensorType(), invocation.exec_ctx);
  if (!converted->IsAvailable() || converted->IsError() ||
      !converted->IsType<DenseHostTensor>()) {
    FailAll(invocation, op,
            absl::StrCat("argument ", index, " (", tensor.tensor_type().name(),
                         ") does not convert to a DenseHostTensor"));
    return nullptr;
  }
  keep.push_back(std::move(converted));
  return &keep.back()->get<DenseHostTensor>();
}

void ParallelRanges(int64_t n, int64_t grain,
                    absl::FunctionRef<void(int64_t, int64_t)> body) {
  const int team = GetThreading() == Threading::kThroughput ? 1 : FullTeam();
  const int64_t parts =
      std::min<int64_t>(team, n / std::max<int64_t>(grain, 1));
  // This thread's parts; the team's other threads take their own below.
  ScopedDenormals denormals;
  if (parts <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  // One full team at a time, as for the primitives.
  std::lock_guard<std::mutex> lock(LatencyMutex());
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer cannot see the barrier that ends an OpenMP region
  // (Debian's libgomp is not instrumented) and would report the parts'
  // reads of this frame as races: the same parts, one after the other.
  for (int64_t part = 0; part < parts; ++part) {
    const int64_t begin = n * part / parts, end = n * (part + 1) / parts;
    if (begin < end) body(begin, end);
  }
#else
  const int team_threads = static_cast<int>(parts);
#pragma omp parallel num_threads(team_threads)
  {
    ScopedDenormals team_denormals;
    const int64_t thread = omp_get_thread_num();
    const int64_t threads = omp_get_num_threads();
    const int64_t begin = n * thread / threads;
    const int64_t end = n * (thread + 1) / threads;
    if (begin < end) body(begin, end);
  }
#endif
}

void WrapCpuImplementation(OpRegistry& registry, absl::string_view op,
                           OpDispatchFn wrapper) {
  const OpEntry* entry = registry.Find(op);
  const OpImplementation* cpu =
      entry != nullptr ? entry->FindImplementation("cpu") : nullptr;
  if (cpu == nullptr || cpu->dispatch == wrapper) return;
  auto* wrapped = new WrappedImplementation{cpu->dispatch, cpu->data};
  registry.AddDispatch(op, "cpu", wrapper, kOpAcceptsRegisteredHost, wrapped);
}

void RunWrapped(OpInvocation& invocation, absl::string_view op,
                const WrappedImplementation& wrapped) {
  bool any_onednn = false;
  for (size_t i = 0; i < invocation.arguments.size(); ++i) {
    any_onednn |= invocation.argument(i).tensor_type() == OneDnnTensor::Type();
  }
  invocation.implementation_data = wrapped.data;
  if (!any_onednn) return wrapped.dispatch(invocation);
  std::vector<RCReference<AsyncValue>> converted;
  std::vector<const Tensor*> tensors(invocation.arguments.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    tensors[i] = PlainArgument(invocation, op, i, converted);
    if (tensors[i] == nullptr) return;
  }
  const absl::Span<const Tensor* const> original = invocation.argument_tensors;
  const uint64_t unshared = invocation.unshared_arguments;
  invocation.argument_tensors = tensors;
  invocation.unshared_arguments = 0;
  wrapped.dispatch(invocation);
  invocation.argument_tensors = original;
  invocation.unshared_arguments = unshared;
}

void ExecutePrimitives(absl::Span<const PrimitiveStep> steps) {
  ScopedDenormals denormals;
  // A thread may serve both modes over its life.
  UseCurrentTeam();
  const Threading threading = GetThreading();
  // A stream per thread (making one allocates); CPU streams run in order.
  thread_local dnnl::stream stream(CpuEngine());
  auto run = [&] {
    RunningScope scope;
    // Through oneDNN's C API: the C++ one copies the argument map into a
    // vector on every call (and adding the scratchpad copied it again).
    absl::InlinedVector<dnnl_exec_arg_t, 8> args;
    for (const PrimitiveStep& step : steps) {
      args.clear();
      for (const auto& [kind, memory] : step.args) {
        args.push_back({kind, memory.get()});
      }
      dnnl::memory scratchpad_memory;
      const dnnl_memory_desc_t* scratchpad = dnnl_primitive_desc_query_md(
          step.primitive.get_primitive_desc(), dnnl_query_scratchpad_md, 0);
      if (scratchpad != nullptr && scratchpad->ndims != 0) {
        const dnnl::memory::desc desc(*scratchpad);
        scratchpad_memory = dnnl::memory(desc, CpuEngine(),
                                         ThreadScratchpad(desc.get_size()));
        args.push_back({DNNL_ARG_SCRATCHPAD, scratchpad_memory.get()});
      }
      dnnl::error::wrap_c_api(
          dnnl_primitive_execute(step.primitive.get(), stream.get(),
                                 static_cast<int>(args.size()), args.data()),
          "could not execute a primitive");
    }
    stream.wait();
  };
  if (threading == Threading::kThroughput) return run();
  // One full team at a time: a second worker waits for the first team
  // rather than start a second one on the same cores.
  std::lock_guard<std::mutex> lock(LatencyMutex());
  run();
}

namespace {

// Constants reordered for oneDNN are packed one after the other into
// chunks on transparent huge pages (2 MiB-aligned, MADV_HUGEPAGE): a
// model's weights then take one TLB entry per 2 MiB instead of one per
// 4 KiB page, and at most the last, partly written huge page of a chunk
// is memory they do not use. MobileNetV2's 14 MB of weights are read on every
// call; on huge pages (with its activations, host_allocator.cc) it ran 10%
// faster on one core. A chunk is freed with the last constant in it.
class ConstantChunks {
 public:
  // Address space reserved per chunk: pages are resident only once
  // written, so the unused end of a chunk costs no memory.
  static constexpr size_t kChunk = size_t{32} << 20;

  static ConstantChunks& Get() {
    static auto* chunks = new ConstantChunks;  // Never destroyed.
    return *chunks;
  }

  // `size` bytes, 64-byte aligned, held by the returned pointer. Throws
  // dnnl::error if memory runs out (the caller's op fails).
  std::shared_ptr<void> Allocate(size_t size) {
    size = (size + 63) & ~size_t{63};
    if (size > kChunk / 2) {
      // Larger constants take a chunk of their own.
      auto chunk = std::make_shared<Chunk>(size);
      return std::shared_ptr<void>(chunk, chunk->data);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (current_ == nullptr || used_ + size > kChunk) {
      current_ = std::make_shared<Chunk>(kChunk);
      used_ = 0;
    }
    void* data = current_->data + used_;
    used_ += size;
    return std::shared_ptr<void>(current_, data);  // Holds the chunk.
  }

 private:
  struct Chunk {
    explicit Chunk(size_t size)
        : data(static_cast<char*>(AllocateHugePages(size))) {
      if (data == nullptr) {
        throw dnnl::error(dnnl_out_of_memory, "constant weights");
      }
    }
    ~Chunk() { std::free(data); }
    char* const data;
  };

  std::mutex mutex_;
  std::shared_ptr<Chunk> current_;  // Guarded by mutex_.
  size_t used_ = 0;                 // Guarded by mutex_.
};

}  // namespace

std::shared_ptr<const ReorderedWeights> CachedReorderedWeights(
    const std::string& key, const HostBuffer& weights,
    const RCReference<HostBuffer>& owner, const dnnl::memory& source,
    const dnnl::memory::desc& wanted, const dnnl::reorder& reorder) {
  static auto* cache = new ConfigCache<ReorderedWeights>(1024);
  return cache->GetOrCreate(
      absl::StrCat(reinterpret_cast<uintptr_t>(&weights), "|", key), [&] {
        std::shared_ptr<void> storage =
            ConstantChunks::Get().Allocate(wanted.get_size());
        dnnl::memory reordered(wanted, CpuEngine(), storage.get());
        PrimitiveStep step{reorder,
                           {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, reordered}}};
        ExecutePrimitives(absl::MakeConstSpan(&step, 1));
        ReleaseConstantPages(weights);
        return ReorderedWeights{owner.CopyRef(), std::move(storage), reordered};
      });
}

namespace {
// ConstantWeightsMatmul's primitives for one configuration.
struct ConstantMatmul {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
  std::optional<dnnl::reorder> weights_reorder;
};
}  // namespace

PrimitiveStep ConstantWeightsMatmul(const std::string& key,
                                    const dnnl::memory::desc& a_md,
                                    const dnnl::memory::desc& b_md,
                                    const dnnl::memory::desc& dst_md,
                                    const dnnl::primitive_attr& attr,
                                    const void* a, const DenseHostTensor& b,
                                    const void* bias, void* dst) {
  static auto* cache = new ConfigCache<ConstantMatmul>(1024);
  const dnnl::memory::dims& b_dims = b_md.dims();
  const dnnl::memory::desc bias_md = PlainF32({1, b_dims[1]});
  std::shared_ptr<const ConstantMatmul> matmul = cache->GetOrCreate(key, [&] {
    ConstantMatmul made;
    const dnnl::memory::desc any_b(b_dims, dnnl::memory::data_type::f32,
                                   dnnl::memory::format_tag::any);
    made.pd = dnnl::matmul::primitive_desc(
        bias != nullptr ? dnnl::matmul::desc(a_md, any_b, bias_md, dst_md)
                        : dnnl::matmul::desc(a_md, any_b, dst_md),
        attr, CpuEngine());
    made.primitive = dnnl::matmul(made.pd);
    if (made.pd.weights_desc() != b_md) {
      made.weights_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(
          CpuEngine(), b_md, CpuEngine(), made.pd.weights_desc(),
          PrimitiveAttr()));
    }
    return made;
  });
  dnnl::memory weights = Wrap(b_md, b.data());
  std::shared_ptr<const ReorderedWeights> reordered;
  if (matmul->weights_reorder) {
    reordered = CachedReorderedWeights(key, *b.buffer(), b.buffer(), weights,
                                       matmul->pd.weights_desc(),
                                       *matmul->weights_reorder);
    weights = reordered->weights;
  }
  PrimitiveStep step{matmul->primitive,
                     {{DNNL_ARG_SRC, Wrap(a_md, a)},
                      {DNNL_ARG_WEIGHTS, weights},
                      {DNNL_ARG_DST, Wrap(dst_md, dst)}}};
  step.hold = std::move(reordered);
  if (bias != nullptr)
    step.args.emplace_back(DNNL_ARG_BIAS, Wrap(bias_md, bias));
  return step;
}

int MaxConcurrentPrimitives() {
  return max_running.load(std::memory_order_relaxed);
}

void ResetMaxConcurrentPrimitives() {
  max_running.store(0, std::memory_order_relaxed);
}

std::string DimsKey(absl::Span<const int64_t> dims) {
  return absl::StrJoin(dims, "x");
}

std::optional<dnnl::reorder> ReorderIfNeeded(const dnnl::memory::desc& from,
                                             const dnnl::memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(
      CpuEngine(), from, CpuEngine(), to, PrimitiveAttr()));
}

absl::StatusOr<Window> MakeWindow(absl::string_view op, const OpAttrs& attrs,
                                  absl::Span<const int64_t> input_spatial,
                                  const Dims& kernel) {
  const size_t rank = input_spatial.size();
  absl::StatusOr<Dims> strides = IntArray(op, attrs, "strides", rank, 1);
  absl::StatusOr<Dims> dilations = IntArray(op, attrs, "dilations", rank, 1);
  absl::StatusOr<Dims> pads = IntArray(op, attrs, "pads", 2 * rank, 0);
  for (const auto* status :
       {&strides.status(), &dilations.status(), &pads.status()}) {
    if (!status->ok()) return *status;
  }
  const std::string auto_pad(attrs.GetString("auto_pad").value_or("NOTSET"));
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return OpError(op, absl::StrCat("unknown auto_pad '", auto_pad, "'"));
  }
  Window window;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = input_spatial[i], k = kernel[i];
    const int64_t s = (*strides)[i], d = (*dilations)[i];
    if (k < 1 || s < 1 || d < 1) {
      return OpError(op, "kernel, strides and dilations must be positive");
    }
    const int64_t extent = (k - 1) * d + 1;
    int64_t begin = (*pads)[i], end = (*pads)[i + rank];
    if (begin < 0 || end < 0) return OpError(op, "pads must be >= 0");
    if (auto_pad == "VALID") {
      begin = end = 0;
    } else if (auto_pad != "NOTSET") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    }
    const int64_t out = (in + begin + end - extent) / s + 1;
    if (in + begin + end < extent) {
      return OpError(op, absl::StrCat("the window (", extent,
                                      ") is larger than the padded input (",
                                      in + begin + end, ")"));
    }
    window.kernel.push_back(k);
    window.strides.push_back(s);
    window.dilations.push_back(d - 1);
    window.pad_begin.push_back(begin);
    window.pad_end.push_back(end);
    window.output.push_back(out);
  }
  // 1-D as 2-D: a leading spatial dimension of 1.
  if (rank == 1) {
    for (dnnl::memory::dims* dims :
         {&window.kernel, &window.strides, &window.dilations, &window.pad_begin,
          &window.pad_end, &window.output}) {
      dims->insert(dims->begin(), dims == &window.dilations ||
                                          dims == &window.pad_begin ||
                                          dims == &window.pad_end
                                      ? 0
                                      : 1);
    }
  }
  return window;
}

RCReference<HostBuffer> OneDnnResultBuffer(OpInvocation& invocation,
                                           absl::string_view op,
                                           const dnnl::memory::desc& desc,
                                           int sum_index,
                                           const OneDnnOperand* sum) {
  if (RCReference<HostBuffer> planned =
          invocation.PlannedResultBuffer(desc.get_size())) {
    if (sum == nullptr || sum->data != planned->data() || sum->desc == desc) {
      return planned;
    }
  }
  if (sum_index >= 0 && (invocation.unshared_arguments >> sum_index & 1)) {
    const Tensor& sum = invocation.argument(sum_index);
    if (sum.tensor_type() == OneDnnTensor::Type()) {
      const auto& onednn = static_cast<const OneDnnTensor&>(sum);
      if (onednn.desc() == desc && onednn.buffer()->IsUnique() &&
          !onednn.buffer()->IsReadOnly() && !onednn.buffer()->IsPlanned()) {
        return onednn.buffer();
      }
    }
  }
  RCReference<HostBuffer> buffer = HostBuffer::CreateUninitialized(
      desc.get_size(), kTensorAlignment, *invocation.host()->allocator());
  if (!buffer) {
    FailAll(invocation, op,
            absl::StrCat("cannot allocate ",
                         invocation.result_metadata[0].shape.DebugString()));
  }
  return buffer;
}

void SetResult(OpInvocation& invocation,
               AsyncValueRef<DenseHostTensor> plain_result,
               const dnnl::memory::desc& desc, RCReference<HostBuffer> buffer) {
  if (plain_result) {
    invocation.results[0] = std::move(plain_result);
    return;
  }
  invocation.results[0] = MakeAvailableAsyncValueRef<OneDnnTensor>(
      invocation.result_metadata[0], desc, std::move(buffer));
}

}  // namespace asyncrt::nn
