// libFuzzer target for the model server's request parsers: any body must
// parse into tensors or fail with a status, never crash, hang or leak; what
// parses must also serialize back. Built with clang
// (-fsanitize=fuzzer,address) by tools/fuzz/run_serving_fuzzer.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>

#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/serving/json_codec.h"
#include "asyncrt/serving/signature.h"

namespace {

using asyncrt::DType;
using asyncrt::serving::Signature;

// Signatures the first input byte picks from: known and unknown dtypes and
// shapes, one input and two, strings.
Signature PickSignature(uint8_t choice) {
  Signature signature;
  switch (choice % 5) {
    case 0:
      signature.inputs = {{"x", DType::kF32, std::vector<int64_t>{-1, 4}}};
      signature.outputs = {{"y", DType::kF32, std::nullopt}};
      break;
    case 1:
      signature.inputs = {{"x", DType::kInvalid, std::nullopt}};
      signature.outputs = {{"y", DType::kInvalid, std::nullopt}};
      break;
    case 2:
      signature.inputs = {{"a", DType::kI64, std::nullopt},
                          {"b", DType::kI1, std::vector<int64_t>{-1}}};
      signature.outputs = {{"a", DType::kI64, std::nullopt},
                           {"b", DType::kI1, std::nullopt}};
      break;
    case 3:
      // Strings, written back as base64 (a "_bytes" output).
      signature.inputs = {{"x", DType::kString, std::nullopt}};
      signature.outputs = {{"x_bytes", DType::kString, std::nullopt}};
      break;
    default:
      signature.inputs = {{"x", DType::kF16, std::nullopt}};
      signature.outputs = {{"y", DType::kF16, std::nullopt}};
      break;
  }
  return signature;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static asyncrt::HostAllocator* allocator =
      asyncrt::CreateMallocAllocator().release();
  const Signature signature = PickSignature(data[0]);
  const absl::string_view body(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  switch ((data[0] / 5) % 3) {
    case 0: {
      auto request =
          asyncrt::serving::ParseTfServingPredict(body, signature, *allocator);
      if (request.ok()) {
        // What parsed is what a model of this signature could return.
        (void)asyncrt::serving::WriteTfServingPredict(
            request->inputs, signature, request->row_format);
      }
      break;
    }
    case 1: {
      // Bit 7 of the first byte: the binary-data extension, the JSON's
      // length in the next two bytes.
      std::optional<size_t> json_length;
      absl::string_view text = body;
      if ((data[0] & 0x80) != 0 && text.size() >= 2) {
        json_length = static_cast<uint8_t>(text[0]) |
                      (static_cast<size_t>(static_cast<uint8_t>(text[1])) << 8);
        text.remove_prefix(2);
      }
      auto request = asyncrt::serving::ParseKServeInfer(text, signature,
                                                        *allocator, json_length);
      if (request.ok()) {
        (void)asyncrt::serving::WriteKServeInfer("m", "1", request->inputs,
                                                 signature, &*request);
      }
      break;
    }
    default:
      (void)asyncrt::serving::ParseSignatureJson(body);
      break;
  }
  return 0;
}
