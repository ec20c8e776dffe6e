//===- SanitizerDefaults.cpp - AddressSanitizer defaults of Kiln's tools --===//
//
// Compiled into every executable of a KILN_SANITIZE=address build
// (cmake/KilnSanitize.cmake).
//
// LLVM's headers poison and unpoison the slabs of their bump allocators
// (llvm/Support/Allocator.h) when the code that includes them is built
// with AddressSanitizer, but Debian's libLLVM.so and libMLIR.so are not:
// a slab that Kiln's inlined header code poisoned is handed out by the
// uninstrumented libraries without being unpoisoned, and the next
// intercepted memcpy into it is reported as a use-after-poison that is
// not one. Manual poisoning is therefore off; every other check (heap,
// stack and globals, use after free, leaks) stays on. ASAN_OPTIONS in the
// environment still wins.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
