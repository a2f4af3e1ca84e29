// One source of truth for ops: every op that our dialects define in ODS runs
// as the kernel of the same name, and every kernel is an op of our dialects.
//
//   - An ODS op without a kernel passes asyncrt-opt and asyncrt-translate and
//     fails only when the program is loaded. Ops that never run (function
//     terminators) say so with the TFRT_CompileOnly trait.
//   - A kernel without an ODS op can only be written in generic form, which
//     nothing verifies.
//   - The strictness the compiler reads (TFRT_NonStrict) is the strictness
//     the kernel is registered with.
//
// The kernels are those a Runtime registers with the production libraries
// and the test kernels (asyncrt::test_kernels) linked in, as bef_executor
// has them.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/dialects/register_dialects.h"
#include "asyncrt/dialects/tfrt/tfrt_traits.h"
#include "asyncrt/host_context/kernel_registry.h"
#include "asyncrt/runtime/runtime.h"
#include "gtest/gtest.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OperationSupport.h"

namespace asyncrt {
namespace {

// The dialects AsyncRT defines: their ops are kernels.
const std::set<std::string>& OurDialects() {
  static const auto* dialects = new std::set<std::string>{
      "tfrt",
      "tfrt_test",
      "tfrt_tutorial",
      "vt",
      "tfrt_tensor",
      "t",
      "ht",
      "ts",
      "tfrt_dht",
      "tfrt_dht_sync",
      "tfrt_sht",
      "coo",
      "corert",
      "corert_sync",
  };
  return *dialects;
}

// Model-level dialects (built where oneDNN is): their ops are runtime ops
// of the OpRegistry, which corert.executeop runs by the same name; the
// lowering turns their constants into tensors.
const std::set<std::string>& OpDialects() {
  static const auto* dialects = new std::set<std::string>{"nn"};
  return *dialects;
}

// Upstream dialects RegisterAllDialects brings in (and those they load):
// their ops are compiled, never run as kernels of ours.
const std::set<std::string>& UpstreamDialects() {
  static const auto* dialects =
      new std::set<std::string>{"builtin", "func", "arith", "cf", "ub"};
  return *dialects;
}

// Kernels registered under a name no ODS op has, each with its reason.
// Keep this list tiny: a kernel a program can name is an op of our dialects.
const std::map<std::string, std::string>& KernelsWithoutOps() {
  static const auto* kernels = new std::map<std::string, std::string>{};
  return *kernels;
}

struct Ops {
  std::set<std::string> kernel_ops;    // Must have a kernel.
  std::set<std::string> compile_only;  // Must not.
  std::set<std::string> non_strict;    // Their kernels are non-strict.
};

class OpKernelConsistencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mlir::DialectRegistry registry;
    RegisterAllDialects(registry);
    context_ = std::make_unique<mlir::MLIRContext>(registry);
    context_->loadAllAvailableDialects();

    auto runtime = Runtime::Create();
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
  }

  Ops OdsOps() {
    Ops ops;
    for (mlir::RegisteredOperationName op :
         context_->getRegisteredOperations()) {
      std::string dialect = op.getDialectNamespace().str();
      if (!OurDialects().count(dialect)) continue;
      std::string name = op.getStringRef().str();
      if (tfrt::IsCompileOnly(op)) {
        ops.compile_only.insert(name);
      } else {
        ops.kernel_ops.insert(name);
      }
      if (tfrt::IsNonStrict(op)) ops.non_strict.insert(name);
    }
    return ops;
  }

  const KernelRegistry& kernels() { return runtime_->host().registry(); }

  std::unique_ptr<mlir::MLIRContext> context_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(OpKernelConsistencyTest, EveryDialectIsClassified) {
  // A new dialect is either ours (its ops need kernels) or upstream.
  std::vector<std::string> unknown;
  for (mlir::Dialect* dialect : context_->getLoadedDialects()) {
    std::string name = dialect->getNamespace().str();
    if (!OurDialects().count(name) && !UpstreamDialects().count(name) &&
        !OpDialects().count(name)) {
      unknown.push_back(name);
    }
  }
  EXPECT_TRUE(unknown.empty())
      << "add to OurDialects, OpDialects or UpstreamDialects: "
      << absl::StrJoin(unknown, ", ");
  // And each of ours is registered.
  for (const std::string& name : OurDialects()) {
    EXPECT_NE(context_->getLoadedDialect(name), nullptr) << name;
  }
}

TEST_F(OpKernelConsistencyTest, EveryModelOpIsARuntimeOp) {
  std::vector<std::string> missing;
  int checked = 0;
  for (mlir::RegisteredOperationName op : context_->getRegisteredOperations()) {
    if (!OpDialects().count(op.getDialectNamespace().str())) continue;
    std::string name = op.getStringRef().str();
    if (op.hasTrait<mlir::OpTrait::ConstantLike>()) continue;
    // Names a runtime op in its attribute instead of being one.
    if (name == "nn.runtime_op") continue;
    ++checked;
    if (!OpRegistry::Global().Find(name)) missing.push_back(name);
  }
  EXPECT_TRUE(missing.empty())
      << "ODS ops of model-level dialects without a runtime op:\n  "
      << absl::StrJoin(missing, "\n  ");
  if (context_->getLoadedDialect("nn") != nullptr) {
    EXPECT_GT(checked, 40);
  }
}

TEST_F(OpKernelConsistencyTest, EveryOpHasAKernel) {
  Ops ops = OdsOps();
  ASSERT_FALSE(ops.kernel_ops.empty());
  std::vector<std::string> missing;
  for (const std::string& op : ops.kernel_ops) {
    if (!kernels().GetKernel(op)) missing.push_back(op);
  }
  EXPECT_TRUE(missing.empty())
      << missing.size()
      << " ODS ops have no kernel (add the kernel, or mark the op "
         "TFRT_CompileOnly if it never runs):\n  "
      << absl::StrJoin(missing, "\n  ");
}

TEST_F(OpKernelConsistencyTest, CompileOnlyOpsHaveNoKernel) {
  Ops ops = OdsOps();
  EXPECT_TRUE(ops.compile_only.count("tfrt.return"));
  std::vector<std::string> with_kernel;
  for (const std::string& op : ops.compile_only) {
    if (kernels().GetKernel(op)) with_kernel.push_back(op);
  }
  EXPECT_TRUE(with_kernel.empty()) << "TFRT_CompileOnly ops with a kernel:\n  "
                                   << absl::StrJoin(with_kernel, "\n  ");
}

TEST_F(OpKernelConsistencyTest, EveryKernelHasAnOp) {
  Ops ops = OdsOps();
  std::vector<std::string> missing;
  for (const std::string& kernel : kernels().KernelNames()) {
    if (ops.kernel_ops.count(kernel) || KernelsWithoutOps().count(kernel)) {
      continue;
    }
    missing.push_back(kernel);
  }
  EXPECT_TRUE(missing.empty())
      << missing.size()
      << " kernels have no ODS op (define the op, delete the kernel, or "
         "list it in KernelsWithoutOps with a reason):\n  "
      << absl::StrJoin(missing, "\n  ");
}

TEST_F(OpKernelConsistencyTest, KernelsWithoutOpsAreStillNeeded) {
  Ops ops = OdsOps();
  for (const auto& [kernel, reason] : KernelsWithoutOps()) {
    EXPECT_NE(kernels().GetKernel(kernel), nullptr)
        << kernel << " is no longer registered: drop it from the list";
    EXPECT_FALSE(ops.kernel_ops.count(kernel))
        << kernel << " has an op now: drop it from the list";
  }
}

TEST_F(OpKernelConsistencyTest, StrictnessMatchesTheNonStrictTrait) {
  Ops ops = OdsOps();
  std::vector<std::string> mismatched;
  for (const std::string& op : ops.kernel_ops) {
    if (!kernels().GetKernel(op)) continue;  // Reported above.
    bool trait = ops.non_strict.count(op) > 0;
    if (trait != kernels().IsNonStrict(op)) {
      mismatched.push_back(op + (trait ? " (TFRT_NonStrict, kernel strict)"
                                       : " (kernel non-strict, no trait)"));
    }
  }
  EXPECT_TRUE(mismatched.empty()) << absl::StrJoin(mismatched, "\n  ");
}

}  // namespace
}  // namespace asyncrt
