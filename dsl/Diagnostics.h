//===- Diagnostics.h - Located error reporting for the front end -*- C++ -*-===//
//
// All user-facing errors of the front end go through a DiagnosticEngine,
// which prints them with llvm::SourceMgr: `file:line:col: error: message`,
// the source line and a caret (plus the highlighted range). Errors are
// counted; after `maxErrors` further errors are dropped so that garbage
// input cannot flood the terminal.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_DIAGNOSTICS_H
#define KILN_DSL_DIAGNOSTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace kiln::dsl {

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &srcMgr,
                            llvm::raw_ostream *os = nullptr,
                            unsigned maxErrors = 20);

  /// Report an error at `loc`; `ranges` are underlined as well.
  void error(llvm::SMLoc loc, const llvm::Twine &msg,
             llvm::ArrayRef<llvm::SMRange> ranges = {});
  void error(llvm::SMRange range, const llvm::Twine &msg) {
    error(range.Start, msg, {range});
  }
  /// A note attached to the previous error (dropped if that was dropped).
  void note(llvm::SMLoc loc, const llvm::Twine &msg,
            llvm::ArrayRef<llvm::SMRange> ranges = {});
  void warning(llvm::SMLoc loc, const llvm::Twine &msg,
               llvm::ArrayRef<llvm::SMRange> ranges = {});

  unsigned getNumErrors() const { return numErrors; }
  bool hadError() const { return numErrors != 0; }
  /// True once the error limit is reached; callers may stop early.
  bool tooManyErrors() const { return numErrors >= maxErrors; }
  llvm::SourceMgr &getSourceMgr() { return srcMgr; }

  /// A context line printed once before the next error, e.g.
  /// "in variant BLOCK=128, warps=4" (empty: none).
  void setContext(std::string ctx) { context = std::move(ctx); }

private:
  llvm::SourceMgr &srcMgr;
  llvm::raw_ostream &os;
  unsigned maxErrors;
  unsigned numErrors = 0;
  bool lastDropped = false;
  bool limitReported = false;
  std::string context;
};

/// The name in `candidates` closest to `name` by edit distance, or "" when
/// none is close enough to be a plausible typo.
std::string suggestName(llvm::StringRef name,
                        llvm::ArrayRef<std::string> candidates);

} // namespace kiln::dsl

#endif // KILN_DSL_DIAGNOSTICS_H
