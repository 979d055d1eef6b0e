// The reduction case study (paper Section 5.2 and 6.1): red1..red7 over u32 and f32, several
// chunk sizes and threads per block (virtualized where a block has fewer threads than the
// first stage), then the large reduction of any length. Every result is checked against C++.
#include "reduce.hpp"

#include <numeric>

#include "../common/runner.hpp"

namespace {

using namespace examples;
using paper::Variant;

template <class T>
std::vector<T> input(size_t n, uint32_t seed) {
  // Small integers (as floats too): every sum below 2^24 is exact in f32, so results compare
  // exactly whatever the order of the additions.
  std::vector<uint32_t> w = randomWords(n, seed, 16);
  return std::vector<T>(w.begin(), w.end());
}

template <class T, class Op>
std::vector<T> blockReference(const std::vector<T>& in, uint32_t chunk, Op f) {
  std::vector<T> out(in.size() / chunk);
  for (size_t b = 0; b < out.size(); ++b) {
    T acc = in[b * chunk];
    for (size_t i = 1; i < chunk; ++i) acc = f(acc, in[b * chunk + i]);
    out[b] = acc;
  }
  return out;
}

template <class T>
void blockReductions(Table& table, const Options& o, const std::vector<uint32_t>& chunks,
                     const std::vector<uint32_t>& threads, const char* type) {
  auto plus = [](const Exp<T>& a, const Exp<T>& b) { return a + b; };
  for (uint32_t chunk : chunks) {
    // On the GPU, 2^24 elements (64 MB, more than the 50 MB L2); on the simulator, a few blocks.
    const size_t n =
        o.gpu() && !o.quick ? (size_t{1} << 24) : chunk * (o.quick ? size_t{5} : size_t{37});
    const std::vector<T> in = input<T>(n, chunk);
    const std::vector<T> expected = blockReference(in, chunk, [](T a, T b) { return a + b; });
    for (uint32_t t : threads) {
      for (Variant v : {Variant::Red1, Variant::Red2, Variant::Red3, Variant::Red4, Variant::Red5,
                        Variant::Red6, Variant::Red7}) {
        const Kernel k = paper::reduceKernel<T>(v, plus, chunk, t);
        if (o.cuda) std::cout << k.cuda() << "\n";
        std::vector<T> out(n / chunk);
        Args args;
        args.in(in).out(out);
        const double ms = run(k, args, o);
        table.add(std::string(paper::variantName(v)) + " " + type, k, chunk, n, out == expected, ms,
                  static_cast<double>(n * sizeof(T)));
      }
    }
  }
}

void otherOperator(Table& table, const Options& o) {
  // The operator is a parameter: max over u32 with red5.
  const uint32_t chunk = 1024;
  const size_t n = chunk * 9;
  const std::vector<uint32_t> in = randomWords(n, 5, 1u << 30);
  auto maxOp = [](const EWord32& a, const EWord32& b) { return max(a, b); };
  const Kernel k = paper::reduceKernel<uint32_t>(Variant::Red5, maxOp, chunk, 128);
  std::vector<uint32_t> out(n / chunk);
  Args args;
  args.in(in).out(out);
  const double ms = run(k, args, o);
  table.add("red5 u32 max", k, chunk, n,
            out == blockReference(in, chunk, [](uint32_t a, uint32_t b) { return std::max(a, b); }),
            ms, static_cast<double>(n * 4));
}

void largeReductions(Table& table, const Options& o) {
  const uint32_t chunk = 4096;
  const Kernel k = paper::partialSums(chunk, 256, 8);
  if (o.cuda) std::cout << k.cuda() << "\n";
  std::vector<size_t> sizes{1, 1000, 70001};
  if (!o.quick) sizes.push_back((size_t{1} << 20) + 3);
  if (o.gpu() && !o.quick) sizes.push_back(size_t{1} << 26);
  for (size_t n : sizes) {
    const std::vector<uint32_t> in = randomWords(n, static_cast<uint32_t>(n), 1u << 30);
    const uint32_t expected = std::accumulate(in.begin(), in.end(), 0u);
    uint32_t got = 0;
    double ms = std::nan("");
    if (o.gpu()) {
      const gpu::DeviceBuffer<uint32_t> d(in);
      got = reduceOnGpu(k, chunk, d);
      ms = timeOnGpu([&] { reduceOnGpu(k, chunk, d); }, o);
    } else {
      got = reduceOnSimulator(k, chunk, in);
    }
    table.add("large reduce u32", k, chunk, n, got == expected, ms, static_cast<double>(n * 4));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian reductions: the paper's red1..red7 and a large reduction"};
  std::vector<uint32_t> chunks{512, 4096};
  std::vector<uint32_t> threads{64, 256, 1024};
  app.add_option("--chunk", chunks, "elements per block (powers of two)");
  app.add_option("--threads", threads, "threads per block")->check(CLI::Range(1, 1024));
  const Options o = parse(app, argc, argv);
  if (o.quick) threads = {32, 256};
  try {
    std::cout << "running on " << backendName(o) << "\n";
    Table table("block reductions (one chunk per block) and the large reduction");
    blockReductions<uint32_t>(table, o, chunks, threads, "u32");
    blockReductions<float>(table, o, {chunks.front()}, {threads.back()}, "f32");
    otherOperator(table, o);
    largeReductions(table, o);
    table.print();
    std::cout << (table.allPassed() ? "PASS" : "FAIL") << "\n";
    return table.allPassed() ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << "reduce: " << e.what() << "\n";
    return 1;
  }
}
