// Registers the dialects AsyncRT's compiler-side tools understand.
#ifndef ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_
#define ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_

#include "mlir/IR/DialectRegistry.h"

namespace asyncrt {

// Adds tfrt, tfrt_test, the host tensor dialects (tfrt_tensor/t, ht, ts,
// tfrt_dht, tfrt_dht_sync, tfrt_sht, coo), corert, corert_sync and func (with
// func's inliner extension) to `registry`. Dialects load lazily, when a
// context first needs them. Each accepts unknown ops of its namespace in
// generic form.
void RegisterAllDialects(mlir::DialectRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_
