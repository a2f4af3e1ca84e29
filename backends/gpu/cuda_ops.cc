// The CUDA plug-in's kernels for the nn.* op set: each reads its operands
// and attributes through the C API, allocates its results (dtypes and
// shapes come from the op's shape function, shared with the CPU), and
// enqueues its work on the device's stream. Matrix products run on
// cuBLASLt with its fused bias and relu epilogues; the rest on our kernels
// (cuda_kernels.cu) or asynchronous copies.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "asyncrt/c/device_plugin.h"
#include "backends/gpu/cuda_device.h"
#include "backends/gpu/cuda_kernels.h"
#include "backends/gpu/op_call.h"

namespace asyncrt::gpu {
namespace {
//===--- Elementwise ------------------------------------------------------===//

struct UnaryDef {
  UnaryOp op;
  float alpha;
  float beta;
  const char* alpha_name;
  const char* beta_name;
};

void UnaryKernel(AsyncRT_KernelContext* context, void* data,
                 AsyncRT_Status* status) {
  const auto& def = *static_cast<const UnaryDef*>(data);
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.Output(0, &y)) return;
  float alpha =
      def.alpha_name ? op.Float(def.alpha_name, def.alpha) : def.alpha;
  float beta = def.beta_name ? op.Float(def.beta_name, def.beta) : def.beta;
  op.TimedLaunch(
      [&] {
        return LaunchUnary(def.op, ToGpu(x.dtype), x.data, y.data,
                           NumElements(y), alpha, beta, op.stream());
      },
      "launching the kernel");
}

// `operand` read as the output's shape under numpy broadcasting.
StridedView BroadcastView(const AsyncRT_TensorView& operand,
                          const AsyncRT_TensorView& output) {
  StridedView view;
  view.rank = output.rank;
  std::vector<int64_t> strides = DenseStrides(operand);
  const int shift = output.rank - operand.rank;
  for (int k = 0; k < output.rank; ++k) {
    view.dims[k] = output.dims[k];
    const int j = k - shift;
    view.strides[k] = j < 0 || operand.dims[j] == 1 ? 0 : strides[j];
  }
  return view;
}

// The integers the bitwise ops take.
bool TakesBitwise(AsyncRT_DType dtype) {
  return dtype == ASYNCRT_DTYPE_I8 || dtype == ASYNCRT_DTYPE_U8 ||
         dtype == ASYNCRT_DTYPE_I32 || dtype == ASYNCRT_DTYPE_I64;
}

void BinaryKernel(AsyncRT_KernelContext* context, void* data,
                  AsyncRT_Status* status) {
  const auto binary = static_cast<BinaryOp>(reinterpret_cast<intptr_t>(data));
  const bool bitwise = binary == BinaryOp::kBitwiseAnd ||
                       binary == BinaryOp::kBitwiseOr ||
                       binary == BinaryOp::kBitwiseXor;
  OpCall op(context, status);
  AsyncRT_TensorView a, b, y;
  if (!op.Input(0, &a) || !op.Input(1, &b) || !op.Output(0, &y) ||
      !op.RequireRank(y)) {
    return;
  }
  const bool supported =
      bitwise ? TakesBitwise(a.dtype)
              : IsFloating16or32(a.dtype) || ((a.dtype == ASYNCRT_DTYPE_I32 ||
                                               a.dtype == ASYNCRT_DTYPE_I64) &&
                                              binary != BinaryOp::kPow);
  if (!supported) {
    op.Unsupported(std::string("dtype ") + DTypeName(a.dtype));
    return;
  }
  if (a.dtype != b.dtype) {
    op.Invalid(std::string("operands of different dtypes: ") +
               DTypeName(a.dtype) + " and " + DTypeName(b.dtype));
    return;
  }
  op.Launched(
      LaunchBinary(binary, ToGpu(a.dtype), a.data, BroadcastView(a, y), b.data,
                   BroadcastView(b, y), y.data, NumElements(y), op.stream()),
      "launching the kernel");
}

// nn.bitwise_not: i8, u8, i32, i64.
void BitwiseNotKernel(AsyncRT_KernelContext* context, void*,
                      AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.Output(0, &y) || !op.RequireRank(y)) return;
  if (!TakesBitwise(x.dtype)) {
    op.Unsupported(std::string("dtype ") + DTypeName(x.dtype));
    return;
  }
  const StridedView view = BroadcastView(x, y);
  op.Launched(LaunchBinary(BinaryOp::kBitwiseNot, ToGpu(x.dtype), x.data, view,
                           x.data, view, y.data, NumElements(y), op.stream()),
              "launching the kernel");
}

void CastKernel(AsyncRT_KernelContext* context, void*, AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.Output(0, &y)) return;
  if (ElementBytes(x.dtype) == 0 || ElementBytes(y.dtype) == 0 ||
      x.dtype == ASYNCRT_DTYPE_I16 || y.dtype == ASYNCRT_DTYPE_I16) {
    op.Unsupported(std::string("a cast from ") + DTypeName(x.dtype) + " to " +
                   DTypeName(y.dtype));
    return;
  }
  if (x.dtype == y.dtype) {
    op.Launched(cudaMemcpyAsync(y.data, x.data, y.size_bytes,
                                cudaMemcpyDeviceToDevice, op.stream()),
                "cudaMemcpyAsync");
    return;
  }
  op.Launched(LaunchCast(ToGpu(x.dtype), ToGpu(y.dtype), x.data, y.data,
                         NumElements(y), op.stream()),
              "launching the kernel");
}

//===--- Layout -----------------------------------------------------------===//

// Reshape, flatten, squeeze, unsqueeze and identity: the input's memory
// (a runtime of API 1.2 aliases it), else the same bytes in a new buffer.
void CopyKernel(AsyncRT_KernelContext* context, void*, AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (g_api->struct_size >= ASYNCRT_RUNTIME_API_STRUCT_SIZE &&
      g_api->alias_input != nullptr) {
    y.struct_size = ASYNCRT_TENSOR_VIEW_STRUCT_SIZE;
    g_api->alias_input(context, 0, 0, &y, status);
    return;
  }
  if (!op.Input(0, &x) || !op.Output(0, &y)) return;
  if (y.size_bytes == 0) return;
  op.Launched(cudaMemcpyAsync(y.data, x.data, y.size_bytes,
                              cudaMemcpyDeviceToDevice, op.stream()),
              "cudaMemcpyAsync");
}

void Strided(OpCall& op, const AsyncRT_TensorView& x,
             const AsyncRT_TensorView& y, const StridedView& view) {
  op.Launched(LaunchStridedCopy(ElementBytes(x.dtype), x.data, view, y.data,
                                NumElements(y), op.stream()),
              "launching the kernel");
}

void TransposeKernel(AsyncRT_KernelContext* context, void*,
                     AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireRank(x) || !op.Output(0, &y)) return;
  std::vector<int64_t> perm;
  if (!op.Ints("perm", &perm) || perm.empty()) {
    perm.resize(x.rank);
    for (int k = 0; k < x.rank; ++k) perm[k] = x.rank - 1 - k;
  }
  if (static_cast<int>(perm.size()) != x.rank) {
    op.Invalid("perm has " + std::to_string(perm.size()) +
               " entries for a rank-" + std::to_string(x.rank) + " operand");
    return;
  }
  std::vector<int64_t> strides = DenseStrides(x);
  StridedView view;
  view.rank = y.rank;
  for (int k = 0; k < y.rank; ++k) {
    view.dims[k] = y.dims[k];
    view.strides[k] = strides[perm[k]];
  }
  Strided(op, x, y, view);
}

void ExpandKernel(AsyncRT_KernelContext* context, void*,
                  AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.Output(0, &y) || !op.RequireRank(y)) return;
  Strided(op, x, y, BroadcastView(x, y));
}

void SliceKernel(AsyncRT_KernelContext* context, void*,
                 AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireRank(x) || !op.Output(0, &y)) return;
  std::vector<int64_t> starts, ends, axes, steps;
  op.Ints("starts", &starts);
  op.Ints("axes", &axes);
  op.Ints("steps", &steps);
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(k);
  }
  std::vector<int64_t> strides = DenseStrides(x);
  StridedView view;
  view.rank = y.rank;
  for (int k = 0; k < y.rank; ++k) {
    view.dims[k] = y.dims[k];
    view.strides[k] = strides[k];
  }
  // ONNX's clamping of each start (the shape function did the ends).
  for (size_t i = 0; i < axes.size() && i < starts.size(); ++i) {
    const int axis = NormalizeAxis(axes[i], x.rank);
    if (axis < 0) {
      op.Invalid("slice axis " + std::to_string(axes[i]) + " out of range");
      return;
    }
    const int64_t dim = x.dims[axis];
    const int64_t step = i < steps.size() ? steps[i] : 1;
    int64_t start = starts[i];
    if (start < 0) start += dim;
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, 0, dim - 1);
    view.offset += start * strides[axis];
    view.strides[axis] = strides[axis] * step;
  }
  Strided(op, x, y, view);
}

// Indices are data, on the device: one out of range is found there
// (DeviceFault), gives zeros, and fails the device's later completions.
void GatherKernel(AsyncRT_KernelContext* context, void*,
                  AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView data, indices, y;
  if (!op.Input(0, &data) || !op.Input(1, &indices) || !op.Output(0, &y)) {
    return;
  }
  const int axis = NormalizeAxis(op.Int("axis", 0), data.rank);
  if (axis < 0) {
    op.Invalid("gather axis out of range");
    return;
  }
  if (indices.dtype != ASYNCRT_DTYPE_I32 &&
      indices.dtype != ASYNCRT_DTYPE_I64) {
    op.Invalid("gather indices must be i32 or i64");
    return;
  }
  int64_t outer = 1, inner = 1, count = 1;
  for (int k = 0; k < axis; ++k) outer *= data.dims[k];
  for (int k = axis + 1; k < data.rank; ++k) inner *= data.dims[k];
  for (int k = 0; k < indices.rank; ++k) count *= indices.dims[k];
  op.Launched(LaunchGather(ElementBytes(data.dtype), data.data,
                           ElementBytes(indices.dtype), indices.data, y.data,
                           outer, data.dims[axis], count, inner,
                           op.device().fault, op.stream()),
              "the gather kernel");
}

void ConcatKernel(AsyncRT_KernelContext* context, void*,
                  AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView y;
  if (!op.Output(0, &y)) return;
  const int axis = NormalizeAxis(op.Int("axis", 0), y.rank);
  if (axis < 0) {
    op.Invalid("concat axis out of range");
    return;
  }
  const int element = ElementBytes(y.dtype);
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= y.dims[k];
  for (int k = axis + 1; k < y.rank; ++k) inner *= y.dims[k];
  const size_t row_bytes = y.dims[axis] * inner * element;
  size_t column = 0;
  for (int i = 0; i < op.num_inputs(); ++i) {
    AsyncRT_TensorView x;
    if (!op.Input(i, &x)) return;
    const size_t width = x.dims[axis] * inner * element;
    if (width != 0 && outer != 0 &&
        !op.Launched(cudaMemcpy2DAsync(static_cast<char*>(y.data) + column,
                                       row_bytes, x.data, width, width, outer,
                                       cudaMemcpyDeviceToDevice, op.stream()),
                     "cudaMemcpy2DAsync")) {
      return;
    }
    column += width;
  }
}

//===--- Normalization and reductions -------------------------------------===//

void SoftmaxKernel(AsyncRT_KernelContext* context, void* data,
                   AsyncRT_Status* status) {
  const bool log = data != nullptr;
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.Output(0, &y)) return;
  const int axis = NormalizeAxis(op.Int("axis", -1), x.rank);
  if (axis < 0) {
    op.Invalid("softmax axis out of range");
    return;
  }
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= x.dims[k];
  for (int k = axis + 1; k < x.rank; ++k) inner *= x.dims[k];
  op.Launched(LaunchSoftmax(ToGpu(x.dtype), x.data, y.data, outer, x.dims[axis],
                            inner, log, op.stream()),
              "launching the kernel");
}

void LayerNormKernel(AsyncRT_KernelContext* context, void*,
                     AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, scale, bias = {}, y, mean = {}, inv_std = {};
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.Input(1, &scale)) return;
  if (op.num_inputs() > 2 && !op.Input(2, &bias)) return;
  const int axis = NormalizeAxis(op.Int("axis", -1), x.rank);
  if (axis < 0) {
    op.Invalid("layer normalization axis out of range");
    return;
  }
  int64_t rows = 1, cols = 1;
  for (int k = 0; k < axis; ++k) rows *= x.dims[k];
  for (int k = axis; k < x.rank; ++k) cols *= x.dims[k];
  if (NumElements(scale) != cols ||
      (bias.data != nullptr && NumElements(bias) != cols)) {
    op.Unsupported(
        "a scale or bias that broadcasts (not one value per "
        "normalized element)");
    return;
  }
  if (!op.Output(0, &y)) return;
  if (op.num_outputs() == 3 &&
      (!op.Output(1, &mean) || !op.Output(2, &inv_std))) {
    return;
  }
  if (mean.data != nullptr && mean.dtype != ASYNCRT_DTYPE_F32) {
    op.Unsupported(
        "mean and inverse standard deviation results other than "
        "f32");
    return;
  }
  op.Launched(LaunchLayerNorm(ToGpu(x.dtype), x.data, scale.data, bias.data,
                              y.data, mean.data, inv_std.data, rows, cols,
                              op.Float("epsilon", 1e-5f), op.stream()),
              "launching the kernel");
}

void ReduceKernel(AsyncRT_KernelContext* context, void* data,
                  AsyncRT_Status* status) {
  const auto reduce = static_cast<ReduceOp>(reinterpret_cast<intptr_t>(data));
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.RequireRank(x) ||
      !op.Output(0, &y)) {
    return;
  }
  std::vector<int64_t> axes;
  const bool has_axes = op.Ints("axes", &axes) && !axes.empty();
  if (!has_axes && op.Int("noop_with_empty_axes", 0) != 0) {
    if (y.size_bytes != 0) {
      op.Launched(cudaMemcpyAsync(y.data, x.data, y.size_bytes,
                                  cudaMemcpyDeviceToDevice, op.stream()),
                  "cudaMemcpyAsync");
    }
    return;
  }
  std::vector<bool> reduced(x.rank, !has_axes);
  for (int64_t axis : axes) {
    const int normalized = NormalizeAxis(axis, x.rank);
    if (normalized < 0) {
      op.Invalid("reduction axis " + std::to_string(axis) + " out of range");
      return;
    }
    reduced[normalized] = true;
  }
  std::vector<int64_t> strides = DenseStrides(x);
  StridedView kept_view, reduced_view;
  for (int k = 0; k < x.rank; ++k) {
    StridedView& view = reduced[k] ? reduced_view : kept_view;
    view.dims[view.rank] = x.dims[k];
    view.strides[view.rank] = strides[k];
    ++view.rank;
  }
  op.Launched(LaunchReduce(reduce, ToGpu(x.dtype), x.data, kept_view,
                           reduced_view, y.data, NumElements(y), op.stream()),
              "launching the kernel");
}

// Mean over every axis after the first two (N x C x ...), or over H and W
// of N x H x W x C (data_format NHWC).
void GlobalAveragePoolKernel(AsyncRT_KernelContext* context, void*,
                             AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.RequireRank(x) ||
      !op.Output(0, &y)) {
    return;
  }
  if (x.rank < 3) {
    op.Invalid("global_average_pool needs N x C x spatial dimensions");
    return;
  }
  bool channels_last = false;
  if (!ChannelsLast(op, x, &channels_last)) return;
  std::vector<int64_t> strides = DenseStrides(x);
  StridedView kept, reduced;
  for (int k = 0; k < x.rank; ++k) {
    const bool is_kept = channels_last ? k == 0 || k == 3 : k < 2;
    StridedView& view = is_kept ? kept : reduced;
    view.dims[view.rank] = x.dims[k];
    view.strides[view.rank] = strides[k];
    ++view.rank;
  }
  op.Launched(LaunchReduce(ReduceOp::kMean, ToGpu(x.dtype), x.data, kept,
                           reduced, y.data, NumElements(y), op.stream()),
              "launching the kernel");
}

//===--- Matrix products (cuBLASLt) ---------------------------------------===//

cudaDataType_t BlasType(AsyncRT_DType dtype) {
  switch (dtype) {
    case ASYNCRT_DTYPE_F16:
      return CUDA_R_16F;
    case ASYNCRT_DTYPE_BF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

// A row-major product D[b] = op(A[b]) x op(B[b]) (+ bias per column)
// (+ beta * C[b]) (relu), with batch strides in elements (0 broadcasts).
struct Matmul {
  AsyncRT_DType dtype;
  int64_t m, n, k;
  bool transpose_a = false, transpose_b = false;
  const void* a;
  const void* b;
  const void* c = nullptr;  // The shape of D, or null.
  void* d;
  const void* bias = nullptr;  // n values, or null.
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;
  // Row strides in elements as stored (0: dense). With them and the batch
  // strides a product reads and writes matrices interleaved in a larger
  // one: attention's heads, side by side in each row.
  int64_t lda = 0, ldb = 0, ldd = 0;
  float alpha = 1.f, beta = 0.f;
  bool relu = false;
};

bool BlasOk(cublasStatus_t status, const char* what, OpCall& op) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  Fail(op.status(), ASYNCRT_INTERNAL,
       std::string(what) + ": " + cublasLtGetStatusName(status) + ": " +
           cublasLtGetStatusString(status));
  return false;
}

// How the matrices of a strided `mm` (lda, ldb or ldd set) are aligned:
// for each of A, B and D the largest power of two up to 256 that divides
// its address and its row and batch strides in bytes. Zeros for a dense
// product (the heuristic assumes 256, which allocations are).
struct Alignments {
  uint32_t a = 0, b = 0, d = 0;
};
Alignments AlignmentsOf(const Matmul& mm) {
  if (mm.lda == 0 && mm.ldb == 0 && mm.ldd == 0) return {};
  const uint64_t element = ElementBytes(mm.dtype);
  auto alignment = [&](const void* address,
                       std::initializer_list<int64_t> strides) {
    uint32_t bytes = 256;
    while (reinterpret_cast<uintptr_t>(address) % bytes != 0) bytes /= 2;
    for (int64_t stride : strides) {
      while (stride != 0 && (stride * element) % bytes != 0) bytes /= 2;
    }
    return bytes;
  };
  return {alignment(mm.a, {mm.lda, mm.stride_a}),
          alignment(mm.b, {mm.ldb, mm.stride_b}),
          alignment(mm.d, {mm.ldd, mm.stride_d})};
}

// Tells the heuristic the alignments of a strided `mm` (it assumes 256
// bytes otherwise).
bool SetAlignments(const Matmul& mm, cublasLtMatmulPreference_t preference,
                   OpCall& op) {
  const auto [a, b, d] = AlignmentsOf(mm);
  if (a == 0) return true;
  return BlasOk(cublasLtMatmulPreferenceSetAttribute(
                    preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &b,
                    sizeof(b)),
                "setting an alignment", op) &&
         BlasOk(cublasLtMatmulPreferenceSetAttribute(
                    preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &a,
                    sizeof(a)),
                "setting an alignment", op) &&
         BlasOk(cublasLtMatmulPreferenceSetAttribute(
                    preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &d,
                    sizeof(d)),
                "setting an alignment", op) &&
         BlasOk(cublasLtMatmulPreferenceSetAttribute(
                    preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &d,
                    sizeof(d)),
                "setting an alignment", op);
}

// The plan of `mm` (descriptors and algorithm). Row-major D = A x B is
// column-major D^T = B^T x A^T, so cuBLASLt's first operand is our B.
std::unique_ptr<MatmulPlan> MakePlan(const Matmul& mm, CudaDevice& device,
                                     cublasComputeType_t compute,
                                     cublasLtEpilogue_t epilogue, OpCall& op) {
  auto plan = std::make_unique<MatmulPlan>();
  const cudaDataType_t type = BlasType(mm.dtype);
  // Column-major views: first operand (our B) is n x k, second (our A)
  // k x m, D n x m.
  const cublasOperation_t op_first = mm.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second =
      mm.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t first_rows = mm.transpose_b ? mm.k : mm.n;
  const int64_t first_cols = mm.transpose_b ? mm.n : mm.k;
  const int64_t second_rows = mm.transpose_a ? mm.m : mm.k;
  const int64_t second_cols = mm.transpose_a ? mm.k : mm.m;
  bool ok = BlasOk(cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F),
                   "cublasLtMatmulDescCreate", op) &&
            BlasOk(cublasLtMatmulDescSetAttribute(plan->desc,
                                                  CUBLASLT_MATMUL_DESC_TRANSA,
                                                  &op_first, sizeof(op_first)),
                   "setting TRANSA", op) &&
            BlasOk(cublasLtMatmulDescSetAttribute(
                       plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_second,
                       sizeof(op_second)),
                   "setting TRANSB", op) &&
            BlasOk(cublasLtMatmulDescSetAttribute(plan->desc,
                                                  CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                  &epilogue, sizeof(epilogue)),
                   "setting the epilogue", op) &&
            BlasOk(cublasLtMatrixLayoutCreate(&plan->first, type, first_rows,
                                              first_cols,
                                              mm.ldb ? mm.ldb : first_rows),
                   "cublasLtMatrixLayoutCreate", op) &&
            BlasOk(cublasLtMatrixLayoutCreate(&plan->second, type, second_rows,
                                              second_cols,
                                              mm.lda ? mm.lda : second_rows),
                   "cublasLtMatrixLayoutCreate", op) &&
            BlasOk(cublasLtMatrixLayoutCreate(&plan->out, type, mm.n, mm.m,
                                              mm.ldd ? mm.ldd : mm.n),
                   "cublasLtMatrixLayoutCreate", op);
  if (ok && mm.batch > 1) {
    const int32_t batch = static_cast<int32_t>(mm.batch);
    auto set_batch = [&](cublasLtMatrixLayout_t layout, int64_t stride) {
      return BlasOk(cublasLtMatrixLayoutSetAttribute(
                        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                        sizeof(batch)),
                    "setting the batch count", op) &&
             BlasOk(cublasLtMatrixLayoutSetAttribute(
                        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                        &stride, sizeof(stride)),
                    "setting the batch stride", op);
    };
    ok = set_batch(plan->first, mm.stride_b) &&
         set_batch(plan->second, mm.stride_a) &&
         set_batch(plan->out, mm.stride_d);
  }
  if (!ok) return nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t result = {};
  int results = 0;
  const uint64_t workspace = device.blas_workspace_bytes;
  ok = BlasOk(cublasLtMatmulPreferenceCreate(&preference),
              "cublasLtMatmulPreferenceCreate", op) &&
       BlasOk(cublasLtMatmulPreferenceSetAttribute(
                  preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                  &workspace, sizeof(workspace)),
              "setting the workspace", op) &&
       SetAlignments(mm, preference, op) &&
       BlasOk(cublasLtMatmulAlgoGetHeuristic(
                  device.blas_lt, plan->desc, plan->first, plan->second,
                  plan->out, plan->out, preference, 1, &result, &results),
              "cublasLtMatmulAlgoGetHeuristic", op);
  if (preference) cublasLtMatmulPreferenceDestroy(preference);
  if (ok && results == 0) {
    ok = op.Unsupported("this matrix product (no cuBLASLt algorithm)");
  }
  if (!ok) return nullptr;
  plan->algo = result.algo;
  return plan;
}

// Runs `mm` on the op's stream, with the plan made on first use.
bool RunMatmul(const Matmul& mm, OpCall& op) {
  CudaDevice& device = op.device();
  const cublasComputeType_t compute =
      mm.dtype == ASYNCRT_DTYPE_F32 && Settings().allow_tf32
          ? CUBLAS_COMPUTE_32F_FAST_TF32
          : CUBLAS_COMPUTE_32F;
  const cublasLtEpilogue_t epilogue =
      mm.bias ? (mm.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
              : (mm.relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  const Alignments aligned = AlignmentsOf(mm);
  const MatmulKey key{static_cast<int>(mm.dtype) * 2 + (mm.c != nullptr),
                      mm.m,
                      mm.n,
                      mm.k,
                      mm.batch,
                      {mm.stride_a, mm.stride_b, mm.stride_d},
                      {mm.lda, mm.ldb, mm.ldd},
                      {aligned.a, aligned.b, aligned.d},
                      mm.transpose_a * 2 + mm.transpose_b,
                      static_cast<int>(epilogue),
                      static_cast<int>(compute)};
  std::lock_guard<std::mutex> lock(device.matmul_mutex);
  std::unique_ptr<MatmulPlan>& plan = device.matmul_plans[key];
  if (!plan) {
    plan = MakePlan(mm, device, compute, epilogue, op);
    if (!plan) {
      device.matmul_plans.erase(key);
      return false;
    }
  }
  if (mm.bias != nullptr &&
      !BlasOk(cublasLtMatmulDescSetAttribute(plan->desc,
                                             CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                             &mm.bias, sizeof(mm.bias)),
              "setting the bias", op)) {
    return false;
  }
  const float alpha = mm.alpha;
  const float beta = mm.c != nullptr ? mm.beta : 0.f;
  return BlasOk(cublasLtMatmul(device.blas_lt, plan->desc, &alpha, mm.b,
                               plan->first, mm.a, plan->second, &beta,
                               mm.c != nullptr ? mm.c : mm.d, plan->out, mm.d,
                               plan->out, &plan->algo, device.blas_workspace,
                               device.blas_workspace_bytes, op.stream()),
                "cublasLtMatmul", op);
}

// `y` set to zeros: a product over an empty inner dimension, which
// cuBLASLt's layouts cannot describe.
bool FillZeros(const AsyncRT_TensorView& y, OpCall& op) {
  return op.Launched(
      cudaMemsetAsync(y.data, 0, NumElements(y) * ElementBytes(y.dtype),
                      op.stream()),
      "zeroing the result");
}

void MatmulKernel(AsyncRT_KernelContext* context, void*,
                  AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView a, b, y, bias = {}, sum = {};
  if (!op.Input(0, &a) || !op.Input(1, &b) || !op.RequireFloat(a)) return;
  if (op.num_inputs() > 2 && !op.Input(2, &bias)) return;
  if (op.num_inputs() > 3 && !op.Input(3, &sum)) return;
  if (a.dtype != b.dtype) {
    op.Invalid(std::string("operands of different dtypes: ") +
               DTypeName(a.dtype) + " and " + DTypeName(b.dtype));
    return;
  }
  if (!op.Output(0, &y)) return;
  Matmul mm;
  mm.dtype = a.dtype;
  mm.m = a.rank >= 2 ? a.dims[a.rank - 2] : 1;
  mm.k = a.dims[a.rank - 1];
  mm.n = b.rank >= 2 ? b.dims[b.rank - 1] : 1;
  mm.a = a.data;
  mm.b = b.data;
  mm.d = y.data;
  if (NumElements(y) == 0) return;
  if (mm.k == 0 && op.num_inputs() > 2) {
    op.Unsupported(
        "a fused bias or sum on a matrix product over an empty inner "
        "dimension");
    return;
  }
  // Batches: each operand has all of the result's, or one (any number,
  // over an empty inner dimension: the product is zeros).
  const int64_t matrix_d = mm.m * mm.n;
  mm.batch = NumElements(y) / matrix_d;
  const int64_t batch_a = mm.k == 0 ? mm.batch : NumElements(a) / (mm.m * mm.k);
  const int64_t batch_b = mm.k == 0 ? mm.batch : NumElements(b) / (mm.k * mm.n);
  if ((batch_a != 1 && batch_a != mm.batch) ||
      (batch_b != 1 && batch_b != mm.batch)) {
    op.Unsupported(
        "a matrix product whose batch dimensions broadcast "
        "partially");
    return;
  }
  mm.stride_a = batch_a == 1 ? 0 : mm.m * mm.k;
  mm.stride_b = batch_b == 1 ? 0 : mm.k * mm.n;
  mm.stride_d = matrix_d;
  if (bias.data != nullptr) {
    if (NumElements(bias) != mm.n || bias.dtype != a.dtype) {
      op.Invalid(
          "the fused bias must hold one value per column, of the "
          "operands' dtype");
      return;
    }
    mm.bias = bias.data;
  }
  if (sum.data != nullptr) {
    if (NumElements(sum) != NumElements(y) || sum.dtype != a.dtype) {
      op.Invalid("the fused sum must have the result's shape and dtype");
      return;
    }
    mm.c = sum.data;
    mm.beta = 1.f;
  }
  // Relu in cuBLASLt's epilogue; a scale (linear without offset, as
  // attention's 1/sqrt(d)) in its alpha where no bias comes after the
  // product; the others as a kernel over the result.
  UnaryOp activation;
  float alpha, beta;
  if (!FusedActivation(op, &activation, &alpha, &beta)) return;
  mm.relu = activation == UnaryOp::kRelu;
  if (activation == UnaryOp::kLinear && beta == 0.f && mm.bias == nullptr) {
    mm.alpha = alpha;
    mm.beta *= alpha;  // alpha (A B + C), C the fused sum.
    activation = UnaryOp::kIdentity;
  }
  if (!(mm.k == 0 ? FillZeros(y, op) : RunMatmul(mm, op))) return;
  if (activation != UnaryOp::kIdentity && !mm.relu) {
    op.Launched(LaunchUnary(activation, ToGpu(y.dtype), y.data, y.data,
                            NumElements(y), alpha, beta, op.stream()),
                "launching the activation");
  }
}

// Attention as two strided batched products on cuBLASLt around our softmax,
// reading the heads where they lie (side by side in each row) and writing
// each head's result into its columns: no head transposes, tensor cores
// for the products. The scores and probabilities (heads x q_length x
// kv_length each, the operands' dtype, as the unfused ops keep them) live
// in memory for the call. Returns whether it took the op (its errors in
// the op's status); false, with nothing done, where the shape does not
// suit it: heads shared by groups,
// head sizes or a head's scores not a multiple of 16 bytes (cuBLASLt's
// tensor-core kernels want that alignment), scores over
// kAttentionScratchBytes.
constexpr uint64_t kAttentionScratchBytes = uint64_t{64} << 20;

bool AttentionByProducts(OpCall& op, const AttentionOperands& in,
                         const AsyncRT_TensorView& y,
                         const AttentionShape& shape, float scale) {
  const int64_t element = ElementBytes(in.dtype);
  const int64_t heads = shape.q_heads;
  const int64_t scores = heads * shape.q_length * shape.kv_length;
  if (shape.kv_heads != shape.q_heads ||
      (shape.head_size * element) % 16 != 0 ||
      (shape.value_head_size * element) % 16 != 0 ||
      (shape.q_length * shape.kv_length * element) % 16 != 0 ||
      static_cast<uint64_t>(2 * scores * element) > kAttentionScratchBytes) {
    return false;
  }
  CudaDevice& device = op.device();
  const uint64_t scratch_bytes = 2 * scores * element;
  void* scratch = DeviceAllocate(device, scratch_bytes);
  if (scratch == nullptr) {
    Fail(op.status(), ASYNCRT_RESOURCE_EXHAUSTED,
         "out of memory for the attention's scores of " +
             std::to_string(scratch_bytes) + " bytes");
    return true;
  }
  char* const logits = static_cast<char*>(scratch);
  char* const probabilities = logits + scores * element;
  const int64_t y_row = heads * shape.value_head_size;
  bool ok = true;
  for (int64_t b = 0; ok && b < shape.batch; ++b) {
    // logits[h] = q_h k_h^T * scale: q_h is q_length x head_size, rows
    // q_row apart, head h head_size elements in.
    const Matmul scores_mm{.dtype = in.dtype,
                           .m = shape.q_length,
                           .n = shape.kv_length,
                           .k = shape.head_size,
                           .transpose_b = true,
                           .a = in.q + b * shape.q_length * in.q_row * element,
                           .b = in.k + b * shape.kv_length * in.k_row * element,
                           .d = logits,
                           .batch = heads,
                           .stride_a = shape.head_size,
                           .stride_b = shape.head_size,
                           .stride_d = shape.q_length * shape.kv_length,
                           .lda = in.q_row,
                           .ldb = in.k_row,
                           .alpha = scale};
    ok = RunMatmul(scores_mm, op) &&
         op.Launched(LaunchSoftmax(ToGpu(in.dtype), logits, probabilities,
                                   heads * shape.q_length, shape.kv_length,
                                   /*inner=*/1, /*log=*/false, op.stream()),
                     "launching the softmax");
    if (!ok) break;
    // y_h = probabilities[h] v_h, into head h's columns of y.
    const Matmul values_mm{
        .dtype = in.dtype,
        .m = shape.q_length,
        .n = shape.value_head_size,
        .k = shape.kv_length,
        .a = probabilities,
        .b = in.v + b * shape.kv_length * in.v_row * element,
        .d = static_cast<char*>(y.data) + b * shape.q_length * y_row * element,
        .batch = heads,
        .stride_a = shape.q_length * shape.kv_length,
        .stride_b = shape.value_head_size,
        .stride_d = shape.value_head_size,
        .ldb = in.v_row,
        .ldd = y_row};
    ok = RunMatmul(values_mm, op);
  }
  // Stream-ordered: the next user of these bytes runs after the products.
  DeviceDeallocate(device, scratch, scratch_bytes);
  return true;
}

// nn.attention (the shape function has checked the operands' shapes): Q,
// K and V, or one operand holding them side by side (qkv_widths).
void AttentionKernel(AsyncRT_KernelContext* context, void*,
                     AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView q, k = {}, v = {}, y;
  const bool packed = op.num_inputs() == 1;
  if (!op.Input(0, &q) || !op.RequireFloat(q)) return;
  if (!packed && (!op.Input(1, &k) || !op.Input(2, &v))) return;
  if (!op.Output(0, &y)) return;
  const int64_t element = ElementBytes(q.dtype);
  AttentionShape shape;
  shape.batch = q.dims[0];
  shape.q_length = q.dims[1];
  shape.q_heads = static_cast<int>(op.Int("q_num_heads", 1));
  shape.kv_heads = static_cast<int>(op.Int("kv_num_heads", shape.q_heads));
  AttentionOperands in{.dtype = q.dtype, .q = static_cast<const char*>(q.data)};
  std::vector<int64_t> widths;
  if (packed) {
    if (!op.Ints("qkv_widths", &widths) || widths.size() != 3) {
      op.Invalid("one operand without three qkv_widths");
      return;
    }
    shape.kv_length = q.dims[1];
    in.k = in.q + widths[0] * element;
    in.v = in.k + widths[1] * element;
    in.q_row = in.k_row = in.v_row = q.dims[2];
  } else {
    widths = {q.dims[2], k.dims[2], v.dims[2]};
    shape.kv_length = k.dims[1];
    in.k = static_cast<const char*>(k.data);
    in.v = static_cast<const char*>(v.data);
    in.q_row = widths[0];
    in.k_row = widths[1];
    in.v_row = widths[2];
  }
  if (shape.q_heads <= 0 || shape.kv_heads <= 0) {
    op.Invalid("q_num_heads and kv_num_heads must be positive");
    return;
  }
  shape.head_size = static_cast<int>(widths[0] / shape.q_heads);
  shape.value_head_size = static_cast<int>(widths[2] / shape.kv_heads);
  if (NumElements(y) == 0) return;
  if (shape.kv_length == 0) {
    op.Invalid("attention over no keys");
    return;
  }
  const float scale =
      op.Float("scale", 1.f / std::sqrt(static_cast<float>(shape.head_size)));
  const CudaSettings::AttentionPath path = Settings().attention;
#ifdef ASYNCRT_HAVE_CUDNN
  if ((path == CudaSettings::AttentionPath::kAuto ||
       path == CudaSettings::AttentionPath::kCudnn) &&
      AttentionOnCudnn(op, in, y, shape, scale)) {
    return;
  }
#endif
  if (path == CudaSettings::AttentionPath::kFlash) {
    const StridedAttentionShape flash = StridedShapeOf(shape, in);
    if (FlashAttentionTakes(ToGpu(in.dtype), in.q, in.k, in.v, y.data, flash)) {
      op.Launched(
          LaunchFlashAttention(ToGpu(in.dtype), in.q, in.k, in.v, y.data, flash,
                               scale, Settings().flash_warps, op.stream()),
          "launching the flash attention kernel");
      return;
    }
  }
  if (path != CudaSettings::AttentionPath::kKernel &&
      AttentionByProducts(op, in, y, shape, scale)) {
    return;
  }
  // Else one kernel on CUDA cores, scores in registers, dense operands.
  if (shape.head_size > kMaxAttentionHeadSize ||
      shape.value_head_size > kMaxAttentionHeadSize) {
    op.Unsupported("heads larger than " +
                   std::to_string(kMaxAttentionHeadSize) +
                   " unless ungrouped and of a multiple of 16 bytes");
    return;
  }
  if (!packed) {
    op.Launched(LaunchAttention(ToGpu(q.dtype), q.data, k.data, v.data, y.data,
                                shape, scale, op.stream()),
                "launching the kernel");
    return;
  }
  // Packed: Q, K and V copied apart first.
  const int64_t rows = shape.batch * shape.q_length;
  const uint64_t bytes = rows * q.dims[2] * element;
  void* apart = DeviceAllocate(op.device(), bytes);
  if (apart == nullptr) {
    Fail(op.status(), ASYNCRT_RESOURCE_EXHAUSTED,
         "out of memory for the attention's operands of " +
             std::to_string(bytes) + " bytes");
    return;
  }
  char* dense[3];
  int64_t offset = 0;
  bool ok = true;
  for (int i = 0; ok && i < 3; ++i) {
    dense[i] = static_cast<char*>(apart) + rows * offset * element;
    StridedView view;
    view.rank = 2;
    view.dims[0] = rows;
    view.dims[1] = widths[i];
    view.strides[0] = q.dims[2];
    view.strides[1] = 1;
    view.offset = offset;
    ok = op.Launched(LaunchStridedCopy(static_cast<int>(element), q.data, view,
                                       dense[i], rows * widths[i], op.stream()),
                     "launching a copy");
    offset += widths[i];
  }
  if (ok) {
    op.Launched(LaunchAttention(ToGpu(q.dtype), dense[0], dense[1], dense[2],
                                y.data, shape, scale, op.stream()),
                "launching the kernel");
  }
  DeviceDeallocate(op.device(), apart, bytes);
}

// ONNX Gemm: alpha * op(A) x op(B) + beta * C, C broadcasting to M x N.
void GemmKernel(AsyncRT_KernelContext* context, void*, AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView a, b, c = {}, y;
  if (!op.Input(0, &a) || !op.Input(1, &b) || !op.RequireFloat(a)) return;
  if (op.num_inputs() > 2 && !op.Input(2, &c)) return;
  if (a.rank != 2 || b.rank != 2 || a.dtype != b.dtype) {
    op.Invalid("gemm takes two rank-2 operands of one dtype");
    return;
  }
  if (!op.Output(0, &y)) return;
  Matmul mm;
  mm.dtype = a.dtype;
  mm.transpose_a = op.Int("transA", 0) != 0;
  mm.transpose_b = op.Int("transB", 0) != 0;
  mm.m = y.dims[0];
  mm.n = y.dims[1];
  mm.k = mm.transpose_a ? a.dims[0] : a.dims[1];
  mm.a = a.data;
  mm.b = b.data;
  mm.d = y.data;
  mm.alpha = op.Float("alpha", 1.f);
  if (NumElements(y) == 0) return;
  if (mm.k == 0) {
    if (c.data != nullptr) {
      op.Unsupported("gemm's C over an empty inner dimension");
      return;
    }
    FillZeros(y, op);
    return;
  }
  if (c.data != nullptr) {
    if (c.dtype != a.dtype || !op.RequireRank(c)) {
      op.Invalid("gemm's C must have the operands' dtype");
      return;
    }
    // C broadcast into the result first, then accumulated onto in place.
    if (!op.Launched(LaunchStridedCopy(ElementBytes(c.dtype), c.data,
                                       BroadcastView(c, y), y.data,
                                       NumElements(y), op.stream()),
                     "launching the kernel")) {
      return;
    }
    mm.c = y.data;
    mm.beta = op.Float("beta", 1.f);
  }
  RunMatmul(mm, op);
}

//===--- Registration -----------------------------------------------------===//

template <BinaryOp kOp>
void* BinaryData() {
  return reinterpret_cast<void*>(static_cast<intptr_t>(kOp));
}

}  // namespace

bool RegisterCudaKernels(AsyncRT_PluginParams* params, AsyncRT_Status* status) {
  static UnaryDef unary[] = {
      {UnaryOp::kRelu, 0, 0, nullptr, nullptr},
      {UnaryOp::kSigmoid, 0, 0, nullptr, nullptr},
      {UnaryOp::kTanh, 0, 0, nullptr, nullptr},
      {UnaryOp::kGelu, 0, 0, nullptr, nullptr},
      {UnaryOp::kExp, 0, 0, nullptr, nullptr},
      {UnaryOp::kLog, 0, 0, nullptr, nullptr},
      {UnaryOp::kSqrt, 0, 0, nullptr, nullptr},
      {UnaryOp::kNeg, 0, 0, nullptr, nullptr},
      {UnaryOp::kAbs, 0, 0, nullptr, nullptr},
      {UnaryOp::kErf, 0, 0, nullptr, nullptr},
      {UnaryOp::kLeakyRelu, 0.01f, 0, "alpha", nullptr},
      {UnaryOp::kClip, -INFINITY, INFINITY, "min", "max"},
      {UnaryOp::kHardSwish, 0, 0, nullptr, nullptr},
      {UnaryOp::kHardSigmoid, 0.2f, 0.5f, "alpha", "beta"},
      {UnaryOp::kElu, 1.f, 0, "alpha", nullptr},
      {UnaryOp::kSoftplus, 0, 0, nullptr, nullptr},
      {UnaryOp::kReciprocal, 0, 0, nullptr, nullptr},
      {UnaryOp::kFloor, 0, 0, nullptr, nullptr},
      {UnaryOp::kCeil, 0, 0, nullptr, nullptr},
      {UnaryOp::kSin, 0, 0, nullptr, nullptr},
      {UnaryOp::kCos, 0, 0, nullptr, nullptr},
  };
  const char* unary_names[] = {
      "nn.relu",       "nn.sigmoid",      "nn.tanh",       "nn.gelu",
      "nn.exp",        "nn.log",          "nn.sqrt",       "nn.neg",
      "nn.abs",        "nn.erf",          "nn.leaky_relu", "nn.clip",
      "nn.hard_swish", "nn.hard_sigmoid", "nn.elu",        "nn.softplus",
      "nn.reciprocal", "nn.floor",        "nn.ceil",       "nn.sin",
      "nn.cos",
  };
  static_assert(sizeof(unary) / sizeof(unary[0]) ==
                sizeof(unary_names) / sizeof(unary_names[0]));
  std::vector<KernelEntry> kernels;
  for (size_t i = 0; i < sizeof(unary) / sizeof(unary[0]); ++i) {
    kernels.push_back({unary_names[i], UnaryKernel, &unary[i]});
  }
  const KernelEntry others[] = {
      {"nn.add", BinaryKernel, BinaryData<BinaryOp::kAdd>()},
      {"nn.sub", BinaryKernel, BinaryData<BinaryOp::kSub>()},
      {"nn.mul", BinaryKernel, BinaryData<BinaryOp::kMul>()},
      {"nn.div", BinaryKernel, BinaryData<BinaryOp::kDiv>()},
      {"nn.pow", BinaryKernel, BinaryData<BinaryOp::kPow>()},
      {"nn.max", BinaryKernel, BinaryData<BinaryOp::kMax>()},
      {"nn.min", BinaryKernel, BinaryData<BinaryOp::kMin>()},
      {"nn.bitwise_and", BinaryKernel, BinaryData<BinaryOp::kBitwiseAnd>()},
      {"nn.bitwise_or", BinaryKernel, BinaryData<BinaryOp::kBitwiseOr>()},
      {"nn.bitwise_xor", BinaryKernel, BinaryData<BinaryOp::kBitwiseXor>()},
      {"nn.bitwise_not", BitwiseNotKernel, nullptr},
      {"nn.cast", CastKernel, nullptr},
      {"nn.identity", CopyKernel, nullptr},
      {"nn.reshape", CopyKernel, nullptr},
      {"nn.flatten", CopyKernel, nullptr},
      {"nn.squeeze", CopyKernel, nullptr},
      {"nn.unsqueeze", CopyKernel, nullptr},
      {"nn.transpose", TransposeKernel, nullptr},
      {"nn.expand", ExpandKernel, nullptr},
      {"nn.slice", SliceKernel, nullptr},
      {"nn.concat", ConcatKernel, nullptr},
      {"nn.gather", GatherKernel, nullptr},
      {"nn.softmax", SoftmaxKernel, nullptr},
      {"nn.log_softmax", SoftmaxKernel, reinterpret_cast<void*>(1)},
      {"nn.layer_normalization", LayerNormKernel, nullptr},
      {"nn.attention", AttentionKernel, nullptr},
      {"nn.reduce_sum", ReduceKernel,
       reinterpret_cast<void*>(static_cast<intptr_t>(ReduceOp::kSum))},
      {"nn.reduce_mean", ReduceKernel,
       reinterpret_cast<void*>(static_cast<intptr_t>(ReduceOp::kMean))},
      {"nn.reduce_max", ReduceKernel,
       reinterpret_cast<void*>(static_cast<intptr_t>(ReduceOp::kMax))},
      {"nn.reduce_min", ReduceKernel,
       reinterpret_cast<void*>(static_cast<intptr_t>(ReduceOp::kMin))},
      {"nn.reduce_sum_square", ReduceKernel,
       reinterpret_cast<void*>(static_cast<intptr_t>(ReduceOp::kSumSquare))},
      {"nn.reduce_l2", ReduceKernel,
       reinterpret_cast<void*>(static_cast<intptr_t>(ReduceOp::kL2))},
      {"nn.global_average_pool", GlobalAveragePoolKernel, nullptr},
      {"nn.matmul", MatmulKernel, nullptr},
      {"nn.gemm", GemmKernel, nullptr},
  };
  kernels.insert(kernels.end(), std::begin(others), std::end(others));
  return RegisterKernels(params, kernels.data(), kernels.size(), status);
}

}  // namespace asyncrt::gpu
