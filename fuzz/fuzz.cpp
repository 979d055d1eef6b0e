// obsidian-fuzz: differential fuzzing of the whole pipeline. Each random recipe (recipe.hpp)
// becomes a kernel that runs on the simulator in several configurations (shared-memory reuse
// and subexpression sharing on and off, two thread counts, fewer real blocks than virtual ones)
// and, with --gpu, on the device; every result must equal the plain C++ reference and the simulator
// must find no hazard (the recipes use only safe combinators), store each output element once,
// the report must count the recipe's grid loops, and the kernel must write vector stores exactly
// where the recipe's unvectors<W> goes straight to the output. A failure is shrunk to a small
// recipe and printed as C++ source; the exit status is then 1.
#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <obsidian/obsidian.hpp>
#include <obsidian/sim.hpp>
#include <optional>
#include <sstream>

#include "build.hpp"
#include "defects.hpp"
#include "ir/ir_walk.hpp"
#include "recipe.hpp"
#include "scalar_ops.hpp"
#include "typed_arrays.hpp"

namespace {

using fuzz::Recipe;

enum class Verdict {
  Ok,
  Mismatch,
  Hazard,
  Error,
  Crash,
  OverSharedLimit,
  DefectClass,
  Traffic,
  VectorStores
};

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::Mismatch: return "result differs from the reference";
    case Verdict::Hazard: return "hazard reported for a program of safe combinators";
    case Verdict::Error: return "obsidian::Error for a valid program";
    case Verdict::Crash: return "unexpected exception";
    case Verdict::OverSharedLimit: return "over the shared-memory limit";
    case Verdict::DefectClass: return "a defect class slipped through (defects.hpp)";
    case Verdict::Traffic:
      return "grid passes (report) or output stores (simulator) differ from the recipe's";
    case Verdict::VectorStores: return "vector stores (IR) differ from the recipe's";
  }
  return "?";
}

struct Outcome {
  Verdict verdict = Verdict::Ok;
  std::string config;  // which configuration failed
  uint32_t threads = 0;
  std::string detail;
};

struct Config {
  const char* name;
  uint32_t threads;
  bool plain;       // no shared-memory reuse, no subexpression sharing
  uint32_t blocks;  // real blocks (0: all)
};

std::string firstDifference(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      return "first difference at " + std::to_string(i) + " of " + std::to_string(want.size()) +
             ": got " + std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
    }
  }
  return "equal";
}

// Empty when the run s of kernel k stored each output's elements once (outs: the array
// arguments after the `inputs` input arrays, the outputs last); otherwise the first output
// that it did not.
std::string outputStores(const obsidian::Kernel& k, const obsidian::SimStats& s,
                         const std::vector<std::vector<uint32_t>>& outs, size_t inputs) {
  size_t arg = 0;  // array arguments
  for (const obsidian::Param& p : k.params()) {
    if (p.kind != obsidian::ParamKind::Array || arg++ < inputs || !p.output) continue;
    uint64_t stores = 0;
    for (const obsidian::SimTraffic& t : s.traffic) {
      if (t.array == p.name) stores = t.stores;
    }
    const size_t j = arg - 1 - inputs;  // in outs
    if (stores != outs.at(j).size()) {
      return "output " + p.name + " (array argument " + std::to_string(j + 1) + ") of " +
             std::to_string(outs[j].size()) + " elements had " + std::to_string(stores) + " stores";
    }
  }
  return "";
}

// Empty when kernel k writes recipe r's vector-store output as its form says (Recipe::store):
// one StoreVector or more, each of W lanes to the output, aligned to the vector's bytes, where
// the writes go straight to the output; none, and no alignment, where they fall back to one
// write per lane (forced into shared memory) or the recipe has no vector store.
std::string vectorStores(const Recipe& r, const obsidian::Kernel& k) {
  using namespace obsidian;
  const KernelIR& ir = k.ir();
  size_t stores = 0;
  std::string wrong;
  std::function<void(const Body&)> walk = [&](const Body& body) {
    for (const Stmt& s : body) {
      if (const auto* v = std::get_if<StoreVector>(&s.node)) {
        ++stores;
        if (v->values.size() != r.storeWidth || !ir.arrays.at(v->array).writable) {
          wrong = "a StoreVector of " + std::to_string(v->values.size()) + " lanes to " +
                  ir.arrays.at(v->array).name;
        }
      }
      for (const Body* b : ir::childBodies(s)) walk(*b);
    }
  };
  walk(ir.body);
  uint32_t alignment = 0;  // the outputs' largest
  for (const Param& p : ir.params) {
    if (p.kind == ParamKind::Array && p.output) {
      alignment = std::max(alignment, ir.arrays.at(p.array).alignment);
    }
  }
  const uint32_t bytes = r.storeWidth * fuzz::storeTypeBytes(r.storeType);
  const std::string found = std::to_string(stores) +
                            " StoreVector statements, outputs aligned to " +
                            std::to_string(alignment) + " bytes";
  if (!wrong.empty()) return wrong;
  if (fuzz::storesVectors(r.store) && (stores == 0 || alignment != bytes)) {
    return found + "; the recipe's unvectors<" + std::to_string(r.storeWidth) + "> of " +
           fuzz::storeTypeName(r.storeType) + " stores " + std::to_string(bytes) +
           "-byte vectors to the output";
  }
  if (!fuzz::storesVectors(r.store) && (stores != 0 || alignment != 0)) {
    return found + "; the recipe writes no vector to global memory";
  }
  return "";
}

// A barrier to remove from every kernel (-1: none), for the fuzzer's self-test.
int dropBarrier = -1;

// The kernel's input arguments: the input as its parameter type (u8, u16 or u32 elements; the
// words are in range), or each matrix of a matrix recipe, its rows, cols and pitch after it.
struct InputPart {
  uint32_t elem = 32;
  std::vector<uint8_t> u8;
  std::vector<uint16_t> u16;
  std::vector<uint32_t> u32;
  std::vector<uint32_t> shape;  // a matrix: rows, cols, pitch
  // f(the elements as a vector of their type)
  template <class F>
  auto with(F f) const {
    return elem == 8 ? f(u8) : elem == 16 ? f(u16) : f(u32);
  }
  // The array argument a (this part's elements, where they are) and the matrix's scalars.
  void append(obsidian::KernelArg a, std::vector<obsidian::KernelArg>& args) const {
    args.push_back(a);
    for (uint32_t s : shape) args.emplace_back(s);
  }
};

std::vector<InputPart> inputParts(const Recipe& r, const std::vector<uint32_t>& words) {
  auto part = [](uint32_t elem, auto begin, auto end) {
    InputPart p;
    p.elem = elem;
    if (elem == 8) p.u8.assign(begin, end);
    if (elem == 16) p.u16.assign(begin, end);
    if (elem == 32) p.u32.assign(begin, end);
    return p;
  };
  if (!r.matrix) return {part(r.elem, words.begin(), words.end())};
  std::vector<InputPart> parts;
  auto at = words.begin();
  for (const fuzz::MatrixInput& m : r.matrix->inputs) {
    const auto end = at + static_cast<long>(size_t{m.rows} * m.pitch);
    parts.push_back(part(m.elem, at, end));
    parts.back().shape = {m.rows, m.cols, m.pitch};
    at = end;
  }
  return parts;
}

// Runs recipe r in every configuration; the first failure, or Ok. The reference must accept r.
Outcome check(const Recipe& r, bool gpu) {
  using namespace obsidian;
  const std::vector<uint32_t> in = fuzz::inputFor(r);
  const std::vector<InputPart> parts = inputParts(r, in);
  const std::vector<std::vector<uint32_t>> expected = fuzz::reference(r, in);
  const std::vector<std::vector<uint32_t>> before = fuzz::argumentsBefore(r, expected);
  const Config configs[] = {
      {"shared-memory reuse, subexpression sharing", r.threads, false, 0},
      {"no shared-memory reuse, no subexpression sharing", r.threads, true, 0},
      {"other thread count, fewer real blocks", r.altThreads, false, r.realBlocks}};
  std::optional<Kernel> first;  // the main configuration's kernel, for the defect-class checks
  for (const Config& c : configs) {
    Outcome o{Verdict::Ok, c.name, c.threads, ""};
    try {
      const Kernel k = fuzz::buildKernel(r, c.threads, c.plain, dropBarrier);
      if (!first) first = k;
      // The arrays after the inputs as their parameters' types (a vector store's output may be
      // of u8, ..., fp8 elements), read back as words.
      const std::vector<fuzz::TypedArray> typed =
          fuzz::typedArrays(fuzz::argumentTypes(k.ir(), parts.size()), before);
      std::vector<fuzz::TypedArray> outs = typed;
      std::vector<KernelArg> args;
      for (const InputPart& p : parts) p.with([&](const auto& v) { p.append(v, args); });
      if (r.divisor != fuzz::Divisor::None) args.emplace_back(r.divisorValue);
      for (auto& out : outs) args.push_back(fuzz::argumentOf(out));
      const SimStats stats = simulate(k, args, SimOptions{.blocks = c.blocks});
      std::vector<std::vector<uint32_t>> words;
      for (const fuzz::TypedArray& out : outs) words.push_back(fuzz::wordsOf(out));
      for (size_t j = 0; j < words.size(); ++j) {
        if (words[j] != expected[j]) {
          o.verdict = Verdict::Mismatch;
          o.detail = "simulator, array argument " + std::to_string(j + 1) + ": " +
                     firstDifference(words[j], expected[j]);
          return o;
        }
      }
      // Each element of each output (of each part of a fused one) stored once: a part that a
      // second loop writes again shows here, where the values alone look right.
      const std::string stores = outputStores(k, stats, words, parts.size());
      if (!stores.empty()) return {Verdict::Traffic, c.name, c.threads, stores};
      if (dropBarrier < 0) {
        const std::string vectors = vectorStores(r, k);
        if (!vectors.empty()) return {Verdict::VectorStores, c.name, c.threads, vectors};
      }
      if (gpu && !fuzz::isDeepFold(r)) {
        std::vector<fuzz::DeviceArray> douts;
        for (const fuzz::TypedArray& b : typed) douts.push_back(fuzz::deviceCopy(b));
        std::vector<std::shared_ptr<void>> dins;  // the inputs' buffers, kept to the launch
        std::vector<KernelArg> dargs;
        for (const InputPart& p : parts) {
          p.with([&](const auto& v) {
            using T = typename std::decay_t<decltype(v)>::value_type;
            const auto din = std::make_shared<gpu::DeviceBuffer<T>>(v);
            dins.push_back(din);
            p.append(*din, dargs);
          });
        }
        const size_t scalarAt = dargs.size();  // the divisor's argument, if any
        if (r.divisor != fuzz::Divisor::None) dargs.emplace_back(r.divisorValue);
        for (auto& d : douts) dargs.push_back(fuzz::argumentOf(d));
        gpu::launch(k, dargs);
        for (size_t j = 0; j < words.size(); ++j) {
          const std::vector<uint32_t> got = fuzz::wordsOf(douts[j]);
          if (got != words[j]) {
            o.verdict = Verdict::Mismatch;
            o.detail = "GPU vs simulator, array argument " + std::to_string(j + 1) + ": " +
                       firstDifference(got, words[j]);
            return o;
          }
        }
        // d = 0 on the device (the main configuration): refused exactly as the simulator
        // refuses it (defects.cpp checks that message), or run to the same results.
        if (r.divisor != fuzz::Divisor::None && &c == &configs[0]) {
          dargs[scalarAt] = KernelArg(uint32_t{0});
          std::vector<KernelArg> sargs = args;
          sargs[scalarAt] = KernelArg(uint32_t{0});
          auto refusal = [](const std::function<void()>& f) -> std::string {
            try {
              f();
            } catch (const Error& e) {
              return e.what();
            }
            return "";
          };
          std::vector<fuzz::DeviceArray> zouts;
          for (const fuzz::TypedArray& b : typed) zouts.push_back(fuzz::deviceCopy(b));
          for (size_t j = 0; j < zouts.size(); ++j) {
            dargs[scalarAt + 1 + j] = fuzz::argumentOf(zouts[j]);
          }
          std::vector<fuzz::TypedArray> souts = typed;
          for (size_t j = 0; j < souts.size(); ++j) {
            sargs[scalarAt + 1 + j] = fuzz::argumentOf(souts[j]);
          }
          const std::string onGpu = refusal([&] { gpu::launch(k, dargs); });
          const std::string onSim = refusal([&] { simulate(k, sargs); });
          if (onGpu != onSim) {
            o.verdict = Verdict::Mismatch;
            o.detail =
                "d = 0: the GPU launch said \"" + onGpu + "\", the simulator \"" + onSim + "\"";
            return o;
          }
          for (size_t j = 0; onGpu.empty() && j < zouts.size(); ++j) {
            const std::vector<uint32_t> got = fuzz::wordsOf(zouts[j]);
            if (got != expected[j]) {
              o.verdict = Verdict::Mismatch;
              o.detail = "GPU with d = 0, array argument " + std::to_string(j + 1) + ": " +
                         firstDifference(got, expected[j]);
              return o;
            }
          }
        }
      }
    } catch (const HazardError& e) {
      o.verdict = Verdict::Hazard;
      o.detail = e.what();
      return o;
    } catch (const Error& e) {
      // Self-test: a kernel without the barrier to drop has nothing to break.
      if (dropBarrier >= 0 && std::string(e.what()).find("has no barrier") != std::string::npos) {
        return {};
      }
      // Not a failure: a program whose warp programs' shared arrays (a slice per real warp that
      // runs them) exceed the limit at this thread count is refused, as it should be.
      if (std::string(e.what()).find("bytes of shared memory at its peak, over the limit") !=
          std::string::npos) {
        o.verdict = Verdict::OverSharedLimit;
        o.detail = e.what();
        return o;
      }
      o.verdict = Verdict::Error;
      o.detail = e.what();
      return o;
    } catch (const std::exception& e) {
      o.verdict = Verdict::Crash;
      o.detail = e.what();
      return o;
    }
  }
  // One grid loop per Push<Grid> output and effect, and one for all the parts of a fused
  // output: a fused output that became one loop per part (reading the inputs again) shows here.
  if (dropBarrier < 0 && first) {
    const uint32_t got = first->report().gridPasses, want = fuzz::gridPasses(r);
    if (got != want) {
      return {Verdict::Traffic, "report", r.threads,
              "gridPasses " + std::to_string(got) + ", the recipe has " + std::to_string(want)};
    }
  }
  if (dropBarrier < 0 && first) {
    Outcome o{Verdict::DefectClass, "defect classes", r.threads, ""};
    try {
      std::mt19937_64 rng(r.dataSeed ^ 0x9e3779b97f4a7c15ull);
      o.detail = fuzz::checkDefectClasses(r, *first, in, expected, rng);
    } catch (const std::exception& e) {
      o.verdict = Verdict::Crash;
      o.detail = std::string("defect-class checks: ") + e.what();
    }
    if (!o.detail.empty()) return o;
  }
  return {};
}

// Greedy shrinking: take the first smaller candidate that fails the same way, until none does.
Recipe shrink(Recipe r, Verdict verdict, bool gpu, bool verbose) {
  int checks = 0;
  bool progress = true;
  while (progress && checks < 2000) {
    progress = false;
    for (const Recipe& c : fuzz::shrinkCandidates(r)) {
      try {
        fuzz::reference(c, fuzz::inputFor(c));
      } catch (const fuzz::InvalidRecipe&) {
        continue;
      }
      ++checks;
      if (check(c, gpu).verdict == verdict) {
        r = c;
        progress = true;
        if (verbose) std::cerr << "  shrunk to size " << fuzz::recipeSize(r) << "\n";
        break;
      }
    }
  }
  return r;
}

// Writes the first `count` programs of `seed` as C++ source (cppSource) into one program whose
// main checks that each function builds exactly the CUDA the fuzzer's builder makes: the
// printed repros are the programs that failed, not approximations of them.
int writeSourceCheck(const std::string& path, uint64_t seed, uint64_t count) {
  std::ostringstream src;
  src << "// Generated by obsidian-fuzz --seed " << seed << " --count " << count
      << " --emit-source: the printed form of each program must build the same CUDA.\n"
      << "#include <functional>\n#include <iostream>\n#include <obsidian/obsidian.hpp>\n\n"
      << "using namespace obsidian;\n\n";
  std::ostringstream checks;
  std::mt19937_64 seeds(seed);
  for (uint64_t i = 0; i < count; ++i) {
    std::mt19937_64 rng(seeds());
    const Recipe r = fuzz::generate(rng);
    const std::string fn = "fuzzKernel" + std::to_string(i);
    src << fuzz::cppSource(r, r.threads, fn) << "\n";
    const size_t hash = std::hash<std::string>{}(fuzz::buildKernel(r, r.threads, false).cuda());
    checks << "  check(" << i << ", " << fn << "(), " << hash << "u);\n";
  }
  src << "int main() {\n  int bad = 0;\n"
      << "  auto check = [&](int i, const Kernel& k, size_t hash) {\n"
      << "    if (std::hash<std::string>{}(k.cuda()) == hash) return;\n"
      << "    std::cout << \"program \" << i << \": the printed source builds other CUDA\\n\";\n"
      << "    ++bad;\n  };\n"
      << checks.str() << "  std::cout << " << count
      << " << \" printed programs checked, \" << bad << \" differ\\n\";\n"
      << "  return bad == 0 ? 0 : 1;\n}\n";
  std::ofstream(path) << src.str();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian-fuzz: random kernels, simulator (and GPU) against a C++ reference"};
  uint64_t seed = 1;
  uint64_t count = 100;
  uint32_t threads = 0;
  int64_t only = -1;
  bool verbose = false;
  bool gpu = false;
  app.add_option("--seed", seed, "seed of the program sequence (reproducible)");
  app.add_option("--count", count, "programs to generate and check");
  app.add_option("--threads", threads, "threads per block of the main configuration (0: random)");
  app.add_option("--only", only, "check only program number I of the sequence");
  app.add_flag("--verbose", verbose, "print every program's C++ source and verdict");
  std::string emitSource;
  app.add_option("--emit-source", emitSource,
                 "write the programs as one C++ program that checks each rebuilds the same CUDA");
  bool stats = false;
  app.add_flag("--stats", stats, "print how often each combinator was generated");
  app.add_option("--drop-barrier", dropBarrier,
                 "self-test: remove the n-th barrier of every kernel (expect hazards)");
  app.add_flag("--gpu", gpu, "also run every kernel on the GPU (exit 77 where there is none)");
  CLI11_PARSE(app, argc, argv);

  if (gpu && !obsidian::gpu::available()) {
    std::cout << "SKIPPED: no CUDA device (" << obsidian::gpu::unavailableReason() << ")\n";
    return 77;
  }
  if (!emitSource.empty()) return writeSourceCheck(emitSource, seed, count);
  std::mt19937_64 seeds(seed);
  std::map<std::string, uint64_t> steps;
  uint64_t overLimit = 0;
  uint64_t otherThreads = 0;  // with --threads: programs whose collectives need other counts
  for (uint64_t i = 0; i < count; ++i) {
    std::mt19937_64 rng(seeds());
    if (only >= 0 && static_cast<uint64_t>(only) != i) continue;
    Recipe r = fuzz::generate(rng);
    if (threads != 0) {
      r.threads = threads;
      // A collective that needs other thread counts (blockReduce(warpShuffle), ...) rules the
      // program out.
      try {
        fuzz::reference(r, fuzz::inputFor(r));
      } catch (const fuzz::InvalidRecipe&) {
        ++otherThreads;
        continue;
      }
    }
    if (verbose) std::cout << "program " << i << ":\n" << fuzz::cppSource(r, r.threads);
    fuzz::countSteps(r, steps);
    const Outcome o = check(r, gpu);
    if (o.verdict == Verdict::Ok) continue;
    if (o.verdict == Verdict::OverSharedLimit) {
      ++overLimit;
      if (verbose) std::cout << "  skipped: " << o.detail << "\n";
      continue;
    }
    std::cout << "FAIL: seed " << seed << " program " << i << " (rerun: --seed " << seed
              << " --count " << i + 1 << " --only " << i
              << (threads != 0 ? " --threads " + std::to_string(threads) : std::string())
              << (gpu ? " --gpu" : "") << "): " << verdictName(o.verdict)
              << "\n  in configuration \"" << o.config << "\" (" << o.threads
              << " threads): " << o.detail << std::endl;  // before shrinking, which may crash
    const Recipe small = shrink(r, o.verdict, gpu, verbose);
    const Outcome so = check(small, gpu);
    std::cout << "shrunk (" << verdictName(so.verdict) << " in \"" << so.config << "\", "
              << so.threads << " threads, " << small.realBlocks << " real blocks"
              << (small.matrix ? "" : " of " + std::to_string(small.blocks)) << "): " << so.detail
              << "\n"
              << fuzz::cppSource(small, so.threads);
    return 1;
  }
  if (stats) {
    for (const auto& [name, n] : steps) std::cout << "  " << name << ": " << n << "\n";
  }
  std::cout << "obsidian-fuzz: seed " << seed << ", " << (only >= 0 ? 1 : count)
            << " programs, 3 configurations each" << (gpu ? " (simulator and GPU)" : "")
            << (overLimit ? ", " + std::to_string(overLimit) +
                                " over the shared-memory limit at a thread count, skipped"
                          : std::string())
            << (otherThreads ? ", " + std::to_string(otherThreads) +
                                   " skipped (collectives for other thread counts than --threads)"
                             : std::string())
            << ": all clean\n";
  const fuzz::DefectStats& d = fuzz::defectStats();
  std::cout << "defect classes: " << d.aliased << " aliased launches and " << d.leaks
            << " leaked values refused, " << d.hugeLengths << " launch checks near 2^32, "
            << steps["deep fold"] << " deep expressions; d = 0: " << d.zeroRefused
            << " launches refused (divides by zero), " << d.zeroRan << " guarded ones ran; "
            << d.misaligned << " misaligned vector-store outputs refused\n";
  std::cout << "float bits: " << steps["programs with float-bits steps"]
            << " programs with float-bits steps, " << fuzz::referenceNaNs()
            << " NaN words computed by the reference\n";
  return 0;
}
