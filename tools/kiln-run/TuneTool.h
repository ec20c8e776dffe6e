//===- TuneTool.h - `kiln tune`, as a library -------------------*- C++ -*-===//
//
// Offline tuning sweeps (docs/tuning.md): shared by `kiln tune` (which
// compiles a .tile file first) and `kiln-run tune` (bundles only, for
// machines without the compiler). No LLVM or MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_RUN_TUNETOOL_H
#define KILN_TOOLS_KILN_RUN_TUNETOOL_H

#include "kiln/runtime.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::runtool {

/// The usage of `kiln tune` (`Tool` is "kiln" or "kiln-run").
std::string tuneUsage(const std::string &Tool);

/// Compiles a .tile file's kernel into a bundle in memory (for `targets`,
/// default host, with `pins`); what `kiln tune` passes. An error with an
/// empty message means the compiler already reported it.
using TileCompiler = std::function<rt::Expected<std::string>(
    const std::string &Path, const std::string &Kernel,
    const std::vector<std::string> &Targets,
    const std::vector<std::pair<std::string, int64_t>> &Pins)>;

/// `TOOL tune ...`: argv[0] is "tune"; a sweep (one kernel from the command
/// line, or a sweep file), `merge` or `export`. Sources are bundles, and
/// .tile files when `Compile` is given. Exit codes: 0; 1 (a bad argument,
/// or a point failed); 2 (I/O, the device).
int runTuneTool(const std::string &Tool, int Argc, char **Argv,
                const TileCompiler *Compile = nullptr);

} // namespace kiln::runtool

#endif // KILN_TOOLS_KILN_RUN_TUNETOOL_H
