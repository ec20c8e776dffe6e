//===- Backends.cpp - Registration of the built-in backends ---------------===//
//
// KILN_HAVE_<NAME>_BACKEND is defined by the top-level CMakeLists.txt only
// when the backend's option is on and its library target exists.
//
//===----------------------------------------------------------------------===//
#include "compiler/Target/Backends.h"

#ifdef KILN_HAVE_HOST_BACKEND
#include "codegen/host/HostBackend.h"
#endif
#ifdef KILN_HAVE_NVPTX_BACKEND
#include "codegen/nvptx/NVPTXBackend.h"
#endif
#ifdef KILN_HAVE_AMDGPU_BACKEND
#include "codegen/amdgpu/AMDGPUBackend.h"
#endif
#ifdef KILN_HAVE_EMU_BACKEND
#include "codegen/emu/EmuPasses.h"
#endif

void kiln::registerBuiltinBackends() {
  static const bool registered = [] {
#ifdef KILN_HAVE_HOST_BACKEND
    registerHostBackend();
#endif
#ifdef KILN_HAVE_NVPTX_BACKEND
    nvptx::registerNVPTXBackend();
#endif
#ifdef KILN_HAVE_AMDGPU_BACKEND
    amdgpu::registerAMDGPUBackend();
#endif
#ifdef KILN_HAVE_EMU_BACKEND
    // After the GPU backends: it emulates the archs they register.
    emu::registerEmuBackend();
#endif
    return true;
  }();
  (void)registered;
}
