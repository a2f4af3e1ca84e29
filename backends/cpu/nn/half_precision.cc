// f16 and bf16 tensors on the CPU for the ops that devices compute in them.
//
// The shape functions accept halves for those ops (one registry for every
// device, and a GPU computes them in f16). The CPU's kernels compute in
// f32: their CPU implementations are wrapped so that half arguments are
// widened to f32, the f32 kernel runs, and each result the shape function
// gave the half dtype is narrowed back (rounded to nearest even), as ONNX
// Runtime's CPU provider does for most f16 ops. The kernels also refuse
// halves themselves (RefuseHalf), so an op missing from the list below is
// an error, never f16 bytes read as f32.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

// The CPU implementation a wrapper calls; stable addresses (a node map
// that only grows), as OpImplementation::data needs.
struct Wrapped {
  OpDispatchFn dispatch;
  const void* data;
  uint32_t accepted_tensors;
  const char* op;  // For errors.
};
std::map<std::string, Wrapped>& WrappedImplementations() {
  static auto* wrapped = new std::map<std::string, Wrapped>();
  return *wrapped;
}

template <typename From, typename To>
void ConvertElements(const DenseHostTensor& from, DenseHostTensor& to) {
  const From* in = static_cast<const From*>(from.data());
  To* out = static_cast<To*>(to.data());
  const int64_t count = from.NumElements();
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<To, float>) {
      out[i] = in[i].ToFloat();
    } else {
      out[i] = To::FromFloat(in[i]);
    }
  }
}

// `tensor` converted to `dtype` (f32 from a half, or a half from f32).
AsyncValueRef<DenseHostTensor> Converted(const DenseHostTensor& tensor,
                                         DType dtype, HostContext& host) {
  AsyncValueRef<DenseHostTensor> result =
      DenseHostTensor::MakeUninitializedAsyncValue(
          TensorMetadata(dtype, tensor.shape()), *host.allocator());
  if (!result) return result;
  if (tensor.dtype() == DType::kF16) {
    ConvertElements<Half, float>(tensor, *result);
  } else if (tensor.dtype() == DType::kBF16) {
    ConvertElements<BFloat16, float>(tensor, *result);
  } else if (dtype == DType::kF16) {
    ConvertElements<float, Half>(tensor, *result);
  } else {
    ConvertElements<float, BFloat16>(tensor, *result);
  }
  return result;
}

void DispatchWithHalvesInF32(OpInvocation& invocation) {
  const auto& wrapped =
      *static_cast<const Wrapped*>(invocation.implementation_data);
  DType half = DType::kInvalid;
  for (size_t i = 0; i < invocation.arguments.size(); ++i) {
    if (IsHalf(invocation.argument(i).dtype())) {
      half = invocation.argument(i).dtype();
      break;
    }
  }
  if (half == DType::kInvalid) {
    invocation.implementation_data = wrapped.data;
    return wrapped.dispatch(invocation);
  }
  HostContext& host = *invocation.host();
  const size_t num_args = invocation.arguments.size();
  std::vector<AsyncValueRef<DenseHostTensor>> widened;
  widened.reserve(num_args);
  std::vector<AsyncValue*> arguments(num_args);
  std::vector<const Tensor*> tensors(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const Tensor& tensor = invocation.argument(i);
    arguments[i] = invocation.arguments[i];
    tensors[i] = &tensor;
    if (!IsHalf(tensor.dtype())) continue;
    if (tensor.tensor_type() != DenseHostTensorType()) {
      return FailAll(invocation, wrapped.op,
                     "f16/bf16 on the CPU: only dense host tensors are "
                     "widened to f32");
    }
    widened.push_back(Converted(static_cast<const DenseHostTensor&>(tensor),
                                DType::kF32, host));
    if (!widened.back()) {
      return FailAll(invocation, wrapped.op,
                     "f16/bf16 on the CPU: out of host memory widening an "
                     "argument to f32");
    }
    arguments[i] = widened.back().GetAsyncValue();
    tensors[i] = &widened.back().get();
  }
  std::vector<TensorMetadata> metadata(invocation.result_metadata.begin(),
                                       invocation.result_metadata.end());
  std::vector<bool> narrow(metadata.size());
  for (size_t r = 0; r < metadata.size(); ++r) {
    narrow[r] = metadata[r].dtype == half;
    if (narrow[r]) metadata[r].dtype = DType::kF32;
  }
  std::vector<RCReference<AsyncValue>> results(invocation.results.size());
  OpInvocation inner{invocation.exec_ctx, arguments, tensors,
                     invocation.attrs,    metadata,  absl::MakeSpan(results),
                     invocation.chain};
  inner.device = invocation.device;
  inner.implementation_data = wrapped.data;
  wrapped.dispatch(inner);
  for (size_t r = 0; r < results.size(); ++r) {
    RCReference<AsyncValue>& result = results[r];
    if (r >= narrow.size() || !narrow[r] || result->IsError()) {
      invocation.results[r] = std::move(result);
      continue;
    }
    // The CPU's kernels answer at once.
    if (!result->IsAvailable() ||
        result->get<Tensor>().tensor_type() != DenseHostTensorType()) {
      // A oneDNN layout (result_layout), which halves do not take.
      invocation.results[r] = MakeErrorAsyncValueRef(absl::UnimplementedError(
          absl::StrCat(wrapped.op,
                       ": f16/bf16 on the CPU: the f32 kernel's result is "
                       "not a plain dense tensor at once (result_layout "
                       "other than plain is for f32)")));
      continue;
    }
    AsyncValueRef<DenseHostTensor> narrowed =
        Converted(result->get<DenseHostTensor>(), half, host);
    if (narrowed) {
      invocation.results[r] = narrowed;
    } else {
      invocation.results[r] = MakeErrorAsyncValueRef(
          absl::ResourceExhaustedError(absl::StrCat(
              wrapped.op, ": f16/bf16 on the CPU: out of host memory")));
    }
  }
}

}  // namespace

void ComputeHalvesInF32OnCpu(OpRegistry& registry) {
  // Every op whose shape function takes halves (RequireFloat, and the
  // arithmetic and real unary kinds) and whose CPU kernel computes in f32.
  static const char* const kOps[] = {
      "nn.abs",
      "nn.acos",
      "nn.acosh",
      "nn.add",
      "nn.asin",
      "nn.asinh",
      "nn.atan",
      "nn.atanh",
      "nn.attention",
      "nn.average_pool",
      "nn.batch_normalization",
      "nn.ceil",
      "nn.celu",
      "nn.clip",
      "nn.conv",
      "nn.conv_transpose",
      "nn.cos",
      "nn.cosh",
      "nn.div",
      "nn.elu",
      "nn.erf",
      "nn.exp",
      "nn.floor",
      "nn.gelu",
      "nn.gemm",
      "nn.global_average_pool",
      "nn.hard_sigmoid",
      "nn.hard_swish",
      "nn.identity",
      "nn.instance_normalization",
      "nn.layer_normalization",
      "nn.leaky_relu",
      "nn.log",
      "nn.log_softmax",
      "nn.matmul",
      "nn.max",
      "nn.max_pool",
      "nn.min",
      "nn.mish",
      "nn.mod",
      "nn.mul",
      "nn.neg",
      "nn.pow",
      "nn.reciprocal",
      "nn.reduce_l1",
      "nn.reduce_l2",
      "nn.reduce_log_sum",
      "nn.reduce_log_sum_exp",
      "nn.reduce_max",
      "nn.reduce_mean",
      "nn.reduce_min",
      "nn.reduce_prod",
      "nn.reduce_sum",
      "nn.reduce_sum_square",
      "nn.relu",
      "nn.resize",
      "nn.round",
      "nn.selu",
      "nn.shrink",
      "nn.sigmoid",
      "nn.sign",
      "nn.sin",
      "nn.sinh",
      "nn.softmax",
      "nn.softplus",
      "nn.softsign",
      "nn.sqrt",
      "nn.sub",
      "nn.tan",
      "nn.tanh",
      "nn.thresholded_relu",
  };
  for (const char* op : kOps) {
    const OpEntry* entry = registry.Find(op);
    const OpImplementation* cpu =
        entry ? entry->FindImplementation("cpu") : nullptr;
    if (cpu == nullptr || cpu->dispatch == DispatchWithHalvesInF32) continue;
    auto [it, inserted] = WrappedImplementations().try_emplace(
        op, Wrapped{cpu->dispatch, cpu->data, cpu->accepted_tensors, op});
    if (!inserted)
      it->second = {cpu->dispatch, cpu->data, cpu->accepted_tensors, op};
    registry.AddDispatch(op, "cpu", DispatchWithHalvesInF32,
                         it->second.accepted_tensors, &it->second);
  }
}

}  // namespace asyncrt::nn
