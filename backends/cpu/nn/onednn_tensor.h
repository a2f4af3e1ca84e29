// OneDnnTensor: an f32 host tensor in a memory layout that oneDNN chose
// (channels-last `acdb`, channel-blocked `aBcd16b`, ...), so that
// consecutive oneDNN ops (convolutions, pooling) hand each other their
// results without reordering them to the plain row-major layout and back.
//
// The model compiler's -nn-assign-layouts pass asks for one by setting
// `result_layout = "onednn"` on an op whose every user takes it (see
// docs/nn_ops.md). Any other op that receives one gets it converted to a
// DenseHostTensor first (the conversion below, registered with the
// TensorConversionRegistry), so a OneDnnTensor is never wrong, only slower
// where the compiler did not plan it.
//
// Internal to backends/cpu/nn; not installed. Thread-compatible like every
// Tensor; the buffer is shared (reference counted) and freed with the last
// tensor that views it.
#ifndef ASYNCRT_BACKENDS_CPU_NN_ONEDNN_TENSOR_H_
#define ASYNCRT_BACKENDS_CPU_NN_ONEDNN_TENSOR_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/tensor/host_buffer.h"
#include "asyncrt/tensor/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace asyncrt::nn {

class OneDnnTensor final : public Tensor {
 public:
  // `metadata` is the logical (ONNX) dtype and shape; `desc` oneDNN's
  // description of the bytes in `buffer` (+1, consumed), whose dimensions
  // are the logical ones, 1-D spatial raised to 2-D as the ops compute.
  OneDnnTensor(const TensorMetadata& metadata, dnnl::memory::desc desc,
               RCReference<HostBuffer> buffer)
      : Tensor(metadata), desc_(std::move(desc)), buffer_(std::move(buffer)) {}

  // "OneDnnHost".
  static TensorType Type();
  TensorType tensor_type() const override { return Type(); }

  const dnnl::memory::desc& desc() const { return desc_; }
  const RCReference<HostBuffer>& buffer() const { return buffer_; }
  void* data() const { return buffer_->data(); }

  // "OneDnnTensor dtype = f32, shape = [1, 2, 1, 1], layout = acdb,
  // values = [1.000000e+00, 2.000000e+00]" (values in logical order).
  void Print(std::string* out) const override;

 private:
  dnnl::memory::desc desc_;
  RCReference<HostBuffer> buffer_;
};

// A tensor argument of an op on oneDNN as oneDNN reads it: its layout and
// its bytes (borrowed from the tensor).
// oneDNN's name of a blocked layout: dimensions from outermost to
// innermost as letters (a = dimension 0), a blocked dimension in upper case
// followed by its blocks ("acdb", "aBcd16b"); "opaque" for others.
std::string OneDnnLayoutName(const dnnl::memory::desc& desc);

struct OneDnnOperand {
  dnnl::memory::desc desc;
  const void* data;
};

// `tensor` (a DenseHostTensor or a OneDnnTensor) with the oneDNN dimensions
// `dims` of its shape; an error naming `op` for any other tensor type or a
// OneDnnTensor of other dimensions.
absl::StatusOr<OneDnnOperand> GetOneDnnOperand(absl::string_view op,
                                               const Tensor& tensor,
                                               const dnnl::memory::dims& dims);

// The result layout an op was asked for: false for the plain row-major
// layout (no `result_layout`, or "plain"), true for "onednn"; an error
// naming `op` for anything else.
absl::StatusOr<bool> WantsOneDnnResult(absl::string_view op,
                                       const OpAttrs& attrs);

// Makes OneDnnTensors known to GetTensorIfPresent and registers their
// conversion to DenseHostTensor (a reorder). Idempotent.
void RegisterOneDnnTensor();

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_CPU_NN_ONEDNN_TENSOR_H_
