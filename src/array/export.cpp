// Whole-array programs, exported: Plan::exportHeader prints the plan's kernels with their
// launchers (obsidian::exportHeader) and one host function that does on the application's side
// what Plan::run does on the GPU: it checks the extents (every source of each dim equal, slices
// non-negative, outputs large enough), chooses the column passes' bands by the device's SM
// count (chooseBands' rule in run.cpp), takes the intermediates from cudaMallocAsync and calls
// each pass's launcher in order: a call pass's is the user's kernel's; a sort pass launches the
// device radix sort's kernels as radixSortAt does (sort.cpp's sortLaunches), over storage it
// allocates, zeroes and frees.
#include "obsidian/export.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "array/plan_data.hpp"
#include "ir/identifiers.hpp"
#include "ir/print.hpp"
#include "obsidian/device/radix_sort.hpp"

namespace obsidian::array {

using detail::ArgRef;
using detail::BufferInfo;
using detail::DimSource;
using detail::Layout;
using detail::PlanData;

namespace {

// A number operand of a call as host C++ (ir::printLiteral's device intrinsics for infinities
// and NaNs are not callable from the host function): its exact bits.
std::string hostLiteral(const ExpNode& e) {
  if ((e.type == ScalarType::F32 || e.type == ScalarType::F64) && !std::isfinite(e.real)) {
    char buf[64];
    if (e.type == ScalarType::F32) {
      std::snprintf(buf, sizeof buf, "__builtin_bit_cast(float, 0x%08xu)",
                    std::bit_cast<uint32_t>(obsidian::detail::narrowF32(e.real)));
    } else {
      std::snprintf(buf, sizeof buf, "__builtin_bit_cast(double, 0x%016llxull)",
                    static_cast<unsigned long long>(std::bit_cast<uint64_t>(e.real)));
    }
    return buf;
  }
  return ir::printLiteral(e);
}

const char* const kWho = "array::Plan::exportHeader";

std::string cType(ScalarType t) { return std::string(scalarInfo(t).cudaName); }

// Text for a // comment: printable ASCII without backslashes (a final one would continue the
// comment onto the next line).
std::string commentText(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) out += (c < 0x20 || c >= 0x7f || c == '\\') ? '?' : char(c);
  return out;
}

std::string ull(uint64_t v) { return std::to_string(v) + "ull"; }

// The kernels the header holds: each pass's, and a sort's histogram and starts kernels; each
// once (a user's kernel may be called twice). Two different kernels of one name are refused.
std::vector<Kernel> exportedKernels(const PlanData& plan) {
  std::vector<Kernel> once;
  std::map<std::string, uint64_t> ids;
  const auto add = [&](const Kernel& k) {
    const auto [at, fresh] = ids.emplace(k.name(), k.id());
    if (fresh) {
      once.push_back(k);
    } else if (at->second != k.id()) {
      throw Error(std::string(kWho) + ": the program launches two different kernels named " +
                  k.name() +
                  " (its own passes are named passN_..., a sort's radix...): give the user's "
                  "kernels distinct names");
    }
  };
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    if (plan.passes[p].layout == Layout::Sort) {
      const detail::SortLaunches s = detail::sortLaunches(plan, int(p));
      add(s.histogram);
      add(s.starts);
    }
    add(*plan.passes[p].kernel);
  }
  return once;
}

// A user array of the host function: an input vector or matrix, or an output.
struct UserArray {
  std::string name;
  std::string count;  // its elements as a kernel sees them (an expression)
};

class HostFunction {
 public:
  HostFunction(const PlanData& plan, const std::string& function)
      : plan_(plan), function_(function) {}

  std::string text() {
    collect();
    checkNames();
    std::ostringstream o;
    header(o);
    o << " {\n";
    checks(o);
    sizes(o);
    launches(o);
    o << "}\n";
    return o.str();
  }

 private:
  // ------------------------------------------------------------------------ what it takes
  void collect() {
    for (const detail::NodeInfo& n : plan_.nodes) {
      if (n.node->op == OpKind::Input) inputs_.emplace(n.node->name, &n);
    }
    for (const auto& [name, id] : plan_.outputs) outputs_.emplace(name, &plan_.nodes[id]);
    first_.assign(plan_.buffers.size(), -1);
    last_.assign(plan_.buffers.size(), -1);
    for (size_t p = 0; p < plan_.passes.size(); ++p) {
      for (const ArgRef& a : plan_.passes[p].args) {
        if (a.kind != ArgRef::Kind::Buffer && a.kind != ArgRef::Kind::Parts) continue;
        if (first_[a.buffer] < 0) first_[a.buffer] = int(p);
        last_[a.buffer] = int(p);
      }
    }
    // Every dim some later code reads (the others are only checked).
    used_.assign(plan_.dims.size(), false);
    const auto use = [&](int d) {
      if (d >= 0) used_[d] = true;
    };
    for (const auto& [name, n] : outputs_) {
      use(n->slot0);
      use(n->slot1);
    }
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      if (first_[b] < 0) continue;
      use(plan_.buffers[b].dimA);
      use(plan_.buffers[b].dimB);
      use(plan_.buffers[b].partsDim);
    }
    for (const detail::Dim& d : plan_.dims) {
      for (const DimSource& s : d.sources) {
        for (int f : s.from()) use(f);
      }
    }
    for (size_t p = 0; p < plan_.passes.size(); ++p) {
      const detail::Pass& pass = plan_.passes[p];
      if (hasBand(pass) && plan_.options.band == 0) {
        use(pass.dimA);
        use(pass.dimB);
      }
      for (const ArgRef& a : pass.args) {
        if (a.kind == ArgRef::Kind::DimLength) use(a.dim);
      }
    }
  }

  static bool hasBand(const detail::Pass& pass) {
    return pass.layout == Layout::ColumnBand || pass.layout == Layout::Tile;
  }

  // The host function's parameters are named by the program's inputs and outputs (with Len,
  // Rows, Cols and Pitch), so two may meet, or meet a launcher the body calls.
  void checkNames() {
    std::map<std::string, std::string> taken;  // name -> what it is
    std::set<std::string> declared;            // what the header declares in the namespace
    for (const Kernel& k : exportedKernels(plan_)) {
      declared.insert(k.name());
      declared.insert(k.name() + "_launch");
      for (const ArrayDecl& a : k.ir().arrays) {
        if (a.space == MemorySpace::GridState) declared.insert(a.name);
      }
    }
    if (declared.count(function_)) {
      throw Error(std::string(kWho) + ": function name '" + function_ +
                  "' is the name of one of the plan's kernels, launchers or grid state "
                  "(passN_kind, radix..., the user's kernels, and their _launch); choose another "
                  "name");
    }
    const auto take = [&](const std::string& name, const std::string& what) {
      if (const auto why = ir::parameterNameReason(name)) {
        throw Error(std::string(kWho) + ": the host function's parameter '" + name + "' (" + what +
                    ") is " + *why + "; rename the input or output");
      }
      if (declared.count(name)) {
        throw Error(std::string(kWho) + ": the host function's parameter '" + name + "' (" + what +
                    ") would hide the kernel or launcher of that name; rename the input "
                    "or output");
      }
      const auto [it, fresh] = taken.emplace(name, what);
      if (!fresh) {
        throw Error(std::string(kWho) + ": the host function's parameters '" + name + "' (" +
                    it->second + ") and '" + name + "' (" + what +
                    ") have one name; rename an input or output");
      }
    };
    for (const auto& [name, n] : inputs_) {
      take(name, "input " + name);
      if (n->node->shape == Shape::Vector) take(name + "Len", "the length of input " + name);
      if (n->node->shape == Shape::Matrix) {
        take(name + "Rows", "the rows of input " + name);
        take(name + "Cols", "the cols of input " + name);
        take(name + "Pitch", "the pitch of input " + name);
      }
    }
    for (const auto& [name, n] : outputs_) {
      take(name, "output " + name);
      take(name + "Len", "the capacity of output " + name);
    }
  }

  // ------------------------------------------------------------------------ the signature
  std::string extentWords(int d) const {
    std::string words;
    for (const DimSource& s : sourcesOf(d)) {
      if (!words.empty()) words += " = ";
      switch (s.kind) {
        case DimSource::Kind::Length: words += "len(" + s.input + ")"; break;
        case DimSource::Kind::Rows: words += "rows(" + s.input + ")"; break;
        case DimSource::Kind::Cols: words += "cols(" + s.input + ")"; break;
        case DimSource::Kind::Static: words += std::to_string(s.length); break;
        case DimSource::Kind::Minus:
        case DimSource::Kind::Quotient: {
          const std::string from = extentWords(s.dim);
          const bool one = from.find(' ') == std::string::npos;
          words += (one ? from : "(" + from + ")") +
                   (s.kind == DimSource::Kind::Minus ? " - " : " / ") + std::to_string(s.length);
          break;
        }
        case DimSource::Kind::Product: {
          const std::string a = extentWords(s.dim), b = extentWords(s.dim2);
          const auto group = [](const std::string& x) {
            return x.find(' ') == std::string::npos ? x : "(" + x + ")";
          };
          words += group(a) + " * " + group(b);
          break;
        }
      }
    }
    return words;
  }
  // The sources of dim d, each once (two slices of one vector give the same source twice).
  std::vector<DimSource> sourcesOf(int d) const {
    std::vector<DimSource> out;
    for (const DimSource& s : plan_.dims[d].sources) {
      bool seen = false;
      for (const DimSource& t : out) {
        seen = seen || (t.kind == s.kind && t.input == s.input && t.length == s.length &&
                        t.dim == s.dim && t.dim2 == s.dim2);
      }
      if (!seen) out.push_back(s);
    }
    return out;
  }
  std::string outputSize(const detail::NodeInfo& n) const {
    if (n.slot0 < 0) return "1 element";
    if (n.slot1 < 0) return extentWords(n.slot0) + " elements";
    return "(" + extentWords(n.slot0) + ") x (" + extentWords(n.slot1) + ") elements, dense";
  }

  void header(std::ostringstream& o) const {
    o << "// The array program as one host function: checks the extents as array::Plan::run does\n"
      << "// (cudaErrorInvalidValue, nothing launched), then runs its " << plan_.passes.size()
      << " pass(es) in order on `stream` (a sort: a kernel a digit),\n"
      << "// intermediates from cudaMallocAsync (freed with cudaFreeAsync after their last "
         "kernel). Arrays are\n"
      << "// device pointers; a matrix m is row-major, element (r, c) at m[r * mPitch + c]. It "
         "returns the first error.\n";
    for (const auto& [name, n] : outputs_) {
      o << "// Output " << name << ": " << commentText(outputSize(*n)) << ".\n";
    }
    o << "inline cudaError_t " << function_ << "(";
    bool first = true;
    const auto param = [&](const std::string& s) {
      o << (first ? "" : ", ") << s;
      first = false;
    };
    for (const auto& [name, n] : inputs_) {
      const std::string t = cType(n->node->type);
      switch (n->node->shape) {
        case Shape::Scalar: param(t + " " + name); break;
        case Shape::Vector:
          param("const " + t + "* " + name);
          param("size_t " + name + "Len");
          break;
        case Shape::Matrix:
          param("const " + t + "* " + name);
          param("uint32_t " + name + "Rows");
          param("uint32_t " + name + "Cols");
          param("uint32_t " + name + "Pitch");
          break;
      }
    }
    for (const auto& [name, n] : outputs_) {
      param(cType(n->node->type) + "* " + name);
      param("size_t " + name + "Len");
    }
    param("cudaStream_t stream = 0");
    o << ")";
  }

  // ------------------------------------------------------------------------ checks
  std::string dim(int d) const { return "obsidian_dim" + std::to_string(d); }

  // The dims in an order where a dim follows the dims it is computed from.
  std::vector<int> dimOrder() const {
    std::vector<int> order;
    std::vector<bool> done(plan_.dims.size(), false);
    for (size_t round = 0; round < plan_.dims.size(); ++round) {
      for (size_t d = 0; d < plan_.dims.size(); ++d) {
        if (done[d]) continue;
        bool ready = true;
        for (const DimSource& s : plan_.dims[d].sources) {
          for (int f : s.from()) ready = ready && done[f];
        }
        if (!ready) continue;
        done[d] = true;
        order.push_back(int(d));
      }
    }
    if (order.size() != plan_.dims.size()) {
      throw Error(std::string(kWho) + ": the plan's extents depend on each other in a cycle");
    }
    return order;
  }

  void checks(std::ostringstream& o) {
    o << "  // Arrays that hold elements are not null.\n";
    for (const auto& [name, n] : inputs_) {
      if (n->node->shape == Shape::Vector) {
        o << "  if (" << name << " == nullptr && " << name
          << "Len > 0) return cudaErrorInvalidValue;\n";
      } else if (n->node->shape == Shape::Matrix) {
        o << "  if (" << name << " == nullptr && " << name << "Rows > 0 && " << name
          << "Pitch > 0) return cudaErrorInvalidValue;\n";
      }
    }
    for (const auto& [name, n] : inputs_) {
      if (n->node->shape != Shape::Matrix) continue;
      o << "  // Matrix " << name << ": the pitch is at least the cols; rows x pitch is at most "
        << "2^32 - 1 (32-bit indices).\n"
        << "  if (" << name << "Pitch < " << name << "Cols) return cudaErrorInvalidValue;\n"
        << "  if ((uint64_t)" << name << "Rows * " << name
        << "Pitch > 0xffffffffull) return cudaErrorInvalidValue;\n";
    }
    // Extents: every source of a dim agrees (as resolve() in run.cpp requires).
    for (int d : dimOrder()) {
      const std::vector<DimSource> sources = sourcesOf(d);
      o << "  // Extent " << d << ": " << commentText(extentWords(d)) << ".\n";
      std::vector<std::string> values;
      for (const DimSource& s : sources) {
        switch (s.kind) {
          case DimSource::Kind::Length: values.push_back("(uint64_t)" + s.input + "Len"); break;
          case DimSource::Kind::Rows: values.push_back("(uint64_t)" + s.input + "Rows"); break;
          case DimSource::Kind::Cols: values.push_back("(uint64_t)" + s.input + "Cols"); break;
          case DimSource::Kind::Static: values.push_back(ull(s.length)); break;
          case DimSource::Kind::Minus:
            o << "  if (" << dim(s.dim) << " < " << ull(s.length)
              << ") return cudaErrorInvalidValue;  // a slice or segments' offsets need at least "
              << s.length << " element(s)\n";
            values.push_back(dim(s.dim) + " - " + ull(s.length));
            break;
          case DimSource::Kind::Quotient:
            o << "  if (" << dim(s.dim) << " % " << ull(s.length)
              << " != 0) return cudaErrorInvalidValue;  // a reshape's rows are whole\n";
            values.push_back(dim(s.dim) + " / " + ull(s.length));
            break;
          case DimSource::Kind::Product: values.push_back(dim(s.dim) + " * " + dim(s.dim2)); break;
        }
      }
      const bool declare = used_[d] || values.size() > 1;
      const std::string value = declare ? dim(d) : values[0];
      if (declare) o << "  const uint64_t " << dim(d) << " = " << values[0] << ";\n";
      for (size_t k = 1; k < values.size(); ++k) {
        o << "  if (" << values[k] << " != " << dim(d)
          << ") return cudaErrorInvalidValue;  // the operations need equal extents\n";
      }
      bool fixed = false;  // a generate's length (32-bit), which the others equal
      for (const DimSource& s : sources) fixed = fixed || s.kind == DimSource::Kind::Static;
      if (!fixed) {
        o << "  if (" << value << " > 0xffffffffull) return cudaErrorInvalidValue;  // extents "
          << "are 32-bit\n";
      }
    }
    // Outputs: large enough (their capacity).
    for (const auto& [name, n] : outputs_) {
      const std::string need = n->slot0 < 0   ? "1ull"
                               : n->slot1 < 0 ? dim(n->slot0)
                                              : dim(n->slot0) + " * " + dim(n->slot1);
      o << "  // Output " << name << ": " << commentText(outputSize(*n)) << ".\n";
      if (n->slot1 >= 0) {
        o << "  if (" << need << " > 0xffffffffull) return cudaErrorInvalidValue;\n";
      }
      o << "  if ((uint64_t)" << name << "Len < " << need << ") return cudaErrorInvalidValue;\n";
      o << "  if (" << name << " == nullptr" << (n->slot0 < 0 ? "" : " && " + need + " > 0")
        << ") return cudaErrorInvalidValue;\n";
    }
  }

  // ------------------------------------------------------------------------ sizes
  std::string band(int p) const { return "obsidian_band" + std::to_string(p); }
  std::string parts(int b) const { return "obsidian_parts" + std::to_string(b); }
  std::string count(int b) const { return "obsidian_count" + std::to_string(b); }
  std::string temp(int b) const { return "obsidian_t" + std::to_string(b); }
  std::string bufferWords(int b) const {
    const BufferInfo& info = plan_.buffers[b];
    return info.output ? "output " + info.name : commentText(info.name);
  }

  void sizes(std::ostringstream& o) {
    const PlanOptions& opt = plan_.options;
    bool bands = false;
    for (const detail::Pass& pass : plan_.passes) bands = bands || hasBand(pass);
    if (bands && opt.band == 0) {
      o << "  // Bands of the column passes: enough to give the device about 24 warps an SM.\n"
        << "  int obsidian_sms = 0;\n"
        << "  {\n"
        << "    int obsidian_device = 0;\n"
        << "    cudaError_t obsidian_status = cudaGetDevice(&obsidian_device);\n"
        << "    if (obsidian_status == cudaSuccess)\n"
        << "      obsidian_status = cudaDeviceGetAttribute(&obsidian_sms, "
           "cudaDevAttrMultiProcessorCount, obsidian_device);\n"
        << "    if (obsidian_status != cudaSuccess) return obsidian_status;\n"
        << "  }\n"
        << "  const uint64_t obsidian_fill = 24ull * (uint64_t)obsidian_sms;\n";
    }
    for (size_t p = 0; p < plan_.passes.size(); ++p) {
      const detail::Pass& pass = plan_.passes[p];
      if (!hasBand(pass)) continue;
      const std::string b = band(int(p)), rows = dim(pass.dimA), cols = dim(pass.dimB);
      if (opt.band) {
        o << "  const uint32_t " << b << " = " << opt.band << "u;  // " << pass.kernel->name()
          << ": PlanOptions::band\n";
      } else if (pass.layout == Layout::Tile) {
        const uint32_t w = 32 * detail::kTileLanes;
        o << "  // " << pass.kernel->name() << ": a warp per band of rows and tile of " << w
          << " columns; bands of 128 rows down to 16.\n"
          << "  uint32_t " << b << " = 128;\n"
          << "  while (" << b << " > 16 && (" << rows << " + " << b << " - 1) / " << b << " * (("
          << cols << " + " << (w - 1) << ") / " << w << ") < obsidian_fill) " << b << " /= 2;\n";
      } else {
        o << "  // " << pass.kernel->name() << ": a thread per column over bands of rows; "
          << "bands of 256 rows down to 64.\n"
          << "  uint32_t " << b << " = 256;\n"
          << "  while (" << b << " > 64 && (" << rows << " + " << b << " - 1) / " << b << " * (("
          << cols << " + " << (opt.threads - 1) << ") / " << opt.threads << ") * "
          << opt.threads / 32 << " < obsidian_fill) " << b << " /= 2;\n";
      }
    }
    // Elements of every array the kernels pass among themselves or to the user.
    bool any = false;
    for (size_t bi = 0; bi < plan_.buffers.size(); ++bi) {
      if (first_[bi] < 0) continue;
      const int b = int(bi);
      const BufferInfo& info = plan_.buffers[b];
      if (!any) o << "  // Elements of the arrays the kernels write.\n";
      any = true;
      std::string n;
      if (info.partsDim >= 0) {
        const std::string width =
            info.width ? std::to_string(info.width) + "u" : band(info.bandPass);
        o << "  const uint64_t " << parts(b) << " = (" << dim(info.partsDim) << " + " << width
          << " - 1) / " << width << ";  // the parts of " << bufferWords(b) << "\n";
        n = parts(b) + " * " + dim(info.dimA);
      } else if (info.dimA < 0) {
        n = "1ull";
      } else {
        n = dim(info.dimA) + (info.dimB >= 0 ? " * " + dim(info.dimB) : "");
      }
      o << "  const uint64_t " << count(b) << " = " << n << ";  // " << bufferWords(b) << "\n";
      if (!info.output && (info.partsDim >= 0 || info.dimB >= 0)) {  // a product of extents
        o << "  if (" << count(b) << " > 0xffffffffull) return cudaErrorInvalidValue;  // "
          << "lengths are 32-bit\n";
      }
    }
  }

  // ------------------------------------------------------------------------ launches
  struct Call {
    std::vector<std::string> args;
    // The user's arrays it passes, and which it writes (for the overlap and alignment checks).
    std::vector<std::pair<UserArray, bool>> user;
    std::vector<std::pair<std::string, uint32_t>> aligned;  // user array, bytes
  };

  // Pass p's launcher arguments, matched against its kernel's parameters (an array is its
  // pointer and element count; a Length parameter comes from that count; scalars by value).
  Call call(int p) const {
    const detail::Pass& pass = plan_.passes[p];
    const KernelIR& k = pass.kernel->ir();
    Call c;
    size_t next = 0;
    const auto mismatch = [&](const std::string& what) {
      return Error(std::string(kWho) + ": kernel " + k.name +
                   "'s parameters do not match its "
                   "arguments (" +
                   what + "); this is a bug of the planner");
    };
    // (a Length parameter is passed as its arrays' count: the launcher takes none)
    const auto skipLengths = [&] {
      while (next < k.params.size() && k.params[next].kind == ParamKind::Length) ++next;
    };
    const auto take = [&](ParamKind kind) -> const Param& {
      skipLengths();
      if (next >= k.params.size() || k.params[next].kind != kind) {
        throw mismatch("parameter " + std::to_string(next));
      }
      return k.params[next++];
    };
    const auto array = [&](const std::string& pointer, const std::string& n, bool user,
                           const std::string& name) {
      const Param& param = take(ParamKind::Array);
      c.args.push_back(pointer);
      c.args.push_back(n);
      const bool written = param.output || k.arrays[param.array].writable;
      if (user) {
        c.user.push_back({UserArray{name, n}, written});
        if (const uint32_t a = k.arrays[param.array].alignment; a > 1)
          c.aligned.push_back({name, a});
      }
    };
    for (const ArgRef& a : pass.args) {
      switch (a.kind) {
        case ArgRef::Kind::DimLength:
          take(ParamKind::Scalar);
          c.args.push_back("(uint32_t)" + dim(a.dim));
          break;
        case ArgRef::Kind::Parts:
          take(ParamKind::Scalar);
          c.args.push_back("(uint32_t)" + parts(a.buffer));
          break;
        case ArgRef::Kind::Band:
          take(ParamKind::Scalar);
          c.args.push_back(band(a.pass));
          break;
        case ArgRef::Kind::Input: {
          const auto it = inputs_.find(a.input);
          if (it == inputs_.end()) throw mismatch("input " + a.input + " is not the program's");
          const std::string& name = a.input;
          switch (it->second->node->shape) {
            case Shape::Scalar:
              take(ParamKind::Scalar);
              c.args.push_back(name);
              break;
            case Shape::Vector: array(name, name + "Len", true, name); break;
            case Shape::Matrix:
              array(name, "(size_t)" + name + "Rows * " + name + "Pitch", true, name);
              for (const char* side : {"Rows", "Cols", "Pitch"}) {
                take(ParamKind::Scalar);
                c.args.push_back(name + side);
              }
              break;
          }
          break;
        }
        case ArgRef::Kind::Buffer: {
          const BufferInfo& info = plan_.buffers[a.buffer];
          array(info.output ? info.name : temp(a.buffer), count(a.buffer), info.output, info.name);
          break;
        }
        case ArgRef::Kind::Literal:  // (a call pass's number operand)
          take(ParamKind::Scalar);
          c.args.push_back(hostLiteral(*plan_.nodes[a.node].node->body));
          break;
      }
    }
    skipLengths();
    if (next != k.params.size()) throw mismatch("more parameters than arguments");
    c.args.push_back("stream");
    return c;
  }

  // A sort pass's arrays as the host function names them: its keys, [its values], its result;
  // and its keys' count (its result's).
  std::vector<std::string> sortPointers(int p) const {
    std::vector<std::string> out;
    for (const ArgRef& a : plan_.passes[p].args) {
      if (a.kind == ArgRef::Kind::Input) {
        out.push_back(a.input);
      } else {
        assert(a.kind == ArgRef::Kind::Buffer && "a sort's arguments are arrays");
        const BufferInfo& info = plan_.buffers[a.buffer];
        out.push_back(info.output ? info.name : temp(a.buffer));
      }
    }
    return out;
  }
  std::string sortCount(int p) const { return count(plan_.passes[p].args.back().buffer); }
  Call sortCall(int p) const {
    Call c;
    const std::vector<ArgRef>& args = plan_.passes[p].args;
    for (size_t i = 0; i < args.size(); ++i) {
      const bool result = i + 1 == args.size();
      const ArgRef& a = args[i];
      if (a.kind == ArgRef::Kind::Input) {
        c.user.push_back({UserArray{a.input, a.input + "Len"}, false});
      } else if (plan_.buffers[a.buffer]
                     .output) {  // (an operand another pass wrote, or the result)
        c.user.push_back({UserArray{plan_.buffers[a.buffer].name, count(a.buffer)}, result});
      }
    }
    return c;
  }

  // A launch of kernel k (its launcher's arguments: each array a pointer and a count, each
  // scalar a value; a Length parameter is its arrays' count).
  struct Arg {
    std::string pointer, count;  // count empty: a scalar, its value in pointer
  };
  static std::string launchOf(const Kernel& k, const std::vector<Arg>& args) {
    std::string text = k.name() + "_launch(";
    size_t next = 0;
    for (const Param& param : k.ir().params) {
      if (param.kind == ParamKind::Length) continue;
      if (next >= args.size() || (param.kind == ParamKind::Array) == args[next].count.empty()) {
        throw Error(std::string(kWho) + ": kernel " + k.name() +
                    "'s parameters do not match a sort's arguments; this is a bug of the planner");
      }
      text += args[next].pointer + ", ";
      if (param.kind == ParamKind::Array) text += args[next].count + ", ";
      ++next;
    }
    if (next != args.size()) {
      throw Error(std::string(kWho) + ": kernel " + k.name() +
                  " takes fewer arguments than a sort passes; this is a bug of the planner");
    }
    return text + "stream)";
  }

  // Sort pass p: radixSortAt's launches over storage of its own (cudaMallocAsync, zeroed; epoch
  // 1), freed after its last pass.
  void sortLaunches(std::ostringstream& o, int p, const std::string& in) const {
    const detail::SortLaunches s = detail::sortLaunches(plan_, p);
    const std::vector<std::string> arrays = sortPointers(p);
    const bool pairs = s.valueBytes > 0;
    const std::string key = cType(s.keyType);
    const std::string word = s.valueBytes == 8 ? "uint64_t" : "uint32_t";
    const std::string n = sortCount(p), mem = sortMemory(p);
    const std::string& keysIn = arrays[0];
    // (radixStatusWords: a word per tile and digit; the state: a count per pass and digit, and
    // a ticket per pass)
    o << in << "if (" << n << " > 0) {\n";
    const std::string i2 = in + "  ";
    const auto round = [](const std::string& bytes) {
      return "((" + bytes + " + 255) / 256 * 256)";
    };
    o << i2 << "const uint64_t obsidian_statusBytes = "
      << round("(" + n + " / " + ull(s.tile) + " + 1) * " + ull(uint64_t{8} << s.radixBits))
      << ";\n"
      << i2 << "const uint64_t obsidian_stateBytes = " << round(ull(uint64_t{4} * s.stateWords))
      << ";\n"
      << i2 << "const uint64_t obsidian_keyBytes = " << round(n + " * sizeof(" + key + ")") << ";\n"
      << i2 << "const uint64_t obsidian_valueBytes = "
      << (pairs ? round(n + " * " + std::to_string(s.valueBytes)) : std::string("0")) << ";\n"
      << i2 << "// the status and state (zeroed), the alternate keys and values"
      << (pairs ? ", the sorted keys" : "") << "\n"
      << i2 << "obsidian_error = cudaMallocAsync((void**)&" << mem
      << ", obsidian_statusBytes + obsidian_stateBytes + " << (pairs ? "2 * " : "")
      << "obsidian_keyBytes + obsidian_valueBytes, stream);\n"
      << i2 << "if (obsidian_error != cudaSuccess) break;\n"
      << i2 << "obsidian_error = cudaMemsetAsync(" << mem
      << ", 0, obsidian_statusBytes + obsidian_stateBytes, stream);\n"
      << i2 << "if (obsidian_error != cudaSuccess) break;\n"
      << i2 << "uint64_t* const obsidian_status = (uint64_t*)" << mem << ";\n"
      << i2 << "uint32_t* const obsidian_state = (uint32_t*)(" << mem
      << " + obsidian_statusBytes);\n"
      << i2 << key << "* const obsidian_altKeys = (" << key << "*)(" << mem
      << " + obsidian_statusBytes + obsidian_stateBytes);\n";
    if (pairs) {
      o << i2 << word << "* const obsidian_altValues = (" << word << "*)(" << mem
        << " + obsidian_statusBytes + obsidian_stateBytes + obsidian_keyBytes);\n"
        << i2 << key << "* const obsidian_keysOut = (" << key << "*)(" << mem
        << " + obsidian_statusBytes + obsidian_stateBytes + obsidian_keyBytes + "
           "obsidian_valueBytes);\n";
    }
    const std::string keysOut = pairs ? "obsidian_keysOut" : "(" + key + "*)" + arrays[1];
    const std::string valuesIn = pairs ? "(const " + word + "*)" + arrays[1] : "";
    const std::string valuesOut = pairs ? "(" + word + "*)" + arrays[2] : "";
    const Arg state{"obsidian_state", std::to_string(s.stateWords) + "u"};
    // The histogram: as many blocks as the device holds at once.
    o << i2 << "int obsidian_device = 0, obsidian_smCount = 0, obsidian_perSm = 0;\n"
      << i2 << "obsidian_error = cudaGetDevice(&obsidian_device);\n"
      << i2 << "if (obsidian_error == cudaSuccess)\n"
      << i2
      << "  obsidian_error = cudaDeviceGetAttribute(&obsidian_smCount, "
         "cudaDevAttrMultiProcessorCount, obsidian_device);\n"
      << i2 << "if (obsidian_error == cudaSuccess)\n"
      << i2 << "  obsidian_error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&obsidian_perSm, "
      << s.histogram.name() << ", " << s.histogram.threadsPerBlock() << ", "
      << s.histogram.sharedBytes() << ");\n"
      << i2 << "if (obsidian_error != cudaSuccess) break;\n"
      << i2
      << "const uint32_t obsidian_blocks = (uint32_t)((obsidian_perSm > 1 ? obsidian_perSm : 1) "
         "* obsidian_smCount);\n";
    const auto launch = [&](const Kernel& k, const std::vector<Arg>& args) {
      o << i2 << "obsidian_error = " << launchOf(k, args) << ";\n"
        << i2 << "if (obsidian_error != cudaSuccess) break;\n";
    };
    launch(s.histogram, {{keysIn, n}, state, {"obsidian_blocks", ""}});
    launch(s.starts, {state});
    const uint32_t passes = static_cast<uint32_t>(s.digits.size());
    for (uint32_t q = 0; q < passes; ++q) {
      const bool out = device::detail::writesOutput(q, passes);
      std::vector<Arg> args{{q == 0 ? keysIn
                             : out  ? "obsidian_altKeys"
                                    : keysOut,
                             n},
                            {out ? keysOut : "obsidian_altKeys", n}};
      if (pairs) {
        args.push_back({q == 0 ? valuesIn : out ? "obsidian_altValues" : valuesOut, n});
        args.push_back({out ? valuesOut : "obsidian_altValues", n});
      }
      args.push_back(state);
      args.push_back({"obsidian_status", "(size_t)(obsidian_statusBytes / 8)"});
      for (const uint32_t v : {q, s.digits[q].first, s.digits[q].second, q + 1}) {
        args.push_back({std::to_string(v) + "u", ""});  // pass, shift, mask, epoch (1 + pass)
      }
      launch(s.pass, args);
    }
    o << i2 << "obsidian_error = cudaFreeAsync(" << mem << ", stream);\n"
      << i2 << mem << " = nullptr;\n"
      << i2 << "if (obsidian_error != cudaSuccess) break;\n"
      << in << "}\n";
  }
  std::string sortMemory(int p) const { return "obsidian_sort" + std::to_string(p); }

  std::string passWords(int p) const {
    const detail::Pass& pass = plan_.passes[p];
    std::vector<std::string> what;
    for (const auto* list : {&pass.stores, &pass.reductions, &pass.epilogue}) {
      for (int id : *list) what.push_back(detail::describe(plan_, id));
    }
    for (int id : pass.finishes) what.push_back("folds " + detail::describe(plan_, id));
    for (int id : pass.inits) what.push_back("the defaults of " + detail::describe(plan_, id));
    for (int id : pass.scatters) what.push_back("scatters into " + detail::describe(plan_, id));
    std::string s;
    for (const std::string& w : what) s += (s.empty() ? "" : ", ") + w;
    return s;
  }

  void launches(std::ostringstream& o) {
    std::vector<Call> calls;
    for (size_t p = 0; p < plan_.passes.size(); ++p) {
      calls.push_back(plan_.passes[p].layout == Layout::Sort ? sortCall(int(p)) : call(int(p)));
    }
    // Alignment of the user's arrays (vector loads and stores) and overlaps of an array a kernel
    // writes with another it is given: checked here as each launcher would, before anything runs.
    std::map<std::string, std::pair<uint32_t, std::string>> align;  // name -> bytes, kernel
    std::set<std::pair<std::string, std::string>> pairs;
    std::vector<std::string> overlapChecks;
    for (size_t p = 0; p < calls.size(); ++p) {
      const std::string& kernel = plan_.passes[p].kernel->name();
      for (const auto& [name, bytes] : calls[p].aligned) {
        auto& [have, who] = align[name];
        if (bytes > have) {
          have = bytes;
          who = kernel;
        }
      }
      const auto& user = calls[p].user;
      for (size_t i = 0; i < user.size(); ++i) {
        if (!user[i].second) continue;
        for (size_t j = 0; j < user.size(); ++j) {
          if (j == i || (user[j].second && j < i)) continue;
          const UserArray& x = user[i].first;
          const UserArray& y = user[j].first;
          if (x.name == y.name) continue;
          if (!pairs.insert(std::minmax(x.name, y.name)).second) continue;
          overlapChecks.push_back(
              "  if (obsidian_overlap(" + x.name + ", " + x.count + ", " + y.name + ", " + y.count +
              ")) return cudaErrorInvalidValue;  // " + kernel + " writes " + x.name + "\n");
        }
      }
    }
    if (!align.empty()) o << "  // Arrays read or written with vector loads and stores.\n";
    for (const auto& [name, what] : align) {
      o << "  if ((uintptr_t)" << name << " % " << what.first
        << " != 0) return cudaErrorInvalidValue;  // " << what.second << ": " << what.first
        << "-byte aligned\n";
    }
    if (!overlapChecks.empty()) {
      o << "  // An array a kernel writes shares no element with another array it is given.\n"
        << "  const auto obsidian_overlap = [](const auto* obsidian_a, uint64_t obsidian_aCount,\n"
        << "                                     const auto* obsidian_b, uint64_t obsidian_bCount) "
           "{\n"
        << "    return obsidian_aCount > 0 && obsidian_bCount > 0 &&\n"
        << "           (uintptr_t)obsidian_a < (uintptr_t)(obsidian_b + obsidian_bCount) &&\n"
        << "           (uintptr_t)obsidian_b < (uintptr_t)(obsidian_a + obsidian_aCount);\n"
        << "  };\n";
    }
    for (const std::string& line : overlapChecks) o << line;
    // A sort's keys: 32-bit places, and a tile past the last key (radixCall's rule).
    for (size_t p = 0; p < plan_.passes.size(); ++p) {
      if (plan_.passes[p].layout != Layout::Sort) continue;
      o << "  if (" << sortCount(int(p)) << " > "
        << ull(detail::sortLaunches(plan_, int(p)).mostKeys)
        << ") return cudaErrorInvalidValue;  // keys a sort takes\n";
    }
    // The launches.
    o << "  cudaError_t obsidian_error = cudaSuccess;\n";
    bool anyTemp = false;
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      if (plan_.buffers[b].output || first_[b] < 0) continue;
      o << "  " << cType(plan_.buffers[b].type) << "* " << temp(int(b)) << " = nullptr;  // "
        << bufferWords(int(b)) << "\n";
      anyTemp = true;
    }
    for (size_t p = 0; p < plan_.passes.size(); ++p) {
      if (plan_.passes[p].layout != Layout::Sort) continue;
      o << "  char* " << sortMemory(int(p)) << " = nullptr;  // the sort's storage\n";
      anyTemp = true;
    }
    if (anyTemp) o << "  do {  // until the first error\n";
    const std::string in = anyTemp ? "    " : "  ";
    for (size_t p = 0; p < plan_.passes.size(); ++p) {
      const detail::Pass& pass = plan_.passes[p];
      const std::string& kernel = pass.kernel->name();
      o << in << "// Kernel " << p + 1 << " of " << plan_.passes.size() << ", "
        << (pass.layout == Layout::Sort ? "the device radix sort" : kernel) << " ("
        << detail::layoutName(pass.layout) << "): " << commentText(passWords(int(p))) << ".\n";
      for (size_t b = 0; b < plan_.buffers.size(); ++b) {
        if (plan_.buffers[b].output || first_[b] != int(p)) continue;
        const std::string bytes = count(int(b)) + " * sizeof(" + cType(plan_.buffers[b].type) + ")";
        o << in << "obsidian_error = cudaMallocAsync((void**)&" << temp(int(b)) << ", " << bytes
          << " > 8 ? " << bytes << " : 8, stream);\n";
        o << in << "if (obsidian_error != cudaSuccess) break;\n";
      }
      if (pass.layout == Layout::Sort) {
        sortLaunches(o, int(p), in);
      } else {
        const Call& c = calls[p];
        o << in
          << (anyTemp ? "obsidian_error = "
                      : "if (obsidian_error == cudaSuccess) obsidian_error = ")
          << kernel << "_launch(";
        for (size_t i = 0; i < c.args.size(); ++i) o << (i ? ", " : "") << c.args[i];
        o << ");\n";
        if (anyTemp) o << in << "if (obsidian_error != cudaSuccess) break;\n";
      }
      for (size_t b = 0; b < plan_.buffers.size(); ++b) {
        if (plan_.buffers[b].output || first_[b] < 0 || last_[b] != int(p)) continue;
        o << in << "obsidian_error = cudaFreeAsync(" << temp(int(b)) << ", stream);  // its last "
          << "kernel\n"
          << in << temp(int(b)) << " = nullptr;\n"
          << in << "if (obsidian_error != cudaSuccess) break;\n";
      }
    }
    if (anyTemp) {
      o << "  } while (false);\n"
        << "  // After an error: the intermediates still held.\n";
      for (size_t b = 0; b < plan_.buffers.size(); ++b) {
        if (plan_.buffers[b].output || first_[b] < 0) continue;
        o << "  if (" << temp(int(b)) << " != nullptr) cudaFreeAsync(" << temp(int(b))
          << ", stream);\n";
      }
      for (size_t p = 0; p < plan_.passes.size(); ++p) {
        if (plan_.passes[p].layout != Layout::Sort) continue;
        o << "  if (" << sortMemory(int(p)) << " != nullptr) cudaFreeAsync(" << sortMemory(int(p))
          << ", stream);\n";
      }
    }
    // A scalar input no kernel reads (its value folded away) is still a parameter.
    for (const auto& [name, n] : inputs_) {
      if (n->node->shape != Shape::Scalar) continue;
      bool read = false;
      for (const detail::Pass& pass : plan_.passes) {
        for (const ArgRef& a : pass.args)
          read = read || (a.kind == ArgRef::Kind::Input && a.input == name);
      }
      if (!read) o << "  (void)" << name << ";  // no kernel reads it\n";
    }
    o << "  return obsidian_error;\n";
  }

  const PlanData& plan_;
  const std::string& function_;
  std::map<std::string, const detail::NodeInfo*> inputs_, outputs_;  // by name
  std::vector<int> first_, last_;  // per buffer: the first and last pass that passes it
  std::vector<bool> used_;         // per dim: read after its checks
};

}  // namespace

std::string Plan::exportHeader(const std::string& function, const std::string& ns) const {
  const PlanData& plan = *data_;
  if (!plan.options.target.gpu) {
    throw Error(std::string(kWho) +
                ": the plan targets the simulator; plan with PlanOptions::target = "
                "device::Target::onGpu() or a GPU Target");
  }
  if (!plan.checks.empty()) {
    throw Error(std::string(kWho) +
                ": the program has contracts (require, ensure), which Plan::run checks; the "
                "exported function would drop them: plan it without them to export it");
  }
  if (!ir::isIdentifier(function)) {
    throw Error(std::string(kWho) + ": function name '" + function +
                "' is not a C identifier (letters, digits, _)");
  }
  if (const std::optional<std::string> why = ir::reservedIdentifierReason(function)) {
    throw Error(std::string(kWho) + ": function name '" + function + "' is " + *why +
                "; choose another name");
  }
  ExportOptions options;
  options.ns = ns;
  options.extraHostCode = HostFunction(plan, function).text();
  return obsidian::exportHeader(exportedKernels(plan), options);
}

}  // namespace obsidian::array
