//===- Driver.h - The kiln command line ------------------------*- C++ -*-===//
//
// The driver is a library so that test tools can run it with extra
// backends registered (tools/kiln-bundle-test registers a fake one).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_DRIVER_H
#define KILN_TOOLS_KILN_DRIVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"

namespace kiln {

/// Exit codes of every kiln command.
constexpr int kExitUser = 1; ///< Bad input or command line.
constexpr int kExitEnv = 2;  ///< A file cannot be read or written, a tool failed.

/// Runs `kiln ARGS...` (without the program name) with the backends
/// registered so far; returns the exit code.
int runDriver(llvm::ArrayRef<const char *> args);

/// `kiln inspect FILE.kpack [--json]` (Inspect.cpp).
int runInspect(llvm::ArrayRef<const char *> args);

/// Prints "kiln: error: MSG" and the pointer to --help; returns kExitUser.
int usageError(const llvm::Twine &msg);

} // namespace kiln

#endif // KILN_TOOLS_KILN_DRIVER_H
