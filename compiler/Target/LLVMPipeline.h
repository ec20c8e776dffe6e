//===- LLVMPipeline.h - LLVM's optimization pipeline for backends -*- C++ -*-===//
//
// Every backend that ends in LLVM IR runs LLVM's default module pipeline
// for its target machine before code generation; this is the one place
// that sets it up.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TARGET_LLVMPIPELINE_H
#define KILN_COMPILER_TARGET_LLVMPIPELINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
class Operation;
} // namespace mlir

namespace kiln {

/// `module` (in the LLVM dialect, with its dialects' translations
/// registered) as LLVM IR in `ctx`, named `name`; null when translation
/// fails (the diagnostics went to the module's context).
std::unique_ptr<llvm::Module> translateToLLVMIR(mlir::Operation *module,
                                                llvm::LLVMContext &ctx,
                                                llvm::StringRef name);

/// Runs LLVM's default per-module pipeline at `level`, with the analyses
/// of `tm` (target transform info, data layout).
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &tm,
                        llvm::OptimizationLevel level);

/// LLVM's target machine for `triple`, `cpu` and `features`, at O3 code
/// generation, position-independent when `pic` (every LLVM target is
/// initialized once, on first use). The error names the triple and CPU.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(llvm::StringRef triple, llvm::StringRef cpu,
                    llvm::StringRef features, bool pic);

/// A temporary file's path, removed when this goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  TempFile() = default;
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  ~TempFile();
};

/// ld.lld from the Debian package lld-22 (PATH, then /usr/lib/llvm-22/bin).
llvm::Expected<std::string> findLld();

/// Code generation of `module` by `tm` into an object file, then
/// `ld.lld -shared --build-id=none ARGS... -o OUT OBJECT [INPUTS...]`: the
/// linked shared object's bytes (a host .so, an AMDGPU code object).
/// `what` names the module in errors.
llvm::Expected<std::string>
emitAndLinkShared(llvm::Module &module, llvm::TargetMachine &tm,
                  llvm::ArrayRef<std::string> args,
                  llvm::ArrayRef<std::string> inputs, llvm::StringRef what);


} // namespace kiln

#endif // KILN_COMPILER_TARGET_LLVMPIPELINE_H
