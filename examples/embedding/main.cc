// embedding_example: runs one function of a BEF program with i32
// arguments, through the AsyncRT runtime library, and prints its results.
//
//   embedding_example program.bef main 1 2
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/runtime/runtime.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PROGRAM.bef FUNCTION [I32 ARGUMENT...]\n",
                 argv[0]);
    return 2;
  }
  asyncrt::RuntimeOptions options;
  options.work_queue = "mstd:2";
  auto runtime = asyncrt::Runtime::Create(options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(runtime.status().message()).c_str());
    return 1;
  }
  auto program = (*runtime)->LoadProgramFile(argv[1]);
  if (!program.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(program.status().message()).c_str());
    return 1;
  }

  std::vector<asyncrt::AsyncValueRef<int32_t>> arguments;
  std::vector<asyncrt::AsyncValue*> argument_values;
  for (int i = 3; i < argc; ++i) {
    arguments.push_back(asyncrt::MakeAvailableAsyncValueRef<int32_t>(
        static_cast<int32_t>(std::strtol(argv[i], nullptr, 10))));
    argument_values.push_back(arguments.back().GetAsyncValue());
  }
  // Results arrive asynchronously; Await blocks until they are all there.
  auto results = (*runtime)->Call(**program, argv[2], argument_values);
  if (!results.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(results.status().message()).c_str());
    return 1;
  }
  (*runtime)->Await(*results);
  int status = 0;
  for (const auto& result : *results) {
    if (const absl::Status* error = result->GetErrorIfPresent()) {
      std::printf("error: %s\n", std::string(error->message()).c_str());
      status = 1;
    } else if (result->IsType<int32_t>()) {
      std::printf("%d\n", result->get<int32_t>());
    } else {
      std::printf("(a value that is not i32)\n");
    }
  }
  return status;
}
