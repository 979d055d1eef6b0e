// A thread with a large stack for walks over deep expressions (see deep_stack.hpp).
#include "ir/deep_stack.hpp"

#include <pthread.h>

#include <string>

#include "obsidian/error.hpp"

namespace obsidian::ir {
namespace {

// Depths every thread's stack handles (a walk takes well under 1 KB a level in a release
// build, and threads have at least 1 MB)...
constexpr uint32_t kInlineDepth = 512;
// ...and the stack given per level beyond that: generous, since untouched pages cost nothing.
// AddressSanitizer's redzones make the simulator's evaluator take over 4 KB a level.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kBytesPerLevel = 16384;
#else
constexpr size_t kBytesPerLevel = 4096;
#endif
constexpr size_t kBaseBytes = size_t{16} << 20;

struct Job {
  const std::function<void()>* f;
  std::exception_ptr error;
};

void* runJob(void* arg) {
  Job& job = *static_cast<Job*>(arg);
  try {
    (*job.f)();
  } catch (...) {
    job.error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

void runWithStackFor(uint32_t depth, const std::function<void()>& f) {
  if (depth <= kInlineDepth) {
    f();
    return;
  }
  Job job{&f, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kBaseBytes + kBytesPerLevel * depth);
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, runJob, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    throw Error("an expression " + std::to_string(depth) +
                " operations deep needs a thread with a large stack, and none could be "
                "created (pthread_create error " +
                std::to_string(rc) + ")");
  }
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace obsidian::ir
