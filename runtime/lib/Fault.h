//===- Fault.h - Fault injection points of the runtime ----------*- C++ -*-===//
//
// The runtime's failure paths (an allocation that fails, a driver that
// refuses, a file that cannot be read) are only as good as the tests that
// reach them. Each place where the runtime meets the outside world asks
//
//   if (fault::inject(fault::Point::DlOpen, "dlopen"))
//     ... take the failure path as if dlopen had returned null ...
//
// In libkiln_runtime (the shipped libraries) `inject` is a constant false
// and every point compiles away: there is no production switch. The tests
// (test/runtime/FaultTest.cpp) link their own copy of the runtime compiled
// with KILN_FAULT_INJECTION, whose `fault::control` makes the Nth call of a
// chosen point fail, and walk N over every call of the main flows.
//
// The points, by kind (docs/testing.md lists each place):
//   Allocate    device and host memory (aligned_alloc, the emulator's
//               fiber stacks, GPU memory before the driver is asked)
//   FileRead    opening and reading bundle and .npy files
//   DlOpen      dlopen of a GPU driver or a host code object
//   DlSym       dlsym of a driver entry point or a kernel's entry
//   ModuleLoad  a device loading one code object
//   Launch      a device launching a kernel
//   DriverCall  every call into the CUDA driver or HIP, but the releases
//               (whose failure nothing could act on)
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_FAULT_H
#define KILN_RUNTIME_FAULT_H

#include <cstdint>
#include <string>

namespace kiln::rt::detail::fault {

enum class Point : unsigned {
  Allocate,
  FileRead,
  DlOpen,
  DlSym,
  ModuleLoad,
  Launch,
  DriverCall,
};
constexpr unsigned kNumPoints = 7;

#ifdef KILN_FAULT_INJECTION
/// True when this call of `P` is the one armed to fail; `What` names the
/// call for the test's report ("cuModuleLoadData", "aligned_alloc").
bool inject(Point P, const char *What);

/// The test's side (FaultTest.cpp). Not thread-safe against arming while
/// calls run: the walks are single-threaded.
namespace control {
/// "Allocate", "FileRead", ...
const char *name(Point P);
/// Counts back to zero, nothing armed.
void reset();
/// Calls of `P` since the last reset.
uint64_t count(Point P);
/// The `N`th call (1-based) of `P` after this one fails, and the
/// `Count - 1` calls after it; N = 0 disarms.
void arm(Point P, uint64_t N, uint64_t Count = 1);
/// What failed first since arming, for reports ("DriverCall #3
/// (cuMemAlloc_v2)"); "" if no armed call was reached.
std::string fired();
/// The `What` of that call ("cuMemAlloc_v2"); "" if none.
std::string firedCall();
} // namespace control
#else
constexpr bool inject(Point, const char *) { return false; }
#endif

} // namespace kiln::rt::detail::fault

#endif // KILN_RUNTIME_FAULT_H
