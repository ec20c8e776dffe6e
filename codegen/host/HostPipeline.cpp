//===- HostPipeline.cpp - From kiln IR to the LLVM dialect ---------------===//
#include "codegen/host/HostPasses.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

void kiln::registerHostDialects(DialectRegistry &registry) {
  registry.insert<LLVM::LLVMDialect, linalg::LinalgDialect,
                  memref::MemRefDialect, bufferization::BufferizationDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void kiln::registerHostPipelinePasses() {
  static bool once = [] {
    registerKilnHostPasses();
    registerTileExpandFp8();
    registerTransformsPasses();
    registerConversionPasses();
    registerLinalgPasses();
    bufferization::registerBufferizationPasses();
    bufferization::registerBufferizationPipelines();
    memref::registerMemRefPasses();
    arith::registerArithPasses();
    math::registerMathPasses();
    return true;
  }();
  (void)once;
}

void kiln::buildHostLoweringPipeline(OpPassManager &pm,
                                     const std::string &entrySuffix) {
  registerHostPipelinePasses();
  ConvertTileToHostOptions options;
  options.entrySuffix = entrySuffix;
  pm.addPass(createConvertTileToHost(options));
  // The rest is upstream: elementwise tensor ops become linalg.generic,
  // tensors become buffers (freed by the ownership-based deallocation),
  // linalg becomes loops, and everything becomes the LLVM dialect. bf16
  // conversions are expanded in IR: the host's libgcc lacks __truncsfbf2.
  // Math ops are not expanded (math-expand-ops): its fma is a multiply and
  // an add (two roundings), its tanh (1 - e^-2x) / (1 + e^-2x) loses the
  // relative accuracy near 0 and its exp2 is exp(x * ln 2); every math op
  // of the language maps to an LLVM intrinsic or to libm instead.
  static const char *kPipeline =
      "canonicalize,cse,"
      "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops),"
      "one-shot-bufferize{bufferize-function-boundaries=1 "
      "function-boundary-type-conversion=identity-layout-map "
      "allow-return-allocs-from-loops=1},"
      "func.func(buffer-hoisting),buffer-deallocation-pipeline,"
      "func.func(convert-linalg-to-loops),convert-bufferization-to-memref,"
      "expand-strided-metadata,lower-affine,"
      "convert-scf-to-cf,tile-expand-fp8,"
      "arith-emulate-unsupported-floats{source-types=f16,bf16 target-type=f32},"
      "kiln-host-legalize-floats,arith-expand{include-bf16=true},"
      "convert-math-to-llvm,convert-math-to-libm,"
      "finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,"
      "convert-func-to-llvm,convert-index-to-llvm,reconcile-unrealized-casts,"
      "canonicalize,kiln-host-half-as-i16,canonicalize";
  if (failed(parsePassPipeline(kPipeline, pm, llvm::errs())))
    llvm::report_fatal_error("invalid built-in host pipeline");
}
