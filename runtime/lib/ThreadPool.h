//===- ThreadPool.h - The host device's worker threads ----------*- C++ -*-===//
//
// A fixed set of worker threads that all run one job at a time. Workers get
// large stacks (kernels keep whole tiles on the stack), which is why they
// are POSIX threads rather than std::thread, and why the thread that calls
// run() only waits.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <pthread.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace kiln::rt::detail {

class ThreadPool {
public:
  /// Starts up to `Threads` workers with `StackBytes` of stack each; fewer
  /// if the system refuses (at least one: run() then works inline).
  ThreadPool(unsigned Threads, size_t StackBytes);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return Workers.empty() ? 1 : unsigned(Workers.size()); }

  /// Calls Job(worker index) once on every worker and returns when all
  /// calls have returned. One run at a time (callers serialize).
  void run(const std::function<void(unsigned)> &Job);

private:
  struct Worker {
    ThreadPool *Pool;
    unsigned Index;
    pthread_t Thread;
  };
  static void *workerMain(void *Arg);
  void workerLoop(unsigned Index);

  std::vector<Worker *> Workers;
  std::mutex Mutex;
  std::condition_variable StartCV, DoneCV;
  const std::function<void(unsigned)> *Job = nullptr;
  uint64_t Generation = 0;
  unsigned Pending = 0;
  bool Stopping = false;
};

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_THREADPOOL_H
