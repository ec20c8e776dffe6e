//===- Module.cpp - Loaded bundles, kernels and launches ------------------===//
//
// Loading a bundle on a device ranks, for every variant, the code objects
// the device can run. A launch then checks the arguments against the
// kernel's parameters and promises, finds the candidate variants (those
// whose launch conditions hold and that have a code object whose
// assumptions hold for the arguments), chooses one (an explicit config,
// else the first candidate), takes its best such code object, evaluates
// its grid and runs it. Each code object is loaded on its first launch.
//
//===----------------------------------------------------------------------===//

#include "Fault.h"
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

std::string imageLabel(const ImageInfo &Img, const DeviceImpl &Dev) {
  bool Host = Img.Triple.find("-linux") != std::string::npos;
  std::string Label = Host ? Img.Triple + " " + Img.Arch : Img.Arch;
  if (Img.ImageKind == 5 /*IMG_PTX*/)
    Label += " PTX";
  std::string Why = Dev.whyNot(Img);
  return Why.empty() ? Label : Label + " (" + Why + ")";
}

/// The code objects a bundle (or one kernel) has, for "no image" messages.
std::string listImages(const std::vector<const KernelInfo *> &Kernels,
                       const DeviceImpl &Dev) {
  std::vector<std::string> Labels;
  for (const KernelInfo *K : Kernels)
    for (const VariantInfo &V : K->Variants)
      for (const ImageInfo &Img : V.Images) {
        std::string L = imageLabel(Img, Dev);
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

/// The runtime params' integer values (pointers: 0), as expressions read
/// them.
std::vector<int64_t> scalarValues(const std::vector<Arg> &Args) {
  std::vector<int64_t> Values(Args.size(), 0);
  for (size_t I = 0; I < Args.size(); ++I)
    if (!Args[I].isPointer())
      Values[I] = Args[I].asInt64();
  return Values;
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
  /// K.Variants and `Slot` the chosen image's in VariantState::Images.
  Expected<LaunchPlan> plan(const std::vector<Arg> &Args,
                            const LaunchOptions &Options, size_t &Position,
                            size_t &Slot,
                            std::vector<Candidate> *CandidatesOut = nullptr) {
    if (!KS.NoImageMessage.empty())
      return Error(ErrorCode::NoImage, KS.NoImageMessage);
    if (Error E = checkArgs(Args))
      return E;
    Values = scalarValues(Args);

    std::vector<bool> Failed(X.Conditions.size(), false);
    std::vector<size_t> Candidates;
    Slots.assign(K.Variants.size(), -1);
    for (size_t V = 0; V < K.Variants.size(); ++V) {
      if (!KS.Variants[V].runnable())
        continue;
      Expected<int> Holds = conditionsHold(V, Failed);
      if (!Holds)
        return Holds.takeError();
      if (!*Holds)
        continue;
      Slots[V] = pickImage(KS.Variants[V], Args, K.Variants[V].ConstValues);
      if (Slots[V] >= 0)
        Candidates.push_back(V);
      else
        AssumptionsFailed = true;
    }

    if (CandidatesOut)
      for (size_t V : Candidates)
        CandidatesOut->push_back({V, size_t(Slots[V])});
    Expected<size_t> Chosen = choose(Candidates, Failed, Options);
    if (!Chosen)
      return Chosen.takeError();
    Position = *Chosen;
    Slot = size_t(Slots[Position]);
    const VariantInfo &V = K.Variants[Position];

    LaunchPlan Plan;
    Plan.Variant = V.Index;
    Plan.Image = KS.Variants[Position].Images[Slot].Index;
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

  /// The first image of variant `Position` after slot `After` whose
  /// assumptions hold for `Args`, or kAssumptionsBroken.
  int nextImage(size_t Position, size_t After, const std::vector<Arg> &Args) {
    Values = scalarValues(Args);
    return pickImage(KS.Variants[Position], Args,
                     K.Variants[Position].ConstValues, After + 1);
  }

private:
  /// The first image of `VS` from slot `First` on (they are in order of
  /// preference) whose assumptions hold for `Args`, or kAssumptionsBroken.
  int pickImage(const VariantState &VS, const std::vector<Arg> &Args,
                const std::vector<int64_t> &ConstValues,
                size_t First = 0) const {
    for (size_t I = First; I < VS.Images.size(); ++I) {
      const ImageState &IS = VS.Images[I];
      bool Holds = true;
      for (unsigned P : IS.Align16)
        Holds &= Args[P].bits() % 16 == 0;
      for (unsigned P : IS.Div16)
        Holds &= isSignedType(Args[P].type()) ? Args[P].asInt64() % 16 == 0
                                               : Args[P].bits() % 16 == 0;
      // A condition that cannot be evaluated (a division by zero) does not
      // hold.
      if (IS.Holds)
        for (const Expr &E : *IS.Holds) {
          Expected<int64_t> R = E.evaluate(Values, ConstValues);
          Holds &= R && *R != 0;
        }
      // Tensor maps that break TMA's requirements for these arguments
      // rule the image out likewise.
      if (Holds && IS.Maps && !IS.Maps->empty())
        Holds = bool(evaluateTensorMaps(K, *IS.Maps, Args, Values, ConstValues));
      if (Holds)
        return int(I);
    }
    return kAssumptionsBroken;
  }

  /// Why variants whose conditions hold were dropped: their code objects'
  /// assumptions ("x 16-byte aligned, n divisible by 16").
  std::string brokenAssumptions() const {
    std::vector<std::string> Names;
    for (size_t V = 0; V < K.Variants.size(); ++V) {
      if (Slots[V] != kAssumptionsBroken)
        continue;
      for (const ImageState &IS : KS.Variants[V].Images) {
        for (unsigned P : IS.Align16)
          Names.push_back(K.Params[P].Name + " 16-byte aligned");
        for (unsigned P : IS.Div16)
          Names.push_back(K.Params[P].Name + " divisible by 16");
        if (IS.Holds)
          for (const Expr &E : *IS.Holds)
            Names.push_back("'" + E.text() + "'");
        if (IS.Maps)
          for (const TensorMapExprs &Map : *IS.Maps)
            Names.push_back("tensor map " + K.Params[Map.Param].Name +
                            " within TMA's limits");
      }
    }
    std::sort(Names.begin(), Names.end());
    Names.erase(std::unique(Names.begin(), Names.end()), Names.end());
    return joinNames(Names);
  }

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
    auto NoCodeObject = [&] {
      return "the code objects of kernel '" + K.Name + "' for this device " +
             "assume " + brokenAssumptions() + ", which the arguments break";
    };
    if (Options.Config.empty() && !Options.Variant) {
      if (!Candidates.empty())
        return Candidates.front();
      if (AssumptionsFailed)
        return refused("no variant of kernel '" + K.Name + "' can run: " +
                       NoCodeObject() + genericHint(Candidates));
      std::string Args;
      std::string Conds = failedConditions(Failed, Args);
      size_t Runnable = 0;
      for (const VariantState &VS : KS.Variants)
        Runnable += VS.runnable();
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
      if (!KS.Variants[V].runnable() ||
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
    for (size_t V : Matching)
      if (Slots[V] == kAssumptionsBroken)
        return refused("the variant" +
                       std::string(Matching.size() > 1 ? "s" : "") +
                       " of kernel '" + K.Name + "' with " + Asked +
                       " cannot run: " + NoCodeObject() +
                       genericHint(Candidates));
    std::string Args;
    std::string Conds = failedConditions(Failed, Args);
    return refused("the variant" + std::string(Matching.size() > 1 ? "s" : "") +
                   " of kernel '" + K.Name + "' with " + Asked +
                   " cannot run" + withArgs(Args) + ": " + Conds +
                   " do" + (Conds.rfind("launch conditions", 0) == 0 ? "" : "es") +
                   " not hold");
  }

  /// For a launch whose code objects all assume what the arguments break:
  /// which variants can run them instead (a pinned variant's), and how to
  /// give every variant a generic image (kiln compile --generic-images).
  std::string genericHint(const std::vector<size_t> &Candidates) const {
    std::string Out;
    size_t Shown = 0;
    for (size_t V : Candidates) {
      if (Shown++ == 4) {
        Out += ", ...";
        break;
      }
      Out += (Out.empty() ? "(" : ", (") + K.variantConfig(K.Variants[V]) +
             ")";
    }
    return (Out.empty() ? std::string() : "; variants that can: " + Out) +
           " (`kiln compile --generic-images=all` gives every variant a "
           "code object for any arguments)";
  }

  /// "BLOCK=256, warps=4; BLOCK=512, warps=4" (at most 8, then "...").
  std::string listConfigs() const {
    std::string Out;
    size_t Shown = 0;
    for (size_t V = 0; V < K.Variants.size(); ++V) {
      if (!KS.Variants[V].runnable())
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
  /// Per variant: the chosen slot in VariantState::Images; -1 if it does
  /// not run here or its conditions do not hold; kAssumptionsBroken if
  /// they do but no image's assumptions hold.
  static constexpr int kAssumptionsBroken = -2;
  std::vector<int> Slots;
  bool AssumptionsFailed = false;
};

/// The index of `Name` in K.Params (the manifest checked that it is one).
unsigned paramIndex(const KernelInfo &K, const std::string &Name) {
  for (size_t I = 0; I < K.Params.size(); ++I)
    if (K.Params[I].Name == Name)
      return unsigned(I);
  return 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Expected<Module> Device::loadModule(const Bundle &B) {
  auto M = std::make_shared<ModuleImpl>(Impl, B);
  M->TuningDeviceKey = tuningDeviceKey(*Impl);
  std::vector<const KernelInfo *> All;
  bool AnyImage = false, AnyRunnable = false;
  for (const KernelInfo &K : B.kernels()) {
    const KernelExprs &X = M->TheBundle.data()->Exprs[All.size()];
    All.push_back(&K);
    KernelState KS;
    bool KernelRunnable = false;
    for (const VariantInfo &V : K.Variants) {
      VariantState VS;
      for (size_t I = 0; I < V.Images.size(); ++I) {
        AnyImage = true;
        const ImageInfo &Img = V.Images[I];
        int Rank = Impl->rankImage(Img);
        if (Rank <= 0)
          continue;
        ImageState IS;
        IS.Index = unsigned(I);
        IS.Rank = Rank;
        for (const std::string &P : Img.Assumes.Align16)
          IS.Align16.push_back(paramIndex(K, P));
        for (const std::string &P : Img.Assumes.Div16)
          IS.Div16.push_back(paramIndex(K, P));
        IS.Holds = &X.Holds[KS.Variants.size()][I];
        IS.Maps = &X.TensorMaps[KS.Variants.size()][I];
        VS.Images.push_back(std::move(IS));
      }
      // Best rank first, then the most assumptions (the fast path is
      // taken whenever its assumptions hold), then manifest order.
      std::sort(VS.Images.begin(), VS.Images.end(),
                [](const ImageState &A, const ImageState &B) {
                  size_t NA = A.assumptions(), NB = B.assumptions();
                  if (A.Rank != B.Rank)
                    return A.Rank > B.Rank;
                  if (NA != NB)
                    return NA > NB;
                  return A.Index < B.Index;
                });
      KernelRunnable |= VS.runnable();
      KS.Variants.push_back(std::move(VS));
    }
    if (!KernelRunnable)
      KS.NoImageMessage = "no code object of kernel '" + K.Name +
                          "' runs on " + Impl->targetDescription() +
                          "; bundle '" + B.name() + "' has " +
                          listImages({&K}, *Impl) + " for it";
    AnyRunnable |= KernelRunnable;
    M->Kernels.push_back(std::move(KS));
    M->Tuning.push_back(std::make_unique<KernelTuning>());
  }
  if (AnyImage && !AnyRunnable)
    return Error(ErrorCode::NoImage,
                 "no image for " + Impl->targetDescription() + " in bundle '" +
                     B.name() + "'; it has " + listImages(All, *Impl));
  return Module(std::move(M));
}

Expected<LoadedImage *> ModuleImpl::loadImage(unsigned Kernel,
                                             unsigned Variant, size_t Slot) {
  std::lock_guard<std::mutex> Lock(LoadMutex);
  ImageState &IS = Kernels[Kernel].Variants[Variant].Images[Slot];
  if (IS.Loaded)
    return IS.Loaded.get();
  const ImageInfo &Img =
      TheBundle.kernels()[Kernel].Variants[Variant].Images[IS.Index];
  Expected<std::unique_ptr<LoadedImage>> L =
      fault::inject(fault::Point::ModuleLoad, Img.Entry.c_str())
          ? Expected<std::unique_ptr<LoadedImage>>(
                Error(ErrorCode::Driver, "cannot load the code object of " +
                                             Img.Entry + ": injected fault"))
          : Device->loadImage(Img, TheBundle.imageData(Img));
  if (!L)
    return Error(L.error().code(),
                 TheBundle.name() + ": " + L.error().message());
  IS.Loaded = std::move(*L);
  return IS.Loaded.get();
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

Expected<LaunchPlan> kiln::rt::detail::planLaunch(
    const ModuleImpl &M, unsigned Kernel, const std::vector<Arg> &Args,
    const LaunchOptions &Options, size_t &Position, size_t &Slot,
    std::vector<Candidate> *Candidates) {
  return Planner(M, Kernel).plan(Args, Options, Position, Slot, Candidates);
}

Error kiln::rt::detail::launchPlanned(ModuleImpl &M, unsigned Kernel,
                                      StreamImpl &S, const Candidate &C,
                                      const std::vector<Arg> &Args,
                                      const LaunchPlan &Plan,
                                      unsigned *Launched) {
  if (Plan.programs() == 0)
    return Error::success();
  const KernelInfo &K = M.TheBundle.kernels()[Kernel];
  const VariantState &VS = M.Kernels[Kernel].Variants[C.Position];
  for (size_t Slot = C.Slot;;) {
    Expected<LoadedImage *> Image =
        M.loadImage(Kernel, unsigned(C.Position), Slot);
    if (!Image)
      return Image.takeError();
    // The image's tensor maps, evaluated again for the device (the plan
    // checked that they meet TMA's requirements).
    std::vector<TensorMap> Maps;
    const ImageState &IS = VS.Images[Slot];
    if (IS.Maps && !IS.Maps->empty()) {
      Expected<std::vector<TensorMap>> E =
          evaluateTensorMaps(K, *IS.Maps, Args, scalarValues(Args),
                             K.Variants[C.Position].ConstValues);
      if (!E)
        return Error(ErrorCode::LaunchRefused,
                     "the code object of " +
                         K.variantName(K.Variants[C.Position]) +
                         " cannot run: " + E.error().message());
      Maps = std::move(*E);
    }
    std::vector<void *> Pointers;
    for (const Arg &A : Args)
      Pointers.push_back(const_cast<void *>(A.storage()));
    // The slots of the tensor maps and of a hidden argument (launch()).
    Pointers.resize(Pointers.size() + Maps.size() + 1, nullptr);
    GridDims Grid{Plan.Grid[0], Plan.Grid[1], Plan.Grid[2]};
    if (fault::inject(fault::Point::Launch, "launch"))
      return Error(ErrorCode::Driver,
                   "cannot launch '" + K.Name + "': injected fault");
    Error E = M.Device->launch(S, **Image, Pointers.data(), Grid, Maps);
    if (!E && Launched)
      *Launched = IS.Index;
    // A device whose encoder rejects a map the runtime's checks let
    // through refuses it (LaunchRefused) before launching anything: the
    // next image whose assumptions hold (the generic one) runs instead.
    // Other failures of the encoder are driver errors.
    if (!E || Maps.empty() || E.code() != ErrorCode::LaunchRefused)
      return E;
    int Next = Planner(M, Kernel).nextImage(C.Position, Slot, Args);
    if (Next < 0)
      return Error(ErrorCode::LaunchRefused,
                   E.message() + "; no other code object of " +
                       K.variantName(K.Variants[C.Position]) +
                       " holds for these arguments");
    Slot = size_t(Next);
  }
}

Expected<LaunchPlan> Kernel::plan(const std::vector<Arg> &Args,
                                  const LaunchOptions &Options) const {
  size_t Position, Slot;
  std::vector<Candidate> Candidates;
  Expected<LaunchPlan> Plan =
      Planner(*M, Index).plan(Args, Options, Position, Slot, &Candidates);
  if (!Plan)
    return Plan;
  if (!Options.Config.empty() || Options.Variant)
    Plan->Source = ChoiceSource::Pinned;
  else
    Plan->Source =
        Candidates.size() < 2 ? ChoiceSource::Only : ChoiceSource::Default;
  return Plan;
}

Error Kernel::load(unsigned Variant) const {
  const KernelInfo &K = info();
  for (size_t V = 0; V < K.Variants.size(); ++V) {
    if (K.Variants[V].Index != Variant)
      continue;
    const VariantState &VS = M->Kernels[Index].Variants[V];
    if (!VS.runnable())
      return Error(ErrorCode::NoImage, "variant " + K.variantName(K.Variants[V]) +
                                           " has no code object for " +
                                           M->Device->targetDescription());
    for (size_t Slot = 0; Slot < VS.Images.size(); ++Slot) {
      Expected<LoadedImage *> L = M->loadImage(Index, unsigned(V), Slot);
      if (!L)
        return L.takeError();
    }
    return Error::success();
  }
  return Error(ErrorCode::NotFound, "kernel '" + K.Name + "' has no variant " +
                                        std::to_string(Variant));
}

Error Kernel::load(const LaunchPlan &Plan) const {
  const KernelInfo &K = info();
  for (size_t V = 0; V < K.Variants.size(); ++V) {
    if (K.Variants[V].Index != Plan.Variant)
      continue;
    const VariantState &VS = M->Kernels[Index].Variants[V];
    for (size_t Slot = 0; Slot < VS.Images.size(); ++Slot)
      if (VS.Images[Slot].Index == Plan.Image) {
        Expected<LoadedImage *> L = M->loadImage(Index, unsigned(V), Slot);
        return L ? Error::success() : L.takeError();
      }
    return Error(ErrorCode::NoImage,
                 "code object " + std::to_string(Plan.Image) + " of " +
                     K.variantName(K.Variants[V]) + " does not run on " +
                     M->Device->targetDescription());
  }
  return Error(ErrorCode::NotFound, "kernel '" + K.Name + "' has no variant " +
                                        std::to_string(Plan.Variant));
}

/// The stream of a launch or tuning call, checked against the module.
static Error checkStream(const Stream &S, const DeviceImpl *Dev,
                         const char *What) {
  if (!S.impl())
    return Error(ErrorCode::InvalidArgument,
                 std::string(What) + ": the stream is empty (moved from?)");
  if (S.deviceTag() != Dev)
    return Error(ErrorCode::InvalidArgument,
                 std::string(What) + ": the stream belongs to another device "
                                     "than the module");
  return Error::success();
}

Expected<LaunchPlan> Kernel::launch(Stream &S, const std::vector<Arg> &Args,
                                    const LaunchOptions &Options) const {
  if (Error E = checkStream(S, M->Device.get(), "launch"))
    return E;
  Candidate Chosen;
  std::vector<Candidate> Candidates;
  Expected<LaunchPlan> Plan = planLaunch(*M, Index, Args, Options,
                                         Chosen.Position, Chosen.Slot,
                                         &Candidates);
  if (!Plan || Plan->programs() == 0)
    return Plan;
  bool Pinned = !Options.Config.empty() || Options.Variant;
  TuningMode Mode = Options.Tuning.value_or(tuningMode());
  if (Pinned) {
    Plan->Source = ChoiceSource::Pinned;
  } else if (Candidates.size() < 2) {
    Plan->Source = ChoiceSource::Only;
  } else if (Mode == TuningMode::Off) {
    Plan->Source = ChoiceSource::Default;
  } else {
    bool Fatal = false;
    Expected<TuningChoice> Choice =
        chooseByTuning(*M, Index, *S.impl(), Args, Candidates, Mode, Fatal);
    if (!Choice && Fatal)
      return Choice.takeError();
    if (!Choice) {
      warn(Choice.error().message() + "; launching the default variant");
      Plan->Source = ChoiceSource::Default;
    } else {
      if (Choice->Position != Chosen.Position) {
        LaunchOptions Pin;
        Pin.Variant = info().Variants[Choice->Position].Index;
        Plan = planLaunch(*M, Index, Args, Pin, Chosen.Position, Chosen.Slot);
        if (!Plan)
          return Plan;
      }
      Plan->Source = Choice->Source;
      Plan->Bucket = Choice->Bucket;
      Plan->Measured = Choice->Measured;
      Plan->TuningSeconds = Choice->Seconds;
    }
  }
  if (Error E = launchPlanned(*M, Index, *S.impl(), Chosen, Args, *Plan,
                             &Plan->Image))
    return E;
  return Plan;
}

Expected<TuneResult> Kernel::tune(Stream &S, const std::vector<Arg> &Args,
                                  const TuneOptions &Options) const {
  if (Error E = checkStream(S, M->Device.get(), "tune"))
    return E;
  Candidate Default;
  std::vector<Candidate> Candidates;
  Expected<LaunchPlan> Plan = planLaunch(*M, Index, Args, {}, Default.Position,
                                         Default.Slot, &Candidates);
  if (!Plan)
    return Plan.takeError();
  if (Plan->programs() == 0)
    return Error(ErrorCode::InvalidArgument,
                 "nothing to tune: the grid of kernel '" + info().Name +
                     "' is empty for these arguments");
  return tuneKernel(*M, Index, *S.impl(), Args, Candidates, Options);
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
