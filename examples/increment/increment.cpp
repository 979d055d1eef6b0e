// The paper's first examples: increment (Figure 12), increment2 (Figure 13) and agnostic at
// Block and at Warp level (Section 3.2), over several chunk sizes and threads per block.
#include "increment.hpp"

#include "../common/runner.hpp"

namespace {

using namespace examples;

Kernel incrementOver(uint32_t chunk, uint32_t threads) {
  return capture("increment", threads,
                 [chunk](DPull<EWord32> in) { return paper::increment(splitUp(chunk, in)); });
}

Kernel increment2Over(uint32_t chunk, uint32_t perThread, uint32_t threads) {
  return capture("increment2", threads, [chunk, perThread](DPull<EWord32> in) {
    return paper::increment2(
        fmap([perThread](const SPull<EWord32>& c) { return splitUp(perThread, c); },
             splitUp(chunk, in)));
  });
}

Kernel agnosticOver(bool warps, uint32_t chunk, uint32_t threads) {
  return capture(
      warps ? "agnosticWarp" : "agnosticBlock", threads, [warps, chunk](DPull<EWord32> in) {
        if (warps) {
          auto w = fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(chunk, in));
          return pConcat(fmap(
              [](const SPull<SPull<EWord32>>& block) {
                return pConcat(fmap(
                    [](const SPull<EWord32>& a) {
                      return exec<Warp>(
                          [a](const Program<Warp>& p) { return paper::agnostic(p, a); });
                    },
                    block));
              },
              w));
        }
        return pConcat(fmap(
            [](const SPull<EWord32>& a) {
              return exec<Block>([a](const Program<Block>& p) { return paper::agnostic(p, a); });
            },
            splitUp(chunk, in)));
      });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian increment, increment2 and agnostic (the paper's Sections 3 and 3.2)"};
  std::vector<uint32_t> threads{64, 256, 1024};
  app.add_option("--threads", threads, "threads per block")->check(CLI::Range(32, 1024));
  const Options o = parse(app, argc, argv);
  try {
    std::cout << "running on " << backendName(o) << "\n";
    Table table("increment, increment2, agnostic");
    for (uint32_t t : threads) {
      if (t % 32 != 0) throw Error("--threads: warp programs need multiples of 32");
      for (uint32_t chunk : {256u, 1000u, 8192u}) {
        // 2^24 elements on the GPU (64 MB, above the L2); a few chunks on the simulator.
        const size_t n = o.gpu() && !o.quick ? (size_t{1} << 24) / chunk * chunk
                                             : chunk * (o.quick ? size_t{3} : size_t{11});
        const std::vector<uint32_t> in = randomWords(n, chunk + t);
        std::vector<uint32_t> plusOne(n), agn(n);
        for (size_t i = 0; i < n; ++i) {
          plusOne[i] = in[i] + 1;
          agn[i] = (in[i] + 1) * 2 + 3;
        }
        std::vector<std::pair<Kernel, const std::vector<uint32_t>*>> kernels;
        kernels.emplace_back(incrementOver(chunk, t), &plusOne);
        if (chunk % 8 == 0) kernels.emplace_back(increment2Over(chunk, 8, t), &plusOne);
        if (chunk % 32 == 0) {
          kernels.emplace_back(agnosticOver(false, chunk, t), &agn);
          kernels.emplace_back(agnosticOver(true, chunk, t), &agn);
        }
        for (const auto& [k, expected] : kernels) {
          if (o.cuda) std::cout << k.cuda() << "\n";
          std::vector<uint32_t> out(n);
          Args args;
          args.in(in).out(out);
          const double ms = run(k, args, o);
          table.add(k.name(), k, chunk, n, out == *expected, ms, 2.0 * n * 4);
        }
      }
    }
    table.print();
    std::cout << (table.allPassed() ? "PASS" : "FAIL") << "\n";
    return table.allPassed() ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << "increment: " << e.what() << "\n";
    return 1;
  }
}
