#include "asyncrt/bef/bef_writer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/bef/byte_io.h"

namespace asyncrt::bef {

uint32_t BefWriter::AddString(absl::string_view value) {
  auto [it, inserted] =
      string_index_.try_emplace(std::string(value), strings_.size());
  if (inserted) strings_.emplace_back(value);
  return it->second;
}

uint32_t BefWriter::Intern(std::vector<uint32_t>& table,
                           absl::flat_hash_map<std::string, uint32_t>& index,
                           absl::string_view value) {
  auto [it, inserted] = index.try_emplace(std::string(value), table.size());
  if (inserted) table.push_back(AddString(value));
  return it->second;
}

uint32_t BefWriter::AddType(absl::string_view type_name) {
  return Intern(types_, type_index_, type_name);
}

uint32_t BefWriter::AddKernelName(absl::string_view name) {
  return Intern(kernel_names_, kernel_name_index_, name);
}

uint32_t BefWriter::AddLocation(absl::string_view filename, uint32_t line,
                                uint32_t column, absl::string_view name) {
  uint32_t file = Intern(files_, file_index_, filename);
  locations_.insert(locations_.end(), {file, line, column});
  location_names_.push_back(name.empty() ? 0 : AddString(name) + 1);
  has_location_names_ |= !name.empty();
  return locations_.size() / 3 - 1;
}

uint32_t BefWriter::BeginAttribute(AttributeKind kind) {
  PutU8(attributes_, static_cast<uint8_t>(kind));
  return num_attributes_++;
}

uint32_t BefWriter::AddUnitAttribute() {
  return BeginAttribute(AttributeKind::kUnit);
}

uint32_t BefWriter::AddScalarAttribute(AttributeKind kind, uint64_t bits) {
  uint32_t index = BeginAttribute(kind);
  PutU64(attributes_, bits);
  return index;
}

uint32_t BefWriter::AddI32Attribute(int32_t value) {
  return AddScalarAttribute(AttributeKind::kI32,
                            static_cast<uint64_t>(static_cast<int64_t>(value)));
}
uint32_t BefWriter::AddI64Attribute(int64_t value) {
  return AddScalarAttribute(AttributeKind::kI64, static_cast<uint64_t>(value));
}
uint32_t BefWriter::AddF32Attribute(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return AddScalarAttribute(AttributeKind::kF32, bits);
}
uint32_t BefWriter::AddF64Attribute(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return AddScalarAttribute(AttributeKind::kF64, bits);
}
uint32_t BefWriter::AddBoolAttribute(bool value) {
  return AddScalarAttribute(AttributeKind::kBool, value ? 1 : 0);
}

uint32_t BefWriter::AddStringAttribute(absl::string_view value) {
  uint32_t index = BeginAttribute(AttributeKind::kString);
  PutU32(attributes_, value.size());
  PutBytes(attributes_,
           absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(value.data()),
                               value.size()));
  return index;
}

uint32_t BefWriter::AddTypeAttribute(absl::string_view type_name) {
  uint32_t type = AddType(type_name);
  uint32_t index = BeginAttribute(AttributeKind::kType);
  PutU32(attributes_, type);
  return index;
}

uint32_t BefWriter::AddArrayAttribute(AttributeKind element_kind,
                                      uint32_t count,
                                      absl::Span<const uint8_t> data) {
  uint32_t index = BeginAttribute(AttributeKind::kArray);
  PutU8(attributes_, static_cast<uint8_t>(element_kind));
  PutU32(attributes_, count);
  PadTo(attributes_, 8);  // Elements are aligned for direct typed reads.
  PutBytes(attributes_, data);
  return index;
}

uint32_t BefWriter::AddDenseAttribute(AttributeKind element_kind,
                                      absl::Span<const int64_t> shape,
                                      absl::Span<const uint8_t> data) {
  uint32_t index = BeginAttribute(AttributeKind::kDense);
  PutU8(attributes_, static_cast<uint8_t>(element_kind));
  PutU32(attributes_, shape.size());
  for (int64_t dim : shape) PutU64(attributes_, static_cast<uint64_t>(dim));
  PutU32(attributes_, data.size());
  PadTo(attributes_, 8);
  PutBytes(attributes_, data);
  return index;
}

uint32_t BefWriter::AddShapeAttribute(
    std::optional<absl::Span<const int64_t>> dims) {
  uint32_t index = BeginAttribute(AttributeKind::kShape);
  PutU32(attributes_, dims ? dims->size() : kUnrankedShape);
  if (dims) {
    for (int64_t dim : *dims) PutU64(attributes_, static_cast<uint64_t>(dim));
  }
  return index;
}

uint32_t BefWriter::AddAggregateAttribute(absl::Span<const uint32_t> elements) {
  uint32_t index = BeginAttribute(AttributeKind::kAggregate);
  PutU32(attributes_, elements.size());
  for (uint32_t element : elements) PutU32(attributes_, element);
  return index;
}

uint32_t BefWriter::AddCompilationUnitAttribute(
    absl::string_view root, absl::Span<const std::string> nested,
    absl::string_view module_text) {
  uint32_t root_string = AddString(root);
  uint32_t module_string = AddString(module_text);
  std::vector<uint32_t> nested_strings;
  for (const std::string& symbol : nested) {
    nested_strings.push_back(AddString(symbol));
  }
  uint32_t index = BeginAttribute(AttributeKind::kCompilationUnit);
  PutU32(attributes_, root_string);
  PutU32(attributes_, module_string);
  PutU32(attributes_, nested_strings.size());
  for (uint32_t string : nested_strings) PutU32(attributes_, string);
  return index;
}

uint32_t BefWriter::AddFunctionAttribute(uint32_t function) {
  uint32_t index = BeginAttribute(AttributeKind::kFunction);
  PutU32(attributes_, function);
  return index;
}

uint32_t BefWriter::DeclareFunction(absl::string_view name, FunctionKind kind,
                                    absl::Span<const uint32_t> argument_types,
                                    absl::Span<const uint32_t> result_types) {
  functions_.push_back(FunctionSpec{
      AddString(name), kind,
      std::vector<uint32_t>(argument_types.begin(), argument_types.end()),
      std::vector<uint32_t>(result_types.begin(), result_types.end()),
      /*defined=*/false, FunctionBodySpec()});
  return functions_.size() - 1;
}

void BefWriter::DefineFunction(uint32_t function, FunctionBodySpec body) {
  functions_[function].body = std::move(body);
  functions_[function].defined = true;
}

namespace {
void PutU32List(std::vector<uint8_t>& out, absl::Span<const uint32_t> values) {
  PutU32(out, values.size());
  for (uint32_t value : values) PutU32(out, value);
}
}  // namespace

absl::StatusOr<std::vector<uint8_t>> BefWriter::Finish(
    bool include_debug_info) {
  // Register names are strings too: intern them before writing the table.
  std::vector<std::vector<uint32_t>> register_name_strings(functions_.size());
  if (include_debug_info) {
    for (size_t f = 0; f < functions_.size(); ++f) {
      for (const std::string& name : functions_[f].body.register_names) {
        register_name_strings[f].push_back(AddString(name));
      }
    }
  }

  std::vector<std::pair<SectionId, std::vector<uint8_t>>> sections;
  auto& strings =
      sections.emplace_back(SectionId::kStrings, std::vector<uint8_t>()).second;
  PutU32(strings, strings_.size());
  for (const std::string& value : strings_) {
    PutU32(strings, value.size());
    PutBytes(strings,
             absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(value.data()),
                                 value.size()));
  }
  PutU32List(
      sections.emplace_back(SectionId::kTypes, std::vector<uint8_t>()).second,
      types_);
  PutU32List(
      sections.emplace_back(SectionId::kKernelNames, std::vector<uint8_t>())
          .second,
      kernel_names_);
  auto& attributes =
      sections.emplace_back(SectionId::kAttributes, std::vector<uint8_t>())
          .second;
  // The count goes in its own 8-byte slot so the attribute stream keeps the
  // 8-byte alignment the writer padded it to.
  PutU32(attributes, num_attributes_);
  PutU32(attributes, 0);
  PutBytes(attributes, attributes_);
  auto& locations =
      sections.emplace_back(SectionId::kLocations, std::vector<uint8_t>())
          .second;
  PutU32List(locations, files_);
  PutU32(locations, locations_.size() / 3);
  for (uint32_t value : locations_) PutU32(locations, value);

  auto& functions =
      sections.emplace_back(SectionId::kFunctions, std::vector<uint8_t>())
          .second;
  PutU32(functions, functions_.size());
  for (const FunctionSpec& function : functions_) {
    if (function.kind != FunctionKind::kNative && !function.defined) {
      return absl::FailedPreconditionError(absl::StrCat(
          "function '", strings_[function.name], "' declared but not defined"));
    }
    PutU32(functions, function.name);
    PutU8(functions, static_cast<uint8_t>(function.kind));
    PutU32List(functions, function.argument_types);
    PutU32List(functions, function.result_types);
    if (function.kind == FunctionKind::kNative) continue;
    const FunctionBodySpec& body = function.body;
    PutU32(functions, body.num_registers);
    PutU32List(functions, body.argument_registers);
    PutU32(functions, body.kernels.size());
    for (const KernelSpec& kernel : body.kernels) {
      PutU32(functions, kernel.kernel_name);
      PutU32(functions, kernel.location);
      PutU32List(functions, kernel.operands);
      PutU32List(functions, kernel.results);
      PutU32(functions, kernel.attributes.size());
      for (auto [name, attribute] : kernel.attributes) {
        PutU32(functions, name);
        PutU32(functions, attribute);
      }
      PutU32List(functions, kernel.functions);
    }
    PutU32List(functions, body.result_registers);
  }

  bool has_streams = false;
  for (const FunctionSpec& function : functions_) {
    has_streams |= !function.body.kernel_streams.empty();
  }
  if (has_streams) {
    auto& streams =
        sections.emplace_back(SectionId::kKernelStreams, std::vector<uint8_t>())
            .second;
    PutU32(streams, functions_.size());
    for (const FunctionSpec& function : functions_) {
      PutU32List(streams, function.body.kernel_streams);
    }
  }

  if (include_debug_info && has_location_names_) {
    auto& names =
        sections.emplace_back(SectionId::kLocationNames, std::vector<uint8_t>())
            .second;
    PutU32(names, location_names_.size());
    for (uint32_t name : location_names_) PutU32(names, name);
  }

  if (include_debug_info) {
    auto& debug =
        sections.emplace_back(SectionId::kDebugInfo, std::vector<uint8_t>())
            .second;
    PutU32(debug, functions_.size());
    for (size_t f = 0; f < functions_.size(); ++f) {
      PutU32List(debug, register_name_strings[f]);
      PutU32List(debug, functions_[f].body.register_types);
    }
  }

  std::vector<uint8_t> file;
  PutU8(file, kMagic0);
  PutU8(file, kMagic1);
  PutU8(file, kVersionMajor);
  PutU8(file, kVersionMinor);
  PutU32(file, sections.size());
  size_t offset = kHeaderSize + kSectionEntrySize * sections.size();
  for (const auto& [id, bytes] : sections) {
    offset = (offset + 7) / 8 * 8;
    PutU8(file, static_cast<uint8_t>(id));
    PutU8(file, 0);
    PutU8(file, 0);
    PutU8(file, 0);
    PutU32(file, offset);
    PutU32(file, bytes.size());
    offset += bytes.size();
  }
  for (const auto& [id, bytes] : sections) {
    PadTo(file, 8);
    PutBytes(file, bytes);
  }
  return file;
}

}  // namespace asyncrt::bef
