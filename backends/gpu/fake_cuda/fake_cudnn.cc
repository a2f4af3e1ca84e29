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
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t,
                                         cudnnTensorFormat_t, cudnnDataType_t,
                                         int n, int c, int h, int w) {
  return n > 0 && c > 0 && h > 0 && w > 0 ? kOk : CUDNN_STATUS_BAD_PARAM;
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
  *d = NewHandle<cudnnFilterDescriptor_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t,
                                         cudnnDataType_t, cudnnTensorFormat_t,
                                         int k, int c, int h, int w) {
  return k > 0 && c > 0 && h > 0 && w > 0 ? kOk : CUDNN_STATUS_BAD_PARAM;
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(
    cudnnConvolutionDescriptor_t* d) {
  *d = NewHandle<cudnnConvolutionDescriptor_t>();
  return kOk;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t) {
  return kOk;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(
    cudnnConvolutionDescriptor_t, int pad_h, int pad_w, int u, int v,
    int dilation_h, int dilation_w, cudnnConvolutionMode_t, cudnnDataType_t) {
  return pad_h >= 0 && pad_w >= 0 && u > 0 && v > 0 && dilation_h > 0 &&
                 dilation_w > 0
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
cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t,
                                          cudnnPoolingMode_t,
                                          cudnnNanPropagation_t, int height,
                                          int width, int pad_h, int pad_w,
                                          int stride_h, int stride_w) {
  return height > 0 && width > 0 && pad_h >= 0 && pad_w >= 0 &&
                 stride_h > 0 && stride_w > 0
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
