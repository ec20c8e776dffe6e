//===- kiln.cpp - The Kiln compiler driver --------------------------------===//
//
// `kiln` with the backends that this build includes; see Driver.cpp and
// docs/cli.md.
//
//===----------------------------------------------------------------------===//
#include "compiler/Target/Backends.h"
#include "tools/kiln/Driver.h"

#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/Signals.h"

#include <string>

int main(int argc, char **argv) {
  // A crash (in LLVM's code generators, say) is reported as an internal
  // error with the command and what the crashing thread was compiling
  // (compileVariant's stack entry), never a bare "Segmentation fault".
  static std::string report =
      "kiln: internal compiler error: kiln crashed (a bug in Kiln or in the "
      "LLVM it uses). Please report it with the .tile file, this command "
      "and the output below:\n ";
  for (int i = 0; i < argc; ++i)
    report += std::string(" ") + argv[i];
  report += "\n";
  llvm::setBugReportMsg(report.c_str());
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  llvm::EnablePrettyStackTrace();
  kiln::registerBuiltinBackends();
  return kiln::runDriver(llvm::ArrayRef<const char *>(argv + 1, argv + argc));
}
