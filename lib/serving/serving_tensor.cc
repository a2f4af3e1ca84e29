#include "asyncrt/serving/serving_tensor.h"

#include "absl/strings/str_cat.h"

namespace asyncrt::serving {

void AppendLengthPrefixed(absl::Span<const std::string> strings,
                          std::string* out) {
  for (const std::string& value : strings) {
    const auto length = static_cast<uint32_t>(value.size());
    for (int k = 0; k < 4; ++k) {
      out->push_back(static_cast<char>((length >> (8 * k)) & 0xFF));
    }
    out->append(value);
  }
}

absl::StatusOr<std::vector<std::string>> ParseLengthPrefixed(
    absl::string_view data, int64_t count, absl::string_view what) {
  std::vector<std::string> strings;
  while (!data.empty()) {
    if (static_cast<int64_t>(strings.size()) >= count) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": has more BYTES elements than its shape holds (", count,
          ")"));
    }
    if (data.size() < 4) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": a BYTES element is cut short"));
    }
    uint32_t length = 0;
    for (int k = 3; k >= 0; --k) {
      length = (length << 8) | static_cast<unsigned char>(data[k]);
    }
    data.remove_prefix(4);
    if (data.size() < length) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": a BYTES element is cut short"));
    }
    strings.emplace_back(data.substr(0, length));
    data.remove_prefix(length);
  }
  if (static_cast<int64_t>(strings.size()) != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": has ", strings.size(), " BYTES elements for ", count));
  }
  return strings;
}

}  // namespace asyncrt::serving
