#include "asyncrt/core_runtime/op_registry.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

namespace asyncrt {

const OpImplementation* OpEntry::FindImplementation(
    absl::string_view device_type) const {
  for (const OpImplementation& implementation : implementations) {
    if (implementation.device_type == device_type) return &implementation;
  }
  return nullptr;
}

int OpRegistry::DeviceTypeId(absl::string_view device_type) {
  static std::mutex* const mutex = new std::mutex;
  static auto* const ids = new absl::flat_hash_map<std::string, int>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto [it, inserted] =
      ids->try_emplace(device_type, static_cast<int>(ids->size()));
  return it->second;
}

namespace {
std::atomic<uint64_t> next_table_generation{1};
}  // namespace

OpRegistry::OpRegistry() {
  auto table = std::make_unique<Table>();
  table->generation = next_table_generation.fetch_add(1);
  table_.store(table.get(), std::memory_order_release);
  tables_.push_back(std::move(table));
}

namespace {

// Whether a[0, n) equals b[0, n), for sizeof(Word) <= n <= 2 sizeof(Word):
// a word at each end of both (overlapping for short names, all within
// [0, n)).
template <typename Word>
bool SameEnds(const char* a, const char* b, size_t n) {
  Word a_head, a_tail, b_head, b_tail;
  std::memcpy(&a_head, a, sizeof(Word));
  std::memcpy(&a_tail, a + n - sizeof(Word), sizeof(Word));
  std::memcpy(&b_head, b, sizeof(Word));
  std::memcpy(&b_tail, b + n - sizeof(Word), sizeof(Word));
  return a_head == b_head && a_tail == b_tail;
}

// Whether `a` and `b` (op names: mostly 4 to 16 characters) hold the same
// n bytes, without a call to memcmp on every eager or lazy op.
inline bool SameShortBytes(const char* a, const char* b, size_t n) {
  if (n >= 8 && n <= 16) return SameEnds<uint64_t>(a, b, n);
  if (n >= 4 && n < 8) return SameEnds<uint32_t>(a, b, n);
  return std::memcmp(a, b, n) == 0;
}

}  // namespace

const OpEntry* OpRegistry::FindByCallSite(absl::string_view name) const {
  struct Slot {
    const char* data = nullptr;
    uint64_t generation = 0;
    const OpEntry* entry = nullptr;
  };
  // Direct-mapped by a hash of the address of the name's characters (not
  // its low bits: literals like "nn.add" and "nn.mul" sit a few bytes
  // apart and would share a slot).
  constexpr int kSlotBits = 6;
  thread_local Slot cache[1 << kSlotBits];
  const Table& table = *table_.load(std::memory_order_acquire);
  Slot& slot = cache[(reinterpret_cast<uintptr_t>(name.data()) *
                      0x9E3779B97F4A7C15ull) >>
                     (64 - kSlotBits)];
  if (slot.data == name.data() && slot.generation == table.generation &&
      slot.entry->name.size() == name.size() &&
      SameShortBytes(slot.entry->name.data(), name.data(), name.size())) {
    return slot.entry;
  }
  auto it = table.ops.find(name);
  if (it == table.ops.end()) return nullptr;
  slot = Slot{name.data(), table.generation, it->second};
  return it->second;
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry* const registry = new OpRegistry;
  return *registry;
}

std::unique_ptr<OpEntry> OpRegistry::CopyOrNewEntry(
    absl::string_view name) const {
  const Table& table = *table_.load(std::memory_order_relaxed);
  auto it = table.ops.find(name);
  if (it != table.ops.end()) return std::make_unique<OpEntry>(*it->second);
  auto entry = std::make_unique<OpEntry>();
  entry->name = std::string(name);
  return entry;
}

void OpRegistry::Publish(std::unique_ptr<OpEntry> entry) {
  auto table = std::make_unique<Table>(*table_.load(std::memory_order_relaxed));
  table->generation = next_table_generation.fetch_add(1);
  table->ops[entry->name] = entry.get();
  entries_.push_back(std::move(entry));
  table_.store(table.get(), std::memory_order_release);
  tables_.push_back(std::move(table));
}

void OpRegistry::AddOp(absl::string_view name, OpMetadataFn metadata_fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<OpEntry> entry = CopyOrNewEntry(name);
  entry->metadata_fn = metadata_fn;
  Publish(std::move(entry));
}

void OpRegistry::AddDispatch(absl::string_view name,
                             absl::string_view device_type,
                             OpDispatchFn dispatch, uint32_t accepted_tensors,
                             const void* data) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<OpEntry> entry = CopyOrNewEntry(name);
  bool replaced = false;
  for (OpImplementation& implementation : entry->implementations) {
    if (implementation.device_type == device_type) {
      implementation.dispatch = dispatch;
      implementation.accepted_tensors = accepted_tensors;
      implementation.data = data;
      replaced = true;
    }
  }
  if (!replaced) {
    entry->implementations.push_back({std::string(device_type),
                                      DeviceTypeId(device_type), dispatch,
                                      accepted_tensors, data});
  }
  Publish(std::move(entry));
}

bool OpRegistry::HasDeviceType(absl::string_view device_type) const {
  const Table& table = *table_.load(std::memory_order_acquire);
  for (const auto& [name, entry] : table.ops) {
    if (entry->FindImplementation(device_type) != nullptr) return true;
  }
  return false;
}

std::vector<std::string> OpRegistry::OpNamesFor(
    absl::string_view device_type) const {
  const Table& table = *table_.load(std::memory_order_acquire);
  std::vector<std::string> names;
  for (const auto& [name, entry] : table.ops) {
    if (entry->FindImplementation(device_type) != nullptr) {
      names.emplace_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

void ApplyStaticOpRegistration(OpRegistration registration) {
  registration(OpRegistry::Global());
}

}  // namespace asyncrt
