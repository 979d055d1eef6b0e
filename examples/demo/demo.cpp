// The demo: generate the paper's increment, increment2 and a block reduction (red3), print
// their CUDA and kernel reports, and compile each with NVRTC.
#include <iostream>

#include "../paper/programs.hpp"

int main() {
  try {
    for (const obsidian::Kernel& k :
         {paper::incrementKernel(), paper::increment2Kernel(), paper::red3Kernel()}) {
      std::cout << "==================== " << k.name() << " ====================\n"
                << k.cuda() << "\n";
      k.compile();  // NVRTC, for the default target (sm_90)
      std::cout << "report: " << k.report().dump(2) << "\n\n";
    }
  } catch (const obsidian::Error& e) {
    std::cerr << "obsidian-demo: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
