// Defect-class checks of every fuzzed program (see defects.hpp).
#include "defects.hpp"

#include <map>
#include <obsidian/sim.hpp>
#include <optional>
#include <span>

#include "scalar_ops.hpp"
#include "typed_arrays.hpp"

namespace fuzz {
namespace {

DefectStats stats;

using namespace obsidian;
using Wide = unsigned __int128;

// e's value over the bound parameters in exact arithmetic (no wrap-around): the oracle for
// "a length computed in 32 bits wrapped". Lengths use integer arithmetic only.
Wide exact(const KernelIR& k, const ExpPtr& e, const std::vector<Wide>& params) {
  switch (e->kind) {
    case ExpKind::Literal: return e->bits;
    case ExpKind::Var:
      for (size_t i = 0; i < k.params.size(); ++i) {
        if (k.params[i].kind != ParamKind::Array && k.params[i].name == e->name) return params[i];
      }
      throw std::logic_error("length expression names " + e->name + ", not a parameter");
    case ExpKind::Cast: return exact(k, e->args[0], params);
    case ExpKind::Select:
      return exact(k, e->args[0], params) ? exact(k, e->args[1], params)
                                          : exact(k, e->args[2], params);
    case ExpKind::Binary: {
      const Wide a = exact(k, e->args[0], params), b = exact(k, e->args[1], params);
      switch (e->binOp) {
        case BinOp::Add: return a + b;
        case BinOp::Sub: return a >= b ? a - b : 0;  // preconditions keep lengths non-negative
        case BinOp::Mul: return a * b;
        case BinOp::Div: return b ? a / b : 0;
        case BinOp::Mod: return b ? a % b : 0;
        case BinOp::Min: return a < b ? a : b;
        case BinOp::Max: return a > b ? a : b;
        case BinOp::Shr: return a >> static_cast<unsigned>(b);
        case BinOp::Shl: return a << static_cast<unsigned>(b);
        case BinOp::BitAnd: return a & b;
        case BinOp::Eq: return a == b;
        case BinOp::Ne: return a != b;
        case BinOp::Lt: return a < b;
        case BinOp::Le: return a <= b;
        case BinOp::Gt: return a > b;
        case BinOp::Ge: return a >= b;
        case BinOp::And: return a && b;
        case BinOp::Or: return a || b;
        default: break;
      }
      break;
    }
    default: break;
  }
  throw std::logic_error("length expression with an operator the oracle does not model");
}

std::string str(Wide v) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v);
  return s;
}

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The input's elements (words in range) as the array of an element type.
KernelArg typedArray(uint32_t elem, const uint32_t* start, size_t count) {
  if (elem == 8) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(start), count);
  }
  if (elem == 16) {
    return std::span<const uint16_t>(reinterpret_cast<const uint16_t*>(start), count);
  }
  return std::span<const uint32_t>(start, count);
}

// A writable array of `count` elements of type t at `start` (inside a buffer of words).
KernelArg writableArray(ScalarType t, void* start, size_t count) {
  auto as = [&]<class T>(std::type_identity<T>) {
    return KernelArg(std::span<T>(reinterpret_cast<T*>(start), count));
  };
  switch (t) {
    case ScalarType::U32: return as(std::type_identity<uint32_t>{});
    case ScalarType::U8: return as(std::type_identity<uint8_t>{});
    case ScalarType::U16: return as(std::type_identity<uint16_t>{});
    case ScalarType::F32: return as(std::type_identity<float>{});
    case ScalarType::F16: return as(std::type_identity<Half>{});
    case ScalarType::BF16: return as(std::type_identity<BFloat16>{});
    case ScalarType::E4M3: return as(std::type_identity<Fp8E4M3>{});
    case ScalarType::E5M2: return as(std::type_identity<Fp8E5M2>{});
    case ScalarType::I32:
    case ScalarType::U64:
    case ScalarType::F64:
    case ScalarType::Bool:
    case ScalarType::F16x2:  // pairs are drawn as words (PairMap)
    case ScalarType::BF16x2: break;
  }
  throw std::logic_error("fuzz: no output of element type " + std::string(cudaTypeName(t)));
}

std::string checkAliasing(const Recipe& r, const Kernel& k, const std::vector<uint32_t>& in,
                          const std::vector<std::vector<uint32_t>>& expected,
                          std::mt19937_64& rng) {
  // The last argument: the kernel's output, or acc (a DMutable) of an effect-only kernel.
  const std::vector<uint32_t>& out = expected.back();
  if (in.empty() || out.empty()) return "";
  // The first input array (of a matrix recipe: the first matrix, its scalars after it).
  const uint32_t elem = r.matrix ? r.matrix->inputs[0].elem : r.elem;
  const size_t count =
      r.matrix ? size_t{r.matrix->inputs[0].rows} * r.matrix->inputs[0].pitch : in.size();
  // The arrays after the inputs as their types; the last one, of `outType`, must be aligned
  // to `outAlign` bytes (a vector store's output: Recipe::store).
  const std::vector<ScalarType> types =
      argumentTypes(k.ir(), r.matrix ? r.matrix->inputs.size() : 1);
  const ScalarType outType = types.back();
  uint32_t outAlign = 0;  // the last array parameter's (the last argument's)
  for (const Param& p : k.ir().params) {
    if (p.kind == ParamKind::Array) outAlign = k.ir().arrays.at(p.array).alignment;
  }
  // One buffer of words; the first input (of u8, u16 or u32 elements) at its start, the
  // output starting somewhere inside its bytes (a multiple of its alignment: a misaligned
  // one is refused for that, not for the overlap).
  const size_t inBytes = count * (elem / 8), inWords = (inBytes + 3) / 4;
  const size_t alignWords = std::max<size_t>(1, outAlign / 4);
  const size_t shift = rng() % inWords / alignWords * alignWords;
  const size_t outWords = (out.size() * sizeOf(outType) + 3) / 4;
  std::vector<uint32_t> buffer(std::max(inWords, shift + outWords));
  std::vector<TypedArray> others =
      typedArrays(std::vector<ScalarType>(types.begin(), types.end() - 1),
                  std::vector<std::vector<uint32_t>>(expected.begin(), expected.end() - 1));
  std::vector<KernelArg> args{typedArray(elem, buffer.data(), count)};
  // A matrix recipe's scalars, and its second matrix as words of its type (zeros).
  std::vector<uint32_t> second;
  if (r.matrix) {
    const std::vector<MatrixInput>& ms = r.matrix->inputs;
    for (size_t j = 0; j < ms.size(); ++j) {
      if (j > 0) {
        second.assign((size_t{ms[j].rows} * ms[j].pitch * (ms[j].elem / 8) + 3) / 4, 0);
        args.push_back(typedArray(ms[j].elem, second.data(), size_t{ms[j].rows} * ms[j].pitch));
      }
      for (uint32_t v : {ms[j].rows, ms[j].cols, ms[j].pitch}) args.emplace_back(v);
    }
  }
  if (r.divisor != Divisor::None) args.emplace_back(r.divisorValue);
  for (auto& o : others) args.push_back(argumentOf(o));
  args.push_back(writableArray(outType, buffer.data() + shift, out.size()));
  const std::string m = messageOf([&] { simulate(k, args); });
  if (m.find("overlaps argument 0") == std::string::npos) {
    return "an output overlapping the input (at word " + std::to_string(shift) +
           ") was not refused" + (m.empty() ? "" : ": " + m);
  }
  ++stats.aliased;
  return "";
}

// The launch checks of one made-up launch at huge lengths (`at` says which): they must refuse
// it with a precondition, or pass it with every output's exact length and few enough real
// blocks. "" when they did.
std::string judgeHugeLaunch(const KernelIR& ir, const std::vector<KernelArg>& args, bool wraps,
                            const std::vector<Wide>& want, const std::string& at) {
  ++stats.hugeLengths;
  std::optional<BoundArguments> bound;
  const std::string m = messageOf([&] { bound = bindArguments(ir, args); });
  if (!bound) {
    if (m.find(" fails with ") == std::string::npos) {
      return "the launch checks refused with a message that is no precondition" + at + ": " + m;
    }
    return "";  // refused by a precondition (divisibility, or a length past 2^32)
  }
  if (wraps) return "an output length past 2^32 passed the launch checks" + at;
  for (size_t i = 0; i < ir.params.size(); ++i) {
    if (ir.params[i].kind == ParamKind::Array && ir.params[i].output &&
        bound->lengths[i] != want[i]) {
      return "output " + ir.params[i].name + " has length " + str(bound->lengths[i]) +
             " after the launch checks; its exact length is " + str(want[i]) + at;
    }
  }
  const uint32_t blocks = realBlocks(ir, *bound, 0, "fuzz");
  if (blocks > maxRealBlocks(ir.threadsPerBlock)) return "more real blocks than allowed" + at;
  return "";
}

// The launch checks of a matrix kernel whose matrices (each) have rows x cols (and a pitch)
// near and past 2^32 elements: as checkHugeLengths.
std::string checkMatrixHugeLengths(const Kernel& k, std::mt19937_64& rng) {
  const KernelIR& ir = k.ir();
  const uint64_t top = 0xffffffffu;
  const uint64_t big = (uint64_t{1} << 16) + rng() % (uint64_t{1} << 16);
  const uint64_t shapes[][3] = {{65536, 65535, 65535},
                                {65535, 65537, 65537},
                                {top, 1, 1},
                                {1, top, top},
                                {3, top / 3, top / 3},
                                {2, uint64_t{1} << 31, uint64_t{1} << 31},
                                {big, top / big, top / big},
                                {top / big, big - 1, big}};
  for (const auto& shape : shapes) {
    // Parameter values: every matrix's rows, cols and pitch the shape's.
    std::vector<Wide> values(ir.params.size(), 0);
    for (size_t i = 0; i < ir.params.size(); ++i) {
      const std::string& name = ir.params[i].name;
      if (ir.params[i].kind != ParamKind::Scalar) continue;
      if (name.ends_with("Rows")) values[i] = shape[0];
      if (name.ends_with("Cols")) values[i] = shape[1];
      if (name.ends_with("Pitch")) values[i] = shape[2];
    }
    std::vector<KernelArg> args;
    bool wraps = false;
    std::vector<Wide> want(ir.params.size(), 0);
    uint64_t address = uint64_t{1} << 40;
    for (size_t i = 0; i < ir.params.size(); ++i) {
      const Param& p = ir.params[i];
      if (p.kind == ParamKind::Scalar) {
        args.emplace_back(static_cast<uint32_t>(values[i]));
        continue;
      }
      // A matrix holds rows x pitch elements (past 2^32 in one shape: refused by a
      // precondition).
      uint64_t count = shape[0] * shape[2];
      if (p.output) {
        want[i] = exact(ir, p.length, values);
        wraps = wraps || want[i] > top;
        count = want[i] > top ? top : static_cast<uint64_t>(want[i]);
      }
      args.push_back(KernelArg::deviceArray(p.type, address, count, p.output));
      address += uint64_t{1} << 36;  // far apart: no overlap
    }
    const std::string at = " (matrices of " + std::to_string(shape[0]) + " x " +
                           std::to_string(shape[1]) + ", pitch " + std::to_string(shape[2]) + ")";
    if (std::string f = judgeHugeLaunch(ir, args, wraps, want, at); !f.empty()) return f;
  }
  return "";
}

std::string checkHugeLengths(const Recipe& r, const Kernel& k,
                             const std::vector<std::vector<uint32_t>>& expected,
                             std::mt19937_64& rng) {
  if (r.staticInput) return "";
  const KernelIR& ir = k.ir();
  const uint64_t top = 0xffffffffu;
  const uint64_t unit = std::max<uint64_t>(r.chunk, 1) * (r.gridZip ? 2 : 1);
  const uint64_t sizes[] = {top, top - top % unit, top - 300, top / 2 + 1,
                            (uint64_t{1} << 31) + rng() % (uint64_t{1} << 31)};
  // The DMutable arrays' lengths (the bins, acc: the first arguments after the input), by the
  // number their parameters' names end in (m1 and n1, ...).
  std::map<std::string, uint64_t> mutableLength;
  for (const Param& p : ir.params) {
    if (p.kind == ParamKind::Array && !p.output && p.name != "in0") {
      const size_t j = mutableLength.size();
      mutableLength[p.name.substr(1)] = expected.at(j).size();
    }
  }
  for (const uint64_t n : sizes) {
    // Parameter values: the input's length n, every other length its array's size.
    std::vector<Wide> values(ir.params.size(), 0);
    for (size_t i = 0; i < ir.params.size(); ++i) {
      if (ir.params[i].kind == ParamKind::Length)
        values[i] = ir.params[i].name == "n0" ? n : mutableLength.at(ir.params[i].name.substr(1));
      if (ir.params[i].kind == ParamKind::Scalar) values[i] = r.divisorValue;  // the divisor
    }
    std::vector<KernelArg> args;
    bool wraps = false;
    std::vector<Wide> want(ir.params.size(), 0);
    uint64_t address = uint64_t{1} << 40;
    for (size_t i = 0; i < ir.params.size(); ++i) {
      const Param& p = ir.params[i];
      if (p.kind == ParamKind::Scalar) args.emplace_back(r.divisorValue);
      if (p.kind != ParamKind::Array) continue;
      const bool writes = p.output || ir.arrays[p.array].writable;
      uint64_t count = p.name == "in0" ? n : p.output ? 0 : mutableLength.at(p.name.substr(1));
      if (p.output) {
        want[i] = exact(ir, p.length, values);
        wraps = wraps || want[i] > top;
        count = want[i] > top ? top : static_cast<uint64_t>(want[i]);
      }
      args.push_back(KernelArg::deviceArray(p.type, address, count, writes));
      address += uint64_t{1} << 36;  // far apart: no overlap
    }
    const std::string at = " (input of " + std::to_string(n) + " elements)";
    if (std::string f = judgeHugeLaunch(ir, args, wraps, want, at); !f.empty()) return f;
  }
  return "";
}

std::string checkLeaks(std::mt19937_64& rng) {
  std::optional<DPull<EWord32>> keptIn;
  std::optional<DMutable<uint32_t>> keptBins;
  std::optional<EWord32> keptScalar;
  std::optional<SPull<EWord32>> keptShared;
  capture("leakSource", 32, [&](DPull<EWord32> in, DMutable<uint32_t> bins, EWord32 s) {
    keptIn = in;
    keptBins = bins;
    keptScalar = s;
    return pConcat(fmap(
        [&](const SPull<EWord32>& c) {
          return exec<Block>([&, c](const Program<Block>& p) {
            keptShared = forcePull(p, c);
            return push<Block>(*keptShared);
          });
        },
        splitUp(32, in)));
  });
  const uint32_t kind = static_cast<uint32_t>(rng() % 5);
  const bool write = rng() % 2 == 0;  // kind 4: an atomic on the other capture's array
  const std::string m = messageOf([&] {
    capture("leakSink", 32, [&](DPull<EWord32> in) {
      return pConcat(fmap(
          [&](const SPull<EWord32>& c) {
            return exec<Block>([&, c](const Program<Block>& p) {
              const auto use = [&](const EWord32& i) -> EWord32 {
                switch (kind) {
                  case 0: return c[i] + (*keptIn)[i];      // a parameter array
                  case 1: return c[i] + len(*keptIn);      // a length
                  case 2: return c[i] * *keptScalar;       // a scalar parameter
                  case 3: return c[i] + (*keptShared)[i];  // a shared array
                  default: return c[i] + (*keptBins)[i];   // a mutable array
                }
              };
              if (kind == 4 && write) {
                p.forAll(32u, [&](const Program<Thread>& t, const EWord32& i) {
                  atomicAdd(t, *keptBins, i, 1u);
                });
              }
              return push<Block>(mkPull(32u, use));
            });
          },
          splitUp(32, in)));
    });
  });
  if (m.find("belongs to another capture") == std::string::npos &&
      m.find("uses an array of another capture") == std::string::npos) {
    return "a value of one capture (kind " + std::to_string(kind) +
           ") used in another was not refused" + (m.empty() ? "" : ": " + m);
  }
  if (detail::currentContext() != nullptr || ir::currentCapture() != 0) {
    return "a refused capture left its context behind";
  }
  ++stats.leaks;
  return "";
}

// A launch of k with its divisor parameter d = 0: refused exactly (zeroRefused), or run to the
// reference's results (a guard keeps the division from running).
std::string checkZeroDivisor(const Recipe& r, const Kernel& k, const std::vector<uint32_t>& in,
                             const std::vector<std::vector<uint32_t>>& expected) {
  if (r.divisor == Divisor::None) return "";
  std::string d;  // the divisor's parameter name
  for (const Param& p : k.ir().params) {
    if (p.kind == ParamKind::Scalar) d = p.name;
  }
  if (d.empty()) return "the kernel has no scalar parameter for its divisor";
  const std::vector<uint8_t> u8(in.begin(), in.end());
  const std::vector<uint16_t> u16(in.begin(), in.end());
  std::vector<TypedArray> outs =
      typedArrays(argumentTypes(k.ir(), 1), argumentsBefore(r, expected));
  std::vector<KernelArg> args;
  if (r.elem == 8) {
    args.emplace_back(u8);
  } else if (r.elem == 16) {
    args.emplace_back(u16);
  } else {
    args.emplace_back(in);
  }
  args.emplace_back(uint32_t{0});
  for (auto& o : outs) args.push_back(argumentOf(o));
  const std::string simulated = messageOf([&] { simulate(k, args); });
  if (!zeroRefused(r.divisor)) {
    if (!simulated.empty()) {
      return "a launch with d = 0, whose division a guard skips, was refused: " + simulated;
    }
    for (size_t j = 0; j < outs.size(); ++j) {
      if (wordsOf(outs[j]) != expected[j]) {
        return "a launch with d = 0 (guarded) differs from the reference in array argument " +
               std::to_string(j + 1);
      }
    }
    ++stats.zeroRan;
    return "";
  }
  const std::string bound = messageOf([&] { bindArguments(k.ir(), args); });
  const std::string zero = "divides by zero: " + d + " is 0";
  if (simulated.empty()) return "a launch with d = 0 was not refused";
  if (simulated != bound) {
    return "d = 0: simulate said \"" + simulated + "\", the launch checks \"" + bound + "\"";
  }
  const bool named = simulated.starts_with("launch of kernel fuzz: ");
  // A precondition that divides by zero fails in its own form; a length or the grid size says
  // which it is and that nothing was launched.
  const bool precondition = simulated.find(" fails with ") != std::string::npos &&
                            simulated.ends_with("; it " + zero + ")");
  const bool length = simulated.find(") " + zero + " with ") != std::string::npos &&
                      simulated.ends_with("; nothing was launched");
  const bool exact =
      r.divisor == Divisor::Require
          ? precondition && simulated.find("d divides the input's length (") != std::string::npos
          : precondition || length;
  if (!named || !exact) return "d = 0 was refused with another message: " + simulated;
  ++stats.zeroRefused;
  return "";
}

// A launch of k whose vector-store output (the last argument) starts one element past an
// address aligned to the vector's size: refused before it runs, with the message that names
// that size.
std::string checkMisaligned(const Recipe& r, const Kernel& k, const std::vector<uint32_t>& in,
                            const std::vector<std::vector<uint32_t>>& expected) {
  if (!storesVectors(r.store)) return "";
  const uint32_t bytes = r.storeWidth * storeTypeBytes(r.storeType);
  const std::vector<uint8_t> u8(in.begin(), in.end());
  const std::vector<uint16_t> u16(in.begin(), in.end());
  std::vector<KernelArg> args;
  if (r.elem == 8) {
    args.emplace_back(u8);
  } else if (r.elem == 16) {
    args.emplace_back(u16);
  } else {
    args.emplace_back(in);
  }
  if (r.divisor != Divisor::None) args.emplace_back(r.divisorValue);
  const std::vector<ScalarType> types = argumentTypes(k.ir(), 1);
  std::vector<TypedArray> others =
      typedArrays(std::vector<ScalarType>(types.begin(), types.end() - 1),
                  std::vector<std::vector<uint32_t>>(expected.begin(), expected.end() - 1));
  for (auto& o : others) args.push_back(argumentOf(o));
  // A buffer of words (16-byte aligned, as operator new aligns), the output one element in.
  std::vector<uint32_t> buffer((expected.back().size() * sizeOf(types.back()) + 3) / 4 + 4);
  if (reinterpret_cast<uintptr_t>(buffer.data()) % 16 != 0) return "";  // nothing to shift from
  auto* start = reinterpret_cast<uint8_t*>(buffer.data()) + sizeOf(types.back());
  args.push_back(writableArray(types.back(), start, expected.back().size()));
  const std::string m = messageOf([&] { simulate(k, args); });
  const std::string want = "must be " + std::to_string(bytes) + "-byte aligned";
  if (m.find(want) == std::string::npos || !m.starts_with("launch of kernel fuzz: ")) {
    return "an output of " + std::to_string(bytes) +
           "-byte vector stores one element past an aligned address was not refused as "
           "misaligned" +
           (m.empty() ? "" : ": " + m);
  }
  ++stats.misaligned;
  return "";
}

}  // namespace

const DefectStats& defectStats() { return stats; }

std::string checkDefectClasses(const Recipe& r, const Kernel& k, const std::vector<uint32_t>& in,
                               const std::vector<std::vector<uint32_t>>& expected,
                               std::mt19937_64& rng) {
  std::string failure = checkAliasing(r, k, in, expected, rng);
  if (failure.empty()) {
    failure = r.matrix ? checkMatrixHugeLengths(k, rng) : checkHugeLengths(r, k, expected, rng);
  }
  if (failure.empty()) failure = checkLeaks(rng);
  if (failure.empty() && !r.matrix) failure = checkZeroDivisor(r, k, in, expected);
  if (failure.empty()) failure = checkMisaligned(r, k, in, expected);
  return failure;
}

}  // namespace fuzz
