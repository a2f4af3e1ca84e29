// Registers the dialects AsyncRT's compiler-side tools understand.
#ifndef ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_
#define ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_

#include "mlir/IR/DialectRegistry.h"

namespace asyncrt {

// Adds tfrt, tfrt_test and func (with func's inliner extension) to
// `registry`. Dialects load lazily, when a context first needs them. Other
// dialects (tfrt_dht, corert, ...) are not registered: tools accept their
// ops as unregistered (MLIRContext::allowUnregisteredDialects).
void RegisterAllDialects(mlir::DialectRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_
