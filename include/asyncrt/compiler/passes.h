// Passes of AsyncRT's compiler side (asyncrt::compiler). Registration is
// explicit: tools call the Register* functions they want, nothing registers
// itself at static-initialization time.
#ifndef ASYNCRT_COMPILER_PASSES_H_
#define ASYNCRT_COMPILER_PASSES_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace asyncrt::compiler {

// `-tfrt-print-stream`: a test pass on func.func that runs StreamAnalysis and
// emits the remark "stream id: N, stream cost: C, parent stream: P" on the
// function (its root stream) and on every op of its body. Declarations are
// skipped. Changes no IR.
std::unique_ptr<mlir::Pass> CreatePrintStreamPass();

// Makes `-tfrt-print-stream` known to the pass pipeline parser (MlirOptMain).
// Call once, before parsing the command line; not thread-safe.
void RegisterPrintStreamPass();

}  // namespace asyncrt::compiler

#endif  // ASYNCRT_COMPILER_PASSES_H_
