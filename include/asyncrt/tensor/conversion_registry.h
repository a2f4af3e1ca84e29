// Tensor conversions between tensor types (and, later, devices).
//
// A conversion function turns a tensor of one TensorType into an AsyncValue
// holding a tensor of another type. Functions are registered per (source
// type, destination type) pair; the devices are passed to the function so a
// device-specific conversion can branch on them.
//
// Host conversions registered by default:
//   ScalarHost -> DenseHost, CooHost -> DenseHost, DenseHost -> CooHost,
//   and the identity (a CopyRef) for DenseHost, StringHost, CooHost and
//   ScalarHost.
//
// Thread-safety: Register and Find may be called concurrently from any
// thread (a std::mutex guards the table); registering before execution
// starts keeps lookups uncontended.
#ifndef ASYNCRT_TENSOR_CONVERSION_REGISTRY_H_
#define ASYNCRT_TENSOR_CONVERSION_REGISTRY_H_

#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/device.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/tensor/tensor.h"

namespace asyncrt {

// Converts `src` (which lives on `src_device`) into a tensor of `dst_type` on
// `dst_device`. Returns (+1) an AsyncValue holding the CONCRETE destination
// tensor class, available now or later, or an error value (not reported:
// the caller reports it where it surfaces, see EmitErrorAsync). `src` is
// borrowed only for the duration of the call: a function that finishes
// later must take what it needs (e.g. a CopyRef) before returning.
using TensorConversionFn = RCReference<AsyncValue> (*)(
    const Tensor& src, const Device& src_device, const Device& dst_device,
    TensorType dst_type, const ExecutionContext& exec_ctx);

class TensorConversionRegistry {
 public:
  // The process-wide registry, with the host conversions registered.
  static TensorConversionRegistry& Global();

  // An empty registry (for tests and embedders that want their own).
  TensorConversionRegistry() = default;
  TensorConversionRegistry(const TensorConversionRegistry&) = delete;
  TensorConversionRegistry& operator=(const TensorConversionRegistry&) =
      delete;

  // Registers `fn` for src -> dst, replacing an earlier registration.
  void Register(TensorType src, TensorType dst, TensorConversionFn fn);

  // The function for src -> dst, or nullptr.
  TensorConversionFn Find(TensorType src, TensorType dst) const;

 private:
  mutable std::mutex mutex_;
  // Guarded by mutex_.
  absl::flat_hash_map<std::pair<TensorType, TensorType>, TensorConversionFn>
      fns_;
};

// Converts `src` to `dst_type` with the function registered in the global
// registry. Converting to the same type on the same device gives a CopyRef
// of `src` (through the registered identity conversion). If no function is
// registered, returns an error value (InvalidArgument) reading
// "Cannot implictly convert <src type> to <dst type>" (TFRT's spelling).
// Errors are returned, not reported through the diagnostic handler, so that
// the caller reports each error once.
RCReference<AsyncValue> ConvertTensor(const Tensor& src,
                                      const Device& src_device,
                                      const Device& dst_device,
                                      TensorType dst_type,
                                      const ExecutionContext& exec_ctx);

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_CONVERSION_REGISTRY_H_
