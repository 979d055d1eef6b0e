// The simulator's entry point (see include/obsidian/sim.hpp): checks the arguments, picks the
// real grid and runs the kernel on the machine (sim/machine.hpp), on a stack deep enough for
// the kernel's expressions. The simulator's parts, each in its own file:
//   sim/program.hpp, compile.cpp  the lowered IR compiled into a flat program
//   sim/machine.hpp, machine.cpp  the machine: threads, warps, blocks, registers and memory
//   sim/hazards.hpp, hazards.cpp  races, uninitialized reads, divergent barriers and shuffles
#include <algorithm>

#include "ir/deep_stack.hpp"
#include "ir/ir_walk.hpp"
#include "launch/postconditions.hpp"
#include "obsidian/sim.hpp"
#include "sim/machine.hpp"

namespace obsidian {
namespace {

SimStats simulateOn(const Kernel& k, const std::vector<KernelArg>& args,
                    const SimOptions& options) {
  const BoundArguments bound = bindArguments(k.ir(), args);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].onDevice()) {
      throw Error(
          "simulate(kernel " + k.name() + "): argument " + std::to_string(i) +
          " is a device buffer; the simulator runs on host arrays (std::vector, std::span)");
    }
  }
  const uint32_t blocks =
      std::max<uint32_t>(realBlocks(k.ir(), bound, options.blocks, "SimOptions::blocks"), 1);
  return sim::Machine(k, bound, options, blocks).run();
}

}  // namespace

SimStats simulate(const Kernel& k, const std::vector<KernelArg>& args, const SimOptions& options) {
  // The simulator compiles and evaluates expressions recursively (see ir/deep_stack.hpp).
  const SimStats stats =
      ir::withStackFor(ir::maxDepth(k.ir()), [&] { return simulateOn(k, args, options); });
  checkPostconditions(
      k, args, "simulate(kernel " + k.name() + ")",
      [&](const Kernel& check) {
        std::vector<uint32_t> first = {0xffffffffu};
        std::vector<KernelArg> withResult = args;
        withResult.emplace_back(std::span<uint32_t>(first));
        SimOptions o = options;
        o.blocks = 0;  // the check's own grid
        simulate(check, withResult, o);
        return first[0];
      },
      hostElement);
  return stats;
}

}  // namespace obsidian
