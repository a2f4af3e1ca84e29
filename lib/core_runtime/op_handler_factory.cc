#include "asyncrt/core_runtime/op_handler_factory.h"

#include <algorithm>
#include <mutex>

#include "absl/container/flat_hash_map.h"

namespace asyncrt {
namespace {

struct FactoryTable {
  std::mutex mutex;
  absl::flat_hash_map<std::string, OpHandlerFactory> factories;
};

// Leaked, constructed on first use: safe from static initializers.
FactoryTable& Factories() {
  static auto* table = new FactoryTable;
  return *table;
}

}  // namespace

void RegisterOpHandlerFactory(absl::string_view device_type,
                              OpHandlerFactory factory) {
  FactoryTable& table = Factories();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.factories[device_type] = factory;
}

OpHandlerFactory FindOpHandlerFactory(absl::string_view device_type) {
  FactoryTable& table = Factories();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.factories.find(device_type);
  return it == table.factories.end() ? nullptr : it->second;
}

std::vector<std::string> RegisteredDeviceTypes() {
  FactoryTable& table = Factories();
  std::lock_guard<std::mutex> lock(table.mutex);
  std::vector<std::string> types;
  for (const auto& [type, factory] : table.factories) types.push_back(type);
  std::sort(types.begin(), types.end());
  return types;
}

}  // namespace asyncrt
