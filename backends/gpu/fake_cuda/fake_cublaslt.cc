// A stand-in for cuBLASLt (libcublasLt.so.13) beside fake_cudart.cc:
// handles, descriptors, layouts and preferences are made (attributes
// accepted), the heuristic offers one algorithm for any problem, and a
// product succeeds doing nothing. What runs is the plug-in's host side:
// operand checks, plans and their cache, epilogues.
#include <cublasLt.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace {

constexpr cublasStatus_t kOk = CUBLAS_STATUS_SUCCESS;

template <typename Handle>
Handle NewHandle() {
  static std::atomic<uintptr_t> next{0x3000};
  return reinterpret_cast<Handle>(next.fetch_add(16));
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = NewHandle<cublasLtHandle_t>();
  return kOk;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t) { return kOk; }
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
  return kOk;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
    cublasLtMatmulPreference_t, int requested,
    cublasLtMatmulHeuristicResult_t* results, int* returned) {
  *returned = requested > 0 ? 1 : 0;
  if (requested > 0) {
    std::memset(&results[0], 0, sizeof(results[0]));
    results[0].state = kOk;
    results[0].wavesCount = 1.f;
  }
  return kOk;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                        cublasComputeType_t, cudaDataType_t) {
  *desc = NewHandle<cublasLtMatmulDesc_t>();
  return kOk;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t) { return kOk; }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t,
                                              cublasLtMatmulDescAttributes_t,
                                              const void*, size_t) {
  return kOk;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(
    cublasLtMatmulPreference_t* preference) {
  *preference = NewHandle<cublasLtMatmulPreference_t>();
  return kOk;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t) {
  return kOk;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
    const void*, size_t) {
  return kOk;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t*, cudaDataType,
                                          uint64_t, uint64_t, int64_t) {
  return kOk;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t) {
  return kOk;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t,
                                                cublasLtMatrixLayoutAttribute_t,
                                                const void*, size_t) {
  return kOk;
}

}  // extern "C"
