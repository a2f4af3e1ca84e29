// Little-endian byte encoding and bounds-checked decoding for BEF.
#ifndef ASYNCRT_LIB_BEF_BYTE_IO_H_
#define ASYNCRT_LIB_BEF_BYTE_IO_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace asyncrt::bef {

inline void PutU8(std::vector<uint8_t>& out, uint8_t value) {
  out.push_back(value);
}
inline void PutU32(std::vector<uint8_t>& out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}
inline void PutU64(std::vector<uint8_t>& out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}
inline void PutBytes(std::vector<uint8_t>& out,
                     absl::Span<const uint8_t> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}
inline void PadTo(std::vector<uint8_t>& out, size_t alignment) {
  while (out.size() % alignment != 0) out.push_back(0);
}

// Reads a byte range, failing with a DataLoss status that names what was
// being read and where, instead of reading past the end.
class ByteReader {
 public:
  ByteReader(absl::Span<const uint8_t> bytes, absl::string_view what)
      : bytes_(bytes), what_(what) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return bytes_.size() - offset_; }
  bool AtEnd() const { return offset_ == bytes_.size(); }

  // Outputs are zeroed on failure, so no caller ever sees garbage.
  absl::Status ReadU8(uint8_t* value) {
    *value = 0;
    if (remaining() < 1) return Truncated(1);
    *value = bytes_[offset_++];
    return absl::OkStatus();
  }
  absl::Status ReadU32(uint32_t* value) {
    *value = 0;
    if (remaining() < 4) return Truncated(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{bytes_[offset_ + i]} << (8 * i);
    offset_ += 4;
    *value = v;
    return absl::OkStatus();
  }
  absl::Status ReadU64(uint64_t* value) {
    *value = 0;
    if (remaining() < 8) return Truncated(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{bytes_[offset_ + i]} << (8 * i);
    offset_ += 8;
    *value = v;
    return absl::OkStatus();
  }
  absl::Status ReadBytes(size_t size, absl::Span<const uint8_t>* value) {
    if (remaining() < size) return Truncated(size);
    *value = bytes_.subspan(offset_, size);
    offset_ += size;
    return absl::OkStatus();
  }
  absl::Status SkipTo(size_t alignment) {
    size_t aligned = (offset_ + alignment - 1) / alignment * alignment;
    if (aligned > bytes_.size()) return Truncated(aligned - offset_);
    offset_ = aligned;
    return absl::OkStatus();
  }
  // A count of items of `item_size` bytes each that must fit in what is
  // left: rejects absurd counts from corrupted files before allocating.
  absl::Status ReadCount(size_t item_size, uint32_t* count) {
    if (auto status = ReadU32(count); !status.ok()) return status;
    if (item_size > 0 && *count > remaining() / item_size) {
      return Error(absl::StrCat("count ", *count, " exceeds the ", remaining(),
                                " bytes left"));
    }
    return absl::OkStatus();
  }

  absl::Status Error(absl::string_view message) const {
    return absl::DataLossError(absl::StrCat(
        "malformed BEF: ", what_, " at offset ", offset_, ": ", message));
  }

 private:
  absl::Status Truncated(size_t wanted) const {
    return Error(absl::StrCat("truncated (needs ", wanted, " more bytes, ",
                              remaining(), " left)"));
  }

  absl::Span<const uint8_t> bytes_;
  absl::string_view what_;
  size_t offset_ = 0;
};

}  // namespace asyncrt::bef

#endif  // ASYNCRT_LIB_BEF_BYTE_IO_H_
