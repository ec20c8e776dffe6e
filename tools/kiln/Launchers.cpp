//===- Launchers.cpp - Typed C++ launchers of a .tile file ----------------===//
//
// The generated code names everything outside its own namespace fully
// qualified (::kiln::rt::..., ::std::int32_t), so that a kernel or a
// parameter named like a type or a namespace shadows nothing it needs.
//
//===----------------------------------------------------------------------===//
#include "tools/kiln/Launchers.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <set>

using namespace kiln;

#ifndef KILN_VERSION
#define KILN_VERSION "0.0.0"
#endif

namespace {

/// C++20 keywords and alternative tokens: a name the generated code cannot
/// use as is.
bool isCxxKeyword(llvm::StringRef name) {
  static const llvm::StringSet<> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "not",
      "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
      "public", "register", "reinterpret_cast", "requires", "return",
      "short", "signed", "sizeof", "static", "static_assert", "static_cast",
      "struct", "switch", "template", "this", "thread_local", "throw",
      "true", "try", "typedef", "typeid", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "wchar_t", "while", "xor",
      "xor_eq"};
  return keywords.contains(name);
}

/// Macros that the headers the generated code includes (or GNU C++'s
/// predefined ones) may define: a declaration with such a name breaks.
bool isLikelyMacro(llvm::StringRef name) {
  static const llvm::StringSet<> macros = {
      "assert", "errno", "NULL", "offsetof", "EOF", "stdin", "stdout",
      "stderr", "setjmp", "va_arg", "va_start", "va_end", "va_copy", "linux",
      "unix", "i386", "SIZE_MAX"};
  return macros.contains(name);
}

/// The generated function's own parameter names.
constexpr const char *kStreamName = "stream";
constexpr const char *kOptionsName = "options";

std::string bundleObjectName(const LauncherFile &file) {
  return "kiln_bundle_" + file.ident;
}

/// The namespace's parts and the file's stem joined by "__": unambiguous,
/// since no part has "__" in it or '_' at either end (isLauncherNamespace,
/// launcherIdent).
std::string qualifiedName(const LauncherFile &file) {
  std::string ns = file.ns;
  for (size_t i; (i = ns.find("::")) != std::string::npos;)
    ns.replace(i, 2, "__");
  return ns + "__" + file.ident;
}

/// The C accessor of the bundle: kiln_bundle_<ns>__<stem>.
std::string bundleFunctionName(const LauncherFile &file) {
  return "kiln_bundle_" + qualifiedName(file);
}

/// The C++ type of a language scalar type, as a launcher spells it.
std::string cxxType(llvm::StringRef type) {
  return llvm::StringSwitch<std::string>(type)
      .Case("bool", "bool")
      .Case("i8", "::std::int8_t")
      .Case("i16", "::std::int16_t")
      .Case("i32", "::std::int32_t")
      .Case("i64", "::std::int64_t")
      .Case("u8", "::std::uint8_t")
      .Case("u16", "::std::uint16_t")
      .Case("u32", "::std::uint32_t")
      .Case("u64", "::std::uint64_t")
      .Case("f16", "::kiln::rt::f16")
      .Case("bf16", "::kiln::rt::bf16")
      .Case("f32", "float")
      .Case("f64", "double")
      .Case("f8e4m3", "::kiln::rt::f8e4m3")
      .Case("f8e5m2", "::kiln::rt::f8e5m2")
      .Default("");
}

std::string paramType(const LauncherParam &p) {
  std::string t = cxxType(p.type);
  assert(!t.empty() && "every language scalar type has a C++ type");
  return p.pointer ? "::kiln::rt::DevicePtr<" + t + ">" : t;
}

/// The launch argument of a parameter named `name`.
std::string argExpr(const LauncherParam &p, llvm::StringRef name) {
  if (p.pointer)
    return (name + ".arg()").str();
  llvm::StringRef t = p.type;
  if (t == "bool")
    return ("::kiln::rt::Arg::boolean(" + name + ")").str();
  if (t == "f16" || t == "bf16" || t == "f8e4m3" || t == "f8e5m2")
    return ("::kiln::rt::Arg::" + t + "Bits(" + name + ".bits)").str();
  return ("::kiln::rt::Arg::" + t + "(" + name + ")").str();
}

/// The parameters' C++ names: as declared, with '_' added to those that
/// are keywords, likely macros or the launcher's own names.
std::vector<std::string> paramNames(const LauncherKernel &k,
                                    const LauncherFile &file) {
  std::set<std::string> taken = {kStreamName, kOptionsName,
                                 bundleObjectName(file)};
  std::vector<std::string> names;
  for (const LauncherParam &p : k.params)
    taken.insert(p.name);
  for (const LauncherParam &p : k.params) {
    std::string name = p.name;
    if (isCxxKeyword(name) || isLikelyMacro(name) || name == kStreamName ||
        name == kOptionsName || name == bundleObjectName(file)) {
      do
        name += "_";
      while (taken.count(name));
      taken.insert(name);
    }
    names.push_back(name);
  }
  return names;
}

/// The launcher's declaration (without the trailing ';' or body), its
/// parameters named `names` (paramNames); the header's has the default for
/// `options`.
void printSignature(llvm::raw_ostream &os, const LauncherKernel &k,
                    llvm::ArrayRef<std::string> names, bool withDefault) {
  std::string head = "::kiln::rt::Error " + k.name + "(";
  std::string indent(head.size(), ' ');
  os << head << "::kiln::rt::Stream &" << kStreamName;
  for (auto [p, name] : llvm::zip(k.params, names))
    os << ",\n" << indent << paramType(p) << " " << name;
  os << ",\n"
     << indent << "const ::kiln::rt::LaunchOptions &" << kOptionsName
     << (withDefault ? " = {}" : "") << ")";
}

/// `text` as `//`-comment lines of at most about 78 columns.
void printWrappedComment(llvm::raw_ostream &os, llvm::StringRef prefix,
                         llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  std::string line;
  for (llvm::StringRef w : words) {
    if (!line.empty() && prefix.size() + line.size() + 1 + w.size() > 78) {
      os << prefix << line << "\n";
      line = "  ";
    }
    line += (line.empty() || line == "  " ? "" : " ") + w.str();
  }
  if (!line.empty())
    os << prefix << line << "\n";
}

/// Case is kept (folding it could make two files' guards one); kiln_add_kernels'
/// umbrella headers use another prefix (KILN_TARGET_).
std::string headerGuard(const LauncherFile &file) {
  return "KILN_LAUNCHERS_" + qualifiedName(file) + "_H";
}

} // namespace

std::string kiln::launcherIdent(llvm::StringRef path) {
  // Other characters become '_'; runs of '_' one; none at either end.
  std::string ident;
  for (char c : llvm::sys::path::stem(path)) {
    char d = llvm::isAlnum(c) ? c : '_';
    if (d == '_' && (ident.empty() || ident.back() == '_'))
      continue;
    ident += d;
  }
  while (!ident.empty() && ident.back() == '_')
    ident.pop_back();
  if (ident.empty())
    ident = "kernels";
  else if (llvm::isDigit(ident[0]))
    ident.insert(0, "k");
  return ident;
}

bool kiln::isLauncherNamespace(llvm::StringRef name, std::string &why) {
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, "::");
  for (llvm::StringRef part : parts) {
    bool ident = !part.empty() && !llvm::isDigit(part[0]) &&
                 llvm::all_of(part, [](char c) {
                   return llvm::isAlnum(c) || c == '_';
                 });
    if (!ident) {
      why = "'" + name.str() + "' is not a C++ namespace name (identifiers "
            "separated by '::', e.g. 'mylib::kernels')";
      return false;
    }
    if (isCxxKeyword(part) || isLikelyMacro(part)) {
      why = "'" + part.str() + "' is a C++ keyword or a standard macro";
      return false;
    }
    if (part.contains("__") || part.front() == '_' || part.back() == '_') {
      why = "'" + part.str() + "' has '__' in it or '_' at an end (the "
            "C accessor of the bundle joins the parts with '__')";
      return false;
    }
  }
  if (parts.front() == "std" || parts.front() == "kiln") {
    why = "'" + parts.front().str() + "' belongs to the C++ library or to "
          "Kiln's runtime; choose a namespace of your own";
    return false;
  }
  return true;
}

std::string kiln::launcherNameProblem(llvm::StringRef kernel,
                                      const LauncherFile &file) {
  if (isCxxKeyword(kernel))
    return "is a C++ keyword";
  if (isLikelyMacro(kernel))
    return "is a macro of the C and C++ standard headers";
  if (kernel.starts_with("kiln_bundle_"))
    return "starts with 'kiln_bundle_', which names the bundle objects the "
           "launchers declare";
  return "";
}

std::string kiln::launcherHeader(const LauncherFile &file) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard = headerGuard(file);
  os << "// Generated by kiln " << KILN_VERSION << " from " << file.sourceName
     << " (kiln compile --emit=launcher-header):\n"
     << "// typed launchers of its kernels (docs/runtime.md, \"Generated "
        "launchers\"). Do not edit.\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stddef.h>\n\n"
     << "#ifndef KILN_LAUNCHER_EXPORT\n"
     << "#define KILN_LAUNCHER_EXPORT __attribute__((visibility(\"default\")))\n"
     << "#endif\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "// The bundle compiled from " << file.sourceName
     << ", as the C API's kiln_module_load_memory\n"
     << "// takes it; *size receives its size in bytes.\n"
     << "KILN_LAUNCHER_EXPORT const void *" << bundleFunctionName(file)
     << "(size_t *size);\n\n"
     << "#ifdef __cplusplus\n} /* extern \"C\" */\n\n"
     << "#include <cstdint>\n#include <kiln/launcher.h>\n\n"
     << "namespace " << file.ns << " {\n\n"
     << "/// The bundle compiled from " << file.sourceName << ":\n"
     << "/// " << bundleObjectName(file) << ".kernel(device, \"NAME\") "
     << "gives a kernel untyped, to plan\n/// or tune it.\n"
     << "extern KILN_LAUNCHER_EXPORT const ::kiln::rt::EmbeddedBundle "
     << bundleObjectName(file) << ";\n";
  for (const LauncherKernel &k : file.kernels) {
    os << "\n";
    // No line number: editing a kernel must not change the header of the
    // others. A backslash ending a comment line would continue it.
    std::string decl = file.sourceName + ": " + k.declaration;
    std::replace(decl.begin(), decl.end(), '\\', '/');
    printWrappedComment(os, "/// ", decl);
    os << "/// " << k.variants << " variant" << (k.variants == 1 ? "" : "s")
       << (k.variants > 1 ? "; the tuning mode chooses (docs/tuning.md)" : "")
       << ".\n";
    os << "KILN_LAUNCHER_EXPORT\n";
    printSignature(os, k, paramNames(k, file), /*withDefault=*/true);
    os << ";\n";
  }
  os << "\n} // namespace " << file.ns << "\n\n#endif /* __cplusplus */\n"
     << "#endif /* " << guard << " */\n";
  return text;
}

std::string kiln::launcherSource(const LauncherFile &file,
                                 llvm::StringRef bundle) {
  std::string array = "kBundle_" + file.ident;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by kiln " << KILN_VERSION << " from " << file.sourceName
     << " (kiln compile --emit=launcher-source):\n"
     << "// its bundle (" << bundle.size() << " bytes; targets "
     << file.targets << ") and the typed launchers of its\n"
     << "// kernels (docs/runtime.md, \"Generated launchers\"). Do not edit.\n"
     << "#include <cstddef>\n#include <cstdint>\n#include <kiln/launcher.h>\n\n"
     << "#ifndef KILN_LAUNCHER_EXPORT\n"
     << "#define KILN_LAUNCHER_EXPORT __attribute__((visibility(\"default\")))\n"
     << "#endif\n\n"
     << "namespace {\n"
     << "// The bundle as a string literal (compilers read one much faster "
        "than a\n// list of numbers); the array ends in one extra NUL. "
        "Its name is the file's, so\n// that a unity build of several "
        "sources keeps them apart.\n"
     << "#if defined(__GNUC__)\n#pragma GCC diagnostic push\n"
     << "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n#endif\n"
     << "alignas(16) const char " << array << "[] =\n";
  // Printable bytes as they are; the rest as three-digit octal escapes,
  // which cannot swallow a following digit.
  std::string line;
  auto flush = [&] {
    os << "    \"" << line << "\"\n";
    line.clear();
  };
  for (unsigned char c : bundle) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?') {
      line += char(c);
    } else {
      char esc[5] = {'\\', char('0' + (c >> 6)), char('0' + ((c >> 3) & 7)),
                     char('0' + (c & 7)), 0};
      line += esc;
    }
    if (line.size() >= 96)
      flush();
  }
  if (!line.empty() || bundle.empty())
    flush();
  os << "    ;\n#if defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n"
     << "} // namespace\n\n"
     << "extern \"C\" KILN_LAUNCHER_EXPORT const void *"
     << bundleFunctionName(file) << "(size_t *size) {\n"
     << "  if (size)\n    *size = sizeof(" << array << ") - 1;\n"
     << "  return " << array << ";\n}\n\n"
     << "namespace " << file.ns << " {\n\n"
     << "extern KILN_LAUNCHER_EXPORT const ::kiln::rt::EmbeddedBundle "
     << bundleObjectName(file) << ";\n"
     << "const ::kiln::rt::EmbeddedBundle " << bundleObjectName(file) << "(\n"
     << "    " << array << ", sizeof(" << array << ") - 1, \""
     << file.sourceName << "\");\n";
  for (const LauncherKernel &k : file.kernels) {
    os << "\n";
    std::vector<std::string> names = paramNames(k, file);
    os << "KILN_LAUNCHER_EXPORT\n";
    printSignature(os, k, names, /*withDefault=*/false);
    os << " {\n  return " << bundleObjectName(file) << ".launch(\n      "
       << kStreamName << ", \"" << k.name << "\",\n      {";
    for (auto [i, pn] : llvm::enumerate(llvm::zip(k.params, names)))
      os << (i ? ",\n       " : "") << argExpr(std::get<0>(pn), std::get<1>(pn));
    os << "},\n      " << kOptionsName << ");\n}\n";
  }
  os << "\n} // namespace " << file.ns << "\n";
  return text;
}
