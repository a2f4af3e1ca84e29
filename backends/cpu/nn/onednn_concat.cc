// nn.concat on OneDnnTensors. Inception modules, SqueezeNet's fire modules
// and DenseNet's blocks concatenate convolutions' results along the
// channels and hand the whole to the next convolution. Done on plain
// tensors, each part is reordered out of its channel-blocked layout, copied
// into place and the whole reordered back in (SqueezeNet: a tenth of its
// time); here the parts are joined in their own layout (channel blocks
// side by side: each part's bytes of an image copied whole, after
// reordering the few parts in another layout, where the layouts allow,
// else oneDNN's concat primitive), so the chain
// keeps the layout -nn-assign-layouts chose. Anything else with a OneDnnTensor
// (another axis or rank, layouts oneDNN joins only with its reference code)
// runs the plain kernel on plain copies.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/host_context/host_context.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

using dnnl::memory;

constexpr absl::string_view kConcat = "nn.concat";

memory::dims DimsOf(const TensorShape& shape) {
  auto dims = shape.GetDimensions();
  return memory::dims(dims.begin(), dims.end());
}

// The format tag of the layouts a channel concatenation copies whole: those
// whose bytes for one image hold the channels outermost (plain NCHW, and
// channel blocks), so that each part of each image is one run of bytes.
std::optional<memory::format_tag> CopyableLayout(const std::string& name) {
  if (name == "abcd") return memory::format_tag::abcd;
  if (name == "aBcd16b") return memory::format_tag::aBcd16b;
  if (name == "aBcd8b") return memory::format_tag::aBcd8b;
  return std::nullopt;
}

// Joins `parts` into `dst` (in their common layout, channels outermost per
// image, no padding) by copying each part's bytes of each image in turn,
// the bytes split over the team (ParallelRanges): oneDNN 2.6's simple
// concat moved 2 x 64 x 55 x 55 floats of blocked layout in 425 us,
// memcpy does it in a tenth of that.
void CopyParts(absl::Span<const OneDnnOperand> parts, int64_t images,
               void* dst) {
  struct Run {
    const char* from;
    size_t at;  // Offset in dst.
    size_t bytes;
  };
  std::vector<Run> runs;
  size_t total = 0;
  for (int64_t n = 0; n < images; ++n) {
    for (const OneDnnOperand& part : parts) {
      const size_t bytes = part.desc.get_size() / images;
      runs.push_back(
          {static_cast<const char*>(part.data) + n * bytes, total, bytes});
      total += bytes;
    }
  }
  char* out = static_cast<char*>(dst);
  ParallelRanges(
      static_cast<int64_t>(total), int64_t{1} << 16,
      [&](int64_t begin, int64_t end) {
        for (const Run& run : runs) {
          const int64_t from = std::max<int64_t>(begin, run.at);
          const int64_t to = std::min<int64_t>(end, run.at + run.bytes);
          if (from < to) {
            std::memcpy(out + from, run.from + (from - run.at), to - from);
          }
        }
      });
}

// The layout the parts are joined in by copies: of the copyable layouts
// (CopyableLayout) the parts come in, the one holding most of their
// elements, channel blocks before plain (what reads the whole computes in
// blocks: a convolution would reorder all of it); the others are reordered
// into it first. None where a part would be padded in it (channels not a
// whole number of its blocks) or has a layout its name does not tell
// (opaque).
std::optional<memory::format_tag> JoinLayout(
    absl::Span<const OneDnnOperand> parts) {
  std::vector<std::pair<std::string, size_t>> bytes_by_layout;
  for (const OneDnnOperand& part : parts) {
    const std::string layout = OneDnnLayoutName(part.desc);
    if (layout == "opaque") return std::nullopt;
    auto it =
        std::find_if(bytes_by_layout.begin(), bytes_by_layout.end(),
                     [&](const auto& entry) { return entry.first == layout; });
    if (it == bytes_by_layout.end()) {
      it = bytes_by_layout.insert(bytes_by_layout.end(), {layout, 0});
    }
    it->second += part.desc.get_size();
  }
  std::optional<memory::format_tag> tag;
  size_t most = 0;
  bool blocked = false;
  for (const auto& [layout, bytes] : bytes_by_layout) {
    std::optional<memory::format_tag> copyable = CopyableLayout(layout);
    if (!copyable) continue;
    const bool is_blocked = *copyable != memory::format_tag::abcd;
    if ((is_blocked && !blocked) || (is_blocked == blocked && bytes > most)) {
      tag = copyable;
      most = bytes;
      blocked = is_blocked;
    }
  }
  if (!tag) return std::nullopt;
  for (const OneDnnOperand& part : parts) {
    const memory::desc wanted(part.desc.dims(), memory::data_type::f32, *tag);
    int64_t elements = 1;
    for (int64_t d : part.desc.dims()) elements *= d;
    if (wanted.get_size() != static_cast<size_t>(elements) * sizeof(float)) {
      return std::nullopt;
    }
  }
  return tag;
}

// A concatenation's primitive for one configuration.
struct ConcatPrimitive {
  dnnl::primitive primitive;
  memory::desc dst;
  // Whether oneDNN has only its reference code for it (parts whose layouts
  // differ, channel counts that split blocks): slower than plain copies.
  bool reference = false;
};

// The arguments joined along the channels with oneDNN's concat: the
// result in the parts' layout when `result_layout` asks for oneDNN's, else
// plain. False, with nothing done, where oneDNN has only its reference
// code for these layouts.
bool ConcatChannels(OpInvocation& invocation) {
  const size_t count = invocation.arguments.size();
  std::vector<OneDnnOperand> parts;
  parts.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const Tensor& part = invocation.argument(i);
    absl::StatusOr<OneDnnOperand> operand =
        GetOneDnnOperand(kConcat, part, DimsOf(part.shape()));
    if (!operand.ok()) {
      FailAll(invocation, kConcat, operand.status().message());
      return true;
    }
    parts.push_back(*operand);
  }
  absl::StatusOr<bool> onednn_result =
      WantsOneDnnResult(kConcat, invocation.attrs);
  if (!onednn_result.ok()) {
    FailAll(invocation, kConcat, onednn_result.status().message());
    return true;
  }
  const memory::dims dst_dims = DimsOf(invocation.result_metadata[0].shape);
  // One layout for every part, copied whole: the result in it. Parts in
  // another layout are reordered into it first: a DenseNet block's first
  // part comes from a pooling in nhwc, the rest from blocked convolutions,
  // and oneDNN 2.6 joins mixed layouts only with its reference code.
  std::optional<memory::format_tag> tag = JoinLayout(parts);
  if (tag && (*onednn_result || *tag == memory::format_tag::abcd)) {
    const memory::desc dst_desc(dst_dims, memory::data_type::f32, *tag);
    std::vector<RCReference<HostBuffer>> reordered;
    std::vector<PrimitiveStep> reorders;
    try {
      for (OneDnnOperand& part : parts) {
        const memory::desc wanted(part.desc.dims(), memory::data_type::f32,
                                  *tag);
        if (part.desc == wanted) continue;
        RCReference<HostBuffer> buffer =
            HostBuffer::CreateUninitialized(wanted.get_size(), kTensorAlignment,
                                            *invocation.host()->allocator());
        if (!buffer) {
          FailAll(invocation, kConcat, "cannot allocate a part's reorder");
          return true;
        }
        dnnl::primitive reorder = CachedPrimitive(
            absl::StrCat(DimsKey(part.desc.dims()), "|",
                         OneDnnLayoutName(part.desc), "|",
                         OneDnnLayoutName(wanted)),
            [&] {
              return dnnl::primitive(*ReorderIfNeeded(part.desc, wanted));
            });
        reorders.push_back({reorder,
                            {{DNNL_ARG_FROM, Wrap(part.desc, part.data)},
                             {DNNL_ARG_TO, Wrap(wanted, buffer->data())}}});
        part = OneDnnOperand{wanted, buffer->data()};
        reordered.push_back(std::move(buffer));
      }
      if (!reorders.empty()) ExecutePrimitives(reorders);
    } catch (const dnnl::error& error) {
      FailAll(invocation, kConcat, absl::StrCat("oneDNN: ", error.what()));
      return true;
    }
    AsyncValueRef<DenseHostTensor> plain_result;
    RCReference<HostBuffer> onednn_buffer;
    void* dst = nullptr;
    if (*onednn_result) {
      onednn_buffer = OneDnnResultBuffer(invocation, kConcat, dst_desc, -1);
      if (!onednn_buffer) return true;
      dst = onednn_buffer->data();
    } else {
      plain_result = PrimitiveResult(invocation, kConcat);
      if (!plain_result) return true;
      dst = plain_result->data();
    }
    CopyParts(parts, dst_dims[0], dst);
    SetResult(invocation, std::move(plain_result), dst_desc,
              std::move(onednn_buffer));
    return true;
  }
  try {
    std::string key = absl::StrCat(*onednn_result);
    bool opaque = false;
    std::vector<memory::desc> descs;
    for (const OneDnnOperand& part : parts) {
      descs.push_back(part.desc);
      const std::string layout = OneDnnLayoutName(part.desc);
      opaque |= layout == "opaque";
      absl::StrAppend(&key, "|", DimsKey(part.desc.dims()), ":", layout);
    }
    auto make = [&] {
      // oneDNN's choice of layout for the whole: the parts' own.
      dnnl::concat::primitive_desc pd =
          *onednn_result
              ? dnnl::concat::primitive_desc(1, descs, CpuEngine(),
                                             PrimitiveAttr())
              : dnnl::concat::primitive_desc(PlainF32(dst_dims), 1, descs,
                                             CpuEngine(), PrimitiveAttr());
      return ConcatPrimitive{dnnl::concat(pd), pd.dst_desc(),
                             absl::StartsWith(pd.impl_info_str(), "ref")};
    };
    // Opaque layouts, which their names do not tell apart, are made afresh.
    static auto* cache = new ConfigCache<ConcatPrimitive>(1024);
    std::shared_ptr<const ConcatPrimitive> concat =
        opaque ? std::make_shared<const ConcatPrimitive>(make())
               : cache->GetOrCreate(key, make);
    if (concat->reference) return false;
    AsyncValueRef<DenseHostTensor> plain_result;
    RCReference<HostBuffer> onednn_buffer;
    memory dst;
    if (*onednn_result) {
      onednn_buffer = OneDnnResultBuffer(invocation, kConcat, concat->dst, -1);
      if (!onednn_buffer) return true;
      dst = Wrap(concat->dst, onednn_buffer->data());
    } else {
      plain_result = PrimitiveResult(invocation, kConcat);
      if (!plain_result) return true;
      dst = Wrap(concat->dst, plain_result->data());
    }
    PrimitiveStep step{concat->primitive, {{DNNL_ARG_DST, dst}}};
    for (size_t i = 0; i < count; ++i) {
      step.args.push_back({static_cast<int>(DNNL_ARG_MULTIPLE_SRC + i),
                           Wrap(parts[i].desc, parts[i].data)});
    }
    ExecutePrimitives(absl::MakeConstSpan(&step, 1));
    SetResult(invocation, std::move(plain_result), concat->dst,
              std::move(onednn_buffer));
  } catch (const dnnl::error& error) {
    FailAll(invocation, kConcat, absl::StrCat("oneDNN: ", error.what()));
  }
  return true;
}

void ConcatOnOneDnnLayouts(OpInvocation& invocation) {
  const auto& wrapped = *static_cast<const WrappedImplementation*>(
      invocation.implementation_data);
  bool any_onednn = false, channels_of_f32 = true;
  for (size_t i = 0; i < invocation.arguments.size(); ++i) {
    const Tensor& part = invocation.argument(i);
    any_onednn |= part.tensor_type() == OneDnnTensor::Type();
    channels_of_f32 &=
        part.dtype() == DType::kF32 && part.shape().GetRank() == 4;
  }
  const std::optional<int64_t> axis = invocation.attrs.GetInteger("axis");
  if (any_onednn && channels_of_f32 && axis && (*axis == 1 || *axis == -3) &&
      invocation.result_metadata.size() == 1 && ConcatChannels(invocation)) {
    return;
  }
  RunWrapped(invocation, kConcat, wrapped);
}

}  // namespace

void RegisterOneDnnConcat(OpRegistry& registry) {
  WrapCpuImplementation(registry, kConcat, ConcatOnOneDnnLayouts);
}

}  // namespace asyncrt::nn
