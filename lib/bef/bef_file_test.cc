// Tests of the BEF writer and reader: a round trip of every table and
// attribute kind, the validation errors, and robustness against truncated
// and corrupted files at every byte position.
#include "asyncrt/bef/bef_file.h"

#include <atomic>
#include <complex>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "asyncrt/bef/bef_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::bef {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

//===--- Test infrastructure ----------------------------------------------===//

// main(%a: i32) -> (i32, !tfrt.chain) calls helper(%a) and a chain kernel;
// helper is native. Uses every attribute kind.
std::vector<uint8_t> SampleFile(bool debug_info = true) {
  BefWriter writer;
  uint32_t i32 = writer.AddType("i32");
  uint32_t chain = writer.AddType("!tfrt.chain");
  uint32_t main =
      writer.DeclareFunction("main", FunctionKind::kBef, {i32}, {i32, chain});
  uint32_t helper =
      writer.DeclareFunction("helper", FunctionKind::kNative, {i32}, {i32});

  std::vector<uint32_t> attributes;
  attributes.push_back(writer.AddI32Attribute(-7));
  attributes.push_back(writer.AddF64Attribute(0.5));
  attributes.push_back(writer.AddStringAttribute("hello"));
  attributes.push_back(writer.AddTypeAttribute("f32"));
  int32_t values[] = {1, 2, 3};
  attributes.push_back(writer.AddArrayAttribute(
      AttributeKind::kI32, 3,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(values),
                          sizeof(values))));
  float dense[] = {1.5f, 2.5f, 3.5f, 4.5f};
  int64_t shape[] = {2, 2};
  attributes.push_back(writer.AddDenseAttribute(
      AttributeKind::kF32, shape,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(dense),
                          sizeof(dense))));
  attributes.push_back(
      writer.AddAggregateAttribute({attributes[0], attributes[2]}));
  attributes.push_back(writer.AddFunctionAttribute(helper));
  attributes.push_back(writer.AddUnitAttribute());
  attributes.push_back(writer.AddBoolAttribute(true));
  int64_t partial_shape[] = {1, -1, 3};
  attributes.push_back(writer.AddShapeAttribute(partial_shape));
  attributes.push_back(writer.AddShapeAttribute(std::nullopt));

  FunctionBodySpec body;
  body.num_registers = 3;
  body.argument_registers = {0};
  KernelSpec call;
  call.kernel_name = writer.AddKernelName("tfrt.call");
  call.location = writer.AddLocation("prog.mlir", 4, 8);
  call.operands = {0};
  call.results = {1};
  call.functions = {helper};
  for (size_t a = 0; a < attributes.size(); ++a) {
    call.attributes.emplace_back(writer.AddString("attr" + std::to_string(a)),
                                 attributes[a]);
  }
  KernelSpec new_chain;
  new_chain.kernel_name = writer.AddKernelName("tfrt.new.chain");
  new_chain.location = writer.AddLocation("prog.mlir", 5, 3, "scope/chain");
  new_chain.results = {2};
  body.kernels = {call, new_chain};
  body.result_registers = {1, 2};
  body.register_names = {"a", "r", "ch"};
  body.register_types = {i32, i32, chain};
  writer.DefineFunction(main, std::move(body));
  auto bytes = writer.Finish(debug_info);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return *bytes;
}

//===--- Round trip
//---------------------------------------------------------===//

TEST(BefFileTest, StartsWithMagicAndVersion) {
  std::vector<uint8_t> bytes = SampleFile();
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(bytes[0], 0x0B);
  EXPECT_EQ(bytes[1], 0xEF);
  auto file = BefFile::Open(bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->version_major(), kVersionMajor);
}

TEST(BefFileTest, RoundTripsFunctionsAndKernels) {
  auto file_or = BefFile::Open(SampleFile());
  ASSERT_TRUE(file_or.ok()) << file_or.status();
  const BefFile& file = **file_or;
  ASSERT_EQ(file.functions().size(), 2u);
  const Function* main = file.GetFunction("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->kind, FunctionKind::kBef);
  ASSERT_EQ(main->argument_types.size(), 1u);
  EXPECT_EQ(file.type_name(main->argument_types[0]), "i32");
  EXPECT_EQ(file.type_name(main->result_types[1]), "!tfrt.chain");
  EXPECT_EQ(main->num_registers, 3u);
  ASSERT_EQ(main->kernels.size(), 2u);
  const Kernel& call = main->kernels[0];
  EXPECT_EQ(file.kernel_name(call.kernel_name), "tfrt.call");
  EXPECT_THAT(call.operands, ElementsAre(0u));
  EXPECT_THAT(call.results, ElementsAre(1u));
  EXPECT_THAT(call.functions, ElementsAre(1u));
  Location location = file.location(call.location);
  EXPECT_EQ(location.filename, "prog.mlir");
  EXPECT_EQ(location.line, 4u);
  EXPECT_EQ(location.column, 8u);
  EXPECT_EQ(location.name, "");
  EXPECT_EQ(file.location(main->kernels[1].location).name, "scope/chain");
  EXPECT_THAT(main->result_registers, ElementsAre(1u, 2u));
  ASSERT_TRUE(file.has_debug_info());
  ASSERT_EQ(main->register_names.size(), 3u);
  EXPECT_EQ(file.string(main->register_names[2]), "ch");
  ASSERT_EQ(main->register_types.size(), 3u);
  EXPECT_EQ(file.type_name(main->register_types[2]), "!tfrt.chain");
  const Function* helper = file.GetFunction("helper");
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(helper->kind, FunctionKind::kNative);
  EXPECT_TRUE(helper->kernels.empty());
}

TEST(BefFileTest, RoundTripsEveryAttributeKind) {
  auto file_or = BefFile::Open(SampleFile());
  ASSERT_TRUE(file_or.ok());
  const BefFile& file = **file_or;
  const Kernel& call = file.GetFunction("main")->kernels[0];
  ASSERT_EQ(call.attributes.size(), 12u);
  auto attr = [&](int i) -> const Attribute& {
    EXPECT_EQ(file.string(call.attributes[i].name), "attr" + std::to_string(i));
    return file.attribute(call.attributes[i].attribute);
  };
  EXPECT_EQ(attr(0).kind, AttributeKind::kI32);
  EXPECT_EQ(attr(0).scalar<int32_t>(), -7);
  EXPECT_EQ(attr(1).scalar<double>(), 0.5);
  EXPECT_EQ(attr(2).bytes, "hello");
  EXPECT_EQ(file.type_name(attr(3).index), "f32");
  EXPECT_THAT(attr(4).array<int32_t>(), ElementsAre(1, 2, 3));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(attr(4).bytes.data()) % 8, 0u);
  EXPECT_THAT(attr(5).shape, ElementsAre(2, 2));
  EXPECT_THAT(attr(5).array<float>(), ElementsAre(1.5f, 2.5f, 3.5f, 4.5f));
  ASSERT_EQ(attr(6).elements.size(), 2u);
  EXPECT_EQ(file.attribute(attr(6).elements[1]).bytes, "hello");
  EXPECT_EQ(attr(7).kind, AttributeKind::kFunction);
  EXPECT_EQ(attr(7).index, 1u);
  EXPECT_EQ(attr(8).kind, AttributeKind::kUnit);
  EXPECT_TRUE(attr(9).scalar<bool>());
  EXPECT_EQ(attr(10).kind, AttributeKind::kShape);
  EXPECT_EQ(attr(10).bits, 1u);  // Ranked.
  EXPECT_THAT(attr(10).shape, ElementsAre(1, -1, 3));
  EXPECT_EQ(attr(11).kind, AttributeKind::kShape);
  EXPECT_EQ(attr(11).bits, 0u);  // Unranked.
  EXPECT_TRUE(attr(11).shape.empty());
}

TEST(BefFileTest, WithoutDebugInfo) {
  auto file = BefFile::Open(SampleFile(/*debug_info=*/false));
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE((*file)->has_debug_info());
  EXPECT_TRUE((*file)->GetFunction("main")->register_names.empty());
  const Function* main = (*file)->GetFunction("main");
  EXPECT_EQ((*file)->location(main->kernels[1].location).name, "");
}

TEST(BefFileTest, RejectsLocationNamesOutOfRange) {
  // Points the named location's entry in the location names section (found
  // through the header) past the strings.
  std::vector<uint8_t> bytes = SampleFile();
  uint32_t sections =
      bytes[4] | bytes[5] << 8 | bytes[6] << 16 | bytes[7] << 24;
  bool found = false;
  for (uint32_t i = 0; i < sections; ++i) {
    const uint8_t* entry = bytes.data() + kHeaderSize + i * kSectionEntrySize;
    if (entry[0] != static_cast<uint8_t>(SectionId::kLocationNames)) continue;
    uint32_t offset =
        entry[4] | entry[5] << 8 | entry[6] << 16 | entry[7] << 24;
    // u32 count, then the names; the second is 1 + a string index.
    for (int b = 0; b < 4; ++b) bytes[offset + 8 + b] = 0xff;
    found = true;
  }
  ASSERT_TRUE(found);
  auto file = BefFile::Open(bytes);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()),
              HasSubstr("name string index"));
}

TEST(BefFileTest, UsesAlignedCallerBufferInPlace) {
  std::vector<uint8_t> bytes = SampleFile();
  auto owner = std::make_shared<std::vector<uint8_t>>(bytes);
  auto file = BefFile::Open(*owner, owner);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->GetFunction("main")->name.data() >=
                reinterpret_cast<const char*>(owner->data()),
            true);
}

TEST(BefFileTest, DecodesEachAttributeOnceAndKeepsItsBytesAlive) {
  auto file = BefFile::Open(SampleFile());
  ASSERT_TRUE(file.ok());
  // Copied bytes are owned through keep_alive, so views may outlive the file.
  std::shared_ptr<const void> bytes = (*file)->keep_alive();
  ASSERT_NE(bytes, nullptr);
  const Attribute& first = (*file)->attribute(0);
  const Attribute& second = (*file)->attribute(1);
  int decodes = 0;
  auto decode = [&]() -> std::shared_ptr<const void> {
    ++decodes;
    return std::make_shared<int>(decodes);
  };
  auto a = (*file)->GetOrDecode(first, decode);
  auto again = (*file)->GetOrDecode(first, decode);
  auto b = (*file)->GetOrDecode(second, decode);
  EXPECT_EQ(a, again);
  EXPECT_NE(a, b);
  EXPECT_EQ(decodes, 2);
  // A failed (null) decode is not kept.
  const Attribute& third = (*file)->attribute(2);
  EXPECT_EQ((*file)->GetOrDecode(third, [] { return nullptr; }), nullptr);
  EXPECT_NE((*file)->GetOrDecode(third, decode), nullptr);
  file->reset();
  EXPECT_EQ(bytes.use_count(), 1);  // Still alive here.
}

// Threads racing to decode the same attributes (the first calls of a
// program run from several workers): each attribute decodes once and every
// thread sees that one value. Run under ThreadSanitizer in make test.
TEST(BefFileTest, ConcurrentDecodesAgreeOnOneValue) {
  auto file = BefFile::Open(SampleFile());
  ASSERT_TRUE(file.ok());
  const size_t count = (*file)->num_attributes();
  ASSERT_GE(count, 2u);
  std::atomic<int> decodes{0};
  constexpr int kThreads = 8;
  std::vector<std::vector<const void*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 100; ++round) {
        for (size_t i = 0; i < count; ++i) {
          std::shared_ptr<const void> value = (*file)->GetOrDecode(
              (*file)->attribute(i), [&]() -> std::shared_ptr<const void> {
                decodes.fetch_add(1);
                return std::make_shared<size_t>(i);
              });
          if (round == 0) seen[t].push_back(value.get());
          EXPECT_EQ(*static_cast<const size_t*>(value.get()), i);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(decodes.load(), static_cast<int>(count));
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
}

//===--- Validation
//---------------------------------------------------------===//

TEST(BefFileTest, RejectsBadMagicAndVersion) {
  std::vector<uint8_t> bytes = SampleFile();
  bytes[0] = 'x';
  EXPECT_THAT(std::string(BefFile::Open(bytes).status().message()),
              HasSubstr("bad magic number"));
  bytes = SampleFile();
  bytes[2] = kVersionMajor + 1;
  EXPECT_THAT(std::string(BefFile::Open(bytes).status().message()),
              HasSubstr("unsupported BEF version"));
  EXPECT_EQ(BefFile::Open({}).status().code(), absl::StatusCode::kDataLoss);
}

TEST(BefFileTest, RejectsUseBeforeDefinition) {
  BefWriter writer;
  uint32_t f = writer.DeclareFunction("f", FunctionKind::kBef, {}, {});
  FunctionBodySpec body;
  body.num_registers = 2;
  KernelSpec user;
  user.kernel_name = writer.AddKernelName("use");
  user.location = writer.AddLocation("x.mlir", 1, 1);
  user.operands = {1};  // Defined only by the next kernel.
  KernelSpec definer = user;
  definer.operands = {};
  definer.results = {1};
  body.kernels = {user, definer};
  writer.DefineFunction(f, body);
  auto status = BefFile::Open(*writer.Finish()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("uses register 1 before it is defined"));
}

TEST(BefFileTest, RejectsDoubleDefinitionAndUndefinedResults) {
  BefWriter writer;
  uint32_t f = writer.DeclareFunction("f", FunctionKind::kBef, {},
                                      {writer.AddType("i32")});
  FunctionBodySpec body;
  body.num_registers = 2;
  KernelSpec kernel;
  kernel.kernel_name = writer.AddKernelName("k");
  kernel.location = writer.AddLocation("x.mlir", 1, 1);
  kernel.results = {0, 0};
  body.kernels = {kernel};
  body.result_registers = {0};
  writer.DefineFunction(f, body);
  EXPECT_THAT(std::string(BefFile::Open(*writer.Finish()).status().message()),
              HasSubstr("register 0 defined twice"));
}

TEST(BefFileTest, RejectsBooleansOtherThanZeroAndOne) {
  // Kernels read booleans in place as C++ bool, for which any other byte
  // is undefined behaviour.
  BefWriter writer;
  writer.AddScalarAttribute(AttributeKind::kBool, 0x80);
  EXPECT_THAT(std::string(BefFile::Open(*writer.Finish()).status().message()),
              HasSubstr("bool attribute with value 128"));
  BefWriter arrays;
  uint8_t values[] = {1, 2};
  arrays.AddArrayAttribute(AttributeKind::kBool, 2, values);
  EXPECT_THAT(std::string(BefFile::Open(*arrays.Finish()).status().message()),
              HasSubstr("bool element that is neither 0 nor 1"));
}

TEST(BefFileTest, ComplexKindsAreDenseElementsOnly) {
  BefWriter dense_writer;
  std::complex<double> values[] = {{1.0, 2.0}, {-3.0, 0.5}};
  int64_t shape[] = {2};
  dense_writer.AddDenseAttribute(
      AttributeKind::kComplex128, shape,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(values),
                          sizeof(values)));
  auto file = BefFile::Open(*dense_writer.Finish());
  ASSERT_TRUE(file.ok()) << file.status();
  const Attribute& dense = (*file)->attribute(0);
  EXPECT_EQ(dense.element_kind, AttributeKind::kComplex128);
  EXPECT_THAT(dense.array<std::complex<double>>(),
              ElementsAre(std::complex<double>(1.0, 2.0),
                          std::complex<double>(-3.0, 0.5)));
  EXPECT_FALSE(dense.IsScalar());

  BefWriter scalar_writer;
  scalar_writer.AddScalarAttribute(AttributeKind::kComplex64, 0);
  EXPECT_THAT(
      std::string(BefFile::Open(*scalar_writer.Finish()).status().message()),
      HasSubstr("attribute kind 21 is only valid for elements"));

  BefWriter array_writer;
  uint8_t bytes[8] = {};
  array_writer.AddArrayAttribute(AttributeKind::kComplex64, 1, bytes);
  EXPECT_THAT(
      std::string(BefFile::Open(*array_writer.Finish()).status().message()),
      HasSubstr("array of complex elements"));
}

TEST(BefFileTest, RoundTripsCompilationUnits) {
  BefWriter writer;
  std::string nested[] = {"inner", "main"};
  writer.AddCompilationUnitAttribute("kernel", nested,
                                     "module @kernel attributes {}");
  auto file = BefFile::Open(*writer.Finish());
  ASSERT_TRUE(file.ok()) << file.status();
  const Attribute& unit = (*file)->attribute(0);
  EXPECT_EQ(unit.kind, AttributeKind::kCompilationUnit);
  EXPECT_EQ((*file)->string(unit.index), "kernel");
  EXPECT_EQ(unit.bytes, "module @kernel attributes {}");
  ASSERT_EQ(unit.elements.size(), 2u);
  EXPECT_EQ((*file)->string(unit.elements[0]), "inner");
  EXPECT_EQ((*file)->string(unit.elements[1]), "main");
}

// A function of two kernels with `streams` (entry first), written and read.
absl::StatusOr<std::unique_ptr<BefFile>> FileWithStreams(
    std::vector<uint32_t> streams) {
  BefWriter writer;
  uint32_t chain = writer.AddType("!tfrt.chain");
  uint32_t f = writer.DeclareFunction("f", FunctionKind::kBef, {}, {chain});
  FunctionBodySpec body;
  body.num_registers = 2;
  for (uint32_t reg : {0u, 1u}) {
    KernelSpec kernel;
    kernel.kernel_name = writer.AddKernelName("tfrt.new.chain");
    kernel.location = writer.AddLocation("prog.mlir", 1, 1);
    kernel.results = {reg};
    body.kernels.push_back(kernel);
  }
  body.result_registers = {1};
  body.kernel_streams = std::move(streams);
  writer.DefineFunction(f, std::move(body));
  auto bytes = writer.Finish(/*include_debug_info=*/false);
  if (!bytes.ok()) return bytes.status();
  return BefFile::Open(*bytes);
}

TEST(BefFileTest, KernelStreamsRoundTripEvenWithoutDebugInfo) {
  auto file = FileWithStreams({0, 0, 3});
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT((*file)->GetFunction("f")->kernel_streams, ElementsAre(0, 0, 3));
  auto plain = FileWithStreams({});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE((*plain)->GetFunction("f")->kernel_streams.empty());
  // One stream per kernel plus the entry's, or none.
  EXPECT_THAT(std::string(FileWithStreams({0, 1}).status().message()),
              HasSubstr("kernel streams do not match the kernels"));
}

TEST(BefFileTest, WriterRejectsUndefinedFunctions) {
  BefWriter writer;
  writer.DeclareFunction("missing", FunctionKind::kBef, {}, {});
  EXPECT_EQ(writer.Finish().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

//===--- Robustness
//-----------------------------------------------------------===//

TEST(BefFileRobustnessTest, EveryTruncationIsACleanError) {
  std::vector<uint8_t> bytes = SampleFile();
  for (size_t size = 0; size < bytes.size(); ++size) {
    auto file = BefFile::Open(absl::MakeConstSpan(bytes).subspan(0, size));
    ASSERT_FALSE(file.ok()) << "truncated to " << size;
    EXPECT_EQ(file.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(file.status().message()),
                HasSubstr("malformed BEF"));
  }
}

TEST(BefFileRobustnessTest, CorruptedBytesNeverCrash) {
  // Every byte position, several corruptions each. The decoder must return
  // either an error or a file whose indices are all in range; ASan and UBSan
  // (in `make test`) check that nothing reads out of bounds.
  std::vector<uint8_t> original = SampleFile();
  int errors = 0;
  for (size_t pos = 0; pos < original.size(); ++pos) {
    for (uint8_t mask : {0x01, 0x80, 0xFF, 0x7F}) {
      std::vector<uint8_t> bytes = original;
      bytes[pos] ^= mask;
      auto file = BefFile::Open(bytes);
      if (!file.ok()) {
        ++errors;
        EXPECT_FALSE(file.status().message().empty());
        continue;
      }
      for (const Function& function : (*file)->functions()) {
        for (const Kernel& kernel : function.kernels) {
          EXPECT_LT(kernel.kernel_name, (*file)->num_kernel_names());
          for (uint32_t reg : kernel.operands) {
            EXPECT_LT(reg, function.num_registers);
          }
        }
      }
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace asyncrt::bef
