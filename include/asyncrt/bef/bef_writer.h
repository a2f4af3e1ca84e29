// BefWriter: builds a BEF file in memory. Used by the MLIR-to-BEF converter
// and by tests that need BEF programs without MLIR.
//
// Tables (strings, types, kernel names) are deduplicated. Functions are
// declared first (so kernels can refer to functions defined later, as calls
// and control flow do) and defined afterwards. Not thread-safe.
#ifndef ASYNCRT_BEF_BEF_WRITER_H_
#define ASYNCRT_BEF_BEF_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_format.h"

namespace asyncrt::bef {

struct KernelSpec {
  uint32_t kernel_name = 0;        // From AddKernelName.
  uint32_t location = 0;           // From AddLocation.
  std::vector<uint32_t> operands;  // Registers.
  std::vector<uint32_t> results;   // Registers, each defined once.
  // (name string from AddString, attribute from Add*Attribute).
  std::vector<std::pair<uint32_t, uint32_t>> attributes;
  std::vector<uint32_t> functions;  // From DeclareFunction.
};

struct FunctionBodySpec {
  uint32_t num_registers = 0;
  std::vector<uint32_t> argument_registers;
  std::vector<KernelSpec> kernels;
  std::vector<uint32_t> result_registers;
  // Optional debug info, each empty or one entry per register: names, and
  // types (from AddType) that let BEF be translated back to MLIR.
  std::vector<std::string> register_names;
  std::vector<uint32_t> register_types;
  // Empty, or the entry's stream and then one per kernel (see
  // SectionId::kKernelStreams). Written even without debug info: it
  // changes how the program is scheduled.
  std::vector<uint32_t> kernel_streams;
};

class BefWriter {
 public:
  uint32_t AddString(absl::string_view value);
  uint32_t AddType(absl::string_view type_name);
  uint32_t AddKernelName(absl::string_view name);
  // `name` (optional) is the location's name scope, e.g. "scope/op".
  uint32_t AddLocation(absl::string_view filename, uint32_t line,
                       uint32_t column, absl::string_view name = {});

  uint32_t AddUnitAttribute();
  // `bits` holds the value's bytes in the low bits (sign- or zero-extended
  // integers, IEEE bits for floats).
  uint32_t AddScalarAttribute(AttributeKind kind, uint64_t bits);
  uint32_t AddI32Attribute(int32_t value);
  uint32_t AddI64Attribute(int64_t value);
  uint32_t AddF32Attribute(float value);
  uint32_t AddF64Attribute(double value);
  uint32_t AddBoolAttribute(bool value);
  uint32_t AddStringAttribute(absl::string_view value);
  uint32_t AddTypeAttribute(absl::string_view type_name);
  // `data` holds `count` little-endian elements of `element_kind`.
  uint32_t AddArrayAttribute(AttributeKind element_kind, uint32_t count,
                             absl::Span<const uint8_t> data);
  // A tensor shape; nullopt for an unranked one. Dimensions may be -1.
  uint32_t AddShapeAttribute(std::optional<absl::Span<const int64_t>> dims);
  uint32_t AddDenseAttribute(AttributeKind element_kind,
                             absl::Span<const int64_t> shape,
                             absl::Span<const uint8_t> data);
  uint32_t AddAggregateAttribute(absl::Span<const uint32_t> elements);
  uint32_t AddFunctionAttribute(uint32_t function);
  // `@root::@nested...` in a module compiled elsewhere, with that module's
  // MLIR text.
  uint32_t AddCompilationUnitAttribute(absl::string_view root,
                                       absl::Span<const std::string> nested,
                                       absl::string_view module_text);

  // Declares a function; returns its index. Native functions have no body.
  uint32_t DeclareFunction(absl::string_view name, FunctionKind kind,
                           absl::Span<const uint32_t> argument_types,
                           absl::Span<const uint32_t> result_types);
  void DefineFunction(uint32_t function, FunctionBodySpec body);

  // Serializes the file. Without debug info the register names and the
  // location names are dropped.
  // FailedPrecondition if a declared BEF or sync function was never defined.
  absl::StatusOr<std::vector<uint8_t>> Finish(bool include_debug_info = true);

 private:
  struct FunctionSpec {
    uint32_t name;
    FunctionKind kind;
    std::vector<uint32_t> argument_types;
    std::vector<uint32_t> result_types;
    bool defined = false;
    FunctionBodySpec body;
  };

  uint32_t Intern(std::vector<uint32_t>& table,
                  absl::flat_hash_map<std::string, uint32_t>& index,
                  absl::string_view value);
  uint32_t BeginAttribute(AttributeKind kind);

  std::vector<std::string> strings_;
  absl::flat_hash_map<std::string, uint32_t> string_index_;
  std::vector<uint32_t> types_;  // String indices.
  absl::flat_hash_map<std::string, uint32_t> type_index_;
  std::vector<uint32_t> kernel_names_;  // String indices.
  absl::flat_hash_map<std::string, uint32_t> kernel_name_index_;
  std::vector<uint32_t> files_;  // String indices.
  absl::flat_hash_map<std::string, uint32_t> file_index_;
  std::vector<uint32_t> locations_;  // (file, line, column) triples.
  // Per location: 1 + the name's string index, or 0 for none.
  std::vector<uint32_t> location_names_;
  bool has_location_names_ = false;
  std::vector<uint8_t> attributes_;
  uint32_t num_attributes_ = 0;
  std::vector<FunctionSpec> functions_;
};

}  // namespace asyncrt::bef

#endif  // ASYNCRT_BEF_BEF_WRITER_H_
