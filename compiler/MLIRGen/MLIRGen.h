//===- MLIRGen.h - From the .tile AST to the kiln dialect ------*- C++ -*-===//
//
// Emits one generic `func.func` per kernel: const params are read through
// `kiln.const_param`, tiles whose size depends on them are dynamically
// shaped, and the pruned tune space rides along as `kiln.variants`. `fn`
// helpers become private functions (one per instance) that the
// `tile-inline-helpers` pass inlines. Every op carries the FileLineColLoc
// of the source construct it comes from.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_MLIRGEN_MLIRGEN_H
#define KILN_COMPILER_MLIRGEN_MLIRGEN_H

#include "dsl/AST.h"
#include "dsl/Sema.h"
#include "dsl/TuneSpace.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln {

struct KernelToEmit {
  const dsl::KernelDecl *kernel = nullptr;
  dsl::TuneSpace space;
};

/// Builds the generic module of `kernels` (a checked AST). Returns null
/// after reporting an error through the context's diagnostic handler.
mlir::OwningOpRef<mlir::ModuleOp>
emitModule(mlir::MLIRContext &ctx, dsl::Module &module, dsl::Sema &sema,
           llvm::SourceMgr &sm, llvm::ArrayRef<KernelToEmit> kernels);

/// Loads every dialect that emitted and specialized modules contain.
void loadKilnDialects(mlir::MLIRContext &ctx);

} // namespace kiln

#endif // KILN_COMPILER_MLIRGEN_MLIRGEN_H
