//===- Manifest.cpp - The bundle's manifest JSON --------------------------===//
//
// Parses and validates the manifest (docs/bundle.md) with nlohmann::json.
// nlohmann reports malformed input by throwing; this file is the only one
// that lets it, and catches everything before returning.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using nlohmann::json;

namespace {

using limits::kMaxImagesPerVariant;
using limits::kMaxVariants;

/// "4097 kernels, over the limit of 4096" (kiln::rt::limits).
std::string overLimit(size_t Count, const char *What, size_t Limit) {
  return std::to_string(Count) + " " + What + ", over the limit of " +
         std::to_string(Limit);
}

Error invalid(const std::string &Message) {
  return Error(ErrorCode::InvalidBundle, "manifest: " + Message);
}

bool getInt(const json &J, int64_t &Out) {
  if (!J.is_number_integer())
    return false;
  if (J.is_number_unsigned()) {
    uint64_t U = J.get<uint64_t>();
    if (U > uint64_t(INT64_MAX))
      return false;
    Out = int64_t(U);
    return true;
  }
  Out = J.get<int64_t>();
  return true;
}

/// Reads an optional array of strings; false if it is there but malformed.
bool getStrings(const json &Object, const char *Key,
                std::vector<std::string> &Out) {
  auto It = Object.find(Key);
  if (It == Object.end())
    return true;
  if (!It->is_array())
    return false;
  for (const json &E : *It) {
    if (!E.is_string())
      return false;
    Out.push_back(E.get<std::string>());
  }
  return true;
}

const std::string *getString(const json &Object, const char *Key) {
  auto It = Object.find(Key);
  if (It == Object.end() || !It->is_string())
    return nullptr;
  return It->get_ptr<const std::string *>();
}

class KernelParser {
public:
  KernelParser(KernelInfo &K, KernelExprs &X, unsigned Version)
      : K(K), X(X), Version(Version) {}

  Error parse(const json &J) {
    if (!J.is_object())
      return invalid("a kernel is not an object");
    const std::string *Name = getString(J, "name");
    if (!Name || Name->empty())
      return invalid("a kernel has no name");
    K.Name = *Name;
    Where = "kernel '" + K.Name + "': ";
    if (Error E = parseParams(J))
      return E;
    if (!getStrings(J, "const_params", K.ConstParams) ||
        !getStrings(J, "grid", K.Grid) || !getStrings(J, "key", K.Key) ||
        !getStrings(J, "launch_conditions", K.LaunchConditions))
      return fail("'const_params', 'grid', 'key' and 'launch_conditions' "
                  "must be arrays of strings");
    std::set<std::string> Names;
    for (const ParamInfo &P : K.Params)
      Names.insert(P.Name);
    for (const std::string &C : K.ConstParams)
      if (!Names.insert(C).second)
        return fail("name '" + C + "' is declared twice");
    // "writes" (optional): the pointer params the kernel may write through;
    // without it, every pointer param may be written.
    if (J.contains("writes")) {
      std::vector<std::string> Writes;
      if (!getStrings(J, "writes", Writes))
        return fail("'writes' must be an array of strings");
      for (const std::string &W : Writes) {
        ParamInfo *P = findParam(W);
        if (!P || !P->Type.IsPointer)
          return fail("'writes' names '" + W + "', which is not a pointer "
                      "param");
        P->Written = true;
      }
    } else {
      for (ParamInfo &P : K.Params)
        P.Written = P.Type.IsPointer;
    }
    if (const std::string *Hash = getString(J, "hash"))
      K.Hash = *Hash;
    // "tuned" (optional): a shipped tuning table's choices.
    if (auto It = J.find("tuned"); It != J.end()) {
      if (!It->is_array() || It->size() > kMaxVariants)
        return fail("'tuned' must be an array of choices");
      for (const json &TJ : *It) {
        const std::string *Dev = TJ.is_object() ? getString(TJ, "device")
                                                : nullptr;
        const std::string *Bucket = Dev ? getString(TJ, "bucket") : nullptr;
        const std::string *Variant = Bucket ? getString(TJ, "variant")
                                            : nullptr;
        if (!Variant)
          return fail("a 'tuned' choice needs string 'device', 'bucket' and "
                      "'variant'");
        K.Tuned.push_back({*Dev, *Bucket, *Variant});
      }
    }
    K.KeyExact.assign(K.Key.size(), false);
    if (J.contains("key_buckets")) {
      std::vector<std::string> Buckets;
      if (!getStrings(J, "key_buckets", Buckets) ||
          Buckets.size() != K.Key.size())
        return fail("'key_buckets' must be an array of strings, one per key");
      for (size_t I = 0; I < Buckets.size(); ++I) {
        if (Buckets[I] != "pow2" && Buckets[I] != "exact")
          return fail("key '" + K.Key[I] + "' has an unknown bucketing '" +
                      Buckets[I] + "' (expected pow2 or exact)");
        K.KeyExact[I] = Buckets[I] == "exact";
      }
    }
    for (const std::string &Key : K.Key) {
      const ParamInfo *P = findParam(Key);
      if (!P || P->Type.IsPointer || !isIntegerType(P->Type.Element))
        return fail("key '" + Key + "' is not an integer runtime param");
    }
    if (K.Grid.empty() || K.Grid.size() > 3)
      return fail("the grid has " + std::to_string(K.Grid.size()) +
                  " axes (1 to 3 expected)");
    for (size_t I = 0; I < K.Grid.size(); ++I) {
      Expected<Expr> E = parseExpr(K.Grid[I]);
      if (!E)
        return fail("grid axis " + std::to_string(I) + " '" + K.Grid[I] +
                    "': " + E.error().message());
      X.Grid.push_back(std::move(*E));
    }
    for (const std::string &C : K.LaunchConditions) {
      Expected<Expr> E = parseExpr(C);
      if (!E)
        return fail("launch condition '" + C + "': " + E.error().message());
      X.Conditions.push_back(std::move(*E));
    }
    return parseVariants(J);
  }

private:
  Error parseParams(const json &J) {
    auto It = J.find("params");
    if (It == J.end() || !It->is_array())
      return fail("'params' must be an array");
    if (It->size() > limits::kMaxParams)
      return fail(overLimit(It->size(), "parameters", limits::kMaxParams));
    std::set<std::string> Names;
    for (const json &PJ : *It) {
      if (!PJ.is_object())
        return fail("a parameter is not an object");
      ParamInfo P;
      const std::string *Name = getString(PJ, "name");
      const std::string *Type = getString(PJ, "type");
      if (!Name || Name->empty() || !Type)
        return fail("a parameter has no name or type");
      P.Name = *Name;
      if (!Names.insert(P.Name).second)
        return fail("parameter '" + P.Name + "' is declared twice");
      std::string_view T = *Type;
      P.Type.IsPointer = !T.empty() && T[0] == '*';
      std::optional<ScalarType> Elem =
          parseScalarType(P.Type.IsPointer ? T.substr(1) : T);
      if (!Elem || (P.Type.IsPointer && *Elem == ScalarType::Bool))
        return fail("parameter '" + P.Name + "' has unknown type '" + *Type +
                    "'");
      P.Type.Element = *Elem;
      if (Error E = parsePromise(PJ, "div", P, P.Div))
        return E;
      if (Error E = parsePromise(PJ, "align", P, P.Align))
        return E;
      if (P.Div && (P.Type.IsPointer || !isIntegerType(P.Type.Element)))
        return fail("@div on parameter '" + P.Name + "' of type " +
                    P.Type.str());
      if (P.Align && !P.Type.IsPointer)
        return fail("@align on parameter '" + P.Name + "' of type " +
                    P.Type.str());
      if (P.Align & (P.Align - 1))
        return fail("@align(" + std::to_string(P.Align) + ") on '" + P.Name +
                    "' is not a power of two");
      K.Params.push_back(std::move(P));
    }
    return Error::success();
  }

  Error parsePromise(const json &PJ, const char *Key, const ParamInfo &P,
                     int64_t &Out) {
    auto It = PJ.find(Key);
    if (It == PJ.end())
      return Error::success();
    if (!getInt(*It, Out) || Out <= 0)
      return fail("parameter '" + P.Name + "' has a bad '" + Key + "'");
    return Error::success();
  }

  Error parseVariants(const json &J) {
    auto It = J.find("variants");
    if (It == J.end() || !It->is_array())
      return fail("'variants' must be an array");
    if (It->size() > kMaxVariants)
      return fail(overLimit(It->size(), "variants", kMaxVariants));
    K.ConstIsBool.assign(K.ConstParams.size(), false);
    std::set<int64_t> Indices;
    for (const json &VJ : *It) {
      VariantInfo V;
      int64_t Index;
      auto IndexIt = VJ.is_object() ? VJ.find("index") : VJ.end();
      if (!VJ.is_object() || IndexIt == VJ.end() || !getInt(*IndexIt, Index) ||
          Index < 0 || Index > int64_t(UINT32_MAX))
        return fail("a variant has no valid 'index'");
      V.Index = unsigned(Index);
      if (!Indices.insert(Index).second)
        return fail("variant " + std::to_string(Index) + " appears twice");
      std::string VWhere = "variant " + std::to_string(Index) + ": ";
      auto ConstIt = VJ.find("const");
      if (!K.ConstParams.empty() &&
          (ConstIt == VJ.end() || !ConstIt->is_object()))
        return fail(VWhere + "'const' must be an object");
      for (size_t C = 0; C < K.ConstParams.size(); ++C) {
        auto ValueIt = ConstIt->find(K.ConstParams[C]);
        int64_t Value = 0;
        if (ValueIt != ConstIt->end() && ValueIt->is_boolean()) {
          Value = ValueIt->get<bool>();
          K.ConstIsBool[C] = true;
        } else if (ValueIt == ConstIt->end() || !getInt(*ValueIt, Value)) {
          return fail(VWhere + "const param '" + K.ConstParams[C] +
                      "' has no integer value");
        }
        V.ConstValues.push_back(Value);
      }
      auto ImagesIt = VJ.find("images");
      if (ImagesIt == VJ.end() || !ImagesIt->is_array())
        return fail(VWhere + "'images' must be an array");
      if (ImagesIt->size() > kMaxImagesPerVariant)
        return fail(VWhere + overLimit(ImagesIt->size(), "images",
                                       kMaxImagesPerVariant));
      X.Holds.emplace_back();
      X.TensorMaps.emplace_back();
      for (const json &IJ : *ImagesIt) {
        ImageInfo Img;
        const std::string *Target = IJ.is_object() ? getString(IJ, "target")
                                                   : nullptr;
        const std::string *Triple = Target ? getString(IJ, "triple") : nullptr;
        const std::string *Arch = Target ? getString(IJ, "arch") : nullptr;
        const std::string *Entry = Target ? getString(IJ, "entry") : nullptr;
        if (!Target || !Triple || !Arch || !Entry || Entry->empty())
          return fail(VWhere + "an image needs 'target', 'triple', 'arch' "
                               "and 'entry' strings");
        Img.Target = *Target;
        Img.Triple = *Triple;
        Img.Arch = *Arch;
        Img.Entry = *Entry;
        std::string IWhere = VWhere + "image " + Img.Triple + " " + Img.Arch +
                             ": ";
        if (Error E = parseRequires(IJ, Img.Requires, IWhere))
          return E;
        X.Holds.back().emplace_back();
        if (Error E =
                parseAssumes(IJ, Img.Assumes, X.Holds.back().back(), IWhere))
          return E;
        X.TensorMaps.back().emplace_back();
        if (Error E = parseTensorMaps(IJ, Img.TensorMaps,
                                      X.TensorMaps.back().back(), IWhere))
          return E;
        auto ResIt = IJ.find("resources");
        Img.Resources = ResIt == IJ.end() ? "{}" : ResIt->dump();
        // "shares": the index of an earlier image (in manifest order)
        // whose code object this one uses; checked in matchImages.
        if (auto ShIt = IJ.find("shares"); ShIt != IJ.end()) {
          int64_t Shares;
          if (!getInt(*ShIt, Shares) || Shares < 0)
            return fail(IWhere + "'shares' must be an image index");
          Img.Shares = Shares;
        }
        V.Images.push_back(std::move(Img));
      }
      K.Variants.push_back(std::move(V));
    }
    return Error::success();
  }

  /// "requires": {"cpu": "znver4", "features": ["avx2", ...]} (host),
  /// {"sm": 90, "arch_specific": true, "ptx_isa": 80} (NVIDIA),
  /// {"gfx": "gfx942", "wave_size": 64, "code_object": 5} (AMD) or
  /// {"emu": "sm_80", "cpu": "x86-64-v2"} (emulated); unknown keys are
  /// ignored.
  Error parseRequires(const json &IJ, ImageRequirements &R,
                      const std::string &IWhere) {
    auto It = IJ.find("requires");
    if (It == IJ.end())
      return Error::success();
    if (!It->is_object())
      return fail(IWhere + "'requires' must be an object");
    R.Present = true;
    if (auto Cpu = It->find("cpu"); Cpu != It->end()) {
      if (!Cpu->is_string())
        return fail(IWhere + "'requires.cpu' must be a string");
      R.Cpu = Cpu->get<std::string>();
    }
    if (!getStrings(*It, "features", R.Features))
      return fail(IWhere + "'requires.features' must be an array of strings");
    auto Number = [&](const char *Key, unsigned &Out) -> Error {
      auto N = It->find(Key);
      if (N == It->end())
        return Error::success();
      int64_t V;
      if (!getInt(*N, V) || V < 0 || V > 100000)
        return fail(IWhere + "'requires." + Key +
                    "' must be a non-negative integer");
      Out = unsigned(V);
      return Error::success();
    };
    if (Error E = Number("sm", R.Sm))
      return E;
    if (Error E = Number("ptx_isa", R.PtxIsa))
      return E;
    if (Error E = Number("wave_size", R.WaveSize))
      return E;
    if (Error E = Number("code_object", R.CodeObject))
      return E;
    if (auto Gfx = It->find("gfx"); Gfx != It->end()) {
      if (!Gfx->is_string() || Gfx->get<std::string>().rfind("gfx", 0) != 0)
        return fail(IWhere + "'requires.gfx' must be an AMD GPU name (gfx...)");
      R.Gfx = Gfx->get<std::string>();
    }
    if (auto AS = It->find("arch_specific"); AS != It->end()) {
      if (!AS->is_boolean())
        return fail(IWhere + "'requires.arch_specific' must be a bool");
      R.ArchSpecific = AS->get<bool>();
    }
    if (auto Emu = It->find("emu"); Emu != It->end()) {
      if (!Emu->is_string() || Emu->get<std::string>().empty())
        return fail(IWhere + "'requires.emu' must be a GPU arch name");
      R.Emu = Emu->get<std::string>();
    }
    return Error::success();
  }

  /// "assumes": {"align16": [pointer params], "div16": [integer params],
  /// "holds": [conditions]}; `Holds` receives the conditions parsed.
  Error parseAssumes(const json &IJ, ImageAssumptions &A,
                     std::vector<Expr> &Holds, const std::string &IWhere) {
    auto It = IJ.find("assumes");
    if (It == IJ.end())
      return Error::success();
    if (!It->is_object() || !getStrings(*It, "align16", A.Align16) ||
        !getStrings(*It, "div16", A.Div16) ||
        !getStrings(*It, "holds", A.Holds))
      return fail(IWhere + "'assumes' must be an object of arrays of "
                           "param names and conditions");
    for (const std::string &C : A.Holds) {
      Expected<Expr> E = parseExpr(C);
      if (!E)
        return fail(IWhere + "'assumes.holds' condition '" + C +
                    "': " + E.error().message());
      Holds.push_back(std::move(*E));
    }
    for (const std::string &Name : A.Align16) {
      const ParamInfo *P = findParam(Name);
      if (!P || !P->Type.IsPointer)
        return fail(IWhere + "'assumes.align16' names '" + Name +
                    "', which is not a pointer param");
    }
    for (const std::string &Name : A.Div16) {
      const ParamInfo *P = findParam(Name);
      if (!P || P->Type.IsPointer || !isIntegerType(P->Type.Element))
        return fail(IWhere + "'assumes.div16' names '" + Name +
                    "', which is not an integer param");
    }
    return Error::success();
  }

  /// "tensor_maps" (format 4): [{"param": "a", "type": "f16", "sizes":
  /// ["M", "K"], "strides": ["lda", "1"], "box": [128, 64], "swizzle":
  /// 128}, ...]; `Exprs` receives them parsed.
  Error parseTensorMaps(const json &IJ, std::vector<TensorMapInfo> &Maps,
                        std::vector<TensorMapExprs> &Exprs,
                        const std::string &IWhere) {
    auto It = IJ.find("tensor_maps");
    if (It == IJ.end())
      return Error::success();
    if (Version < 4)
      return fail(IWhere + "'tensor_maps' needs bundle format version 4, "
                           "the manifest says " +
                  std::to_string(Version));
    if (!It->is_array())
      return fail(IWhere + "'tensor_maps' must be an array of tensor maps");
    for (size_t I = 0; I < It->size(); ++I) {
      const json &MJ = (*It)[I];
      std::string MWhere = IWhere + "tensor map " + std::to_string(I);
      const std::string *Param = MJ.is_object() ? getString(MJ, "param")
                                                : nullptr;
      if (!Param)
        return fail(MWhere + ": it needs a 'param' string");
      MWhere += " (" + *Param + "): ";
      TensorMapInfo M;
      TensorMapExprs X;
      M.Param = *Param;
      const ParamInfo *P = findParam(M.Param);
      if (!P || !P->Type.IsPointer)
        return fail(MWhere + "'param' names '" + M.Param +
                    "', which is not a pointer param");
      X.Param = unsigned(P - K.Params.data());
      const std::string *Type = getString(MJ, "type");
      std::optional<ScalarType> T =
          Type ? parseScalarType(*Type) : std::nullopt;
      if (!T || *T == ScalarType::Bool)
        return fail(MWhere + "'type' must be an element type (f16, bf16, "
                             "f32, i8, ...)" +
                    (Type ? ", not '" + *Type + "'" : std::string()));
      M.Type = X.Type = *T;
      X.ElemBytes = unsigned(typeSize(*T));
      if (!getStrings(MJ, "sizes", M.Sizes) ||
          !getStrings(MJ, "strides", M.Strides) || !MJ.contains("sizes") ||
          !MJ.contains("strides"))
        return fail(MWhere + "'sizes' and 'strides' must be arrays of "
                             "expressions");
      size_t Rank = M.Sizes.size();
      if (Rank < 1 || Rank > kMaxTensorMapRank)
        return fail(MWhere + "it has " + std::to_string(Rank) +
                    " dimensions (1 to " + std::to_string(kMaxTensorMapRank) +
                    " expected)");
      if (M.Strides.size() != Rank)
        return fail(MWhere + "'strides' has " +
                    std::to_string(M.Strides.size()) + " entries for " +
                    std::to_string(Rank) + " dimensions");
      auto BoxIt = MJ.find("box");
      if (BoxIt == MJ.end() || !BoxIt->is_array() || BoxIt->size() != Rank)
        return fail(MWhere + "'box' must be an array of " +
                    std::to_string(Rank) + " integers, one per dimension");
      for (const json &B : *BoxIt) {
        int64_t V;
        if (!getInt(B, V) || V < 1 || V > 256)
          return fail(MWhere + "'box' has " + B.dump() +
                      ", not an integer in 1..256");
        M.Box.push_back(V);
      }
      X.Box = M.Box;
      auto SwIt = MJ.find("swizzle");
      int64_t Swizzle = -1;
      if (SwIt == MJ.end() || !getInt(*SwIt, Swizzle) ||
          (Swizzle != 0 && Swizzle != 32 && Swizzle != 64 && Swizzle != 128))
        return fail(MWhere + "'swizzle' must be 0, 32, 64 or 128" +
                    (SwIt == MJ.end() ? std::string()
                                      : ", not " + SwIt->dump()));
      M.Swizzle = Swizzle;
      X.Swizzle = int32_t(Swizzle);
      for (size_t D = 0; D < Rank; ++D) {
        for (bool Stride : {false, true}) {
          const std::string &Text = Stride ? M.Strides[D] : M.Sizes[D];
          Expected<Expr> E = parseExpr(Text);
          if (!E)
            return fail(MWhere + (Stride ? "stride " : "size ") +
                        std::to_string(D) + " '" + Text +
                        "': " + E.error().message());
          (Stride ? X.Strides : X.Sizes).push_back(std::move(*E));
        }
      }
      Maps.push_back(std::move(M));
      Exprs.push_back(std::move(X));
    }
    return Error::success();
  }

  Expected<Expr> parseExpr(const std::string &Text) {
    return Expr::parse(
        Text,
        [&](std::string_view Name, std::string &Why) -> std::optional<ExprSlot> {
          for (size_t I = 0; I < K.Params.size(); ++I) {
            const ParamInfo &P = K.Params[I];
            if (P.Name != Name)
              continue;
            if (P.Type.IsPointer ||
                !(isIntegerType(P.Type.Element) ||
                  P.Type.Element == ScalarType::Bool)) {
              Why = "'" + P.Name + "' is " + P.Type.str() +
                    "; only integer and bool params may be used";
              return std::nullopt;
            }
            return ExprSlot{false, unsigned(I)};
          }
          for (size_t I = 0; I < K.ConstParams.size(); ++I)
            if (K.ConstParams[I] == Name)
              return ExprSlot{true, unsigned(I)};
          Why = "unknown name '" + std::string(Name) + "'";
          return std::nullopt;
        });
  }

  const ParamInfo *findParam(const std::string &Name) const {
    for (const ParamInfo &P : K.Params)
      if (P.Name == Name)
        return &P;
    return nullptr;
  }
  ParamInfo *findParam(const std::string &Name) {
    for (ParamInfo &P : K.Params)
      if (P.Name == Name)
        return &P;
    return nullptr;
  }

  Error fail(const std::string &Message) { return invalid(Where + Message); }

  KernelInfo &K;
  KernelExprs &X;
  unsigned Version;
  std::string Where;
};

Error parseManifestJson(const json &J, BundleData &Data) {
  if (!J.is_object())
    return invalid("not a JSON object");
  const std::string *Format = getString(J, "format");
  if (!Format || *Format != "kiln-bundle")
    return invalid("'format' is not \"kiln-bundle\"");
  auto VersionIt = J.find("version");
  int64_t Version;
  if (VersionIt == J.end() || !getInt(*VersionIt, Version))
    return invalid("no integer 'version'");
  if (Version < int64_t(kMinFormatVersion) ||
      Version > int64_t(kFormatVersion))
    return Error(ErrorCode::UnsupportedVersion,
                 "bundle format version " + std::to_string(Version) +
                     " is not supported " + supportedFormatVersions());
  if (Data.FormatVersion && Version != int64_t(Data.FormatVersion))
    return invalid("'version' is " + std::to_string(Version) +
                   ", but the bundle's kiln.format-version is " +
                   std::to_string(Data.FormatVersion));
  if (const std::string *Source = getString(J, "source"))
    Data.Source = *Source;
  if (const std::string *Cpu = getString(J, "host_cpu"))
    Data.HostCpu = *Cpu;
  auto KernelsIt = J.find("kernels");
  if (KernelsIt == J.end() || !KernelsIt->is_array())
    return invalid("'kernels' must be an array");
  std::set<std::string> Names;
  if (KernelsIt->size() > limits::kMaxKernels)
    return invalid(overLimit(KernelsIt->size(), "kernels", limits::kMaxKernels));
  Data.Kernels.reserve(KernelsIt->size());
  Data.Exprs.reserve(KernelsIt->size());
  for (const json &KJ : *KernelsIt) {
    Data.Kernels.emplace_back();
    Data.Exprs.emplace_back();
    KernelParser P(Data.Kernels.back(), Data.Exprs.back(), unsigned(Version));
    if (Error E = P.parse(KJ))
      return E;
    // A bundle without kernel hashes (written before they existed): the
    // kernel's manifest entry without its variants stands in for its code.
    if (Data.Kernels.back().Hash.empty()) {
      json Copy = KJ;
      Copy.erase("variants");
      uint64_t H = 14695981039346656037ull; // FNV-1a
      for (unsigned char C : Copy.dump()) {
        H ^= C;
        H *= 1099511628211ull;
      }
      char Hex[17];
      std::snprintf(Hex, sizeof(Hex), "%016llx", (unsigned long long)H);
      Data.Kernels.back().Hash = Hex;
    }
    if (!Names.insert(Data.Kernels.back().Name).second)
      return invalid("kernel '" + Data.Kernels.back().Name +
                     "' appears twice");
  }
  return Error::success();
}

} // namespace

Error kiln::rt::detail::parseManifest(std::string_view Text, BundleData &Data) {
  try {
    json J = json::parse(Text.begin(), Text.end());
    return parseManifestJson(J, Data);
  } catch (const json::parse_error &E) {
    // "[json.exception.parse_error.101] parse error at line 1, ..."
    std::string What = E.what();
    size_t Bracket = What.find("] ");
    if (Bracket != std::string::npos)
      What = What.substr(Bracket + 2);
    return invalid("not valid JSON: " + What);
  } catch (const std::bad_alloc &) {
    return Error(ErrorCode::OutOfMemory, "manifest: out of memory");
  } catch (const std::exception &E) {
    return invalid(std::string("malformed: ") + E.what());
  }
}

std::string kiln::rt::detail::supportedFormatVersions() {
  std::string Out = "(this runtime reads versions ";
  for (unsigned V = kMinFormatVersion; V <= kFormatVersion; ++V)
    Out += std::to_string(V) +
           (V + 1 == kFormatVersion ? " and " : V == kFormatVersion ? ")"
                                                                    : ", ");
  return Out;
}

std::optional<int64_t>
kiln::rt::detail::resourceInt(const std::string &ResourcesJson,
                              const char *Key) {
  try {
    json J = json::parse(ResourcesJson);
    if (!J.is_object())
      return std::nullopt;
    auto It = J.find(Key);
    int64_t V;
    if (It == J.end() || !getInt(*It, V) || V < 0)
      return std::nullopt;
    return V;
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

bool kiln::rt::detail::resourceFlag(const std::string &ResourcesJson,
                                    const char *Key) {
  try {
    json J = json::parse(ResourcesJson);
    if (!J.is_object())
      return false;
    auto It = J.find(Key);
    return It != J.end() && It->is_boolean() && It->get<bool>();
  } catch (const std::exception &) {
    return false;
  }
}

bool kiln::rt::detail::sameAssumptions(const ImageAssumptions &A,
                                       const ImageAssumptions &B) {
  auto Sorted = [](std::vector<std::string> V) {
    std::sort(V.begin(), V.end());
    V.erase(std::unique(V.begin(), V.end()), V.end());
    return V;
  };
  return Sorted(A.Align16) == Sorted(B.Align16) &&
         Sorted(A.Div16) == Sorted(B.Div16) &&
         Sorted(A.Holds) == Sorted(B.Holds);
}
