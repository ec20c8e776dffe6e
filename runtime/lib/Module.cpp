//===- Module.cpp - Loaded bundles, kernels and launches ------------------===//
//
// Loading a bundle on a device picks, for every variant, the best code
// object the device can run. A launch then checks the arguments against
// the kernel's parameters and promises, finds the candidate variants (those
// whose launch conditions hold), chooses one (an explicit config, else the
// first candidate), evaluates its grid and runs it. The code object of a
// variant is loaded on its first launch.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

Error refused(std::string Message) {
  return Error(ErrorCode::LaunchRefused, std::move(Message));
}

std::string imageLabel(const ImageInfo &Img) {
  return Img.Target == "host" ? Img.Triple + " " + Img.Arch : Img.Arch;
}

/// The code objects a bundle (or one kernel) has, for "no image" messages.
std::string listImages(const std::vector<const KernelInfo *> &Kernels) {
  std::vector<std::string> Labels;
  for (const KernelInfo *K : Kernels)
    for (const VariantInfo &V : K->Variants)
      for (const ImageInfo &Img : V.Images) {
        std::string L = imageLabel(Img);
        if (std::find(Labels.begin(), Labels.end(), L) == Labels.end())
          Labels.push_back(L);
      }
  return Labels.empty() ? "no code objects" : joinNames(Labels);
}

std::string formatValue(const ParamInfo &P, int64_t V) {
  if (P.Type.Element == ScalarType::Bool)
    return V ? "true" : "false";
  if (!isSignedType(P.Type.Element))
    return std::to_string(uint64_t(V));
  return std::to_string(V);
}

/// "cols=5000, rows=3": the runtime params that some of `Exprs` read.
std::string describeArgs(const KernelInfo &K,
                         const std::vector<const Expr *> &Exprs,
                         const std::vector<int64_t> &Values) {
  std::set<unsigned> Read;
  for (const Expr *E : Exprs)
    Read.insert(E->paramsRead().begin(), E->paramsRead().end());
  std::string Out;
  for (unsigned I : Read) {
    if (!Out.empty())
      Out += ", ";
    Out += K.Params[I].Name + "=" + formatValue(K.Params[I], Values[I]);
  }
  return Out;
}

std::string withArgs(const std::string &Args) {
  return Args.empty() ? "" : " with " + Args;
}

class Planner {
public:
  Planner(const ModuleImpl &M, unsigned Index)
      : M(M), K(M.TheBundle.kernels()[Index]),
        X(M.TheBundle.data()->Exprs[Index]), KS(M.Kernels[Index]) {}

  /// Plans a launch; `Position` receives the variant's position in
  /// K.Variants.
  Expected<LaunchPlan> plan(const std::vector<Arg> &Args,
                            const LaunchOptions &Options, size_t &Position) {
    if (!KS.NoImageMessage.empty())
      return Error(ErrorCode::NoImage, KS.NoImageMessage);
    if (Error E = checkArgs(Args))
      return E;
    Values.assign(K.Params.size(), 0);
    for (size_t I = 0; I < Args.size(); ++I)
      if (!Args[I].isPointer())
        Values[I] = Args[I].asInt64();

    std::vector<bool> Failed(X.Conditions.size(), false);
    std::vector<size_t> Candidates;
    for (size_t V = 0; V < K.Variants.size(); ++V) {
      if (KS.Variants[V].Image < 0)
        continue;
      Expected<int> Holds = conditionsHold(V, Failed);
      if (!Holds)
        return Holds.takeError();
      if (*Holds)
        Candidates.push_back(V);
    }

    Expected<size_t> Chosen = choose(Candidates, Failed, Options);
    if (!Chosen)
      return Chosen.takeError();
    Position = *Chosen;
    const VariantInfo &V = K.Variants[Position];

    LaunchPlan Plan;
    Plan.Variant = V.Index;
    Plan.VariantName = K.variantName(V);
    Plan.Config = K.variantConfig(V);
    for (size_t A = 0; A < X.Grid.size(); ++A) {
      Expected<int64_t> R = X.Grid[A].evaluate(Values, V.ConstValues);
      std::string Where = "grid axis " + std::to_string(A) + " of kernel '" +
                          K.Name + "' ('" + X.Grid[A].text() + "'" +
                          withArgs(describeArgs(K, {&X.Grid[A]}, Values)) +
                          ", variant " + Plan.Config + ")";
      if (!R)
        return refused(Where + ": " + R.error().message());
      if (*R < 0)
        return refused(Where + " is negative: " + std::to_string(*R));
      int64_t Max = M.Device->maxGridAxis(unsigned(A));
      if (*R > Max)
        return refused(Where + " is " + std::to_string(*R) +
                       ", above this device's limit of " +
                       std::to_string(Max));
      Plan.Grid[A] = *R;
    }
    uint64_t XY = uint64_t(Plan.Grid[0]) * uint64_t(Plan.Grid[1]);
    if (Plan.Grid[2] && XY > UINT64_MAX / uint64_t(Plan.Grid[2]))
      return refused("the grid of kernel '" + K.Name + "' has more than "
                     "2^64 programs");
    return Plan;
  }

private:
  std::string argName(size_t I) const {
    return "argument " + std::to_string(I) + " ('" + K.Params[I].Name +
           "') of " + K.Name;
  }

  Error checkArgs(const std::vector<Arg> &Args) const {
    if (Args.size() != K.Params.size()) {
      std::vector<std::string> Names;
      for (const ParamInfo &P : K.Params)
        Names.push_back(P.Name);
      return refused("kernel '" + K.Name + "' takes " +
                     std::to_string(K.Params.size()) + " argument" +
                     (K.Params.size() == 1 ? "" : "s") + " (" +
                     joinNames(Names) + "), got " +
                     std::to_string(Args.size()));
    }
    for (size_t I = 0; I < Args.size(); ++I) {
      const ParamInfo &P = K.Params[I];
      const Arg &A = Args[I];
      std::string Got = A.isPointer()
                            ? (A.hasElementType()
                                   ? "*" + std::string(typeName(A.type()))
                                   : "a pointer")
                            : std::string(typeName(A.type()));
      bool KindMatches = P.Type.IsPointer == A.isPointer();
      bool TypeMatches = P.Type.IsPointer ? !A.hasElementType() ||
                                                A.type() == P.Type.Element
                                          : A.type() == P.Type.Element;
      if (!KindMatches || !TypeMatches)
        return refused(argName(I) + " expects " + P.Type.str() + ", got " +
                       Got);
      if (A.isPointer() && A.deviceTag() && A.deviceTag() != M.Device.get())
        return refused(argName(I) + " is a buffer of another device");
      if (P.Div) {
        bool Breaks = isSignedType(P.Type.Element)
                          ? A.asInt64() % P.Div != 0
                          : A.bits() % uint64_t(P.Div) != 0;
        if (Breaks)
          return refused("argument '" + P.Name + "' = " +
                         formatValue(P, A.asInt64()) +
                         " breaks its promise @div(" +
                         std::to_string(P.Div) + ")");
      }
      if (P.Align && A.bits() % uint64_t(P.Align) != 0) {
        char Hex[32];
        std::snprintf(Hex, sizeof(Hex), "0x%llx",
                      (unsigned long long)A.bits());
        return refused("argument '" + P.Name + "' = " + Hex +
                       " breaks its promise @align(" +
                       std::to_string(P.Align) + ")");
      }
    }
    return Error::success();
  }

  /// 1 if every launch condition holds for variant V, else 0 (and the
  /// first failing condition is marked in Failed).
  Expected<int> conditionsHold(size_t V, std::vector<bool> &Failed) const {
    const VariantInfo &Info = K.Variants[V];
    for (size_t C = 0; C < X.Conditions.size(); ++C) {
      Expected<int64_t> R = X.Conditions[C].evaluate(Values, Info.ConstValues);
      if (!R)
        return refused("launch condition '" + X.Conditions[C].text() +
                       "' of kernel '" + K.Name + "'" +
                       withArgs(describeArgs(K, {&X.Conditions[C]}, Values)) +
                       ", variant " + K.variantConfig(Info) + ": " +
                       R.error().message());
      if (*R == 0) {
        Failed[C] = true;
        return 0;
      }
    }
    return 1;
  }

  std::string failedConditions(const std::vector<bool> &Failed,
                               std::string &Args) const {
    std::vector<std::string> Texts;
    std::vector<const Expr *> Exprs;
    for (size_t C = 0; C < Failed.size(); ++C)
      if (Failed[C]) {
        Texts.push_back("'" + X.Conditions[C].text() + "'");
        Exprs.push_back(&X.Conditions[C]);
      }
    Args = describeArgs(K, Exprs, Values);
    return (Texts.size() == 1 ? "launch condition " : "launch conditions ") +
           joinNames(Texts);
  }

  Expected<size_t> choose(const std::vector<size_t> &Candidates,
                          const std::vector<bool> &Failed,
                          const LaunchOptions &Options) const {
    if (Options.Config.empty() && !Options.Variant) {
      if (!Candidates.empty())
        return Candidates.front();
      std::string Args;
      std::string Conds = failedConditions(Failed, Args);
      size_t Runnable = 0;
      for (const VariantState &VS : KS.Variants)
        Runnable += VS.Image >= 0;
      return refused("no variant of kernel '" + K.Name + "' can run" +
                     withArgs(Args) + ": " + Conds + " rule" +
                     (Conds.rfind("launch conditions", 0) == 0 ? "" : "s") +
                     " out all " + std::to_string(Runnable) + " variant" +
                     (Runnable == 1 ? "" : "s"));
    }

    std::vector<int> ConstIndex;
    for (const auto &[Name, Value] : Options.Config) {
      auto It = std::find(K.ConstParams.begin(), K.ConstParams.end(), Name);
      if (It == K.ConstParams.end()) {
        std::string Near = nearestName(Name, K.ConstParams);
        return Error(ErrorCode::NotFound,
                     "kernel '" + K.Name + "' has no const param '" + Name +
                         "'" + (Near.empty() ? "" : "; did you mean '" + Near +
                                                        "'?") +
                         " (const params: " +
                         (K.ConstParams.empty() ? std::string("none")
                                                : joinNames(K.ConstParams)) +
                         ")");
      }
      ConstIndex.push_back(int(It - K.ConstParams.begin()));
    }
    std::vector<size_t> Matching;
    for (size_t V = 0; V < K.Variants.size(); ++V) {
      const VariantInfo &Info = K.Variants[V];
      if (KS.Variants[V].Image < 0 ||
          (Options.Variant && Info.Index != *Options.Variant))
        continue;
      bool Match = true;
      for (size_t C = 0; C < ConstIndex.size(); ++C)
        Match &= Info.ConstValues[ConstIndex[C]] == Options.Config[C].second;
      if (Match)
        Matching.push_back(V);
    }
    std::string Asked;
    for (const auto &[Name, Value] : Options.Config)
      Asked += (Asked.empty() ? "" : ", ") + Name + "=" + std::to_string(Value);
    if (Options.Variant)
      Asked += (Asked.empty() ? "index " : ", index ") +
               std::to_string(*Options.Variant);
    if (Matching.empty())
      return Error(ErrorCode::NotFound,
                   "kernel '" + K.Name + "' has no variant with " + Asked +
                       " (variants: " + listConfigs() + ")");
    for (size_t V : Matching)
      if (std::find(Candidates.begin(), Candidates.end(), V) !=
          Candidates.end())
        return V;
    std::string Args;
    std::string Conds = failedConditions(Failed, Args);
    return refused("the variant" + std::string(Matching.size() > 1 ? "s" : "") +
                   " of kernel '" + K.Name + "' with " + Asked +
                   " cannot run" + withArgs(Args) + ": " + Conds +
                   " do" + (Conds.rfind("launch conditions", 0) == 0 ? "" : "es") +
                   " not hold");
  }

  /// "BLOCK=256, warps=4; BLOCK=512, warps=4" (at most 8, then "...").
  std::string listConfigs() const {
    std::string Out;
    size_t Shown = 0;
    for (size_t V = 0; V < K.Variants.size(); ++V) {
      if (KS.Variants[V].Image < 0)
        continue;
      if (Shown++ == 8) {
        Out += "; ...";
        break;
      }
      Out += (Out.empty() ? "" : "; ") + std::to_string(K.Variants[V].Index) +
             ": " + K.variantConfig(K.Variants[V]);
    }
    return Out.empty() ? "none runs on this device" : Out;
  }

  const ModuleImpl &M;
  const KernelInfo &K;
  const KernelExprs &X;
  const KernelState &KS;
  std::vector<int64_t> Values;
};

} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Expected<Module> Device::loadModule(const Bundle &B) {
  auto M = std::make_shared<ModuleImpl>(Impl, B);
  std::vector<const KernelInfo *> All;
  bool AnyImage = false, AnyRunnable = false;
  for (const KernelInfo &K : B.kernels()) {
    All.push_back(&K);
    KernelState KS;
    bool KernelRunnable = false;
    for (const VariantInfo &V : K.Variants) {
      VariantState VS;
      int Best = 0;
      for (size_t I = 0; I < V.Images.size(); ++I) {
        AnyImage = true;
        int Rank = Impl->rankImage(V.Images[I]);
        if (Rank > Best) {
          Best = Rank;
          VS.Image = int(I);
        }
      }
      KernelRunnable |= VS.Image >= 0;
      KS.Variants.push_back(std::move(VS));
    }
    if (!KernelRunnable)
      KS.NoImageMessage = "no code object of kernel '" + K.Name +
                          "' runs on " + Impl->targetDescription() +
                          "; bundle '" + B.name() + "' has " +
                          listImages({&K}) + " for it";
    AnyRunnable |= KernelRunnable;
    M->Kernels.push_back(std::move(KS));
  }
  if (AnyImage && !AnyRunnable)
    return Error(ErrorCode::NoImage,
                 "no image for " + Impl->targetDescription() + " in bundle '" +
                     B.name() + "'; it has " + listImages(All));
  return Module(std::move(M));
}

Expected<LoadedImage *> ModuleImpl::loadVariant(unsigned Kernel,
                                               unsigned Variant) {
  std::lock_guard<std::mutex> Lock(LoadMutex);
  VariantState &VS = Kernels[Kernel].Variants[Variant];
  if (VS.Loaded)
    return VS.Loaded.get();
  if (VS.LoadError)
    return VS.LoadError;
  const ImageInfo &Img =
      TheBundle.kernels()[Kernel].Variants[Variant].Images[VS.Image];
  Expected<std::unique_ptr<LoadedImage>> L =
      Device->loadImage(Img, TheBundle.imageData(Img));
  if (!L) {
    VS.LoadError = Error(L.error().code(),
                         TheBundle.name() + ": " + L.error().message());
    return VS.LoadError;
  }
  VS.Loaded = std::move(*L);
  return VS.Loaded.get();
}

//===----------------------------------------------------------------------===//
// Module and Kernel
//===----------------------------------------------------------------------===//

Expected<Kernel> Module::kernel(std::string_view Name) const {
  const std::vector<KernelInfo> &Kernels = Impl->TheBundle.kernels();
  for (size_t I = 0; I < Kernels.size(); ++I) {
    if (Kernels[I].Name != Name)
      continue;
    if (!Impl->Kernels[I].NoImageMessage.empty())
      return Error(ErrorCode::NoImage, Impl->Kernels[I].NoImageMessage);
    return Kernel(Impl, unsigned(I));
  }
  std::vector<std::string> Names = kernelNames();
  std::string Near = nearestName(Name, Names);
  std::string Shown(Name.substr(0, 128));
  return Error(ErrorCode::NotFound,
               "bundle '" + Impl->TheBundle.name() + "' has no kernel '" +
                   Shown + "'" +
                   (Near.empty() ? "" : "; did you mean '" + Near + "'?") +
                   " (kernels: " +
                   (Names.empty() ? std::string("none") : joinNames(Names)) +
                   ")");
}

std::vector<std::string> Module::kernelNames() const {
  std::vector<std::string> Names;
  for (const KernelInfo &K : Impl->TheBundle.kernels())
    Names.push_back(K.Name);
  return Names;
}

const Bundle &Module::bundle() const { return Impl->TheBundle; }
Device Module::device() const { return Device(Impl->Device); }

const KernelInfo &Kernel::info() const {
  return M->TheBundle.kernels()[Index];
}

Expected<LaunchPlan> Kernel::plan(const std::vector<Arg> &Args,
                                  const LaunchOptions &Options) const {
  size_t Position;
  return Planner(*M, Index).plan(Args, Options, Position);
}

Error Kernel::load(unsigned Variant) const {
  const KernelInfo &K = info();
  for (size_t V = 0; V < K.Variants.size(); ++V) {
    if (K.Variants[V].Index != Variant)
      continue;
    if (M->Kernels[Index].Variants[V].Image < 0)
      return Error(ErrorCode::NoImage, "variant " + K.variantName(K.Variants[V]) +
                                           " has no code object for " +
                                           M->Device->targetDescription());
    Expected<LoadedImage *> L = M->loadVariant(Index, unsigned(V));
    return L ? Error::success() : L.takeError();
  }
  return Error(ErrorCode::NotFound, "kernel '" + K.Name + "' has no variant " +
                                        std::to_string(Variant));
}

Expected<LaunchPlan> Kernel::launch(Stream &S, const std::vector<Arg> &Args,
                                    const LaunchOptions &Options) const {
  if (!S.impl())
    return Error(ErrorCode::InvalidArgument,
                 "launch: the stream is empty (moved from?)");
  if (S.deviceTag() != M->Device.get())
    return Error(ErrorCode::InvalidArgument,
                 "launch: the stream belongs to another device than the "
                 "module");
  size_t Position;
  Expected<LaunchPlan> Plan = Planner(*M, Index).plan(Args, Options, Position);
  if (!Plan || Plan->programs() == 0)
    return Plan;
  Expected<LoadedImage *> Image = M->loadVariant(Index, unsigned(Position));
  if (!Image)
    return Image.takeError();
  std::vector<void *> Pointers;
  for (const Arg &A : Args)
    Pointers.push_back(const_cast<void *>(A.storage()));
  GridDims Grid{Plan->Grid[0], Plan->Grid[1], Plan->Grid[2]};
  if (Error E = M->Device->launch(*S.impl(), **Image, Pointers.data(), Grid))
    return E;
  return Plan;
}

Expected<std::vector<std::pair<std::string, int64_t>>>
kiln::rt::parseConfig(std::string_view Text) {
  std::vector<std::pair<std::string, int64_t>> Out;
  while (!Text.empty()) {
    size_t Comma = Text.find(',');
    std::string_view Item = Text.substr(0, Comma);
    Text = Comma == std::string_view::npos ? "" : Text.substr(Comma + 1);
    size_t Eq = Item.find('=');
    std::string Shown(Item.substr(0, 64));
    if (Eq == std::string_view::npos || Eq == 0)
      return Error(ErrorCode::InvalidArgument,
                   "bad config item '" + Shown + "'; expected NAME=VALUE");
    std::string Name(Item.substr(0, Eq));
    std::string Value(Item.substr(Eq + 1));
    int64_t V;
    if (Value == "true" || Value == "false") {
      V = Value == "true";
    } else {
      char *End = nullptr;
      errno = 0;
      long long Parsed = std::strtoll(Value.c_str(), &End, 10);
      if (Value.empty() || *End || errno == ERANGE)
        return Error(ErrorCode::InvalidArgument,
                     "bad config value in '" + Shown +
                         "'; expected an integer (or true/false)");
      V = Parsed;
    }
    for (const auto &Seen : Out)
      if (Seen.first == Name)
        return Error(ErrorCode::InvalidArgument,
                     "config names '" + Name + "' twice");
    Out.emplace_back(std::move(Name), V);
  }
  return Out;
}
