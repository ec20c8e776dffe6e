//===- Backends.h - The backends built into this binary --------*- C++ -*-===//
//
// Registers every backend that this build includes (its KILN_ENABLE_*
// option is on and its library exists). Tools call it once at start-up;
// further calls do nothing.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TARGET_BACKENDS_H
#define KILN_COMPILER_TARGET_BACKENDS_H

namespace kiln {

void registerBuiltinBackends();

} // namespace kiln

#endif // KILN_COMPILER_TARGET_BACKENDS_H
