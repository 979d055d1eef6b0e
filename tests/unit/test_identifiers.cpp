// Reserved identifiers (src/ir/identifiers.cpp) against the code obsidian generates: every name
// that generated CUDA or an exported header uses, other than those it derives from the kernel,
// must be refused as a kernel name, and ordinary names must still be accepted (and work).
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>
#include <set>
#include <string>

#include "../../examples/reduce/reduce.hpp"
#include "../../examples/scan/scan.hpp"
#include "../half_kernels.hpp"
#include "../kernels.hpp"
#include "../narrow_kernels.hpp"
#include "../support.hpp"
#include "ir/identifiers.hpp"

using namespace obsidian;

namespace {

bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The identifiers of C++ source, leaving out comments, string and character literals,
// preprocessor lines, numbers (with their suffixes) and member names (after . or ->).
std::set<std::string> identifiersOf(const std::string& code) {
  std::set<std::string> ids;
  bool lineStart = true;
  char previous = ' ';  // the last character before the token, blanks skipped
  size_t i = 0;
  auto skipTo = [&](const std::string& end) {
    const size_t at = code.find(end, i);
    i = at == std::string::npos ? code.size() : at + end.size();
  };
  while (i < code.size()) {
    const char c = code[i];
    if (c == '\n') {
      lineStart = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (lineStart && c == '#') {
      skipTo("\n");
      continue;
    }
    lineStart = false;
    if (code.compare(i, 2, "//") == 0) {
      skipTo("\n");
      lineStart = true;
    } else if (code.compare(i, 2, "/*") == 0) {
      skipTo("*/");
    } else if (c == '"' || c == '\'') {
      for (++i; i < code.size() && code[i] != c; ++i) {
        if (code[i] == '\\') ++i;
      }
      ++i;
      previous = c;
    } else if (isDigit(c)) {
      while (i < code.size() && (isLetter(code[i]) || isDigit(code[i]) || code[i] == '.')) ++i;
      previous = '0';
    } else if (isLetter(c)) {
      const size_t start = i;
      while (i < code.size() && (isLetter(code[i]) || isDigit(code[i]))) ++i;
      const bool member = previous == '.' ||
                          (previous == '>' && start >= 2 && code.compare(start - 2, 2, "->") == 0);
      if (!member) ids.insert(code.substr(start, i - start));
      previous = 'a';
    } else {
      previous = c;
      ++i;
    }
  }
  return ids;
}

EWord32 plusW(const EWord32& a, const EWord32& b) { return a + b; }

// Every math function, for both float types, with shared memory, a local array, u8
// arithmetic, casts, selects and non-finite literals.
Kernel mathKernel() {
  return capture("mathAll", 64, [](DPull<EFloat> in, DPull<EDouble> wide, DPull<EInt32> ints) {
    auto f = [](const EFloat& x) {
      return sqrt(x) + rsqrt(x) + exp(x) + exp2(x) + log(x) + log2(x) + sin(x) + cos(x) + tan(x) +
             fabs(x) + floor(x) + ceil(x) + pow(x, x) + min(x, 1.0f) + max(x, 2.0f) +
             // (a NaN constant added would fold the whole sum to it: selected instead)
             ifThenElse(x > 0.0f, EFloat(std::numeric_limits<float>::infinity()),
                        EFloat(std::numeric_limits<float>::quiet_NaN()));
    };
    auto d = [](const EDouble& x) {
      return sqrt(x) + rsqrt(x) + exp(x) + exp2(x) + log(x) + log2(x) + sin(x) + cos(x) + tan(x) +
             fabs(x) + floor(x) + ceil(x) + pow(x, x) + min(x, 1.0) + max(x, 2.0) +
             ifThenElse(x > 0.0, EDouble(std::numeric_limits<double>::infinity()),
                        EDouble(std::numeric_limits<double>::quiet_NaN()));
    };
    auto mixed = zipWith(
        [f, d](const EFloat& x, const EDouble& y) {
          return f(x) + dToF(d(y)) +
                 w32ToF(w8ToW32(min(w32ToW8(fToW32(x)), w32ToW8(7u)) + w32ToW8(1u))) +
                 i32ToF(abs(fToI32(x)));
        },
        in, wide);
    auto all = zipWith([](const EFloat& x, const EInt32& k) { return x + i32ToF(max(k, -k)); },
                       mixed, ints);
    return pConcat(fmap(
        [](const SPull<EFloat>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SPull<EFloat> shared = forcePull(p, c);
            return push<Block>(fmap([](const EFloat& x) { return x * 2.0f; }, shared));
          });
        },
        splitUp(128, all)));
  });
}

// Register arrays read across lanes (shuffles), u64 and grid-state atomics, a fence.
Kernel warpKernel() {
  return capture("warpAll", 64, [](DPull<EWord32> in, DMutable<uint64_t> totals) {
    return pConcat(fmap(
        [totals](const SPull<EWord32>& c) {
          return exec<Block>([c, totals](const Program<Block>& p) {
            const EWord32 sum = blockReduce(p, plusW, c);
            p.forAll(1u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicAdd(t, totals, i, w32ToW64(sum));
            });
            return push<Block>(c);
          });
        },
        splitUp(64, in)));
  });
}

// The locals and parameters of launchers and pipelines: the kernel is named there only by its
// qualified name (::ns::k) and the pipelines call only launchers, so a kernel may share these
// names (the test below compiles such kernels; CTest's export.names.compiles_alone runs nvcc).
const std::set<std::string> kHostLocals = {
    "blocks", "stream",    "e",       "f",    "in",      "n",      "result", "partials",
    "m",      "first",     "scratch", "src",  "count",   "ping",   "next",   "dst",
    "level",  "exclusive", "b",       "sums", "partial", "prefix", "out",    "blockScans"};

// Names local to generated helpers: the exported launchers' arithmetic (ir::printHostArithmetic:
// names, template parameters and locals in namespace obsidian_host, guarded by a reserved
// obsidian_* macro, called qualified), so no kernel, launcher or parameter name can hide them.
const std::set<std::string> kHostHelperNames = {
    "divide", "remainder", "shiftLeft", "shiftRight", "toInteger", "T", "F", "x", "y", "v", "zero",
    "width", "value", "is_signed", "numeric_limits",
    // and the inline-PTX conversions between f32 and f64 (lambdas: their parameter and local
    // shadow any kernel parameter of the name, and they capture nothing)
    "r"};

// Names obsidian derives from the kernel itself (Context::fresh and capture's parameters: i0,
// s1, v2, old0, bid0, wid0, loc0, reg0, arr0, sh0; in0, n0, m1, s2, out0, in0_1 for tuples).
// (A hand-written match: std::regex trips GCC 12's -Wmaybe-uninitialized in sanitizer builds.)
bool isDerived(const std::string& id) {
  for (const char* prefix : {"i", "s", "v", "t", "old", "bid", "wid", "loc", "reg", "arr", "sh",
                             "in", "n", "m", "out"}) {
    if (!id.starts_with(prefix)) continue;
    // prefix, then digits, then any number of _digits groups
    size_t k = std::string(prefix).size();
    bool ok = k < id.size();
    bool digitsSeen = false;
    for (; ok && k < id.size(); ++k) {
      const char c = id[k];
      if (c >= '0' && c <= '9') {
        digitsSeen = true;
      } else if (c == '_' && digitsSeen) {
        digitsSeen = false;
      } else {
        ok = false;
      }
    }
    if (ok && digitsSeen) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("capture: no kernel may be named like an identifier of the code generated for it") {
  const Kernel partial = paper::partialSums(4096, 256, 8);
  const LargeScan scan =
      largeScanKernels<uint32_t>(BlockScanAlgorithm::Sklansky2, 1u << 10, 256, paper::plus, 0u);
  const Kernel big = capture("bigShared", 1024, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) { return push<Block>(forcePull(p, c)); });
        },
        splitUp(16384, in)));
  });
  const std::vector<Kernel> kernels = {
      mathKernel(),
      warpKernel(),
      obsidian::testing::histogramKernel("histogram", 256, 256),
      reduceKernel<uint32_t>(plusW, 0u, ReducePolicy{64, 4, 4}, 4),
      scanKernel<uint32_t>(plusW, ScanPolicy{64, 3}),
      scanKernel<float>([](const EFloat& a, const EFloat& b) { return a + b; }, ScanPolicy{32, 5},
                        ScanKind::Exclusive, 0.0f),
      partial,
      scan.inclusive,
      scan.exclusive,
      scan.addBack,
      big,
      obsidian::testing::u16Kernel(),                                // u16 arithmetic
      obsidian::testing::vectorHashes<uint8_t, 16>("narrowHashes"),  // u8 lanes of uint4 words
      obsidian::testing::vectorHashes<uint8_t, 8>("octetHashes"),    // u8 lanes of uint2 words
      obsidian::testing::vectorHashes<uint8_t, 2>("pairHashes"),     // u8 lanes of a uint16_t
      obsidian::testing::smallBinaryKernel<Half>(),                  // the small floats' prelude
      obsidian::testing::smallAtomicKernel<BFloat16>(),
      obsidian::testing::smallShuffleKernel<Half>(),
      obsidian::testing::smallVectorKernel<Fp8E4M3, 16>(),
      obsidian::testing::convertKernel<Half, uint64_t>("u64ToHalf")};

  std::string code;
  for (const Kernel& k : kernels) code += k.cuda();
  code +=
      exportHeader({partial, big}, {"app::kernels", exportReducePipeline(partial, 4096, "sumAll")});
  code += exportHeader({scan.inclusive, scan.exclusive, scan.addBack},
                       {"app", exportScanPipeline(scan.inclusive, scan.exclusive, scan.addBack,
                                                  scan.chunk, "scanAll")});
  code += exportHeader(kernels, {"app", ""});

  std::set<std::string> derived = {"app", "kernels", "sumAll", "scanAll", "detail_scanAll"};
  for (const Kernel& k : kernels) {
    derived.insert(k.name());
    derived.insert(k.name() + "_launch");
    for (const Param& p : k.params()) {
      derived.insert(p.name);
      derived.insert(p.name + "Count");
    }
    for (const ArrayDecl& a : k.ir().arrays) derived.insert(a.name);  // grid state: k_state0
  }

  const std::set<std::string> ids = identifiersOf(code);
  // The tokenizer sees what it should: a sample of each kind of generated name.
  for (const char* expected : {"sqrtf",
                               "rsqrt",
                               "powf",
                               "fminf",
                               "fmax",
                               "abs",
                               "min",
                               "atomicAdd",
                               "atomicExch",
                               "__shfl_sync",
                               "__ldcg",
                               "__stcg",
                               "__threadfence",
                               "__syncthreads",
                               "uint4",
                               "smem",
                               "uint8_t",
                               "uint16_t",
                               "uint2",
                               "uint64_t",
                               "threadIdx",
                               "gridDim",
                               "size_t",
                               "cudaStream_t",
                               "cudaSuccess",
                               "cudaFuncSetAttribute",
                               "cudaMallocAsync",
                               "nullptr",
                               "blocks",
                               "stream"}) {
    CHECK_MESSAGE(ids.count(expected), std::string(expected));
  }
  size_t checked = 0;
  for (const std::string& id : ids) {
    if (derived.count(id) || kHostLocals.count(id) || kHostHelperNames.count(id) || isDerived(id))
      continue;
    ++checked;
    const std::string error = ::testing::errorOf(
        [&] { capture(id, 32, [](DPull<EWord32> in) { return push<Grid>(in); }); });
    INFO("kernel name '" << id << "'");
    CHECK(error.starts_with("capture: kernel name '" + id + "' is "));
  }
  CHECK(checked > 80);
}

TEST_CASE("capture: ordinary kernel names are accepted, compile and export") {
  // Names like the launchers' locals and the kernel's own parameters included: host code
  // names a kernel only by its qualified name.
  for (const char* name : {"red3", "reduce", "scan",   "mapRed5",  "myKernel", "k",      "x1",
                           "K",    "_copy2", "blocks", "stream",   "e",        "in0",    "n0",
                           "out0", "count",  "final",  "override", "half",     "texture"}) {
    INFO("kernel name '" << name << "'");
    const Kernel k = capture(name, 32, [](DPull<EWord32> in) {
      return push<Grid>(fmap([](const EWord32& x) { return x + 1u; }, in));
    });
    CHECK(k.compile().registers > 0);
    const std::string h = exportHeader({k}, {"app", ""});
    CHECK(h.find("::app::" + std::string(name) +
                 "<<<obsidian_blocks, 32, 0, stream>>>(in0, n0, out0);") != std::string::npos);
  }
}

TEST_CASE("names: no parameter may be named like an identifier its launcher declares or uses") {
  // A scalar named like the exported launcher's stream would be declared twice there; one
  // named like anything else the header uses would hide it. (Its locals are obsidian_*.)
  const Kernel k =
      capture("named", 64,
              [](DPull<EWord32> data, DMutable<uint32_t> bins, EWord32 shift) {
                return hana::make_tuple(
                    push<Grid>(fmap([shift](const EWord32& x) { return x >> shift; }, data)),
                    forEachBlock(splitUp(64, data),
                                 [bins](const Program<Block>& p, const SPull<EWord32>& c) {
                                   p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
                                     atomicAdd(t, bins, c[i] % 8u, 1u);
                                   });
                                 }));
              },
              {.names = {"data", "bins", "shift"}, .outputNames = {"shifted"}});
  std::string code;
  {
    const std::string h = exportHeader({k}, {"app", ""});
    code = h.substr(h.find("inline cudaError_t named_launch"));  // the launcher only
  }
  std::set<std::string> derived = {"app", "named", "named_launch"};
  for (const Param& p : k.params()) {
    derived.insert(p.name);
    derived.insert(p.name + "Count");
  }
  size_t refused = 0;
  for (const std::string& id : identifiersOf(code)) {
    if (derived.count(id)) continue;
    INFO("parameter name '" << id << "'");
    const std::string error = ::testing::errorOf([&] {
      capture("p", 32, [](DPull<EWord32> in) { return push<Grid>(in); }, {.names = {id}});
    });
    CHECK(error.starts_with("capture(p): CaptureOptions::names[0] '" + id + "' is "));
    ++refused;
  }
  CHECK(refused > 20);
  for (const std::string& local : obsidian::ir::launcherLocalNames()) {
    CHECK_MESSAGE(identifiersOf(code).count(local), local);  // the list holds no stale name
  }
}
