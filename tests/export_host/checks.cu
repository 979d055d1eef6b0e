// Exported launchers evaluate lengths and preconditions on the host before they launch: a
// zero divisor, INT_MIN / -1 and a shift by the width or more must neither trap (SIGFPE) nor
// launch, but return cudaErrorInvalidValue. Nothing here launches a kernel, so it runs
// without a GPU. Built plainly and with -DOBSIDIAN_CHECKED (which also prints the reason).
#include <climits>
#include <cstdio>

#include "division.cuh"

int main() {
  // Made-up device addresses: nothing is read or written, the checks refuse first.
  const uint32_t* in = reinterpret_cast<const uint32_t*>(0x100000);
  uint32_t* out = reinterpret_cast<uint32_t*>(0x200000);
  int failures = 0;
  auto expect = [&](cudaError_t got, const char* what) {
    if (got != cudaErrorInvalidValue) {
      std::printf("FAIL %s: got %d, want cudaErrorInvalidValue\n", what, static_cast<int>(got));
      ++failures;
    }
  };
  expect(hostcheck::groups_launch(in, 100, 0u, out, 100), "groups with g = 0");
  expect(hostcheck::guarded_launch(in, 100, 0u, 0, 1, 0u, out, 100), "guarded with g = 0");
  expect(hostcheck::guarded_launch(in, 100, 1u, INT_MIN, -1, 0u, out, 100),
         "guarded with INT_MIN / -1");
  expect(hostcheck::guarded_launch(in, 100, 1u, 0, 1, 40u, out, 100), "guarded with sh = 40");
  std::printf("%s\n", failures == 0 ? "export host checks: ok" : "export host checks: FAILED");
  return failures == 0 ? 0 : 1;
}
