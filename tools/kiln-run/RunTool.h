//===- RunTool.h - The kiln-run command, as a library ------------*- C++ -*-===//
//
// Shared by `kiln-run` (links only the runtime) and `kiln run` (the
// compiler driver, which compiles the .tile file to a bundle in memory
// first). No LLVM or MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_RUN_RUNTOOL_H
#define KILN_TOOLS_KILN_RUN_RUNTOOL_H

#include <string>

namespace kiln::runtool {

/// `kiln-run BUNDLE --kernel NAME ... ARG=VALUE...` (argv[0] is the tool).
int runBundleTool(int argc, char **argv);

/// The same on a bundle held in memory: `argv` has no bundle path; `tool`
/// prefixes error messages and `label` names the bundle in them.
int runInMemoryBundle(const std::string &tool, const std::string &bundle,
                      const std::string &label, int argc, char **argv);

} // namespace kiln::runtool

#endif // KILN_TOOLS_KILN_RUN_RUNTOOL_H
