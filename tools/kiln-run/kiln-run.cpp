//===- kiln-run.cpp - Run a kernel of a bundle on .npy inputs -------------===//
//
//   kiln-run BUNDLE --kernel NAME [--device auto|host|cuda[:N]|hip[:N]]
//            [--config P=V,...] [--out-dir DIR] ARG=VALUE...
//
// The runtime-only tool (RunTool.cpp): bundles run on machines that have no
// compiler.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"

int main(int argc, char **argv) {
  return kiln::runtool::runBundleTool(argc, argv);
}
