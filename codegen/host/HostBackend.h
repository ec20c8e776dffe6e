//===- HostBackend.h - The host CPU backend --------------------*- C++ -*-===//
//
// The only public entry of codegen/host: a factory that registers the host
// backend with the TargetBackend registry.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_HOST_HOSTBACKEND_H
#define KILN_CODEGEN_HOST_HOSTBACKEND_H

namespace kiln {

/// Registers the host backend (archs "host", "native", "x86-64-v2",
/// "generic", ...).
void registerHostBackend();

/// Registers the host backend's passes (convert-tile-to-host) for kiln-opt.
void registerHostPasses();

} // namespace kiln

#endif // KILN_CODEGEN_HOST_HOSTBACKEND_H
