// What the nn.* ops on oneDNN share: the CPU engine and running one
// primitive with oneDNN's errors turned into op errors.
//
// Internal to backends/cpu/nn; not installed. Thread-safe.
#ifndef ASYNCRT_BACKENDS_CPU_NN_ONEDNN_UTIL_H_
#define ASYNCRT_BACKENDS_CPU_NN_ONEDNN_UTIL_H_

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace asyncrt::nn {

// The process's oneDNN CPU engine (never destroyed: ops may run during
// static destruction of other objects).
inline dnnl::engine& CpuEngine() {
  static auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// The strides of `dims` in row-major order (a dimension of 0 counted as 1,
// as oneDNN wants them).
inline dnnl::memory::dims RowMajorStrides(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * std::max<dnnl::memory::dim>(dims[i + 1], 1);
  }
  return strides;
}

// The plain (row-major, dense) f32 layout of `dims`.
inline dnnl::memory::desc PlainF32(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            RowMajorStrides(dims));
}

// A oneDNN view of host memory the op reads or writes; no copy.
inline dnnl::memory Wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, CpuEngine(), const_cast<void*>(data));
}

// The OpenMP team size a primitive gets under the current threading policy
// (1 in throughput mode, the full team in latency mode), made the calling
// thread's team size (a per-thread OpenMP setting; cheap).
int UseCurrentTeam();

// Attributes every primitive of the nn ops is created with: the caller
// provides the scratchpad (ExecutePrimitives, per execution). oneDNN's
// default library scratchpad is shared by every execution of a primitive,
// so one cached primitive run from two threads at once would corrupt it.
// Also sets the calling thread's team (UseCurrentTeam): oneDNN sizes a
// primitive's parallel regions when it creates it, so a primitive created
// on a thread still at OpenMP's default team would run every call on it
// (in a one-thread latency mode, a second thread spinning all along).
inline dnnl::primitive_attr PrimitiveAttr() {
  UseCurrentTeam();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// What an op derives once per configuration (shapes and attributes) and
// reuses: oneDNN primitive descriptors and primitives. Creating a
// descriptor that lets oneDNN choose layouts walks its implementations
// (milliseconds for a convolution), which oneDNN's own primitive cache
// does not save. Bounded: when full it starts over (configurations of a
// model are few; a process cycling through more pays creation again).
// Thread-safe; creation runs outside the lock, so two threads may both
// create an entry and one copy wins.
//
// oneDNN sizes a primitive's parallel regions for the calling thread's
// OpenMP team when it creates the primitive, not when it runs it: entries
// are kept per team size (UseCurrentTeam), and made with that team set.
template <typename Value>
class ConfigCache {
 public:
  explicit ConfigCache(size_t capacity) : capacity_(capacity) {}

  // The entry for `key` under the current threading policy, made by
  // `make()` (which may throw dnnl::error) if absent.
  template <typename Make>
  std::shared_ptr<const Value> GetOrCreate(const std::string& key, Make make) {
    const int team = UseCurrentTeam();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = entries_.find(std::make_pair(team, key));
          it != entries_.end()) {
        return it->second;
      }
    }
    auto made = std::make_shared<const Value>(make());
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= capacity_) entries_.clear();
    return entries_.try_emplace(std::make_pair(team, key), std::move(made))
        .first->second;
  }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  absl::flat_hash_map<std::pair<int, std::string>,
                      std::shared_ptr<const Value>>
      entries_;
};

// The primitive of configuration `key` (a primitive on plain layouts, which
// the key fully describes: shapes, strides, attributes), made by `make()`
// once per OpenMP team size and cached. Creating even a plain-layout
// primitive descriptor costs more than a small op's arithmetic (three
// 256x256 matmuls at batch 1 spent most of their time there), and
// oneDNN's own primitive cache still needs the descriptor built first.
// One cache per call site (per `make` type). Thread-safe. Throws
// dnnl::error.
template <typename Make>
dnnl::primitive CachedPrimitive(const std::string& key, Make make) {
  static auto* cache = new ConfigCache<dnnl::primitive>(1024);
  return *cache->GetOrCreate(key, make);
}

// One primitive and its arguments.
// A primitive's arguments (DNNL_ARG_*, memory), inline: a step is built on
// every call.
using PrimitiveArgs = absl::InlinedVector<std::pair<int, dnnl::memory>, 5>;

struct PrimitiveStep {
  dnnl::primitive primitive;
  PrimitiveArgs args;
  // Keeps memory that `args` point into (cached constants) alive for the
  // step, whatever happens to the cache meanwhile.
  std::shared_ptr<const void> hold = nullptr;
};

// An integer array attribute of `size` values, `fallback` each if absent;
// an error naming `op` if it has another size.
absl::StatusOr<Dims> IntArray(absl::string_view op, const OpAttrs& attrs,
                              absl::string_view name, size_t size,
                              int64_t fallback);

// N, C, spatial... with the spatial rank raised from 1 to 2 (oneDNN runs
// 1-D windows as 2-D with a height of 1).
dnnl::memory::dims Spatial2d(absl::Span<const int64_t> dims);

// Whether oneDNN runs its AVX-512 kernels on this machine: its f32
// convolutions are fastest in channel blocks of 16 (nChw16c, one register),
// and it has Winograd kernels; under AVX2 its blocks are of 8.
bool OneDnnHasAvx512();

// OK for N x C x W, N x C x H x W and N x C x D x H x W; else an error
// naming `op`.
absl::Status CheckSpatialInput(absl::string_view op, const TensorShape& x);

// What a convolution's and a transposed convolution's shape functions
// check first: f32 operands, an N x C x spatial input and weights of its
// rank; else an error naming `op`.
absl::Status CheckConvOperands(absl::string_view op, ArgumentMetadata args);

// Whether a convolution's or pooling's `data_format` is "NHWC" (channels
// last: the input, the result and a fused sum are N x H x W x C, a
// convolution's weights M x kH x kW x C/group) rather than "NCHW" (ONNX's,
// the default); an error naming `op` for any other value. Devices whose
// kernels prefer channels last (CUDA's tensor cores) run NHWC; the CPU
// computes NCHW and refuses it (CpuRefusesChannelsLast).
absl::StatusOr<bool> IsChannelsLast(absl::string_view op, const OpAttrs& attrs);

// The shape function of a convolution or pooling for either data format:
// `channels_first` (the NCHW one) on the arguments of rank 4 permuted to
// N x C x H x W, its result permuted back when the format is NHWC.
absl::Status ChannelsLastOrFirstMetadata(absl::string_view op,
                                         ArgumentMetadata args,
                                         const OpAttrs& attrs,
                                         absl::Span<TensorMetadata> results,
                                         OpMetadataFn channels_first);

// True (after failing the invocation's results) where the op's
// data_format is NHWC or unknown: the CPU's kernels compute NCHW.
bool CpuRefusesChannelsLast(OpInvocation& invocation, absl::string_view op);

// nn.conv_transpose (onednn_conv_transpose.cc), registered by
// RegisterOneDnnOps.
void RegisterConvTransposeOp(OpRegistry& registry);

// Dimensions in a cache key: "2x3x4".
std::string DimsKey(absl::Span<const int64_t> dims);

// A reorder from `from` to `to`, or none if they are the same layout.
std::optional<dnnl::reorder> ReorderIfNeeded(const dnnl::memory::desc& from,
                                             const dnnl::memory::desc& to);

// The window of a convolution or pooling op over N, C, spatial... input
// (1-D and 2-D; 1-D runs as 2-D with a height of 1).
struct Window {
  dnnl::memory::dims kernel, strides, dilations /* oneDNN's: ONNX's - 1 */,
      pad_begin, pad_end, output;
};

// ONNX's window attributes: kernel_shape (pooling), strides, dilations,
// pads ([begin..., end...]) and auto_pad (NOTSET, VALID, SAME_UPPER,
// SAME_LOWER); `kernel` the spatial extent.
absl::StatusOr<Window> MakeWindow(absl::string_view op, const OpAttrs& attrs,
                                  absl::Span<const int64_t> input_spatial,
                                  const Dims& kernel);

// The result of a convolution or pooling in oneDNN's layout `desc`: the
// buffer plan's slot if it has one (PlaceSum skips the copy when the plan
// put the result over its fused sum), else the fused sum's buffer
// (argument `sum_index`, if >= 0) when the op alone holds it in that
// layout (computed in place), else a new buffer. Null after FailAll if
// the allocation fails. A slot over a sum in another layout is not taken:
// oneDNN adds a sum in place only in the result's own layout.
RCReference<HostBuffer> OneDnnResultBuffer(OpInvocation& invocation,
                                           absl::string_view op,
                                           const dnnl::memory::desc& desc,
                                           int sum_index,
                                           const OneDnnOperand* sum = nullptr);

// The op's result once its steps ran: the plain tensor if it computed one,
// else a OneDnnTensor of `buffer` in the layout `desc`.
void SetResult(OpInvocation& invocation,
               AsyncValueRef<DenseHostTensor> plain_result,
               const dnnl::memory::desc& desc, RCReference<HostBuffer> buffer);

// nn.max_pool, nn.average_pool and nn.global_average_pool
// (onednn_pool.cc), registered by RegisterOneDnnOps.
void RegisterPoolOps(OpRegistry& registry);

// Argument `index` of `invocation` as a DenseHostTensor: the argument, or a
// conversion of it (a OneDnnTensor's reorder) that `keep` holds. Null after
// FailAll if it converts to none.
const DenseHostTensor* PlainArgument(
    OpInvocation& invocation, absl::string_view op, size_t index,
    std::vector<RCReference<AsyncValue>>& keep);

// The CPU implementation of an op that a wrapper taking OneDnnTensors
// (WrapCpuImplementation) stands in front of.
struct WrappedImplementation {
  OpDispatchFn dispatch = nullptr;
  const void* data = nullptr;
};

// Makes `wrapper` `op`'s CPU implementation, taking OneDnnTensors
// (kOpAcceptsRegisteredHost), with a WrappedImplementation of the one
// registered before as its data (living as long as the process). No-op
// where none is registered or `wrapper` already is.
void WrapCpuImplementation(OpRegistry& registry, absl::string_view op,
                           OpDispatchFn wrapper);

// Runs `wrapped` on `invocation` as given when no argument is a
// OneDnnTensor, else on plain copies of those (the op's own: the kernel
// may not take the originals' buffers for its result).
void RunWrapped(OpInvocation& invocation, absl::string_view op,
                const WrappedImplementation& wrapped);

// Lets nn.mul take OneDnnTensors (onednn_binary.cc): wraps the CPU
// implementation already registered. Registered by RegisterOneDnnOps.
void RegisterOneDnnMul(OpRegistry& registry);

// Lets nn.concat take OneDnnTensors (onednn_concat.cc): wraps the CPU
// implementation already registered (RegisterShapeOps'), so it is
// registered after it (static_registration.cc).
void RegisterOneDnnConcat(OpRegistry& registry);

// Lets nn.batch_normalization and nn.relu take OneDnnTensors
// (onednn_channelwise.cc): wraps the CPU implementations registered by
// RegisterNormalizationOps and RegisterElementwiseOps, so it is registered
// after both (static_registration.cc).
void RegisterOneDnnChannelwiseOps(OpRegistry& registry);

// Hands the pages of a read-only constant (a model's weights) back to the
// kernel once an op computes from a reordered copy of it instead: pages
// mapped from a BEF file leave the resident set (and are read from the
// file again if anything touches them); anonymous pages go to swap where
// there is one. Never changes the bytes (MADV_PAGEOUT). No-op for writable
// buffers.
void ReleaseConstantPages(const HostBuffer& buffer);

// Runs `steps` in order on a stream of the calling thread and waits, under
// the process's threading policy (nn::SetThreading): oneDNN's CPU engine
// computes on the calling thread and its OpenMP team. Each step that needs
// a scratchpad gets its own (primitives are made with PrimitiveAttr()).
// Throws dnnl::error.
void ExecutePrimitives(absl::Span<const PrimitiveStep> steps);

// A read-only tensor's weights reordered for a primitive.
struct ReorderedWeights {
  // Held: its address names the cache entry, so it is not reused.
  RCReference<HostBuffer> source;
  std::shared_ptr<void> storage;  // The reordered bytes, on huge pages.
  dnnl::memory weights;           // Over `storage` (which it does not own).
};

// The weights in `source` (a read-only tensor's: a model's constant) in the
// layout `wanted` through `reorder`, reordered once per (buffer, `key`) and
// cached; the original's pages go back to the kernel once reordered.
// `owner` (the buffer) is held while the entry exists. The caller holds the
// result while a primitive reads its weights (an entry may leave the cache
// meanwhile). Thread-safe; throws dnnl::error.
std::shared_ptr<const ReorderedWeights> CachedReorderedWeights(
    const std::string& key, const HostBuffer& weights,
    const RCReference<HostBuffer>& owner, const dnnl::memory& source,
    const dnnl::memory::desc& wanted, const dnnl::reorder& reorder);

// A matmul by constant weights (a read-only tensor: a linear layer's),
// src (`a_md`) x weights [K, N] stored as `b_md` (+ a bias of 1 x N) ->
// `dst_md`: oneDNN computes from the weights in the layout it prefers,
// reordered once (CachedReorderedWeights), and the primitive is made once
// per `key`, which must tell apart every descriptor and attribute
// (`attr`'s post-ops). `bias` may be null. Throws dnnl::error.
PrimitiveStep ConstantWeightsMatmul(const std::string& key,
                                    const dnnl::memory::desc& a_md,
                                    const dnnl::memory::desc& b_md,
                                    const dnnl::memory::desc& dst_md,
                                    const dnnl::primitive_attr& attr,
                                    const void* a, const DenseHostTensor& b,
                                    const void* bias, void* dst);

// The most primitives that ever ran at once (for tests of the policy).
int MaxConcurrentPrimitives();
void ResetMaxConcurrentPrimitives();

// The op's result tensor, for a primitive to compute; null when there is
// nothing to compute: the allocation failed (the op has failed) or the
// result is empty (then it is already the op's result: oneDNN takes no
// zero-sized memory).
// `reusable_arguments` (bit i: argument i) may hold the result in place
// when nobody else holds them (see OpInvocation::ReuseOrAllocateDense).
inline AsyncValueRef<DenseHostTensor> PrimitiveResult(
    OpInvocation& invocation, absl::string_view op,
    uint64_t reusable_arguments = 0) {
  AsyncValueRef<DenseHostTensor> result = AllocateResult(
      invocation, op, invocation.result_metadata[0], reusable_arguments);
  if (result && result->shape().GetNumElements() == 0) {
    invocation.results[0] = std::move(result);
    return AsyncValueRef<DenseHostTensor>();
  }
  return result;
}

// Makes the steps of an op with `make` (returning a PrimitiveStep or a
// vector of them) and executes them; then `result`, which they computed,
// becomes the op's result. oneDNN errors (an unsupported configuration,
// out of memory) fail every result of the op instead.
template <typename MakeSteps>
void RunPrimitive(OpInvocation& invocation, absl::string_view op,
                  RCReference<AsyncValue> result, MakeSteps make) {
  try {
    auto steps = make();
    if constexpr (std::is_same_v<decltype(steps), PrimitiveStep>) {
      ExecutePrimitives(absl::MakeConstSpan(&steps, 1));
    } else {
      ExecutePrimitives(steps);
    }
    invocation.results[0] = std::move(result);
  } catch (const dnnl::error& error) {
    FailAll(invocation, op, absl::StrCat("oneDNN: ", error.what()));
  }
}

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_CPU_NN_ONEDNN_UTIL_H_
