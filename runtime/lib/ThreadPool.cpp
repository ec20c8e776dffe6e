//===- ThreadPool.cpp - The host device's worker threads ------------------===//

#include "ThreadPool.h"

#include <new>

using namespace kiln::rt::detail;

ThreadPool::ThreadPool(unsigned Threads, size_t StackBytes) {
  pthread_attr_t Attr;
  bool HaveAttr = pthread_attr_init(&Attr) == 0;
  if (HaveAttr)
    pthread_attr_setstacksize(&Attr, StackBytes);
  for (unsigned I = 0; I < Threads; ++I) {
    Worker *W = new (std::nothrow) Worker{this, I, {}};
    if (!W)
      break;
    if (pthread_create(&W->Thread, HaveAttr ? &Attr : nullptr, &workerMain,
                       W) != 0) {
      delete W;
      break;
    }
    Workers.push_back(W);
  }
  if (HaveAttr)
    pthread_attr_destroy(&Attr);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Stopping = true;
  }
  StartCV.notify_all();
  for (Worker *W : Workers) {
    pthread_join(W->Thread, nullptr);
    delete W;
  }
}

void *ThreadPool::workerMain(void *Arg) {
  Worker *W = static_cast<Worker *>(Arg);
  W->Pool->workerLoop(W->Index);
  return nullptr;
}

void ThreadPool::workerLoop(unsigned Index) {
  uint64_t Seen = 0;
  std::unique_lock<std::mutex> Lock(Mutex);
  while (true) {
    StartCV.wait(Lock, [&] { return Stopping || Generation != Seen; });
    if (Stopping)
      return;
    Seen = Generation;
    const std::function<void(unsigned)> *Current = Job;
    Lock.unlock();
    (*Current)(Index);
    Lock.lock();
    if (--Pending == 0)
      DoneCV.notify_all();
  }
}

void ThreadPool::run(const std::function<void(unsigned)> &Body) {
  if (Workers.empty()) {
    Body(0);
    return;
  }
  std::unique_lock<std::mutex> Lock(Mutex);
  Job = &Body;
  Pending = unsigned(Workers.size());
  ++Generation;
  StartCV.notify_all();
  DoneCV.wait(Lock, [&] { return Pending == 0; });
  Job = nullptr;
}
