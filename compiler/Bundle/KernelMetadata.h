//===- KernelMetadata.h - Bundle metadata from specialized IR --*- C++ -*-===//
//
// Reads the launch metadata of each kernel (grid, key, launch conditions,
// the variants' const-param values) from the module that `tile-specialize`
// produces: one nested `module @<kernel>_v<i>` per variant, holding the
// kernel's `func.func` with `kiln.grid`, `kiln.key`, `kiln.where` and its
// arguments' `kiln.name`.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_BUNDLE_KERNELMETADATA_H
#define KILN_COMPILER_BUNDLE_KERNELMETADATA_H

#include "compiler/Bundle/Bundle.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln::bundle {

/// "softmax_v3": the name of a variant's module and its entry symbol.
std::string variantName(llvm::StringRef kernel, int64_t index);

/// Metadata of every kernel of `signatures` (in that order; the driver
/// fills them from the AST), from the specialized module. A kernel without
/// variants, or a signature that does not match the kernel's arguments, is
/// an error (a bug between the driver and the passes).
llvm::Expected<std::vector<KernelMetadata>>
collectKernelMetadata(mlir::ModuleOp specialized,
                      llvm::ArrayRef<KernelSignature> signatures);

/// The module of variant `index` of `kernel`, or null.
mlir::ModuleOp lookupVariantModule(mlir::ModuleOp specialized,
                                   llvm::StringRef kernel, int64_t index);

} // namespace kiln::bundle

#endif // KILN_COMPILER_BUNDLE_KERNELMETADATA_H
