// The inliner interface of dialects whose ops are plain kernels: they carry
// no constraints, so tfrt.call into functions using them may be inlined.
#ifndef ASYNCRT_DIALECTS_KERNEL_INLINER_H_
#define ASYNCRT_DIALECTS_KERNEL_INLINER_H_

#include "mlir/Transforms/InliningUtils.h"

namespace asyncrt {

struct KernelInlinerInterface : public mlir::DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(mlir::Region* dest, mlir::Region* src,
                       bool would_be_cloned,
                       mlir::IRMapping& value_mapping) const final {
    return true;
  }

  bool isLegalToInline(mlir::Operation* op, mlir::Region* dest,
                       bool would_be_cloned,
                       mlir::IRMapping& value_mapping) const final {
    return true;
  }
};

}  // namespace asyncrt

#endif  // ASYNCRT_DIALECTS_KERNEL_INLINER_H_
