//===- Diagnostics.cpp - Located error reporting for the front end --------===//

#include "dsl/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::SourceMgr;
using llvm::StringRef;

/// Source lines longer than this are shown as a window around the location.
static constexpr size_t kMaxShownLine = 160;
/// Characters shown on either side of the location in a long line.
static constexpr size_t kWindowHalf = 60;

DiagnosticEngine::DiagnosticEngine(llvm::SourceMgr &srcMgr,
                                   llvm::raw_ostream *os, unsigned maxErrors)
    : srcMgr(srcMgr), os(os ? *os : llvm::errs()), maxErrors(maxErrors) {}

namespace {
/// The source line around `loc`, as it will be displayed.
struct LineInfo {
  unsigned bufferId = 0;
  unsigned line = 0;
  unsigned column = 0; ///< 1-based byte column.
  const char *lineStart = nullptr;
  const char *lineEnd = nullptr;
};
} // namespace

static bool findLine(const SourceMgr &sm, SMLoc loc, LineInfo &info) {
  if (!loc.isValid())
    return false;
  unsigned id = sm.FindBufferContainingLoc(loc);
  if (!id)
    return false;
  const llvm::MemoryBuffer *buf = sm.getMemoryBuffer(id);
  auto [line, col] = sm.getLineAndColumn(loc, id);
  info.bufferId = id;
  info.line = line;
  info.column = col;
  info.lineStart = loc.getPointer() - (col - 1);
  const char *end = loc.getPointer();
  const char *bufEnd = buf->getBufferEnd();
  // Bounded scan: only the shown window matters for very long lines.
  const char *limit =
      bufEnd - end > static_cast<ptrdiff_t>(kMaxShownLine + kWindowHalf)
          ? end + kMaxShownLine + kWindowHalf
          : bufEnd;
  while (end < limit && *end != '\n' && *end != '\r')
    ++end;
  info.lineEnd = end;
  return true;
}

/// Whether `SourceMgr::PrintMessage` can show this line as it is: short and
/// plain printable ASCII (so that the caret lines up).
static bool isPlainLine(const LineInfo &info) {
  if (static_cast<size_t>(info.lineEnd - info.lineStart) > kMaxShownLine)
    return false;
  for (const char *p = info.lineStart; p < info.lineEnd; ++p) {
    unsigned char c = static_cast<unsigned char>(*p);
    if (c != '\t' && (c < 0x20 || c > 0x7E))
      return false;
  }
  return true;
}

/// Prints a diagnostic whose source line is long or contains bytes that
/// cannot be shown: a sanitized window of the line, with the caret placed
/// within it, and the true line:column in the header.
static void printWindowed(const SourceMgr &sm, llvm::raw_ostream &os,
                          SMLoc loc, SourceMgr::DiagKind kind,
                          const llvm::Twine &msg,
                          llvm::ArrayRef<SMRange> ranges,
                          const LineInfo &info) {
  size_t col0 = info.column - 1;
  size_t lineLen = info.lineEnd - info.lineStart;
  size_t from = 0, to = lineLen;
  if (lineLen > kMaxShownLine) {
    from = col0 > kWindowHalf ? col0 - kWindowHalf : 0;
    to = std::min(lineLen, col0 + kWindowHalf);
  }
  std::string shown;
  if (from > 0)
    shown += "...";
  size_t offset = shown.size();
  for (size_t i = from; i < to; ++i) {
    unsigned char c = static_cast<unsigned char>(info.lineStart[i]);
    shown.push_back(c == '\t' || (c >= 0x20 && c <= 0x7E) ? static_cast<char>(c)
                                                           : '?');
  }
  if (to < lineLen)
    shown += "...";

  std::vector<std::pair<unsigned, unsigned>> colRanges;
  const char *winStart = info.lineStart + from;
  const char *winEnd = info.lineStart + to;
  for (SMRange r : ranges) {
    if (!r.isValid())
      continue;
    const char *s = std::max(r.Start.getPointer(), winStart);
    const char *e = std::min(r.End.getPointer(), winEnd);
    if (s >= e)
      continue;
    colRanges.emplace_back(unsigned(s - winStart + offset),
                           unsigned(e - winStart + offset));
  }

  StringRef fileName =
      sm.getMemoryBuffer(info.bufferId)->getBufferIdentifier();
  llvm::SMDiagnostic d(sm, loc, fileName, int(info.line),
                       int(col0 - from + offset), kind, msg.str(), shown,
                       colRanges);
  os << (fileName == "-" ? StringRef("<stdin>") : fileName) << ':'
     << info.line << ':' << info.column << ": ";
  d.print(nullptr, os, /*ShowColors=*/true, /*ShowKindLabel=*/true,
          /*ShowLocation=*/false);
}

static void emit(const SourceMgr &sm, llvm::raw_ostream &os, SMLoc loc,
                 SourceMgr::DiagKind kind, const llvm::Twine &msg,
                 llvm::ArrayRef<SMRange> ranges) {
  LineInfo info;
  if (!findLine(sm, loc, info) || isPlainLine(info)) {
    sm.PrintMessage(os, loc, kind, msg, ranges);
    return;
  }
  printWindowed(sm, os, loc, kind, msg, ranges, info);
}

void DiagnosticEngine::error(SMLoc loc, const llvm::Twine &msg,
                             llvm::ArrayRef<SMRange> ranges) {
  if (numErrors >= maxErrors) {
    ++numErrors;
    lastDropped = true;
    return;
  }
  ++numErrors;
  lastDropped = false;
  if (!context.empty()) {
    os << context << '\n';
    context.clear();
  }
  emit(srcMgr, os, loc, SourceMgr::DK_Error, msg, ranges);
  if (numErrors >= maxErrors && !limitReported) {
    limitReported = true;
    // Notes for this last error would follow the "stopping" line; drop them.
    lastDropped = true;
    os << "error: too many errors emitted, stopping now\n";
  }
  os.flush();
}

void DiagnosticEngine::note(SMLoc loc, const llvm::Twine &msg,
                            llvm::ArrayRef<SMRange> ranges) {
  if (lastDropped)
    return;
  emit(srcMgr, os, loc, SourceMgr::DK_Note, msg, ranges);
  os.flush();
}

void DiagnosticEngine::warning(SMLoc loc, const llvm::Twine &msg,
                               llvm::ArrayRef<SMRange> ranges) {
  if (limitReported) {
    lastDropped = true;
    return;
  }
  lastDropped = false;
  emit(srcMgr, os, loc, SourceMgr::DK_Warning, msg, ranges);
  os.flush();
}

/// Whether `a` becomes `b` by swapping two adjacent characters (a common
/// typo that plain edit distance counts as two edits).
static bool isTransposition(StringRef a, StringRef b) {
  if (a.size() != b.size())
    return false;
  size_t i = 0;
  while (i < a.size() && a[i] == b[i])
    ++i;
  return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] &&
         a.drop_front(i + 2) == b.drop_front(i + 2);
}

std::string kiln::dsl::suggestName(StringRef name,
                                   llvm::ArrayRef<std::string> candidates) {
  unsigned threshold = std::max<unsigned>(1, name.size() / 3);
  std::string best;
  unsigned bestDist = threshold + 1;
  for (const std::string &cand : candidates) {
    // Cheap filter: lengths too far apart cannot be within the threshold.
    size_t diff = cand.size() > name.size() ? cand.size() - name.size()
                                            : name.size() - cand.size();
    if (diff > threshold)
      continue;
    unsigned dist = isTransposition(name, cand)
                        ? 1
                        : name.edit_distance(cand, /*AllowReplacements=*/true,
                                             /*MaxEditDistance=*/threshold);
    if (dist < bestDist) {
      bestDist = dist;
      best = cand;
    }
  }
  return best;
}
