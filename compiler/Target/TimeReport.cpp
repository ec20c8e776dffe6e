//===- TimeReport.cpp - Where a compile's time goes (--time-report) -------===//

#include "compiler/Target/TimeReport.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln::timing {
namespace {

std::atomic<bool> collecting{false};

/// CPU seconds of the calling thread.
double threadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

struct Row {
  double seconds = 0;
  uint64_t count = 0;
};

/// (phase, pass) → time; a phase's own time (outside its passes) has pass
/// "".
struct Rows {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, Row> rows;
};

Rows &rows() {
  static Rows r;
  return r;
}

/// What runs on this thread: the innermost frame is charged.
struct Frame {
  std::string phase, pass;
  double start = 0; ///< when this frame last became the innermost
  double seconds = 0;
};

thread_local std::vector<Frame> frames;

void charge(Frame &f, double now) {
  f.seconds += now - f.start;
  f.start = now;
}

void push(std::string phase, std::string pass) {
  double now = threadSeconds();
  if (!frames.empty())
    charge(frames.back(), now);
  frames.push_back({std::move(phase), std::move(pass), now, 0});
}

void pop() {
  double now = threadSeconds();
  Frame f = std::move(frames.back());
  frames.pop_back();
  charge(f, now);
  {
    std::lock_guard<std::mutex> lock(rows().mutex);
    Row &r = rows().rows[{f.phase, f.pass}];
    r.seconds += f.seconds;
    r.count += 1;
  }
  if (!frames.empty())
    frames.back().start = now;
}

/// The phase passes run in on this thread.
std::string currentPhase() {
  return frames.empty() ? std::string("other") : frames.back().phase;
}

/// A pass that is one of the pass manager's own adaptors (nested
/// pipelines) has no argument; its time goes to what encloses it.
bool isTimedPass(mlir::Pass *pass) { return !pass->getArgument().empty(); }

class PassTimes : public mlir::PassInstrumentation {
public:
  void runBeforePass(mlir::Pass *pass, mlir::Operation *) override {
    if (isTimedPass(pass))
      push(currentPhase(), pass->getArgument().str());
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *) override {
    if (isTimedPass(pass))
      pop();
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override {
    if (isTimedPass(pass))
      pop();
  }
};

} // namespace

void enable() { collecting.store(true, std::memory_order_relaxed); }

bool enabled() { return collecting.load(std::memory_order_relaxed); }

Phase::Phase(llvm::StringRef name) : active(enabled()) {
  if (active)
    push(name.str(), "");
}

Phase::~Phase() {
  if (active)
    pop();
}

void addChildProcess(
    const std::optional<llvm::sys::ProcessStatistics> &stats) {
  if (!enabled() || !stats || frames.empty())
    return;
  // Child time is not the thread's: moved into the frame directly.
  // (TotalTime is user + system.)
  frames.back().seconds +=
      std::chrono::duration<double>(stats->TotalTime).count();
}

void instrument(mlir::PassManager &pm) {
  if (enabled())
    pm.addInstrumentation(std::make_unique<PassTimes>());
}

void print(llvm::raw_ostream &os, double wallSeconds) {
  std::map<std::string, Row> phases;
  std::vector<std::pair<std::pair<std::string, std::string>, Row>> passes;
  double total = 0;
  {
    std::lock_guard<std::mutex> lock(rows().mutex);
    for (auto &[key, row] : rows().rows) {
      Row &p = phases[key.first];
      p.seconds += row.seconds;
      if (key.second.empty())
        p.count += row.count;
      else
        passes.push_back({key, row});
      total += row.seconds;
    }
  }
  auto share = [&](double s) {
    return total > 0 ? fmt::format("{:.1f}%", 100 * s / total)
                     : std::string("-");
  };
  os << fmt::format("time report: {:.2f} s wall, {:.2f} s CPU (per phase, "
                    "summed over the compile workers and the child "
                    "processes they ran)\n",
                    wallSeconds, total);
  std::vector<std::pair<std::string, Row>> byTime(phases.begin(),
                                                  phases.end());
  // (Most time first; ties by name. std::stable_sort is deprecated
  // in this libstdc++ under clang.)
  std::sort(byTime.begin(), byTime.end(), [](auto &a, auto &b) {
    return std::tie(b.second.seconds, a.first) <
           std::tie(a.second.seconds, b.first);
  });
  size_t width = 5;
  for (auto &[name, row] : byTime)
    width = std::max(width, name.size());
  os << fmt::format("  {:<{}}  {:>8}  {:>6}  {:>6}\n", "phase", width,
                    "CPU s", "share", "count");
  for (auto &[name, row] : byTime)
    os << fmt::format("  {:<{}}  {:>8.3f}  {:>6}  {:>6}\n", name, width,
                      row.seconds, share(row.seconds), row.count);
  os << fmt::format("  {:<{}}  {:>8.3f}  {:>6}\n", "total", width, total,
                    share(total));
  if (passes.empty())
    return;
  std::sort(passes.begin(), passes.end(), [](auto &a, auto &b) {
    return std::tie(b.second.seconds, a.first) <
           std::tie(a.second.seconds, b.first);
  });
  constexpr size_t kShown = 15;
  if (passes.size() > kShown)
    passes.resize(kShown);
  size_t phaseWidth = 5, passWidth = 4;
  for (auto &[key, row] : passes) {
    phaseWidth = std::max(phaseWidth, key.first.size());
    passWidth = std::max(passWidth, key.second.size());
  }
  os << fmt::format("passes, the {} that took the most (part of their "
                    "phase's time above):\n",
                    passes.size());
  os << fmt::format("  {:<{}}  {:<{}}  {:>8}  {:>6}  {:>6}\n", "phase",
                    phaseWidth, "pass", passWidth, "CPU s", "share", "runs");
  for (auto &[key, row] : passes)
    os << fmt::format("  {:<{}}  {:<{}}  {:>8.3f}  {:>6}  {:>6}\n",
                      key.first, phaseWidth, key.second, passWidth,
                      row.seconds, share(row.seconds), row.count);
}

} // namespace kiln::timing
