// libFuzzer target for the model server's gRPC tensor codec: any message
// (TF Serving's TensorProto, KServe's ModelInferRequest with typed or raw
// contents) must decode into tensors or fail with a status, never crash,
// hang or leak; what decodes must also encode back. Protobuf parses the
// bytes; the fuzzer reaches the codec with every field combination that
// parses. Built with clang (-fsanitize=fuzzer,address) by
// tools/fuzz/run_serving_fuzzer.sh (FUZZ_TARGET=proto).
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/serving/signature.h"
#include "kserve/grpc_predict_v2.pb.h"
#include "lib/serving/tensor_proto_codec.h"
#include "tensorflow/tensor.pb.h"

namespace {

using asyncrt::DType;
using asyncrt::serving::TensorSpec;

// The input spec the first byte picks: known and unknown dtypes and shapes.
TensorSpec PickSpec(uint8_t choice) {
  switch (choice % 7) {
    case 0: return {"x", DType::kF32, std::vector<int64_t>{-1, 4}};
    case 6: return {"x", DType::kString, std::vector<int64_t>{-1}};
    case 1: return {"x", DType::kInvalid, std::nullopt};
    case 2: return {"x", DType::kI64, std::vector<int64_t>{2}};
    case 3: return {"x", DType::kI1, std::nullopt};
    case 4: return {"x", DType::kF16, std::vector<int64_t>{-1}};
    default: return {"x", DType::kBF16, std::nullopt};
  }
}

void Check(bool condition) {
  if (!condition) std::abort();
}

// Same dtype, shape and contents.
bool Same(const asyncrt::serving::ServingTensor& a,
          const asyncrt::serving::ServingTensor& b) {
  if (!(a.metadata() == b.metadata())) return false;
  if (a.IsString()) {
    auto x = a.strings().strings(), y = b.strings().strings();
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }
  return a.dense().DataSizeInBytes() == b.dense().DataSizeInBytes() &&
         std::memcmp(a.dense().data(), b.dense().data(),
                     a.dense().DataSizeInBytes()) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static asyncrt::HostAllocator* allocator =
      asyncrt::CreateMallocAllocator().release();
  const TensorSpec spec = PickSpec(data[0]);
  const void* bytes = data + 1;
  const int length = static_cast<int>(size - 1);
  if ((data[0] / 7) % 2 == 0) {
    tensorflow::TensorProto proto;
    if (!proto.ParseFromArray(bytes, length)) return 0;
    auto tensor = asyncrt::serving::FromTensorProto(proto, spec, *allocator);
    if (!tensor.ok()) return 0;
    // What decoded encodes, and decodes again to the same bytes.
    tensorflow::TensorProto again;
    Check(asyncrt::serving::ToTensorProto(*tensor, &again).ok());
    auto back = asyncrt::serving::FromTensorProto(again, spec, *allocator);
    Check(back.ok() && Same(*back, *tensor));
    return 0;
  }
  inference::ModelInferRequest request;
  if (!request.ParseFromArray(bytes, length)) return 0;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const std::string* raw = i < request.raw_input_contents_size()
                                 ? &request.raw_input_contents(i)
                                 : nullptr;
    auto tensor = asyncrt::serving::FromInferInput(request.inputs(i), raw,
                                                   spec, *allocator);
    if (!tensor.ok()) continue;
    inference::ModelInferResponse::InferOutputTensor output;
    std::string raw_out;
    Check(asyncrt::serving::ToInferOutput(*tensor, "y", &output, &raw_out).ok());
    // Typed contents: f16 and bf16 have none (an error, not a crash).
    (void)asyncrt::serving::ToInferOutput(*tensor, "y", &output, nullptr);
  }
  return 0;
}
