//===- kiln.cpp - The Kiln compiler driver --------------------------------===//
//
// `kiln` with the backends that this build includes; see Driver.cpp and
// docs/cli.md.
//
//===----------------------------------------------------------------------===//
#include "compiler/Target/Backends.h"
#include "tools/kiln/Driver.h"

int main(int argc, char **argv) {
  kiln::registerBuiltinBackends();
  return kiln::runDriver(llvm::ArrayRef<const char *>(argv + 1, argv + argc));
}
