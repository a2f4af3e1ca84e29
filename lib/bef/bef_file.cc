#include "asyncrt/bef/bef_file.h"

#include <array>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lib/bef/byte_io.h"

namespace asyncrt::bef {

// Evaluates `expr` (an absl::Status) and returns it if it is an error.
#define BEF_RETURN_IF_ERROR(expr)                                     \
  do {                                                                \
    if (absl::Status status_ = (expr); !status_.ok()) return status_; \
  } while (0)

class BefFile::Decoder {
 public:
  Decoder(BefFile& file, absl::Span<const uint8_t> bytes)
      : file_(file), bytes_(bytes) {}

  absl::Status Decode() {
    ByteReader header(bytes_, "header");
    uint8_t magic0, magic1;
    BEF_RETURN_IF_ERROR(header.ReadU8(&magic0));
    BEF_RETURN_IF_ERROR(header.ReadU8(&magic1));
    if (magic0 != kMagic0 || magic1 != kMagic1) {
      return header.Error("not a BEF file (bad magic number)");
    }
    BEF_RETURN_IF_ERROR(header.ReadU8(&file_.version_major_));
    BEF_RETURN_IF_ERROR(header.ReadU8(&file_.version_minor_));
    if (file_.version_major_ != kVersionMajor) {
      return header.Error(absl::StrCat(
          "unsupported BEF version ", file_.version_major_, ".",
          file_.version_minor_, " (expected ", kVersionMajor, ".x)"));
    }
    uint32_t num_sections;
    BEF_RETURN_IF_ERROR(header.ReadCount(kSectionEntrySize, &num_sections));
    for (uint32_t i = 0; i < num_sections; ++i) {
      uint8_t id, pad;
      uint32_t offset, size;
      BEF_RETURN_IF_ERROR(header.ReadU8(&id));
      for (int p = 0; p < 3; ++p) BEF_RETURN_IF_ERROR(header.ReadU8(&pad));
      BEF_RETURN_IF_ERROR(header.ReadU32(&offset));
      BEF_RETURN_IF_ERROR(header.ReadU32(&size));
      if (id < 1 || id > kNumSectionIds) {
        return header.Error(absl::StrCat("unknown section id ", id));
      }
      if (sections_[id].has_value()) {
        return header.Error(absl::StrCat("duplicate section id ", id));
      }
      if (offset > bytes_.size() || size > bytes_.size() - offset) {
        return header.Error(absl::StrCat("section ", id, " [", offset, ", +",
                                         size, ") is outside the ",
                                         bytes_.size(), "-byte file"));
      }
      sections_[id] = bytes_.subspan(offset, size);
    }
    // Every u32 in the file decodes to at most one pool entry, so these
    // reservations are never exceeded and spans into the pools stay valid.
    file_.u32_pool_.reserve(bytes_.size() / 4 + 1);
    file_.i64_pool_.reserve(bytes_.size() / 8 + 1);
    file_.named_attribute_pool_.reserve(bytes_.size() / 8 + 1);

    BEF_RETURN_IF_ERROR(DecodeStrings());
    BEF_RETURN_IF_ERROR(
        DecodeIndexTable(SectionId::kTypes, "types section", file_.types_));
    BEF_RETURN_IF_ERROR(DecodeIndexTable(
        SectionId::kKernelNames, "kernel names section", file_.kernel_names_));
    BEF_RETURN_IF_ERROR(DecodeLocations());
    BEF_RETURN_IF_ERROR(DecodeAttributes());
    BEF_RETURN_IF_ERROR(DecodeFunctions());
    BEF_RETURN_IF_ERROR(CheckFunctionAttributes());
    BEF_RETURN_IF_ERROR(DecodeLocationNames());
    BEF_RETURN_IF_ERROR(DecodeKernelStreams());
    return DecodeDebugInfo();
  }

 private:
  absl::StatusOr<absl::Span<const uint8_t>> Section(SectionId id,
                                                    absl::string_view what) {
    const auto& section = sections_[static_cast<int>(id)];
    if (!section) {
      return absl::DataLossError(absl::StrCat("malformed BEF: missing ", what));
    }
    return *section;
  }

  absl::Status CheckIndex(const ByteReader& reader, uint32_t index,
                          size_t limit, absl::string_view what) {
    if (index >= limit) {
      return reader.Error(absl::StrCat(what, " index ", index,
                                       " out of range (", limit, " entries)"));
    }
    return absl::OkStatus();
  }

  // Reads a u32 count and that many u32s into the pool, each checked
  // against `limit`.
  absl::Status ReadIndexList(ByteReader& reader, size_t limit,
                             absl::string_view what,
                             absl::Span<const uint32_t>* out) {
    uint32_t count;
    BEF_RETURN_IF_ERROR(reader.ReadCount(4, &count));
    size_t start = file_.u32_pool_.size();
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t value;
      BEF_RETURN_IF_ERROR(reader.ReadU32(&value));
      BEF_RETURN_IF_ERROR(CheckIndex(reader, value, limit, what));
      file_.u32_pool_.push_back(value);
    }
    *out = absl::MakeConstSpan(file_.u32_pool_).subspan(start, count);
    return absl::OkStatus();
  }

  absl::Status CheckFullyRead(const ByteReader& reader) {
    if (!reader.AtEnd()) {
      return reader.Error(
          absl::StrCat(reader.remaining(), " unexpected trailing bytes"));
    }
    return absl::OkStatus();
  }

  absl::Status DecodeStrings() {
    auto section = Section(SectionId::kStrings, "strings section");
    if (!section.ok()) return section.status();
    ByteReader reader(*section, "strings section");
    uint32_t count;
    BEF_RETURN_IF_ERROR(reader.ReadCount(4, &count));
    file_.strings_.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t size;
      absl::Span<const uint8_t> data;
      BEF_RETURN_IF_ERROR(reader.ReadU32(&size));
      BEF_RETURN_IF_ERROR(reader.ReadBytes(size, &data));
      file_.strings_.emplace_back(reinterpret_cast<const char*>(data.data()),
                                  data.size());
    }
    return CheckFullyRead(reader);
  }

  absl::Status DecodeIndexTable(SectionId id, absl::string_view what,
                                std::vector<uint32_t>& out) {
    auto section = Section(id, what);
    if (!section.ok()) return section.status();
    ByteReader reader(*section, what);
    absl::Span<const uint32_t> values;
    BEF_RETURN_IF_ERROR(
        ReadIndexList(reader, file_.strings_.size(), "string", &values));
    out.assign(values.begin(), values.end());
    return CheckFullyRead(reader);
  }

  absl::Status DecodeLocations() {
    auto section = Section(SectionId::kLocations, "locations section");
    if (!section.ok()) return section.status();
    ByteReader reader(*section, "locations section");
    absl::Span<const uint32_t> files;
    BEF_RETURN_IF_ERROR(
        ReadIndexList(reader, file_.strings_.size(), "string", &files));
    file_.files_.assign(files.begin(), files.end());
    uint32_t count;
    BEF_RETURN_IF_ERROR(reader.ReadCount(12, &count));
    file_.locations_.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      LocationEntry entry;
      BEF_RETURN_IF_ERROR(reader.ReadU32(&entry.file));
      BEF_RETURN_IF_ERROR(
          CheckIndex(reader, entry.file, file_.files_.size(), "file"));
      BEF_RETURN_IF_ERROR(reader.ReadU32(&entry.line));
      BEF_RETURN_IF_ERROR(reader.ReadU32(&entry.column));
      file_.locations_.push_back(entry);
    }
    return CheckFullyRead(reader);
  }

  absl::Status DecodeLocationNames() {
    const auto& section =
        sections_[static_cast<int>(SectionId::kLocationNames)];
    if (!section) return absl::OkStatus();
    ByteReader reader(*section, "location names section");
    uint32_t count;
    BEF_RETURN_IF_ERROR(reader.ReadCount(4, &count));
    if (count != file_.locations_.size()) {
      return reader.Error(absl::StrCat("has ", count, " names for ",
                                       file_.locations_.size(), " locations"));
    }
    for (LocationEntry& entry : file_.locations_) {
      BEF_RETURN_IF_ERROR(reader.ReadU32(&entry.name));
      // Stored as 1 + index so that 0 means none.
      BEF_RETURN_IF_ERROR(CheckIndex(reader, entry.name,
                                     file_.strings_.size() + 1, "name string"));
    }
    return CheckFullyRead(reader);
  }

  absl::Status DecodeAttributes() {
    auto section = Section(SectionId::kAttributes, "attributes section");
    if (!section.ok()) return section.status();
    ByteReader reader(*section, "attributes section");
    uint32_t count, reserved;
    BEF_RETURN_IF_ERROR(reader.ReadCount(1, &count));
    BEF_RETURN_IF_ERROR(reader.ReadU32(&reserved));
    file_.attributes_.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      Attribute attribute;
      uint8_t kind;
      BEF_RETURN_IF_ERROR(reader.ReadU8(&kind));
      if (kind > kMaxAttributeKind) {
        return reader.Error(absl::StrCat("unknown attribute kind ", kind));
      }
      attribute.kind = static_cast<AttributeKind>(kind);
      switch (attribute.kind) {
        case AttributeKind::kUnit:
          break;
        case AttributeKind::kString: {
          uint32_t size;
          absl::Span<const uint8_t> data;
          BEF_RETURN_IF_ERROR(reader.ReadU32(&size));
          BEF_RETURN_IF_ERROR(reader.ReadBytes(size, &data));
          attribute.bytes = AsStringView(data);
          break;
        }
        case AttributeKind::kType:
          BEF_RETURN_IF_ERROR(reader.ReadU32(&attribute.index));
          BEF_RETURN_IF_ERROR(
              CheckIndex(reader, attribute.index, file_.types_.size(), "type"));
          break;
        case AttributeKind::kFunction:
          // Checked once the functions are decoded.
          BEF_RETURN_IF_ERROR(reader.ReadU32(&attribute.index));
          break;
        case AttributeKind::kArray: {
          BEF_RETURN_IF_ERROR(ReadElementKind(reader, &attribute.element_kind));
          if (IsComplex(attribute.element_kind)) {
            return reader.Error("array of complex elements");
          }
          BEF_RETURN_IF_ERROR(reader.ReadU32(&attribute.count));
          BEF_RETURN_IF_ERROR(reader.SkipTo(8));
          uint64_t size =
              uint64_t{attribute.count} * ScalarSize(attribute.element_kind);
          absl::Span<const uint8_t> data;
          if (size > reader.remaining()) {
            return reader.Error(absl::StrCat("array of ", attribute.count,
                                             " elements exceeds the section"));
          }
          BEF_RETURN_IF_ERROR(reader.ReadBytes(size, &data));
          attribute.bytes = AsStringView(data);
          break;
        }
        case AttributeKind::kDense:
          BEF_RETURN_IF_ERROR(DecodeDense(reader, attribute));
          break;
        case AttributeKind::kShape:
          BEF_RETURN_IF_ERROR(DecodeShape(reader, attribute));
          break;
        case AttributeKind::kCompilationUnit: {
          uint32_t module_text;
          BEF_RETURN_IF_ERROR(reader.ReadU32(&attribute.index));
          BEF_RETURN_IF_ERROR(CheckIndex(reader, attribute.index,
                                         file_.strings_.size(), "string"));
          BEF_RETURN_IF_ERROR(reader.ReadU32(&module_text));
          BEF_RETURN_IF_ERROR(
              CheckIndex(reader, module_text, file_.strings_.size(), "string"));
          attribute.bytes = file_.strings_[module_text];
          BEF_RETURN_IF_ERROR(ReadIndexList(reader, file_.strings_.size(),
                                            "string", &attribute.elements));
          break;
        }
        case AttributeKind::kAggregate: {
          // Elements are encoded before the aggregate: no cycles.
          BEF_RETURN_IF_ERROR(ReadIndexList(reader, i, "aggregate element",
                                            &attribute.elements));
          break;
        }
        case AttributeKind::kComplex64:
        case AttributeKind::kComplex128:
          return reader.Error(absl::StrCat("attribute kind ", kind,
                                           " is only valid for elements"));
        default:  // Scalars.
          BEF_RETURN_IF_ERROR(reader.ReadU64(&attribute.bits));
          break;
      }
      // Booleans are read in place as C++ bool, which may only hold 0 or 1.
      if (attribute.kind == AttributeKind::kBool && attribute.bits > 1) {
        return reader.Error(
            absl::StrCat("bool attribute with value ", attribute.bits));
      }
      if ((attribute.kind == AttributeKind::kArray ||
           attribute.kind == AttributeKind::kDense) &&
          attribute.element_kind == AttributeKind::kBool) {
        for (char byte : attribute.bytes) {
          if (static_cast<uint8_t>(byte) > 1) {
            return reader.Error("bool element that is neither 0 nor 1");
          }
        }
      }
      file_.attributes_.push_back(attribute);
    }
    return CheckFullyRead(reader);
  }

  absl::Status ReadElementKind(ByteReader& reader, AttributeKind* kind) {
    uint8_t raw;
    BEF_RETURN_IF_ERROR(reader.ReadU8(&raw));
    if (raw > kMaxAttributeKind ||
        ScalarSize(static_cast<AttributeKind>(raw)) == 0) {
      return reader.Error(absl::StrCat("invalid element kind ", raw));
    }
    *kind = static_cast<AttributeKind>(raw);
    return absl::OkStatus();
  }

  absl::Status DecodeShape(ByteReader& reader, Attribute& attribute) {
    uint32_t rank;
    BEF_RETURN_IF_ERROR(reader.ReadU32(&rank));
    if (rank == kUnrankedShape) return absl::OkStatus();
    if (uint64_t{rank} * 8 > reader.remaining()) {
      return reader.Error(
          absl::StrCat("shape of rank ", rank, " exceeds the section"));
    }
    attribute.bits = 1;
    size_t start = file_.i64_pool_.size();
    for (uint32_t d = 0; d < rank; ++d) {
      uint64_t dim;
      BEF_RETURN_IF_ERROR(reader.ReadU64(&dim));
      if (static_cast<int64_t>(dim) < -1) {
        return reader.Error(
            absl::StrCat("shape dimension ", static_cast<int64_t>(dim)));
      }
      file_.i64_pool_.push_back(static_cast<int64_t>(dim));
    }
    attribute.shape = absl::MakeConstSpan(file_.i64_pool_).subspan(start, rank);
    return absl::OkStatus();
  }

  absl::Status DecodeDense(ByteReader& reader, Attribute& attribute) {
    BEF_RETURN_IF_ERROR(ReadElementKind(reader, &attribute.element_kind));
    uint32_t rank;
    BEF_RETURN_IF_ERROR(reader.ReadCount(8, &rank));
    size_t start = file_.i64_pool_.size();
    uint64_t elements = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      uint64_t dim;
      BEF_RETURN_IF_ERROR(reader.ReadU64(&dim));
      if (dim > (uint64_t{1} << 40)) {
        return reader.Error(
            absl::StrCat("dense dimension ", dim, " too large"));
      }
      if (dim != 0 && elements > std::numeric_limits<uint64_t>::max() / dim) {
        return reader.Error("dense element count overflows");
      }
      elements *= dim;
      file_.i64_pool_.push_back(static_cast<int64_t>(dim));
    }
    attribute.shape = absl::MakeConstSpan(file_.i64_pool_).subspan(start, rank);
    uint32_t size;
    BEF_RETURN_IF_ERROR(reader.ReadU32(&size));
    uint64_t element_size = ScalarSize(attribute.element_kind);
    if (elements > std::numeric_limits<uint64_t>::max() / element_size ||
        elements * element_size != size) {
      return reader.Error(absl::StrCat("dense data of ", size,
                                       " bytes does not match its shape"));
    }
    BEF_RETURN_IF_ERROR(reader.SkipTo(8));
    absl::Span<const uint8_t> data;
    BEF_RETURN_IF_ERROR(reader.ReadBytes(size, &data));
    attribute.bytes = AsStringView(data);
    attribute.count = static_cast<uint32_t>(elements);
    return absl::OkStatus();
  }

  absl::Status DecodeFunctions() {
    auto section = Section(SectionId::kFunctions, "functions section");
    if (!section.ok()) return section.status();
    ByteReader reader(*section, "functions section");
    uint32_t count;
    BEF_RETURN_IF_ERROR(reader.ReadCount(13, &count));
    file_.functions_.reserve(count);
    num_functions_ = count;
    for (uint32_t f = 0; f < count; ++f) {
      Function function;
      uint32_t name;
      uint8_t kind;
      BEF_RETURN_IF_ERROR(reader.ReadU32(&name));
      BEF_RETURN_IF_ERROR(
          CheckIndex(reader, name, file_.strings_.size(), "string"));
      function.name = file_.strings_[name];
      BEF_RETURN_IF_ERROR(reader.ReadU8(&kind));
      if (kind > static_cast<uint8_t>(FunctionKind::kSync)) {
        return reader.Error(absl::StrCat("unknown function kind ", kind));
      }
      function.kind = static_cast<FunctionKind>(kind);
      BEF_RETURN_IF_ERROR(ReadIndexList(reader, file_.types_.size(), "type",
                                        &function.argument_types));
      BEF_RETURN_IF_ERROR(ReadIndexList(reader, file_.types_.size(), "type",
                                        &function.result_types));
      if (function.kind != FunctionKind::kNative) {
        BEF_RETURN_IF_ERROR(DecodeBody(reader, function));
      }
      file_.functions_.push_back(std::move(function));
    }
    return CheckFullyRead(reader);
  }

  absl::Status DecodeBody(ByteReader& reader, Function& function) {
    BEF_RETURN_IF_ERROR(reader.ReadU32(&function.num_registers));
    // Every register must be defined by an argument or a kernel result,
    // each of which takes at least 4 bytes: bounds absurd counts.
    if (function.num_registers > reader.remaining() / 4 + 1) {
      return reader.Error(absl::StrCat(function.num_registers,
                                       " registers cannot all be defined"));
    }
    const uint32_t num_registers = function.num_registers;
    // The kernel (or -1 for arguments) defining each register.
    std::vector<int64_t> definer(num_registers, kUndefined);
    BEF_RETURN_IF_ERROR(ReadIndexList(reader, num_registers, "register",
                                      &function.argument_registers));
    if (function.argument_registers.size() != function.argument_types.size()) {
      return reader.Error("argument registers do not match argument types");
    }
    for (uint32_t reg : function.argument_registers) {
      BEF_RETURN_IF_ERROR(Define(reader, definer, reg, kArgument));
    }
    uint32_t num_kernels;
    BEF_RETURN_IF_ERROR(reader.ReadCount(24, &num_kernels));
    function.kernels.reserve(num_kernels);
    for (uint32_t k = 0; k < num_kernels; ++k) {
      Kernel kernel;
      BEF_RETURN_IF_ERROR(reader.ReadU32(&kernel.kernel_name));
      BEF_RETURN_IF_ERROR(CheckIndex(reader, kernel.kernel_name,
                                     file_.kernel_names_.size(),
                                     "kernel name"));
      BEF_RETURN_IF_ERROR(reader.ReadU32(&kernel.location));
      BEF_RETURN_IF_ERROR(CheckIndex(reader, kernel.location,
                                     file_.locations_.size(), "location"));
      BEF_RETURN_IF_ERROR(
          ReadIndexList(reader, num_registers, "register", &kernel.operands));
      for (uint32_t reg : kernel.operands) {
        // Operands must be defined earlier: rules out cycles, which would
        // never become ready.
        if (definer[reg] == kUndefined) {
          return reader.Error(absl::StrCat("kernel ", k, " uses register ", reg,
                                           " before it is defined"));
        }
      }
      BEF_RETURN_IF_ERROR(
          ReadIndexList(reader, num_registers, "register", &kernel.results));
      for (uint32_t reg : kernel.results) {
        BEF_RETURN_IF_ERROR(Define(reader, definer, reg, k));
      }
      uint32_t num_attributes;
      BEF_RETURN_IF_ERROR(reader.ReadCount(8, &num_attributes));
      size_t start = file_.named_attribute_pool_.size();
      for (uint32_t a = 0; a < num_attributes; ++a) {
        NamedAttribute named;
        BEF_RETURN_IF_ERROR(reader.ReadU32(&named.name));
        BEF_RETURN_IF_ERROR(
            CheckIndex(reader, named.name, file_.strings_.size(), "string"));
        BEF_RETURN_IF_ERROR(reader.ReadU32(&named.attribute));
        BEF_RETURN_IF_ERROR(CheckIndex(reader, named.attribute,
                                       file_.attributes_.size(), "attribute"));
        file_.named_attribute_pool_.push_back(named);
      }
      kernel.attributes = absl::MakeConstSpan(file_.named_attribute_pool_)
                              .subspan(start, num_attributes);
      BEF_RETURN_IF_ERROR(
          ReadIndexList(reader, num_functions_, "function", &kernel.functions));
      function.kernels.push_back(kernel);
    }
    BEF_RETURN_IF_ERROR(ReadIndexList(reader, num_registers, "register",
                                      &function.result_registers));
    if (function.result_registers.size() != function.result_types.size()) {
      return reader.Error("result registers do not match result types");
    }
    for (uint32_t reg : function.result_registers) {
      if (definer[reg] == kUndefined) {
        return reader.Error(absl::StrCat("function result register ", reg,
                                         " is never defined"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Define(const ByteReader& reader, std::vector<int64_t>& definer,
                      uint32_t reg, int64_t by) {
    if (definer[reg] != kUndefined) {
      return reader.Error(absl::StrCat("register ", reg, " defined twice"));
    }
    definer[reg] = by;
    return absl::OkStatus();
  }

  absl::Status CheckFunctionAttributes() {
    for (const Attribute& attribute : file_.attributes_) {
      if (attribute.kind == AttributeKind::kFunction &&
          attribute.index >= file_.functions_.size()) {
        return absl::DataLossError(absl::StrCat(
            "malformed BEF: function attribute refers to function ",
            attribute.index, " of ", file_.functions_.size()));
      }
    }
    return absl::OkStatus();
  }

  absl::Status DecodeKernelStreams() {
    const auto& section =
        sections_[static_cast<int>(SectionId::kKernelStreams)];
    if (!section) return absl::OkStatus();
    ByteReader reader(*section, "kernel streams section");
    uint32_t count;
    BEF_RETURN_IF_ERROR(reader.ReadCount(4, &count));
    if (count != file_.functions_.size()) {
      return reader.Error("kernel streams do not match the functions");
    }
    for (Function& function : file_.functions_) {
      // Stream ids are only compared with each other: any value will do.
      BEF_RETURN_IF_ERROR(ReadIndexList(reader, UINT32_MAX, "stream",
                                        &function.kernel_streams));
      if (!function.kernel_streams.empty() &&
          function.kernel_streams.size() != function.kernels.size() + 1) {
        return reader.Error("kernel streams do not match the kernels");
      }
    }
    return CheckFullyRead(reader);
  }

  absl::Status DecodeDebugInfo() {
    const auto& section = sections_[static_cast<int>(SectionId::kDebugInfo)];
    if (!section) return absl::OkStatus();
    ByteReader reader(*section, "debug info section");
    uint32_t count;
    BEF_RETURN_IF_ERROR(reader.ReadU32(&count));
    if (count != file_.functions_.size()) {
      return reader.Error("debug info does not match the functions");
    }
    for (Function& function : file_.functions_) {
      BEF_RETURN_IF_ERROR(ReadIndexList(reader, file_.strings_.size(), "string",
                                        &function.register_names));
      if (!function.register_names.empty() &&
          function.register_names.size() != function.num_registers) {
        return reader.Error("register names do not match the registers");
      }
      BEF_RETURN_IF_ERROR(ReadIndexList(reader, file_.types_.size(), "type",
                                        &function.register_types));
      if (!function.register_types.empty() &&
          function.register_types.size() != function.num_registers) {
        return reader.Error("register types do not match the registers");
      }
    }
    file_.has_debug_info_ = true;
    return CheckFullyRead(reader);
  }

  static absl::string_view AsStringView(absl::Span<const uint8_t> data) {
    return absl::string_view(reinterpret_cast<const char*>(data.data()),
                             data.size());
  }

  static constexpr int64_t kUndefined = -2;
  static constexpr int64_t kArgument = -1;

  BefFile& file_;
  absl::Span<const uint8_t> bytes_;
  std::array<std::optional<absl::Span<const uint8_t>>, kNumSectionIds + 1>
      sections_;
  uint32_t num_functions_ = 0;
};

absl::StatusOr<std::unique_ptr<BefFile>> BefFile::Open(
    absl::Span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive) {
  std::unique_ptr<BefFile> file(new BefFile());
  if (keep_alive == nullptr ||
      reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0) {
    auto owned =
        std::make_shared<std::vector<uint8_t>>(bytes.begin(), bytes.end());
    bytes = *owned;
    file->keep_alive_ = std::move(owned);
  } else {
    file->keep_alive_ = std::move(keep_alive);
  }
  absl::Status status = Decoder(*file, bytes).Decode();
  if (!status.ok()) return status;
  return file;
}

std::shared_ptr<const void> BefFile::GetOrDecode(
    const Attribute& attribute,
    absl::FunctionRef<std::shared_ptr<const void>()> decode) const {
  const size_t index = static_cast<size_t>(&attribute - attributes_.data());
  // Every execution of a constant op comes here: decoded values are found
  // lock-free.
  if (DecodedSlot* slots = decoded_slots_.load(std::memory_order_acquire)) {
    if (const auto* value = slots[index].load(std::memory_order_acquire)) {
      return *value;
    }
  }
  std::lock_guard<std::mutex> lock(decoded_mutex_);
  if (!decoded_slot_storage_) {
    // Value-initialized: every slot starts null.
    decoded_slot_storage_ = std::make_unique<DecodedSlot[]>(attributes_.size());
    decoded_slots_.store(decoded_slot_storage_.get(),
                         std::memory_order_release);
  }
  DecodedSlot& slot = decoded_slot_storage_[index];
  if (const auto* value = slot.load(std::memory_order_relaxed)) return *value;
  std::shared_ptr<const void> value = decode();
  if (value == nullptr) return value;
  decoded_values_.push_back(value);
  slot.store(&decoded_values_.back(), std::memory_order_release);
  return value;
}

const Function* BefFile::GetFunction(absl::string_view name) const {
  for (const Function& function : functions_) {
    if (function.name == name) return &function;
  }
  return nullptr;
}

Location BefFile::location(uint32_t index) const {
  const LocationEntry& entry = locations_[index];
  return Location{
      strings_[files_[entry.file]], entry.line, entry.column,
      entry.name == 0 ? absl::string_view() : strings_[entry.name - 1]};
}

}  // namespace asyncrt::bef
