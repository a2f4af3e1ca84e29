// A stand-in for cuBLASLt (libcublasLt.so.13) beside fake_cudart.cc: a
// handle is created, and every matrix product is refused as not supported
// (an error on the op, which the host path must report).
#include <cublasLt.h>

#include <cstdint>

namespace {
constexpr cublasStatus_t kRefused = CUBLAS_STATUS_NOT_SUPPORTED;
}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  static int the_handle;
  *handle = reinterpret_cast<cublasLtHandle_t>(&the_handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t) {
  return CUBLAS_STATUS_SUCCESS;
}
const char* cublasLtGetStatusName(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS"
                                         : "CUBLAS_STATUS_NOT_SUPPORTED";
}
const char* cublasLtGetStatusString(cublasStatus_t) {
  return "not supported by the fake cuBLASLt";
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t,
                              const void*, const void*, cublasLtMatrixLayout_t,
                              const void*, cublasLtMatrixLayout_t, const void*,
                              const void*, cublasLtMatrixLayout_t, void*,
                              cublasLtMatrixLayout_t,
                              const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t) {
  return kRefused;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
    cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*, int*) {
  return kRefused;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t*,
                                        cublasComputeType_t, cudaDataType_t) {
  return kRefused;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t,
                                              cublasLtMatmulDescAttributes_t,
                                              const void*, size_t) {
  return kRefused;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t*) {
  return kRefused;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
    const void*, size_t) {
  return kRefused;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t*, cudaDataType,
                                          uint64_t, uint64_t, int64_t) {
  return kRefused;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t,
                                                cublasLtMatrixLayoutAttribute_t,
                                                const void*, size_t) {
  return kRefused;
}

}  // extern "C"
