//===- FrontendFuzzer.cpp - libFuzzer target for the .tile front end ------===//
//
// Runs the lexer, parser, semantic analysis and tune-space enumeration on
// arbitrary bytes. Any crash, hang, sanitizer report or runaway allocation
// is a bug: bad input must only ever produce diagnostics.
//
//===----------------------------------------------------------------------===//
#include "dsl/Diagnostics.h"
#include "dsl/Parser.h"
#include "dsl/Sema.h"
#include "dsl/TuneSpace.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sm;
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.tile");
  unsigned id = sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  // Diagnostics are rendered (exercising the caret printer) but discarded.
  std::string sink;
  llvm::raw_string_ostream os(sink);
  kiln::dsl::DiagnosticEngine diag(sm, &os);
  auto module = kiln::dsl::parseModule(sm, id, diag);
  if (diag.hadError())
    return 0;
  kiln::dsl::Sema sema(diag, sm);
  if (!sema.check(*module))
    return 0;
  for (auto &k : module->kernels)
    (void)kiln::dsl::buildTuneSpace(*k, {}, diag, sm);
  return 0;
}
