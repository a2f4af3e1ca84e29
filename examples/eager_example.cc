// Eager execution from C++: what an application embedding AsyncRT writes
// to run ops one by one.
//
//   build/bin/eager_example
#include <cstdio>
#include <string>

#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"

int main() {
  // Every linked op library registers itself: here the CPU test ops of
  // asyncrt::test_kernels. The "cpu" device's op handler is on by default.
  asyncrt::RuntimeOptions options;
  options.work_queue = "mstd:2";
  auto runtime = asyncrt::Runtime::Create(options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(runtime.status().message()).c_str());
    return 1;
  }
  asyncrt::CoreRuntime& rt = (*runtime)->core_runtime();
  asyncrt::OpHandler* cpu = rt.GetOpHandler("cpu");
  auto exec_ctx = (*runtime)->CreateExecutionContext();
  if (!exec_ctx.ok()) return 1;

  float a_values[] = {1, 2, 3, 4};
  auto a = rt.MakeDenseTensorHandle<float>({2, 2}, a_values);
  if (!a.ok()) return 1;

  // c = a x a, then d = c + c. Ops return at once; results fill in
  // asynchronously, and shape errors show up in the result immediately.
  asyncrt::OpAttrs matmul_attrs;
  matmul_attrs.Set("transpose_a", false);
  matmul_attrs.Set("transpose_b", false);
  asyncrt::TensorHandle matmul_args[] = {a->CopyRef(), a->CopyRef()};
  asyncrt::TensorHandle c;
  rt.Execute(*exec_ctx, "tfrt_test.matmul", cpu, matmul_args,
             matmul_attrs.Freeze(), absl::MakeSpan(&c, 1), nullptr);
  std::printf("c is %s before it is awaited\n",
              c.IsMetadataAvailable()
                  ? c.GetAvailableMetadata().DebugString().c_str()
                  : "unknown");

  // A prepared op skips the name lookup in a loop.
  auto add = rt.MakeOp("tfrt_test.add", cpu);
  if (!add.ok()) return 1;
  asyncrt::TensorHandle add_args[] = {c.CopyRef(), c.CopyRef()};
  asyncrt::TensorHandle d;
  (*add)(*exec_ctx, add_args, asyncrt::OpAttrsRef(), absl::MakeSpan(&d, 1),
         nullptr);

  const asyncrt::Tensor* result = rt.Await(d);
  if (!result) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(d.GetErrorIfPresent()->message()).c_str());
    return 1;
  }
  std::printf("%s\n", result->ToString().c_str());
  return 0;
}
