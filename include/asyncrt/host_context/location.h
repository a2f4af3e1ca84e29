// Source locations of kernels, decoded lazily for diagnostics.
#ifndef ASYNCRT_HOST_CONTEXT_LOCATION_H_
#define ASYNCRT_HOST_CONTEXT_LOCATION_H_

#include <cstdint>
#include <optional>
#include <string>

namespace asyncrt {

// A decoded position in a source file (1-based line and column).
struct DecodedLocation {
  std::string filename;
  int line = -1;
  int column = -1;
  // The name scope the program gave it ("scope/op"), or empty.
  std::string name;
};

class Location;

// Turns the compact Location that the executor carries into a file
// position. Implemented by whatever loaded the program (the BEF file, which
// stores locations in its own section). Must be thread-safe.
class LocationHandler {
 public:
  virtual ~LocationHandler() = default;
  virtual std::optional<DecodedLocation> DecodeLocation(Location loc) const = 0;
};

// A compact location: a handler plus an opaque word the handler interprets
// (for BEF, an offset into the location section). Trivially copyable.
class Location {
 public:
  Location() = default;
  Location(const LocationHandler* handler, intptr_t data)
      : handler_(handler), data_(data) {}

  const LocationHandler* handler() const { return handler_; }
  intptr_t data() const { return data_; }

  // nullopt for an unknown location.
  std::optional<DecodedLocation> Decode() const {
    if (handler_ == nullptr) return std::nullopt;
    return handler_->DecodeLocation(*this);
  }

 private:
  const LocationHandler* handler_ = nullptr;
  intptr_t data_ = 0;
};

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_LOCATION_H_
