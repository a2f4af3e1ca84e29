//===- ht_ops.td - The ht dialect -----------------------*- tablegen -*-===//
//
// The `ht` dialect (see tensor_base.td). It defines no ops: programs write
// its kernels, if any, in generic form.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TENSOR_HT_OPS_TD_
#define ASYNCRT_DIALECTS_TENSOR_HT_OPS_TD_

include "asyncrt/dialects/tensor/tensor_base.td"

#endif  // ASYNCRT_DIALECTS_TENSOR_HT_OPS_TD_
