//===- Launchers.h - Typed C++ launchers of a .tile file -------*- C++ -*-===//
//
// `kiln compile --emit=launcher-header|launcher-source`: a header that
// declares one typed function per kernel (and a C accessor of the bundle),
// and a source that defines them over the bundle, embedded as an array.
// docs/cli.md and docs/cmake.md describe the output; kiln/launcher.h is
// what it is written in.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_LAUNCHERS_H
#define KILN_TOOLS_KILN_LAUNCHERS_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln {

struct LauncherParam {
  std::string name; ///< As declared.
  bool pointer = false;
  std::string type; ///< The scalar or the pointee type: "f32", "bf16".
};

struct LauncherKernel {
  std::string name;
  std::vector<LauncherParam> params;
  /// The declaration up to the body, whitespace collapsed (for the
  /// comment).
  std::string declaration;
  size_t variants = 0;
};

/// One .tile file's launchers.
struct LauncherFile {
  /// "softmax.tile": printable, without '"' or '\\' (it is written into
  /// comments and a string literal).
  std::string sourceName;
  std::string ident;      ///< The file's stem as an identifier: "softmax".
  std::string ns;         ///< The C++ namespace: "demo", "a::b".
  std::string targets;    ///< The bundle's targets, for the source's comment.
  std::vector<LauncherKernel> kernels;
};

/// The file's stem as a C identifier: other characters become '_', runs
/// of '_' one, none at either end, a leading digit gets a 'k' ("layer-norm.tile"
/// -> "layer_norm", "3d.tile" -> "k3d").
std::string launcherIdent(llvm::StringRef path);

/// Whether `name` can name the launchers' namespace ("ns", "a::b":
/// identifiers that are no keyword, without "__" or '_' at an end, not in
/// std or kiln); otherwise sets `why`.
bool isLauncherNamespace(llvm::StringRef name, std::string &why);

/// Why a kernel cannot have a launcher of its name ("" if it can): a C++
/// keyword, a macro of the standard headers, or a bundle object's prefix.
std::string launcherNameProblem(llvm::StringRef kernel,
                                const LauncherFile &file);

std::string launcherHeader(const LauncherFile &file);
std::string launcherSource(const LauncherFile &file, llvm::StringRef bundle);

} // namespace kiln

#endif // KILN_TOOLS_KILN_LAUNCHERS_H
