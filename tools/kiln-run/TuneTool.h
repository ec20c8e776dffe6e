//===- TuneTool.h - `kiln tune`, as a library -------------------*- C++ -*-===//
//
// Offline tuning sweeps (docs/tuning.md): shared by `kiln tune` (which
// compiles a .tile file first) and `kiln-run tune` (bundles only, for
// machines without the compiler). No LLVM or MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_RUN_TUNETOOL_H
#define KILN_TOOLS_KILN_RUN_TUNETOOL_H

#include <string>

namespace kiln::runtool {

/// The usage of `kiln tune` (`Tool` is "kiln" or "kiln-run").
std::string tuneUsage(const std::string &Tool);

/// `TOOL tune ...`: argv[0] is "tune"; a sweep, `merge` or `export`. The
/// source is a bundle file, or (from `kiln tune`) `Bundle` holds a bundle
/// compiled in memory and `Label` names it. Exit codes: 0, 1 (a point
/// failed), 2 (usage), 3 (I/O).
int runTuneTool(const std::string &Tool, int Argc, char **Argv,
                const std::string *Bundle = nullptr,
                const std::string &Label = "");

} // namespace kiln::runtool

#endif // KILN_TOOLS_KILN_RUN_TUNETOOL_H
