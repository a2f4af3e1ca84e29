// Tests of HostContext and what it owns or hands out: shared contexts,
// devices, diagnostics, the kernel registry, request/execution/resource
// contexts, cancellation, ParallelFor and the dispatch helpers.
#include "asyncrt/host_context/host_context.h"

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/parallel_for.h"
#include "asyncrt/host_context/resource_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

//===--- Test infrastructure ----------------------------------------------===//

class HostContextTest : public ::testing::TestWithParam<const char*> {
 protected:
  HostContextTest()
      : host_(
            [this](const DecodedDiagnostic& diagnostic) {
              std::lock_guard<std::mutex> lock(mutex_);
              diagnostics_.push_back(diagnostic.ToString());
            },
            CreateMallocAllocator(), *CreateWorkQueue(GetParam())) {}

  std::vector<std::string> Diagnostics() {
    std::lock_guard<std::mutex> lock(mutex_);
    return diagnostics_;
  }

  RCReference<RequestContext> NewRequest(int64_t id = 0) {
    auto request = RequestContextBuilder(&host_, &resources_, id).Build();
    EXPECT_TRUE(request.ok());
    return *std::move(request);
  }

  std::mutex mutex_;
  std::vector<std::string> diagnostics_;
  ResourceContext resources_;
  HostContext host_;
};

INSTANTIATE_TEST_SUITE_P(Queues, HostContextTest,
                         ::testing::Values("s", "mstd:2"),
                         [](const auto& info) {
                           return std::string(info.param) == "s" ? "s" : "mstd";
                         });

// A fixed location decoder standing in for the BEF location section.
class FakeLocations : public LocationHandler {
 public:
  std::optional<DecodedLocation> DecodeLocation(Location loc) const override {
    return DecodedLocation{"model.mlir", static_cast<int>(loc.data()), 7, ""};
  }
};

struct CountingSharedContext {
  explicit CountingSharedContext(HostContext* host) : host(host) {
    constructions.fetch_add(1);
  }
  ~CountingSharedContext() { destructions.fetch_add(1); }
  HostContext* host;
  static inline std::atomic<int> constructions{0};
  static inline std::atomic<int> destructions{0};
};

//===--- HostContext
//--------------------------------------------------------===//

TEST_P(HostContextTest, HostDeviceIsCpu0) {
  EXPECT_EQ(host_.host_device().name(), "CPU:0");
  EXPECT_EQ(host_.host_device().type(), "cpu");
  RCReference<Device> found = host_.device_manager().GetDevice("CPU:0");
  ASSERT_TRUE(found);
  EXPECT_EQ(found.get(), &host_.host_device());
}

TEST_P(HostContextTest, SharedContextIsCreatedOncePerType) {
  int before = CountingSharedContext::constructions.load();
  std::vector<std::thread> threads;
  std::vector<CountingSharedContext*> seen(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      seen[t] = &host_.GetOrCreateSharedContext<CountingSharedContext>();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(CountingSharedContext::constructions.load(), before + 1);
  for (auto* context : seen) EXPECT_EQ(context, seen[0]);
  EXPECT_EQ(seen[0]->host, &host_);
}

TEST(HostContextLifetimeTest, SharedContextsDieWithTheHost) {
  int before = CountingSharedContext::destructions.load();
  {
    auto host = CreateHostContext("s", "malloc");
    ASSERT_TRUE(host.ok());
    (*host)->GetOrCreateSharedContext<CountingSharedContext>();
  }
  EXPECT_EQ(CountingSharedContext::destructions.load(), before + 1);
}

TEST(HostContextLifetimeTest, CreateHostContextRejectsBadNames) {
  EXPECT_EQ(CreateHostContext("bogus", "malloc").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateHostContext("s", "bogus").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HostContextLifetimeTest, DestructionQuiescesTheQueue) {
  std::atomic<int> count{0};
  {
    auto host = *CreateHostContext("mstd:2", "malloc");
    for (int i = 0; i < 1000; ++i) {
      EnqueueWork(host.get(), [&] { count.fetch_add(1); });
    }
  }
  EXPECT_EQ(count.load(), 1000);
}

TEST_P(HostContextTest, EmitErrorReachesTheHandler) {
  host_.EmitError(DecodedDiagnostic(absl::InternalError("no location")));
  FakeLocations locations;
  host_.EmitError(DecodedDiagnostic(Location(&locations, 12).Decode(),
                                    absl::InternalError("with location")));
  EXPECT_THAT(Diagnostics(),
              ElementsAre("error: no location",
                          "model.mlir:12:7: error: with location"));
}

TEST_P(HostContextTest, EnqueueWorkWithResultAndAwait) {
  auto sum = EnqueueWorkWithResult(&host_, [] { return 40 + 2; });
  auto failed = EnqueueWorkWithResult(
      &host_, []() -> absl::StatusOr<int> { return absl::UnknownError("x"); });
  std::vector<RCReference<AsyncValue>> values = {sum, failed};
  host_.Await(values);
  EXPECT_EQ(sum.get(), 42);
  EXPECT_EQ(failed.GetError(), absl::UnknownError("x"));
}

TEST_P(HostContextTest, EnqueueBlockingWorkRuns) {
  std::atomic<bool> ran{false};
  EXPECT_TRUE(EnqueueBlockingWork(&host_, [&] { ran = true; }));
  host_.Quiesce();
  EXPECT_TRUE(ran.load());
}

//===--- RunWhenReady
//-------------------------------------------------------===//

TEST(RunWhenReadyTest, RunsInlineWhenAllAvailable) {
  auto a = MakeAvailableAsyncValueRef<int>(1);
  RCReference<AsyncValue> b = MakeErrorAsyncValueRef("err");
  std::vector<AsyncValue*> values = {a.GetAsyncValue(), b.get()};
  bool ran = false;
  RunWhenReady(absl::MakeConstSpan(values), [&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(RunWhenReadyTest, RunsAfterTheLastValue) {
  auto a = MakeUnconstructedAsyncValueRef<int>();
  auto b = MakeUnconstructedAsyncValueRef<int>();
  auto c = MakeAvailableAsyncValueRef<int>(3);
  std::vector<RCReference<AsyncValue>> values = {a, b, c};
  int runs = 0;
  RunWhenReady(absl::MakeConstSpan(values), [&] { ++runs; });
  a.emplace(1);
  EXPECT_EQ(runs, 0);
  b.SetError(absl::InternalError("b failed"));
  EXPECT_EQ(runs, 1);
}

TEST(RunWhenReadyTest, EmptyListRunsAtOnce) {
  bool ran = false;
  RunWhenReady(absl::Span<AsyncValue* const>(), [&] { ran = true; });
  EXPECT_TRUE(ran);
}

//===--- Kernel registry
//----------------------------------------------------===//

void KernelA(AsyncKernelFrame*) {}
void KernelB(AsyncKernelFrame*) {}

void RegisterTestKernels(KernelRegistry& registry) {
  ASSERT_TRUE(registry.AddKernel("test.static_kernel", KernelB).ok());
}
ASYNCRT_STATIC_KERNEL_REGISTRATION(RegisterTestKernels);

TEST(KernelRegistryTest, AddAndLookUp) {
  KernelRegistry registry;
  EXPECT_TRUE(registry.AddKernel("tfrt.add.i32", KernelA).ok());
  EXPECT_EQ(registry.GetKernel("tfrt.add.i32"), &KernelA);
  EXPECT_EQ(registry.GetKernel("tfrt.add.i64"), nullptr);
  EXPECT_THAT(registry.KernelNames(), ElementsAre("tfrt.add.i32"));
}

TEST(KernelRegistryTest, DuplicateNameIsAnError) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.AddKernel("k", KernelA).ok());
  absl::Status status = registry.AddKernel("k", KernelB);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'k'"));
  EXPECT_EQ(registry.GetKernel("k"), &KernelA);
  EXPECT_EQ(registry.AddKernel("null", nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KernelRegistryTest, StaticRegistrationAppliesToEachRegistry) {
  KernelRegistry first;
  KernelRegistry second;
  RegisterStaticKernels(first);
  RegisterStaticKernels(second);
  EXPECT_EQ(first.GetKernel("test.static_kernel"), &KernelB);
  EXPECT_EQ(second.GetKernel("test.static_kernel"), &KernelB);
}

//===--- Request, execution and resource contexts
//---------------------------===//

struct RequestDeadline {
  int64_t micros;
};

TEST_P(HostContextTest, RequestContextCarriesIdAndData) {
  RequestContextBuilder builder(&host_, &resources_, /*id=*/77);
  builder.EmplaceData<RequestDeadline>(RequestDeadline{100});
  builder.EmplaceData<RequestDeadline>(RequestDeadline{250});  // Replaces.
  builder.EmplaceData<std::string>("tenant-a");
  auto request = std::move(builder).Build();
  ASSERT_TRUE(request.ok());
  EXPECT_EQ((*request)->id(), 77);
  EXPECT_EQ((*request)->host(), &host_);
  EXPECT_EQ((*request)->resource_context(), &resources_);
  ASSERT_NE((*request)->GetDataIfExists<RequestDeadline>(), nullptr);
  EXPECT_EQ((*request)->GetDataIfExists<RequestDeadline>()->micros, 250);
  EXPECT_EQ(*(*request)->GetDataIfExists<std::string>(), "tenant-a");
  EXPECT_EQ((*request)->GetDataIfExists<int>(), nullptr);
}

TEST(RequestContextTest, BuildWithoutHostFails) {
  auto request = RequestContextBuilder(nullptr, nullptr).Build();
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(HostContextTest, ExecutionContextMovesItsReference) {
  RCReference<RequestContext> request = NewRequest();
  {
    ExecutionContext owner(request);
    EXPECT_EQ(request->NumRef(), 2u);
    ExecutionContext moved(std::move(owner));
    EXPECT_EQ(request->NumRef(), 2u);  // Moved, not copied.
    // The moved-from context still names the request, as a borrower.
    EXPECT_EQ(owner.request_context(), request.get());
    ExecutionContext assigned = ExecutionContext::Borrow(moved, {});
    assigned = std::move(moved);
    EXPECT_EQ(request->NumRef(), 2u);
    ExecutionContext copy(assigned);
    EXPECT_EQ(request->NumRef(), 3u);
  }
  EXPECT_EQ(request->NumRef(), 1u);
}

TEST_P(HostContextTest, CancelInstallsOneCancelledError) {
  RCReference<RequestContext> request = NewRequest();
  EXPECT_FALSE(request->IsCancelled());
  EXPECT_EQ(request->GetCancelAsyncValue(), nullptr);
  request->Cancel();
  ASSERT_TRUE(request->IsCancelled());
  AsyncValue* cancelled = request->GetCancelAsyncValue();
  EXPECT_TRUE(cancelled->IsError());
  EXPECT_EQ(cancelled->GetError(), absl::CancelledError("Cancelled"));
  request->Cancel();
  EXPECT_EQ(request->GetCancelAsyncValue(), cancelled);
}

TEST_P(HostContextTest, ConcurrentCancelAgreesOnOneValue) {
  for (int round = 0; round < 50; ++round) {
    RCReference<RequestContext> request = NewRequest(round);
    std::vector<AsyncValue*> seen(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        request->Cancel();
        seen[t] = request->GetCancelAsyncValue();
      });
    }
    for (auto& thread : threads) thread.join();
    for (AsyncValue* value : seen) EXPECT_EQ(value, seen[0]);
  }
}

TEST_P(HostContextTest, KernelsObserveCancellationFromAnotherTask) {
  // A kernel-like loop that checks for cancellation between steps stops
  // once another task cancels the request.
  RCReference<RequestContext> request = NewRequest();
  ExecutionContext exec_ctx(request);
  auto steps = MakeUnconstructedAsyncValueRef<int>();
  std::function<void(int)> step = [&](int n) {
    if (exec_ctx.IsCancelled()) {
      steps.emplace(n);
      return;
    }
    if (n == 10) request->Cancel();
    EnqueueWork(&host_, [&step, n] { step(n + 1); });
  };
  EnqueueWork(&host_, [&] { step(0); });
  std::vector<RCReference<AsyncValue>> values = {steps};
  host_.Await(values);
  EXPECT_EQ(steps.get(), 11);
  host_.Quiesce();
}

TEST_P(HostContextTest, EmitErrorAsyncReportsAtTheKernelLocation) {
  FakeLocations locations;
  ExecutionContext exec_ctx(NewRequest(), Location(&locations, 3));
  EXPECT_EQ(exec_ctx.host(), &host_);
  RCReference<AsyncValue> error =
      EmitErrorAsync(exec_ctx, absl::InvalidArgumentError("bad shape"));
  EXPECT_TRUE(error->IsError());
  EXPECT_EQ(error->GetError(), absl::InvalidArgumentError("bad shape"));
  EXPECT_THAT(Diagnostics(), ElementsAre("model.mlir:3:7: error: bad shape"));
}

struct OrderedResource {
  OrderedResource(std::string name, std::vector<std::string>* log)
      : name(std::move(name)), log(log) {}
  ~OrderedResource() { log->push_back(name); }
  std::string name;
  std::vector<std::string>* log;
};

TEST(ResourceContextTest, CreateGetAndTypeCheck) {
  ResourceContext resources;
  auto created = resources.CreateResource<int>("counter", 5);
  ASSERT_TRUE(created.ok());
  **created += 1;
  auto found = resources.GetResource<int>("counter");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(**found, 6);
  EXPECT_EQ(resources.GetResource<float>("counter").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(resources.GetResource<int>("missing").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(resources.CreateResource<int>("counter", 1).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(ResourceContextTest, GetOrCreateIsRaceFree) {
  ResourceContext resources;
  std::vector<std::string*> seen(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      seen[t] = *resources.GetOrCreateResource<std::string>("once", "v");
    });
  }
  for (auto& thread : threads) thread.join();
  for (auto* value : seen) EXPECT_EQ(value, seen[0]);
}

TEST(ResourceContextTest, DestroyedInReverseCreationOrder) {
  std::vector<std::string> log;
  {
    ResourceContext resources;
    ASSERT_TRUE(
        resources.CreateResource<OrderedResource>("a", "first", &log).ok());
    ASSERT_TRUE(
        resources.CreateResource<OrderedResource>("b", "second", &log).ok());
    ASSERT_TRUE(
        resources.GetOrCreateResource<OrderedResource>("c", "third", &log)
            .ok());
  }
  EXPECT_THAT(log, ElementsAre("third", "second", "first"));
}

//===--- Devices
//--------------------------------------------------------------===//

RCReference<Device> MakeDevice(const std::string& type, int index) {
  DeviceAttributes attributes;
  attributes.type = type;
  attributes.index = index;
  return MakeRef<Device>(std::move(attributes));
}

TEST(DeviceManagerTest, MaybeAddKeepsTheFirstDevice) {
  DeviceManager devices;
  RCReference<Device> gpu = devices.MaybeAddDevice(MakeDevice("gpu", 0));
  RCReference<Device> again = devices.MaybeAddDevice(MakeDevice("gpu", 0));
  EXPECT_EQ(gpu.get(), again.get());
  EXPECT_FALSE(devices.GetDevice("GPU:1"));
  devices.MaybeAddDevice(MakeDevice("gpu", 1));
  auto all = devices.ListDevices();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->name(), "GPU:0");
  EXPECT_EQ(all[1]->name(), "GPU:1");
}

TEST(DeviceTest, NamesTypeAndAttributes) {
  DeviceAttributes attributes;
  attributes.type = "my_accel2";
  attributes.index = 3;
  attributes.memory_limit_bytes = uint64_t{3} << 30;
  attributes.locality.numa_node = 1;
  attributes.locality.bus_id = "0000:17:00.0";
  attributes.locality.links.push_back({"MY_ACCEL2:2", "nvlink", 4});
  attributes.physical_description = "a test accelerator";
  auto device = MakeRef<Device>(attributes);
  EXPECT_EQ(device->name(), "MY_ACCEL2:3");
  EXPECT_EQ(device->full_name(), "/device:MY_ACCEL2:3");
  EXPECT_EQ(device->type(), "my_accel2");
  EXPECT_EQ(device->index(), 3);
  EXPECT_EQ(device->memory_limit_bytes(), uint64_t{3} << 30);
  EXPECT_EQ(device->locality().numa_node, 1);
  EXPECT_EQ(device->locality().bus_id, "0000:17:00.0");
  ASSERT_EQ(device->locality().links.size(), 1u);
  EXPECT_EQ(device->physical_description(), "a test accelerator");
  const std::string line = device->DebugString();
  EXPECT_THAT(line, HasSubstr("/device:MY_ACCEL2:3 type=my_accel2 "
                              "memory_limit=3.0GiB numa_node=1 "
                              "bus_id=0000:17:00.0 links=MY_ACCEL2:2/nvlink "));
  EXPECT_THAT(line, HasSubstr("\"a test accelerator\""));
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(DeviceTest, IncarnationsAreNonZeroAndNewForEachDevice) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    RCReference<Device> device = MakeDevice("cpu", 0);
    EXPECT_NE(device->incarnation(), 0u);
    seen.insert(device->incarnation());
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(DeviceTest, HostCpuHasMemoryAndADescription) {
  DeviceAttributes host = HostCpuAttributes();
  EXPECT_EQ(host.type, "cpu");
  EXPECT_EQ(host.index, 0);
  EXPECT_GT(host.memory_limit_bytes, uint64_t{1} << 20);
  EXPECT_GE(host.locality.numa_node, 0);
  EXPECT_THAT(host.physical_description, HasSubstr("hardware threads"));
}

TEST(DeviceTest, ParsesTensorFlowsNameForms) {
  for (const char* name : {"GPU:1", "gpu:1", "/device:GPU:1", "/gpu:1",
                           "/job:localhost/replica:0/task:0/device:GPU:1"}) {
    absl::StatusOr<ParsedDeviceName> parsed = ParseDeviceName(name);
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
    EXPECT_EQ(parsed->type, "gpu") << name;
    EXPECT_EQ(parsed->index, 1) << name;
  }
  for (const char* name : {"", "GPU", "GPU:", ":0", "GPU:x", "GPU:-1", "G-PU:0",
                           "/device:", "GPU:99999999999", "1GPU:0"}) {
    absl::StatusOr<ParsedDeviceName> parsed = ParseDeviceName(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("invalid device name"));
  }
}

TEST(DeviceManagerTest, FindDeviceTakesAnyFormAndNamesTheKnownDevices) {
  DeviceManager devices;
  RCReference<Device> cpu = devices.MaybeAddDevice(MakeDevice("cpu", 0));
  RCReference<Device> gpu = devices.MaybeAddDevice(MakeDevice("gpu", 0));
  for (const char* name : {"GPU:0", "/device:gpu:0", "/gpu:0"}) {
    absl::StatusOr<RCReference<Device>> found = devices.FindDevice(name);
    ASSERT_TRUE(found.ok()) << name << ": " << found.status();
    EXPECT_EQ(found->get(), gpu.get()) << name;
  }
  absl::StatusOr<RCReference<Device>> missing = devices.FindDevice("GPU:7");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("no device 'GPU:7'; the devices are CPU:0, GPU:0"));
  EXPECT_EQ(devices.FindDevice("nonsense").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceManagerTest, ConcurrentAddsKeepOneDevicePerName) {
  DeviceManager devices;
  std::vector<std::thread> threads;
  std::vector<RCReference<Device>> winners(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        RCReference<Device> added =
            devices.MaybeAddDevice(MakeDevice("gpu", i));
        if (i == 0) winners[t] = std::move(added);
        (void)devices.FindDevice(absl::StrCat("/device:GPU:", i));
        (void)devices.ListDevices();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(devices.ListDevices().size(), 50u);
  for (const RCReference<Device>& winner : winners) {
    EXPECT_EQ(winner.get(), devices.GetDevice("GPU:0").get());
  }
}

//===--- ParallelFor
//----------------------------------------------------------===//

TEST_P(HostContextTest, ParallelForCoversTheRangeOnce) {
  for (size_t total : {0u, 1u, 7u, 1000u, 100003u}) {
    std::vector<std::atomic<int>> hits(total);
    std::atomic<int> blocks{0};
    AsyncValueRef<Chain> done = ParallelFor(
        &host_, total, BlockSizes::Min(64), [&](size_t begin, size_t end) {
          ASSERT_LT(begin, end);
          blocks.fetch_add(1);
          for (size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
        });
    std::vector<RCReference<AsyncValue>> values = {done};
    host_.Await(values);
    for (size_t i = 0; i < total; ++i) {
      ASSERT_EQ(hits[i].load(), 1) << i;
    }
    if (total == 0) {
      EXPECT_EQ(blocks.load(), 0);
    }
  }
}

TEST_P(HostContextTest, ParallelForFixedBlocks) {
  std::mutex mutex;
  std::vector<std::pair<size_t, size_t>> blocks;
  int done_calls = 0;
  ParallelFor(
      &host_, 10, BlockSizes::Fixed(4),
      [&](size_t begin, size_t end) {
        std::lock_guard<std::mutex> lock(mutex);
        blocks.emplace_back(begin, end);
      },
      [&] { ++done_calls; });
  host_.Quiesce();
  std::sort(blocks.begin(), blocks.end());
  EXPECT_THAT(blocks, ElementsAre(std::pair<size_t, size_t>(0, 4),
                                  std::pair<size_t, size_t>(4, 8),
                                  std::pair<size_t, size_t>(8, 10)));
  EXPECT_EQ(done_calls, 1);
}

TEST(BlockSizesTest, MinBalancesAcrossWorkers) {
  EXPECT_EQ(BlockSizes::Fixed(10).BlockSize(1000, 8), 10u);
  EXPECT_EQ(BlockSizes::Min(10).BlockSize(1000, 2), 125u);  // 8 blocks.
  EXPECT_EQ(BlockSizes::Min(500).BlockSize(1000, 2), 500u);
  EXPECT_EQ(BlockSizes::Fixed(0).BlockSize(5, 1), 1u);
}

}  // namespace
}  // namespace asyncrt
