#include "asyncrt/core_runtime/op_attrs.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"

namespace asyncrt {
namespace {

// Dense payload: u32 dtype, u32 rank, i64 dims[rank], then the data.
struct DenseHeader {
  uint32_t dtype;
  uint32_t rank;
};

// Shape payload: i64 rank (-1: unranked), then i64 dims[rank].

// Aggregate payload: u32 element count, u32 0, then per element this header,
// its name and its value, each padded to 8 bytes.
struct AggregateElementHeader {
  uint8_t type;
  uint8_t is_array;
  uint16_t name_size;
  uint32_t count;
  uint64_t value_size;
};

size_t PadTo8(size_t size) { return (size + 7) / 8 * 8; }

void AppendScalar(OpAttrType type, const void* value, std::string* out) {
  auto load = [value](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, value, sizeof(v));
    return v;
  };
  char buffer[64];
  switch (type) {
    case OpAttrType::kBool:
      absl::StrAppend(out, load(uint8_t{}) ? 1 : 0);
      return;
    case OpAttrType::kI8:
      absl::StrAppend(out, load(int8_t{}));
      return;
    case OpAttrType::kI16:
      absl::StrAppend(out, load(int16_t{}));
      return;
    case OpAttrType::kI32:
      absl::StrAppend(out, load(int32_t{}));
      return;
    case OpAttrType::kI64:
      absl::StrAppend(out, load(int64_t{}));
      return;
    case OpAttrType::kUI8:
      absl::StrAppend(out, load(uint8_t{}));
      return;
    case OpAttrType::kUI16:
      absl::StrAppend(out, load(uint16_t{}));
      return;
    case OpAttrType::kUI32:
      absl::StrAppend(out, load(uint32_t{}));
      return;
    case OpAttrType::kUI64:
      absl::StrAppend(out, load(uint64_t{}));
      return;
    case OpAttrType::kF16:
      absl::StrAppend(out, "fp16(", load(uint16_t{}), ")");
      return;
    case OpAttrType::kBF16:
      absl::StrAppend(out, "bf16(", load(uint16_t{}), ")");
      return;
    case OpAttrType::kF32:
      std::snprintf(buffer, sizeof(buffer), "%e", load(float{}));
      out->append(buffer);
      return;
    case OpAttrType::kF64:
      std::snprintf(buffer, sizeof(buffer), "%e", load(double{}));
      out->append(buffer);
      return;
    case OpAttrType::kDType: {
      DType dtype = load(DType{});
      switch (dtype) {
        // TFRT names the string dtype by its element type.
        case DType::kString:
          out->append("CHAR");
          return;
        case DType::kQUI8:
          out->append("QUI8");
          return;
        case DType::kQUI16:
          out->append("QUI16");
          return;
        case DType::kQI8:
          out->append("QI8");
          return;
        case DType::kQI16:
          out->append("QI16");
          return;
        case DType::kQI32:
          out->append("QI32");
          return;
        default:
          break;
      }
      auto type = OpAttrTypeForDType(dtype);
      absl::StrAppend(out, type ? OpAttrTypeName(*type) : "INVALID");
      return;
    }
    case OpAttrType::kChar:
      out->push_back(load(char{}));
      return;
    case OpAttrType::kFunc:
      out->append("<function>");
      return;
    case OpAttrType::kDense:
    case OpAttrType::kShape:
    case OpAttrType::kAggregate:
      return;  // Printed by the caller.
  }
}

std::optional<int64_t> LoadInteger(OpAttrType type, const void* p) {
  auto load = [p](auto tag) -> int64_t {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof(v));
    return static_cast<int64_t>(v);
  };
  switch (type) {
    case OpAttrType::kI8:
      return load(int8_t{});
    case OpAttrType::kI16:
      return load(int16_t{});
    case OpAttrType::kI32:
      return load(int32_t{});
    case OpAttrType::kI64:
      return load(int64_t{});
    case OpAttrType::kUI8:
      return load(uint8_t{});
    case OpAttrType::kUI16:
      return load(uint16_t{});
    case OpAttrType::kUI32:
      return load(uint32_t{});
    case OpAttrType::kUI64:
      return load(uint64_t{});
    default:
      return std::nullopt;
  }
}

}  // namespace

size_t OpAttrTypeSize(OpAttrType type) {
  switch (type) {
    case OpAttrType::kBool:
    case OpAttrType::kI8:
    case OpAttrType::kUI8:
    case OpAttrType::kChar:
    case OpAttrType::kDType:
      return 1;
    case OpAttrType::kI16:
    case OpAttrType::kUI16:
    case OpAttrType::kF16:
    case OpAttrType::kBF16:
      return 2;
    case OpAttrType::kI32:
    case OpAttrType::kUI32:
    case OpAttrType::kF32:
      return 4;
    case OpAttrType::kI64:
    case OpAttrType::kUI64:
    case OpAttrType::kF64:
    case OpAttrType::kFunc:
      return 8;
    case OpAttrType::kDense:
    case OpAttrType::kShape:
    case OpAttrType::kAggregate:
      return 0;
  }
  return 0;
}

absl::string_view OpAttrTypeName(OpAttrType type) {
  switch (type) {
    case OpAttrType::kBool:
      return "BOOL";
    case OpAttrType::kI8:
      return "I8";
    case OpAttrType::kI16:
      return "I16";
    case OpAttrType::kI32:
      return "I32";
    case OpAttrType::kI64:
      return "I64";
    case OpAttrType::kUI8:
      return "UI8";
    case OpAttrType::kUI16:
      return "UI16";
    case OpAttrType::kUI32:
      return "UI32";
    case OpAttrType::kUI64:
      return "UI64";
    case OpAttrType::kF16:
      return "F16";
    case OpAttrType::kBF16:
      return "BF16";
    case OpAttrType::kF32:
      return "F32";
    case OpAttrType::kF64:
      return "F64";
    case OpAttrType::kDType:
      return "DTYPE";
    case OpAttrType::kChar:
      return "CHAR";
    case OpAttrType::kDense:
      return "DENSE";
    case OpAttrType::kShape:
      return "SHAPE";
    case OpAttrType::kFunc:
      return "FUNC";
    case OpAttrType::kAggregate:
      return "AGGREGATE";
  }
  return "UNKNOWN";
}

std::optional<OpAttrType> OpAttrTypeForDType(DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return OpAttrType::kBool;
    case DType::kI8:
      return OpAttrType::kI8;
    case DType::kI16:
      return OpAttrType::kI16;
    case DType::kI32:
      return OpAttrType::kI32;
    case DType::kI64:
      return OpAttrType::kI64;
    case DType::kUI8:
      return OpAttrType::kUI8;
    case DType::kUI16:
      return OpAttrType::kUI16;
    case DType::kUI32:
      return OpAttrType::kUI32;
    case DType::kUI64:
      return OpAttrType::kUI64;
    case DType::kF16:
      return OpAttrType::kF16;
    case DType::kBF16:
      return OpAttrType::kBF16;
    case DType::kF32:
      return OpAttrType::kF32;
    case DType::kF64:
      return OpAttrType::kF64;
    default:
      return std::nullopt;
  }
}

int64_t DenseAttr::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void OpAttrs::SetRaw(absl::string_view name, OpAttrType type, bool is_array,
                     const void* data, size_t size_in_bytes, size_t count) {
  // Append to the arena; a replaced value's old bytes stay behind, which is
  // cheaper than compaction for the few overwrites ops ever do.
  size_t offset = arena_.size() * sizeof(uint64_t);
  arena_.resize(arena_.size() + (size_in_bytes + 7) / 8);
  if (size_in_bytes) {
    std::memcpy(reinterpret_cast<char*>(arena_.data()) + offset, data,
                size_in_bytes);
  }
  Entry entry{std::string(name), type, is_array, static_cast<uint32_t>(count),
              static_cast<uint32_t>(offset)};
  for (Entry& existing : entries_) {
    if (existing.name == name) {
      existing = std::move(entry);
      return;
    }
  }
  entries_.push_back(std::move(entry));
}

void OpAttrs::SetDense(absl::string_view name, DType dtype,
                       absl::Span<const int64_t> shape, const void* data,
                       size_t data_size) {
  std::vector<char> payload(sizeof(DenseHeader) +
                            shape.size() * sizeof(int64_t) + data_size);
  DenseHeader header{static_cast<uint32_t>(dtype),
                     static_cast<uint32_t>(shape.size())};
  std::memcpy(payload.data(), &header, sizeof(header));
  if (!shape.empty()) {
    std::memcpy(payload.data() + sizeof(header), shape.data(),
                shape.size() * sizeof(int64_t));
  }
  if (data_size) {
    std::memcpy(payload.data() + sizeof(header) + shape.size() * 8, data,
                data_size);
  }
  SetRaw(name, OpAttrType::kDense, false, payload.data(), payload.size(),
         payload.size());
}

void OpAttrs::SetShape(absl::string_view name,
                       std::optional<absl::Span<const int64_t>> dims) {
  std::vector<int64_t> payload;
  payload.push_back(dims ? static_cast<int64_t>(dims->size()) : -1);
  if (dims) payload.insert(payload.end(), dims->begin(), dims->end());
  SetRaw(name, OpAttrType::kShape, false, payload.data(),
         payload.size() * sizeof(int64_t), payload.size() * sizeof(int64_t));
}

size_t OpAttrs::ValueSize(const Entry& entry) {
  switch (entry.type) {
    case OpAttrType::kDense:
    case OpAttrType::kShape:
    case OpAttrType::kAggregate:
      return entry.count;
    default:
      return OpAttrTypeSize(entry.type) * (entry.is_array ? entry.count : 1);
  }
}

void OpAttrs::SetAggregate(absl::string_view name, const OpAttrs& elements) {
  std::string payload;
  uint32_t counts[2] = {static_cast<uint32_t>(elements.size()), 0};
  payload.append(reinterpret_cast<const char*>(counts), sizeof(counts));
  for (const Entry& element : elements.entries_) {
    AggregateElementHeader header{
        static_cast<uint8_t>(element.type), element.is_array,
        static_cast<uint16_t>(std::min<size_t>(element.name.size(), 0xffff)),
        element.count, ValueSize(element)};
    payload.append(reinterpret_cast<const char*>(&header), sizeof(header));
    payload.append(element.name.data(), header.name_size);
    payload.resize(PadTo8(payload.size()));
    payload.append(static_cast<const char*>(elements.data(element)),
                   header.value_size);
    payload.resize(PadTo8(payload.size()));
  }
  SetRaw(name, OpAttrType::kAggregate, false, payload.data(), payload.size(),
         payload.size());
}

std::optional<OpAttrs> OpAttrs::GetAggregate(absl::string_view name) const {
  const Entry* entry = Find(name);
  if (!entry || entry->type != OpAttrType::kAggregate) return std::nullopt;
  return AggregateOf(*entry);
}

OpAttrs OpAttrs::AggregateOf(const Entry& entry) const {
  // Written by SetAggregate, so well formed.
  const char* p = static_cast<const char*>(data(entry));
  uint32_t count;
  std::memcpy(&count, p, sizeof(count));
  size_t offset = 2 * sizeof(uint32_t);
  OpAttrs elements;
  for (uint32_t i = 0; i < count; ++i) {
    AggregateElementHeader header;
    std::memcpy(&header, p + offset, sizeof(header));
    offset += sizeof(header);
    absl::string_view element_name(p + offset, header.name_size);
    offset = PadTo8(offset + header.name_size);
    elements.SetRaw(element_name, static_cast<OpAttrType>(header.type),
                    header.is_array != 0, p + offset, header.value_size,
                    header.count);
    offset = PadTo8(offset + header.value_size);
  }
  return elements;
}

const OpAttrs::Entry* OpAttrs::Find(absl::string_view name) const {
  for (const Entry& entry : entries_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::optional<absl::string_view> OpAttrs::GetString(
    absl::string_view name) const {
  const Entry* entry = Find(name);
  if (!entry || entry->type != OpAttrType::kChar || !entry->is_array) {
    return std::nullopt;
  }
  return absl::string_view(static_cast<const char*>(data(*entry)),
                           entry->count);
}

std::optional<DenseAttr> OpAttrs::GetDense(absl::string_view name) const {
  const Entry* entry = Find(name);
  if (!entry || entry->type != OpAttrType::kDense) return std::nullopt;
  return DenseOf(*entry);
}

DenseAttr OpAttrs::DenseOf(const Entry& entry) const {
  const char* p = static_cast<const char*>(data(entry));
  DenseHeader header;
  std::memcpy(&header, p, sizeof(header));
  DenseAttr dense;
  dense.dtype = static_cast<DType>(header.dtype);
  dense.shape = absl::Span<const int64_t>(
      reinterpret_cast<const int64_t*>(p + sizeof(header)), header.rank);
  size_t header_size = sizeof(header) + header.rank * sizeof(int64_t);
  dense.data = p + header_size;
  dense.data_size = entry.count - header_size;
  return dense;
}

std::optional<ShapeAttr> OpAttrs::GetShape(absl::string_view name) const {
  const Entry* entry = Find(name);
  if (!entry || entry->type != OpAttrType::kShape) return std::nullopt;
  return ShapeOf(*entry);
}

ShapeAttr OpAttrs::ShapeOf(const Entry& entry) const {
  const int64_t* p = static_cast<const int64_t*>(data(entry));
  ShapeAttr shape;
  shape.ranked = p[0] >= 0;
  if (shape.ranked) shape.dims = absl::Span<const int64_t>(p + 1, p[0]);
  return shape;
}

const Function* OpAttrs::GetFunc(absl::string_view name) const {
  const Entry* entry = Find(name);
  if (!entry || entry->type != OpAttrType::kFunc) return nullptr;
  const Function* function;
  std::memcpy(&function, data(*entry), sizeof(function));
  return function;
}

std::optional<int64_t> OpAttrs::GetInteger(absl::string_view name) const {
  const Entry* entry = Find(name);
  if (!entry || (entry->is_array && entry->count != 1)) return std::nullopt;
  return LoadInteger(entry->type, data(*entry));
}

std::optional<absl::InlinedVector<int64_t, 4>> OpAttrs::GetIntegerArray(
    absl::string_view name) const {
  const Entry* entry = Find(name);
  if (!entry) return std::nullopt;
  if (!entry->is_array) {
    auto value = LoadInteger(entry->type, data(*entry));
    if (!value) return std::nullopt;
    return absl::InlinedVector<int64_t, 4>{*value};
  }
  absl::InlinedVector<int64_t, 4> values;
  size_t size = OpAttrTypeSize(entry->type);
  const char* p = static_cast<const char*>(data(*entry));
  for (uint32_t i = 0; i < entry->count; ++i) {
    auto value = LoadInteger(entry->type, p + i * size);
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  return values;
}

void OpAttrs::Print(std::string* out) const {
  if (entries_.empty()) {
    out->append("OpAttrs is empty\n");
    return;
  }
  absl::StrAppend(out, "OpAttrs contains ", entries_.size(), " entries:\n");
  std::vector<const Entry*> sorted;
  for (const Entry& entry : entries_) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry* a, const Entry* b) { return a->name < b->name; });
  for (const Entry* entry : sorted) {
    absl::StrAppend(out, "  '", entry->name,
                    "' type=", OpAttrTypeName(entry->type), " value=");
    PrintValue(*entry, out);
    out->append("\n");
  }
}

std::string OpAttrs::DebugString() const {
  std::string out;
  Print(&out);
  return out;
}

OpAttrsRef::OpAttrsRef(OpAttrs attrs)
    : holder_(MakeRef<Holder>(std::move(attrs))) {}

void OpAttrs::PrintValue(const Entry& entry, std::string* out) const {
  const char* p = static_cast<const char*>(data(entry));
  if (entry.type == OpAttrType::kAggregate) {
    OpAttrs elements = AggregateOf(entry);
    absl::StrAppend(out, "elt_count=", elements.size(), " [");
    for (size_t i = 0; i < elements.entries_.size(); ++i) {
      if (i) out->append(", ");
      const Entry& element = elements.entries_[i];
      // Dense elements print in braces, so their commas stay readable.
      bool braces = element.type == OpAttrType::kDense;
      if (braces) out->append("{");
      elements.PrintValue(element, out);
      if (braces) out->append("}");
    }
    out->append("]");
  } else if (entry.type == OpAttrType::kDense) {
    DenseAttr dense = DenseOf(entry);
    auto type = OpAttrTypeForDType(dense.dtype);
    absl::StrAppend(out, "dtype=", type ? OpAttrTypeName(*type) : "STRING",
                    ", rank=", dense.shape.size(),
                    ", elt_count=", dense.NumElements());
  } else if (entry.type == OpAttrType::kShape) {
    ShapeAttr shape = ShapeOf(entry);
    if (!shape.ranked) {
      out->append("<unranked>");
    } else {
      out->append("<");
      for (size_t i = 0; i < shape.dims.size(); ++i) {
        if (i) out->append("x");
        if (shape.dims[i] < 0) {
          out->append("?");
        } else {
          absl::StrAppend(out, shape.dims[i]);
        }
      }
      out->append(">");
    }
  } else if (entry.type == OpAttrType::kChar && entry.is_array) {
    out->append(p, entry.count);
  } else if (entry.is_array) {
    // Long arrays are elided after five elements, as TFRT prints them.
    constexpr uint32_t kMaxPrinted = 5;
    out->append("[");
    size_t size = OpAttrTypeSize(entry.type);
    for (uint32_t i = 0; i < entry.count && i < kMaxPrinted; ++i) {
      if (i) out->append(", ");
      AppendScalar(entry.type, p + i * size, out);
    }
    if (entry.count > kMaxPrinted) out->append("...");
    out->append("]");
  } else {
    AppendScalar(entry.type, p, out);
  }
}

}  // namespace asyncrt
