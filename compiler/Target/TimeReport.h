//===- TimeReport.h - Where a compile's time goes (--time-report) -*- C++ -*-===//
//
// `kiln compile --time-report` prints, after the compile, the CPU time of
// each phase (the front end, the GPU stage and its fast-path runs, each
// backend's lowering, LLVM's translation, optimization and code
// generation, ptxas and the linker) summed over every compile worker, and
// the passes that took the most. Phases nest: a phase's time leaves out
// the phases opened inside it, so the rows add up to the whole. Time is
// the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which other work on the
// machine hardly changes; a child process (ptxas, ld.lld) adds its user +
// system time to the phase that ran it.
//
// Nothing is measured unless `enable()` was called: a Phase is then one
// load of a flag.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TARGET_TIMEREPORT_H
#define KILN_COMPILER_TARGET_TIMEREPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Program.h"

#include <optional>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class PassManager;
} // namespace mlir

namespace kiln::timing {

/// Starts collecting, for the rest of the process.
void enable();
bool enabled();

/// A phase on this thread, from construction to destruction.
class Phase {
public:
  explicit Phase(llvm::StringRef name);
  ~Phase();
  Phase(const Phase &) = delete;
  Phase &operator=(const Phase &) = delete;

private:
  bool active;
};

/// Adds a finished child process's CPU time (`stats` from
/// llvm::sys::ExecuteAndWait) to the phase running on this thread.
void addChildProcess(const std::optional<llvm::sys::ProcessStatistics> &stats);

/// Times each pass `pm` runs, as part of the phase it runs in.
void instrument(mlir::PassManager &pm);

/// The report: phases by CPU time, then the most expensive passes.
/// `wallSeconds`: the compile's elapsed time.
void print(llvm::raw_ostream &os, double wallSeconds);

} // namespace kiln::timing

#endif // KILN_COMPILER_TARGET_TIMEREPORT_H
