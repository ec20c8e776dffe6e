//===- kiln-opt.cpp - Pass runner for the kiln dialect --------------------===//
//
// A thin MlirOptMain over the kiln dialect, the upstream dialects that kiln
// IR uses, the upstream transforms (canonicalize, cse, inline, ...) and the
// kiln passes. lit tests drive it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#ifdef KILN_HAVE_HOST_PASSES
#include "codegen/host/HostPasses.h"
#endif

#include "compiler/GPU/Passes.h"

#ifdef KILN_HAVE_AMDGPU_PASSES
#include "codegen/amdgpu/AMDGPUPasses.h"
#endif
#ifdef KILN_HAVE_NVPTX_PASSES
#include "codegen/nvptx/NVPTXPasses.h"
#endif

#ifdef KILN_HAVE_EMU_PASSES
#include "codegen/emu/EmuPasses.h"
#endif

#if __has_include("compiler/Transforms/Passes.h")
#include "compiler/Transforms/Passes.h"
#define KILN_HAVE_TRANSFORMS 1
#endif

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
#ifdef KILN_HAVE_TRANSFORMS
  kiln::registerKilnPasses();
#endif
  kiln::gpu::registerKilnGPUPasses();
#ifdef KILN_HAVE_AMDGPU_PASSES
  kiln::amdgpu::registerKilnAMDGPUPasses();
#endif
#ifdef KILN_HAVE_NVPTX_PASSES
  kiln::nvptx::registerKilnNVPTXPasses();
#endif
#ifdef KILN_HAVE_EMU_PASSES
  kiln::emu::registerKilnEmuPasses();
#endif

  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect,
                  mlir::cf::ControlFlowDialect>();
  mlir::func::registerInlinerExtension(registry);
  registry.insert<kiln::gpu::KilnGPUDialect, mlir::vector::VectorDialect>();
#ifdef KILN_HAVE_AMDGPU_PASSES
  kiln::amdgpu::registerAMDGPUDialects(registry);
#endif
#ifdef KILN_HAVE_NVPTX_PASSES
  kiln::nvptx::registerNVPTXDialects(registry);
#endif
#ifdef KILN_HAVE_EMU_PASSES
  kiln::emu::registerEmuDialects(registry);
#endif
#ifdef KILN_HAVE_HOST_PASSES
  kiln::registerHostPipelinePasses();
  kiln::registerHostDialects(registry);
#endif

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln pass runner\n", registry));
}
