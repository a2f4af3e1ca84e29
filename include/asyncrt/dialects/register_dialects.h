// Registers the dialects AsyncRT's compiler-side tools understand.
#ifndef ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_
#define ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_

#include "mlir/IR/DialectRegistry.h"

namespace asyncrt {

// Adds tfrt, the test dialects (tfrt_test, tfrt_tutorial, vt), the host
// tensor dialects (tfrt_tensor/t, ht, ts, tfrt_dht, tfrt_dht_sync, tfrt_sht,
// coo), corert, corert_sync and func (with func's inliner extension) to
// `registry`. Dialects load lazily, when a context first needs them. Each
// registered op of ours is a kernel of the same name, unless it is
// TFRT_CompileOnly (compiler/op_kernel_consistency_test.cc).
void RegisterAllDialects(mlir::DialectRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_DIALECTS_REGISTER_DIALECTS_H_
