// Traits and interfaces of the tfrt dialects that the compiler reads
// (declared in ODS in tfrt_traits.td):
//
//   OpTrait::CompileOnly        never runs as a kernel (no kernel of its name)
//   OpTrait::NonStrict          its kernel is registered non-strict
//   RegionOperandsOpInterface   the operands its regions receive
#ifndef ASYNCRT_DIALECTS_TFRT_TFRT_TRAITS_H_
#define ASYNCRT_DIALECTS_TFRT_TFRT_TRAITS_H_

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"

namespace asyncrt::tfrt {
namespace OpTrait {

// An op that the compiler consumes and that never becomes a kernel call
// (tfrt.return ends a function body).
template <typename ConcreteType>
class CompileOnly : public mlir::OpTrait::TraitBase<ConcreteType, CompileOnly> {
};

// An op whose kernel starts before its operands are available
// (KernelStrictness::kNonStrict).
template <typename ConcreteType>
class NonStrict : public mlir::OpTrait::TraitBase<ConcreteType, NonStrict> {};

}  // namespace OpTrait

// Whether the registered op `name` carries the trait.
inline bool IsCompileOnly(mlir::RegisteredOperationName name) {
  return name.hasTrait<OpTrait::CompileOnly>();
}
inline bool IsNonStrict(mlir::RegisteredOperationName name) {
  return name.hasTrait<OpTrait::NonStrict>();
}

}  // namespace asyncrt::tfrt

// clang-format off
#include "asyncrt/dialects/tfrt/tfrt_interfaces.h.inc"
// clang-format on

#endif  // ASYNCRT_DIALECTS_TFRT_TFRT_TRAITS_H_
