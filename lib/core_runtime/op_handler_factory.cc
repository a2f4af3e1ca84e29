#include "asyncrt/core_runtime/op_handler_factory.h"

#include "asyncrt/support/static_registration.h"

namespace asyncrt {

using FactoryTable = internal::NameTable<OpHandlerFactory>;

void RegisterOpHandlerFactory(absl::string_view device_type,
                              OpHandlerFactory factory) {
  FactoryTable::Get().Set(device_type, factory);
}

OpHandlerFactory FindOpHandlerFactory(absl::string_view device_type) {
  return FactoryTable::Get().Find(device_type);
}

std::vector<std::string> RegisteredDeviceTypes() {
  return FactoryTable::Get().Names();
}

}  // namespace asyncrt
