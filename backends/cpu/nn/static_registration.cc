// Always linked (see asyncrt_kernel_library): linking asyncrt::nn_ops is
// what registers the nn.* ops.
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/onednn_util.h"

ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterElementwiseOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterOneDnnOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterShapeOps);
// Wraps RegisterShapeOps' nn.concat.
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterOneDnnConcat);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterNormalizationOps);
// Wraps RegisterNormalizationOps' nn.batch_normalization and
// RegisterElementwiseOps' nn.relu.
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterOneDnnChannelwiseOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterResizeOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterIndexOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterNdIndexOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterQuantizeOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterGridSampleOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterLrnOp);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterEinsumOp);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterReverseSequenceOp);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterRecurrentOps);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterAttentionOp);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::RegisterFusedElementwiseOp);
// Last: wraps CPU implementations registered above.
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::nn::ComputeHalvesInF32OnCpu);
