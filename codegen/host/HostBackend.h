//===- HostBackend.h - The host CPU backend --------------------*- C++ -*-===//
//
// The public entries of codegen/host: a factory that registers the host
// backend with the TargetBackend registry, and the emission of a host
// shared object from LLVM IR (which the emulator backend shares).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_HOST_HOSTBACKEND_H
#define KILN_CODEGEN_HOST_HOSTBACKEND_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln {

/// Registers the host backend (archs "host", "native", "x86-64-v2",
/// "generic", ...).
void registerHostBackend();

/// Registers the host backend's passes (convert-tile-to-host) for kiln-opt.
void registerHostPasses();

namespace host {

/// A linked host shared object and what it was compiled for.
struct SharedObject {
  std::string bytes;
  std::string triple, cpu, features;
};

/// Compiles `module` for this machine's triple and `cpu`/`features`
/// (position-independent, every function but `entry` internal, LLVM's
/// pipeline at `level`) and links it with ld.lld into a shared object that
/// needs libc, libm and `libraries` (file names in the system library
/// directory, e.g. "libgcc_s.so.1").
llvm::Expected<SharedObject>
emitSharedObject(llvm::Module &module, llvm::StringRef cpu,
                 llvm::StringRef features, llvm::StringRef entry,
                 llvm::OptimizationLevel level,
                 llvm::ArrayRef<std::string> libraries);

} // namespace host
} // namespace kiln

#endif // KILN_CODEGEN_HOST_HOSTBACKEND_H
