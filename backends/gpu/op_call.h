// What the CUDA plug-in's kernels share: OpCall (one op call's operands,
// attributes, stream and error, through the C API) and dtype helpers.
//
// Internal to the plug-in. Thread-safety: an OpCall lives for one kernel
// call on one thread.
#ifndef ASYNCRT_BACKENDS_GPU_OP_CALL_H_
#define ASYNCRT_BACKENDS_GPU_OP_CALL_H_

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "asyncrt/c/device_plugin.h"
#include "backends/gpu/cuda_device.h"
#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {

inline int ElementBytes(AsyncRT_DType dtype) {
  switch (dtype) {
    case ASYNCRT_DTYPE_BOOL:
    case ASYNCRT_DTYPE_I8:
    case ASYNCRT_DTYPE_U8:
      return 1;
    case ASYNCRT_DTYPE_I16:
    case ASYNCRT_DTYPE_F16:
    case ASYNCRT_DTYPE_BF16:
      return 2;
    case ASYNCRT_DTYPE_I32:
    case ASYNCRT_DTYPE_F32:
      return 4;
    case ASYNCRT_DTYPE_I64:
    case ASYNCRT_DTYPE_F64:
      return 8;
    default:
      return 0;
  }
}

inline const char* DTypeName(AsyncRT_DType dtype) {
  switch (dtype) {
    case ASYNCRT_DTYPE_BOOL:
      return "i1";
    case ASYNCRT_DTYPE_I8:
      return "i8";
    case ASYNCRT_DTYPE_I16:
      return "i16";
    case ASYNCRT_DTYPE_I32:
      return "i32";
    case ASYNCRT_DTYPE_I64:
      return "i64";
    case ASYNCRT_DTYPE_U8:
      return "ui8";
    case ASYNCRT_DTYPE_F16:
      return "f16";
    case ASYNCRT_DTYPE_BF16:
      return "bf16";
    case ASYNCRT_DTYPE_F32:
      return "f32";
    case ASYNCRT_DTYPE_F64:
      return "f64";
    default:
      return "invalid";
  }
}

inline bool IsFloating16or32(AsyncRT_DType dtype) {
  return dtype == ASYNCRT_DTYPE_F32 || dtype == ASYNCRT_DTYPE_F16 ||
         dtype == ASYNCRT_DTYPE_BF16;
}

inline int64_t NumElements(const AsyncRT_TensorView& view) {
  int64_t n = 1;
  for (int i = 0; i < view.rank; ++i) n *= view.dims[i];
  return n;
}

// Dense row-major strides of `view`, in elements.
inline std::vector<int64_t> DenseStrides(const AsyncRT_TensorView& view) {
  std::vector<int64_t> strides(view.rank);
  int64_t stride = 1;
  for (int i = view.rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= view.dims[i];
  }
  return strides;
}

// One op call: its operands, attributes and stream, and the error to
// report (the first failure sets `status`, and the kernel returns).
class OpCall {
 public:
  OpCall(AsyncRT_KernelContext* context, AsyncRT_Status* status)
      : context_(context), status_(status) {
    device_ = DeviceOf(g_api->kernel_device(context));
    stream_ = StreamFor(g_api->kernel_stream(context));
    UseDevice(device_->ordinal);
  }

  cudaStream_t stream() const { return stream_; }
  CudaDevice& device() const { return *device_; }
  int num_inputs() const { return g_api->num_inputs(context_); }
  int num_outputs() const { return g_api->num_outputs(context_); }

  bool Input(int index, AsyncRT_TensorView* view) {
    view->struct_size = ASYNCRT_TENSOR_VIEW_STRUCT_SIZE;
    g_api->get_input(context_, index, view, status_);
    return g_api->status_code(status_) == ASYNCRT_OK;
  }
  bool Output(int index, AsyncRT_TensorView* view) {
    view->struct_size = ASYNCRT_TENSOR_VIEW_STRUCT_SIZE;
    g_api->allocate_output(context_, index, view, status_);
    return g_api->status_code(status_) == ASYNCRT_OK;
  }

  int64_t Int(const char* name, int64_t fallback) const {
    int64_t value = fallback;
    return g_api->get_attr_int(context_, name, &value) ? value : fallback;
  }
  float Float(const char* name, float fallback) const {
    double value = fallback;
    return g_api->get_attr_float(context_, name, &value)
               ? static_cast<float>(value)
               : fallback;
  }
  std::string String(const char* name, const char* fallback) const {
    const char* data = nullptr;
    size_t size = 0;
    return g_api->get_attr_string(context_, name, &data, &size)
               ? std::string(data, size)
               : std::string(fallback);
  }
  // False if the op has no such attribute.
  bool Ints(const char* name, std::vector<int64_t>* values) const {
    size_t count = 0;
    if (!g_api->get_attr_ints(context_, name, nullptr, 0, &count)) {
      return false;
    }
    values->resize(count);
    g_api->get_attr_ints(context_, name, values->data(), count, &count);
    return true;
  }

  // False if the op has no such float-array attribute (or the runtime
  // predates plug-in API 1.4, which added get_attr_floats).
  bool Floats(const char* name, std::vector<double>* values) const {
    if (g_api->struct_size < ASYNCRT_RUNTIME_API_STRUCT_SIZE) return false;
    size_t count = 0;
    if (!g_api->get_attr_floats(context_, name, nullptr, 0, &count)) {
      return false;
    }
    values->resize(count);
    g_api->get_attr_floats(context_, name, values->data(), count, &count);
    return true;
  }

  bool Unsupported(const std::string& what) {
    Fail(status_, ASYNCRT_UNIMPLEMENTED,
         what + " is not supported on CUDA yet");
    return false;
  }
  bool Invalid(const std::string& what) {
    Fail(status_, ASYNCRT_INVALID_ARGUMENT, what);
    return false;
  }
  bool Launched(cudaError_t error, const char* what) {
    return CheckCuda(error, what, status_);
  }
  // Calls `launch` (which enqueues a kernel and returns CUDA's answer),
  // timing it for the host profile when that is on; then as Launched.
  template <typename Launch>
  bool TimedLaunch(Launch&& launch, const char* what) {
    if (!Settings().host_profile) return Launched(launch(), what);
    const auto start = std::chrono::steady_clock::now();
    const cudaError_t error = launch();
    AddProfiledLaunchTime(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count());
    return Launched(error, what);
  }
  bool RequireFloat(const AsyncRT_TensorView& view) {
    if (IsFloating16or32(view.dtype)) return true;
    return Unsupported(std::string("dtype ") + DTypeName(view.dtype));
  }
  // A rank the kernels' fixed-size views can take.
  bool RequireRank(const AsyncRT_TensorView& view) {
    if (view.rank <= kMaxRank) return true;
    return Unsupported("rank " + std::to_string(view.rank));
  }
  AsyncRT_Status* status() const { return status_; }

 private:
  AsyncRT_KernelContext* context_;
  AsyncRT_Status* status_;
  CudaDevice* device_;
  cudaStream_t stream_;
};

inline GpuDType ToGpu(AsyncRT_DType dtype) {
  return static_cast<GpuDType>(dtype);
}

// Axis `axis` of a rank-`rank` tensor, negative from the end; -1 if out of
// range.
inline int NormalizeAxis(int64_t axis, int rank) {
  if (axis < 0) axis += rank;
  return axis < 0 || axis >= rank ? -1 : static_cast<int>(axis);
}

// Whether the op's data_format is NHWC; false (status set) for one that is
// neither, or NHWC on an operand `x` that is not 4-D.
inline bool ChannelsLast(OpCall& op, const AsyncRT_TensorView& x,
                         bool* channels_last) {
  const std::string format = op.String("data_format", "NCHW");
  *channels_last = format == "NHWC";
  if (!*channels_last && format != "NCHW") {
    return op.Invalid("unknown data_format \"" + format + "\" (NCHW, NHWC)");
  }
  if (*channels_last && x.rank != 4) {
    return op.Invalid("data_format NHWC needs an N x H x W x C input");
  }
  return true;
}

// The fused activation of nn.matmul and nn.conv (`activation`: none,
// relu, leaky_relu, clip, gelu, hard_swish, sigmoid, tanh, swish, linear;
// `activation_alpha`,
// `_beta`):
// kIdentity for none; false (status set) for another.
inline bool FusedActivation(OpCall& op, UnaryOp* activation, float* alpha,
                            float* beta) {
  const std::string name = op.String("activation", "");
  *alpha = op.Float("activation_alpha", 0.f);
  *beta = op.Float("activation_beta", 0.f);
  if (name.empty() || name == "none") {
    *activation = UnaryOp::kIdentity;
  } else if (name == "relu") {
    *activation = UnaryOp::kRelu;
  } else if (name == "leaky_relu") {
    *activation = UnaryOp::kLeakyRelu;
  } else if (name == "clip") {
    *activation = UnaryOp::kClip;
  } else if (name == "gelu") {
    *activation = UnaryOp::kGelu;
  } else if (name == "hard_swish") {
    *activation = UnaryOp::kHardSwish;
  } else if (name == "sigmoid") {
    *activation = UnaryOp::kSigmoid;
  } else if (name == "tanh") {
    *activation = UnaryOp::kTanh;
  } else if (name == "swish") {
    *activation = UnaryOp::kSilu;
  } else if (name == "linear") {
    *activation = UnaryOp::kLinear;
  } else {
    return op.Unsupported("fused activation '" + name + "'");
  }
  return true;
}

// Where nn.attention's Q, K and V lie: their first rows (three operands,
// or one that holds them side by side) and their row strides in elements.
struct AttentionOperands {
  AsyncRT_DType dtype = ASYNCRT_DTYPE_F32;
  const char* q = nullptr;
  const char* k = nullptr;
  const char* v = nullptr;
  int64_t q_row = 0, k_row = 0, v_row = 0;
};

// The attention's operands as the paths that read them in place take
// them, y's heads side by side in its rows.
inline StridedAttentionShape StridedShapeOf(const AttentionShape& shape,
                                            const AttentionOperands& in) {
  return {.batch = shape.batch,
          .q_length = shape.q_length,
          .kv_length = shape.kv_length,
          .q_heads = shape.q_heads,
          .kv_heads = shape.kv_heads,
          .head_size = shape.head_size,
          .value_head_size = shape.value_head_size,
          .q_row = in.q_row,
          .k_row = in.k_row,
          .v_row = in.v_row,
          .y_row = int64_t{shape.q_heads} * shape.value_head_size};
}

#ifdef ASYNCRT_HAVE_CUDNN
// nn.attention as cuDNN's fused attention (cudnn_ops.cc), y's heads side by
// side in its rows. Returns whether it took the op (its errors in the op's
// status); false, nothing done, for f32, heads not a multiple of 8 or over
// 128 elements, operands not 16-byte aligned, or a shape no engine of
// cuDNN's takes (tried once per shape; with ASYNCRT_CUDA_ATTENTION=cudnn
// that is an error on the op instead).
bool AttentionOnCudnn(OpCall& op, const AttentionOperands& in,
                      const AsyncRT_TensorView& y, const AttentionShape& shape,
                      float scale);
#endif

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_OP_CALL_H_
