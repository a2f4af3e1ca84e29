// Passes of AsyncRT's compiler side (asyncrt::compiler). Registration is
// explicit: tools call the Register* functions they want, nothing registers
// itself at static-initialization time.
#ifndef ASYNCRT_COMPILER_PASSES_H_
#define ASYNCRT_COMPILER_PASSES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace asyncrt::compiler {

// `-tfrt-print-stream`: a test pass on func.func that runs StreamAnalysis and
// emits the remark "stream id: N, stream cost: C, parent stream: P" on the
// function (its root stream) and on every op of its body. Declarations are
// skipped. Changes no IR.
std::unique_ptr<mlir::Pass> CreatePrintStreamPass();

// Makes `-tfrt-print-stream` known to the pass pipeline parser (MlirOptMain).
// Call once, before parsing the command line; not thread-safe.
void RegisterPrintStreamPass();

// `-nn-to-corert`: lowers every function of a module from the nn dialect
// (tensors) to the form BEF runs: tensor arguments and results become
// !corert.tensorhandle, each nn op a corert.executeop of the runtime op of
// the same name on the "cpu" op handler (looked up once per function),
// with its attributes as op attributes, nn.constant a
// corert.const_dense_tensor and func.return tfrt.return. A function with a
// buffer plan (`nn.arena_size`, from -nn-plan-buffers) runs its ops on a
// `corert.arena_op_handler` of that size instead.
//
// Placement: an nn op with `nn.device = "SIM:0"` (kDeviceAttribute) runs
// on that device's op handler (corert.get_op_handler "SIM:0"); without
// one, or with "CPU:0", on the CPU's. Nothing moves implicitly at run
// time, so the lowering makes every move explicit: an operand that lives
// on another device than its op (function arguments and constants live on
// the host, results where their op ran) is copied there first by a
// corert.transfer_inferred_tensortype (one per value and device), and
// results returned from another device are copied back to the host.
// A function with `nn.values_on = "SIM:0"` (kValuesOnAttribute) takes its
// tensor arguments on that device and returns its results there instead
// (a lazy trace's tensors live on their device). nn.runtime_op becomes a
// corert.executeop of the runtime op it names.
// `synthetic_weights` (option `synthetic-weights`): see
// ModelPipelineOptions.
std::unique_ptr<mlir::Pass> CreateNnToCoreRtPass(
    bool synthetic_weights = false);
void RegisterNnToCoreRtPass();

// `-corert-outline-device-graphs`, after -nn-to-corert: a function whose
// device work is all on one device (corert.executeop on its op handler,
// constants made there) and fed only by values copied there gets that work
// moved into a function of its own, `@NAME_on_TYPE_N`, which it calls with
// corert.captured_call: the runtime records it once as a device graph (a
// CUDA graph) and replays it, one launch per call instead of one per op.
// Anything else is left as it is.
std::unique_ptr<mlir::Pass> CreateOutlineDeviceGraphsPass();
void RegisterOutlineDeviceGraphsPass();

// `-corert-fuse-op-sequences`, last in the model pipeline: a chain of
// corert.executeop on one op handler in which each op's result is read only
// by the next op (one result each, no function attributes) becomes one
// corert.execute_sequence where the chain's last op was. The kernel runs
// the ops one after another: one kernel for the executor to schedule
// instead of one per op, no register between them, and each op's buffer
// free for the next to reuse. The same results and errors (an error is
// reported at the sequence, which has the chain's locations).
std::unique_ptr<mlir::Pass> CreateFuseOpSequencesPass();
void RegisterFuseOpSequencesPass();

// The attribute that places an nn op on a device: the device's short name
// ("SIM:0", "CPU:0").
inline constexpr char kDeviceAttribute[] = "nn.device";
// The function attribute naming where a function's tensor arguments and
// results live (see CreateNnToCoreRtPass).
inline constexpr char kValuesOnAttribute[] = "nn.values_on";
// Whether `name` is a short device name: an upper-case type of letters,
// digits and '_', a colon, an index ("SIM:0").
bool IsShortDeviceName(llvm::StringRef name);

// `-nn-assign-device="device=SIM:0"`: the compiler's placement. Every nn op
// without `nn.device` gets it (nn.constant stays on the host: its value is
// copied where it is used). An invalid name is an error.
std::unique_ptr<mlir::Pass> CreateNnAssignDevicePass(std::string device);
void RegisterNnAssignDevicePass();

// `-nn-channels-last="device=CUDA:0"`: the 2-D convolutions and pooling
// placed on `device` (static shapes, NCHW) run in NHWC (`data_format =
// "NHWC"`, a convolution's weights M x kH x kW x C/group), the layout
// tensor-core kernels read. Each gets transposes from and back to NCHW;
// then transposes that cancel are removed, those of constants folded into
// the constant, those that move only unit dimensions made reshapes, and
// elementwise ops computed before the transposes of their operands, so
// that a chain of convolutions keeps NHWC between them and transposes
// only where it begins and ends.
std::unique_ptr<mlir::Pass> CreateNnChannelsLastPass(std::string device);
void RegisterNnChannelsLastPass();

// `-nn-fuse-attention`: y = reshape(transpose(matmul(softmax(matmul(q',
// k') * scale), v'), [0, 2, 1, 3]), [B, S, H x Dv]), where q', k' and v'
// are the heads of batch x sequence x hidden tensors q, k, v (reshaped to
// [B, S, H, D] and transposed, k' to [B, H, D, S]) and every intermediate
// has one use on one device, becomes y = nn.attention(q, k, v) with
// q_num_heads, kv_num_heads and scale: one kernel on a device instead of
// four transposes, two products and a softmax.
std::unique_ptr<mlir::Pass> CreateNnFuseAttentionPass();
void RegisterNnFuseAttentionPass();

// `-nn-fuse-qkv`: nn.attention(matmul(x, wq, bq), matmul(x, wk, bk),
// matmul(x, wv, bv)) with constant weights and biases, each product used
// only there, becomes nn.attention(matmul(x, [wq wk wv], [bq bk bv]))
// {qkv_widths}: one wider product instead of three narrow ones, read in
// place by the attention.
std::unique_ptr<mlir::Pass> CreateNnFuseQkvPass();
void RegisterNnFuseQkvPass();

// `-nn-convert-precision="dtype=f16"` (or bf16): the model computes in the
// narrow type and keeps its f32 signature. f32 constants are converted
// (rounded to nearest even), f32 arguments are cast at entry and results
// back to f32 before the return, the model's own casts to f32 cast to the
// narrow type, and every other op's result types come from the runtime's
// shape function on the narrowed operands; an op whose shape function does
// not take the narrow type computes in f32 between casts. For devices that
// compute in f16 and bf16 (the CPU computes them in f32 on the same
// rounded values).
std::unique_ptr<mlir::Pass> CreateNnConvertPrecisionPass(std::string dtype);
void RegisterNnConvertPrecisionPass();

// `-nn-fuse`: folds what follows a convolution or a matmul into it. An
// inference batch normalization of a convolution with constant weights
// and parameters folds into its weights and bias. Then, as oneDNN
// post-ops: a constant bias added to a matmul becomes its bias; an
// nn.add of the result (its only use) and a tensor of the same shape makes
// that tensor the op's fused sum (a residual connection; a zero bias is
// added where the op had none); then nn.relu, nn.leaky_relu, nn.clip or
// nn.gelu of it, or its product with or quotient by a scalar constant
// ("linear"), becomes its `activation`. Also recognizes GELU and last-axis
// layer normalization as PyTorch exports them (written out in elementwise
// ops and reductions) and makes them nn.gelu and nn.layer_normalization,
// drops pads of nothing (every pad 0), and makes a symmetric zero pad of
// the spatial dimensions read only by an average pooling (then counting
// the padding) or a convolution that op's own `pads`. Greedy; results
// equal the unfused ops' up to rounding.
std::unique_ptr<mlir::Pass> CreateNnFusionPass();
void RegisterNnFusionPass();

// `-nn-assign-layouts`: layout assignment. A convolution, pooling, channel
// scaling or concatenation, batch normalization or relu (4-D f32) whose
// every use reads oneDNN's layouts as they are (a convolution's input or
// fused sum, the input of a pooling, batch normalization or relu, the
// operands of a channel scaling or concatenation) gets
// `result_layout = "onednn"`:
// at run time its result stays in the layout oneDNN computed it in (a
// OneDnnTensor) instead of being reordered to the plain layout and back by
// the next op. Values that reach other ops or the function's results stay
// plain, so reorders happen only at the edges of such chains. A chain
// that holds a Winograd candidate (ungrouped 3x3, stride 1, channels in
// multiples of 16) gets `compute_layout = "blocked"` on its candidates and
// 1x1 convolutions. With `winograd` false (the pass option
// `winograd=false`), every convolution gets `algorithm = "direct"`
// instead: the results of oneDNN's direct kernels, bit for bit.
std::unique_ptr<mlir::Pass> CreateNnAssignLayoutsPass(bool winograd = true);
void RegisterNnAssignLayoutsPass();

// `-nn-plan-buffers`: the buffer plan. Each function (one block) gets one
// arena per call for its intermediate tensors: every single-result nn op
// that computes a new tensor of static shape and whose value (or a view of
// it: reshape, flatten, squeeze, unsqueeze, cast, ...) reaches neither the
// function's results nor an op of another dialect gets `_buffer_offset`
// and `_buffer_size` (its slot in the arena, in bytes), and the function
// `nn.arena_size`. Two values share bytes only if the dataflow orders
// every reader of one before the other's producer, so the plan
// holds in any schedule the executor picks. Placement is greedy by size; a
// convolution or matmul that reads its fused sum last takes the sum's
// bytes. -nn-to-corert turns the plan into `corert.arena_op_handler`; at
// run time a result that does not fit its slot is allocated as before.
std::unique_ptr<mlir::Pass> CreateNnPlanBuffersPass();
void RegisterNnPlanBuffersPass();

// `-nn-fuse-elementwise`: chains of f32 elementwise nn ops (those of
// asyncrt/backends/fused_elementwise.h, without attributes, on operands of
// the chain's shape or of one element) whose intermediate results nothing
// else reads become one nn.fused_elementwise, which the CPU runs in one
// pass over the elements. Bitwise the same results. First, a relu of a
// batch normalization nothing else reads becomes the normalization's
// `activation = "relu"` (one pass instead of two). Host only (device
// plug-ins have neither).
std::unique_ptr<mlir::Pass> CreateNnFuseElementwisePass();
void RegisterNnFuseElementwisePass();

// The model pipeline, from a module in the nn dialect (an imported model)
// to one that the BEF converter takes: -nn-fuse, -nn-fuse-elementwise,
// -nn-assign-layouts, -nn-plan-buffers, -nn-to-corert (and on a device
// -corert-outline-device-graphs), then -corert-fuse-op-sequences.
// Registered as
// `-asyncrt-model-pipeline` by RegisterModelPipeline.
struct ModelPipelineOptions {
  // Winograd kernels for the 3x3 convolutions that have them (see
  // CreateNnAssignLayoutsPass).
  bool winograd = true;
  // The buffer plan (-nn-plan-buffers); without it each intermediate
  // tensor is allocated when it is computed.
  bool plan_buffers = true;
  // -nn-fuse-elementwise (host, f32 only).
  bool fuse_elementwise = true;
  // Where the model's ops run (-nn-assign-device); empty or "CPU:0": the
  // host. On another device, oneDNN's layouts and the host buffer plan do
  // not apply: the pipeline is -nn-fuse, -nn-assign-device, -nn-to-corert.
  std::string device;
  // "f16" or "bf16": -nn-convert-precision after the fusion pass; empty:
  // the model's own types. On the host (which computes halves in f32, to
  // check a device's results) without oneDNN's layouts or a buffer plan.
  std::string precision;
  // For benchmarks only: constants of more than 1024 elements become
  // corert.synthetic_dense_tensor_on (deterministic pseudo-random values
  // made when the program first runs), so that the BEF holds no weights.
  bool synthetic_weights = false;
  // On a device other than the host: its work is one device graph
  // (-corert-outline-device-graphs), recorded on the second call and
  // replayed after where the device has graphs.
  bool device_graphs = true;
  // On a CUDA device: convolutions and pooling in NHWC
  // (-nn-channels-last), which cuDNN's tensor-core kernels read without
  // converting.
  bool channels_last = true;
  // On a CUDA device: attention as one nn.attention (-nn-fuse-attention),
  // which reads the heads in place instead of transposing them (docs/gpu.md).
  bool fuse_attention = true;
  // With fuse_attention: its Q, K and V projections as one product
  // (-nn-fuse-qkv): BERT-base 0.86 -> 0.72 ms on an H200.
  bool fuse_qkv = true;
};
void AddModelPipeline(mlir::OpPassManager& pipeline,
                      const ModelPipelineOptions& options = {});
void RegisterModelPipeline();

// Runs the model pipeline on `module` (in place), then converts it to BEF.
// Errors are the context's diagnostics.
mlir::FailureOr<std::vector<uint8_t>> CompileModelToBef(mlir::ModuleOp module);

}  // namespace asyncrt::compiler

#endif  // ASYNCRT_COMPILER_PASSES_H_
