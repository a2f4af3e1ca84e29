// Writes a small valid BEF file (every section and attribute kind) to
// argv[1]: the fuzzer's seed.
#include <cstdio>

#include "asyncrt/bef/bef_writer.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  asyncrt::bef::BefWriter w;
  uint32_t i32 = w.AddType("i32");
  uint32_t f =
      w.DeclareFunction("main", asyncrt::bef::FunctionKind::kBef, {i32}, {i32});
  uint32_t native = w.DeclareFunction(
      "native", asyncrt::bef::FunctionKind::kNative, {i32}, {i32});
  asyncrt::bef::FunctionBodySpec body;
  body.num_registers = 3;
  body.argument_registers = {0};
  asyncrt::bef::KernelSpec k;
  k.kernel_name = w.AddKernelName("tfrt.add.i32");
  k.location = w.AddLocation("seed.mlir", 3, 7);
  k.operands = {0, 0};
  k.results = {1};
  int32_t values[] = {1, 2};
  uint32_t array = w.AddArrayAttribute(
      asyncrt::bef::AttributeKind::kI32, 2,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(values), 8));
  uint32_t text = w.AddStringAttribute("text");
  k.attributes = {{w.AddString("a"), array},
                  {w.AddString("b"), w.AddAggregateAttribute({array, text})},
                  {w.AddString("c"), w.AddFunctionAttribute(native)}};
  asyncrt::bef::KernelSpec call = k;
  call.operands = {1};
  call.results = {2};
  call.attributes = {};
  call.functions = {native};
  body.kernels = {k, call};
  body.result_registers = {2};
  body.register_names = {"x", "y", "z"};
  w.DefineFunction(f, body);
  auto bytes = w.Finish();
  if (!bytes.ok()) return 1;
  FILE* out = std::fopen(argv[1], "wb");
  if (!out) return 1;
  std::fwrite(bytes->data(), 1, bytes->size(), out);
  return std::fclose(out) == 0 ? 0 : 1;
}
