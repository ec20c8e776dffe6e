//===- RegisterOffsets.h - Register offsets into addresses -----*- C++ -*-===//
//
// The last step of the NVPTX backend's LLVM IR before code generation:
// each register's constant offset from its thread's first one moves out of
// the 64-bit address arithmetic into a `getelementptr i8`, which the
// instruction selection folds into the load's or store's immediate.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_NVPTX_REGISTEROFFSETS_H
#define KILN_CODEGEN_NVPTX_REGISTEROFFSETS_H

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace kiln::nvptx {

/// Rewrites `f`'s addresses (`inttoptr` of i64) as a part shared by the
/// registers plus a constant `getelementptr i8`, where that is exact.
/// Returns how many addresses it rewrote.
unsigned foldRegisterOffsets(llvm::Function &f);

/// The same for every function defined in `m`.
void foldRegisterOffsets(llvm::Module &m);

} // namespace kiln::nvptx

#endif // KILN_CODEGEN_NVPTX_REGISTEROFFSETS_H
