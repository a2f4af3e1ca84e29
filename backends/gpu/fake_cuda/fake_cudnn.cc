// A stand-in for cuDNN (libcudnn.so.9) beside fake_cudart.cc: a handle and
// the legacy API's descriptors are made, cudnnFind offers one algorithm
// with no workspace, and convolutions and pooling succeed doing nothing;
// the graph API refuses every descriptor, so the plug-in takes its legacy
// path (as where no engine builds a plan). What runs is the plug-in's
// host side: operand and attribute checks, plans, workspaces.
#include <cudnn.h>

#include <atomic>
#include <cstdint>

namespace {

template <typename Handle>
Handle NewHandle() {
  static std::atomic<uintptr_t> next{0x2000};
  return reinterpret_cast<Handle>(next.fetch_add(16));
}

constexpr cudnnStatus_t kOk = CUDNN_STATUS_SUCCESS;
constexpr cudnnStatus_t kRefused = CUDNN_STATUS_NOT_SUPPORTED;

// `count` values, at least `least` each, as many as cuDNN takes.
bool AtLeast(int count, const int* values, int least = 1) {
  if (count < 1 || count > CUDNN_DIM_MAX) return false;
  for (int i = 0; i < count; ++i) {
    if (values[i] < least) return false;
  }
  return true;
}

}  // namespace

extern "C" {

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  *handle = NewHandle<cudnnHandle_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t) { return kOk; }
cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) { return kOk; }
const char* cudnnGetErrorString(cudnnStatus_t status) {
  return status == kOk ? "CUDNN_STATUS_SUCCESS"
                       : "CUDNN_STATUS_NOT_SUPPORTED (the fake cuDNN)";
}

//===--- The legacy API ---------------------------------------------------===//

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  *d = NewHandle<cudnnTensorDescriptor_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t,
                                           cudnnTensorFormat_t, cudnnDataType_t,
                                           int count, const int* dims) {
  return count >= 3 && AtLeast(count, dims) ? kOk : CUDNN_STATUS_BAD_PARAM;
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
  *d = NewHandle<cudnnFilterDescriptor_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t,
                                         cudnnDataType_t, cudnnTensorFormat_t,
                                         int count, const int* dims) {
  return count >= 3 && AtLeast(count, dims) ? kOk : CUDNN_STATUS_BAD_PARAM;
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(
    cudnnConvolutionDescriptor_t* d) {
  *d = NewHandle<cudnnConvolutionDescriptor_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t,
                                              int count, const int* pads,
                                              const int* strides,
                                              const int* dilations,
                                              cudnnConvolutionMode_t,
                                              cudnnDataType_t) {
  return AtLeast(count, pads, 0) && AtLeast(count, strides) &&
                 AtLeast(count, dilations)
             ? kOk
             : CUDNN_STATUS_BAD_PARAM;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t,
                                            int groups) {
  return groups > 0 ? kOk : CUDNN_STATUS_BAD_PARAM;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t,
                                          cudnnMathType_t) {
  return kOk;
}
cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* d) {
  *d = NewHandle<cudnnActivationDescriptor_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t,
                                           cudnnActivationMode_t,
                                           cudnnNanPropagation_t, double) {
  return kOk;
}
cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t* d) {
  *d = NewHandle<cudnnPoolingDescriptor_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t,
                                          cudnnPoolingMode_t,
                                          cudnnNanPropagation_t, int count,
                                          const int* window, const int* pads,
                                          const int* strides) {
  return AtLeast(count, window) && AtLeast(count, pads, 0) &&
                 AtLeast(count, strides)
             ? kOk
             : CUDNN_STATUS_BAD_PARAM;
}

cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnFilterDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    const int requested, int* returned,
    cudnnConvolutionFwdAlgoPerf_t* results) {
  *returned = requested > 0 ? 1 : 0;
  if (requested > 0) {
    results[0] = {};
    results[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    results[0].status = kOk;
    results[0].memory = 0;
  }
  return kOk;
}
cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t, const void*, const cudnnTensorDescriptor_t, const void*,
    const cudnnFilterDescriptor_t, const void*,
    const cudnnConvolutionDescriptor_t, cudnnConvolutionFwdAlgo_t, void*,
    size_t, const void*, const cudnnTensorDescriptor_t, void*) {
  return kOk;
}
cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t, const void*, const cudnnTensorDescriptor_t, const void*,
    const cudnnFilterDescriptor_t, const void*,
    const cudnnConvolutionDescriptor_t, cudnnConvolutionFwdAlgo_t, void*,
    size_t, const void*, const cudnnTensorDescriptor_t, const void*,
    const cudnnTensorDescriptor_t, const void*,
    const cudnnActivationDescriptor_t, const cudnnTensorDescriptor_t, void*) {
  return kOk;
}
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* results) {
  *returned = requested > 0 ? 1 : 0;
  if (requested > 0) {
    results[0] = {};
    results[0].algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    results[0].status = kOk;
    results[0].memory = 0;
  }
  return kOk;
}
cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t, const void*, const cudnnFilterDescriptor_t, const void*,
    const cudnnTensorDescriptor_t, const void*,
    const cudnnConvolutionDescriptor_t, cudnnConvolutionBwdDataAlgo_t, void*,
    size_t, const void*, const cudnnTensorDescriptor_t, void*) {
  return kOk;
}
cudnnStatus_t cudnnPoolingForward(cudnnHandle_t,
                                  const cudnnPoolingDescriptor_t, const void*,
                                  const cudnnTensorDescriptor_t, const void*,
                                  const void*, const cudnnTensorDescriptor_t,
                                  void*) {
  return kOk;
}

//===--- The graph API: refused -------------------------------------------===//

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t,
                                           cudnnBackendDescriptor_t*) {
  return kRefused;
}
cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t) {
  return kRefused;
}
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t,
                                       cudnnBackendAttributeName_t,
                                       cudnnBackendAttributeType_t, int64_t,
                                       const void*) {
  return kRefused;
}
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const,
                                       cudnnBackendAttributeName_t,
                                       cudnnBackendAttributeType_t, int64_t,
                                       int64_t*, void*) {
  return kRefused;
}
cudnnStatus_t cudnnBackendExecute(cudnnHandle_t, cudnnBackendDescriptor_t,
                                  cudnnBackendDescriptor_t) {
  return kRefused;
}

}  // extern "C"
