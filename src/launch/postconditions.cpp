// Checking postconditions after a run (see postconditions.hpp).
#include "launch/postconditions.hpp"

#include <cstring>
#include <sstream>

namespace obsidian {

std::string formatScalar(ScalarType t, const void* bytes) {
  auto as = [&]<class T>(T) {
    T v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  };
  std::ostringstream out;
  switch (t) {
    case ScalarType::U8: out << static_cast<unsigned>(as(uint8_t{})); break;
    case ScalarType::U16: out << as(uint16_t{}); break;
    case ScalarType::U32: out << as(uint32_t{}); break;
    case ScalarType::I32: out << as(int32_t{}); break;
    case ScalarType::U64: out << as(uint64_t{}); break;
    case ScalarType::F32:
      out.precision(9);
      out << as(float{});
      break;
    case ScalarType::F64:
      out.precision(17);
      out << as(double{});
      break;
    case ScalarType::Bool: out << (as(uint8_t{}) ? "true" : "false"); break;
    case ScalarType::F16:
    case ScalarType::BF16:
    case ScalarType::E4M3:
    case ScalarType::E5M2: {
      const uint32_t bits = sizeOf(t) == 2 ? as(uint16_t{}) : as(uint8_t{});
      out.precision(9);
      out << detail::smallFloatValue(*scalarInfo(t).small, bits);
      break;
    }
    case ScalarType::F16x2:
    case ScalarType::BF16x2: {  // (lo, hi)
      const uint32_t w = as(uint32_t{});
      const detail::SmallFloatFormat& f = *scalarInfo(laneOf(t)).small;
      out.precision(9);
      out << "(" << detail::smallFloatValue(f, w & 0xffffu) << ", "
          << detail::smallFloatValue(f, w >> 16) << ")";
      break;
    }
  }
  return out.str();
}

std::string hostElement(const KernelArg& array, uint32_t index) {
  const auto* base = static_cast<const unsigned char*>(array.data());
  return formatScalar(array.type(), base + size_t{index} * sizeOf(array.type()));
}

void checkPostconditions(
    const Kernel& k, const std::vector<KernelArg>& args, const std::string& who,
    const std::function<uint32_t(const Kernel& check)>& run,
    const std::function<std::string(const KernelArg& array, uint32_t index)>& element) {
  const KernelIR& ir = k.ir();
  for (const PostconditionCheck& c : k.postconditions()) {
    const uint32_t first = run(c.check);
    if (first == 0xffffffffu) continue;
    const BoundArguments bound = bindArguments(ir, args);  // only for the message
    // The failing element of each of the output's arrays (one per tuple component).
    std::string values;
    for (size_t p = 0; p < ir.params.size(); ++p) {
      const Param& param = ir.params[p];
      if (param.kind != ParamKind::Array || !param.output) continue;
      const std::vector<ArrayId>& arrays = ir.outputs.at(c.output).arrays;
      if (std::find(arrays.begin(), arrays.end(), param.array) == arrays.end()) continue;
      values += (values.empty() ? "" : ", ") + param.name + "[" + std::to_string(first) +
                "] = " + element(*bound.arrays[p], first);
    }
    throw Error(who + ": postcondition \"" + c.message + "\" fails: " + values +
                " (the first failing element of " + c.outputName + "; " + c.condition +
                " is false for " + c.index + " = " + std::to_string(first) + ")");
  }
}

}  // namespace obsidian
