// Exporting kernels as CUDA headers and as PTX/CUBIN with a JSON sidecar (see export.hpp).
#include "obsidian/export.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/emit_cuda.hpp"
#include "ir/deep_stack.hpp"
#include "ir/identifiers.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "kernel/kernel_access.hpp"
#include "obsidian/arguments.hpp"
#include "obsidian/report_json.hpp"

namespace obsidian {
namespace {

// The namespace holds the kernels, launchers and pipelines, so each of its parts follows the
// rule for kernel names (a part named like a function the kernels call, sqrtf say, would hide
// it); the outermost part may not be std, stdN or posix, which the standard reserves.
void checkNamespace(const std::string& ns) {
  if (ns.empty()) throw Error("export: ExportOptions::ns (the namespace) is required");
  auto refuse = [&](const std::string& why) {
    throw Error("export: namespace '" + ns + "' is not usable: " + why);
  };
  if (ns.starts_with("::")) {
    refuse(
        "it starts with :: (give it without the global prefix: the header declares it at "
        "global scope)");
  }
  for (size_t i = 0;;) {
    const size_t end = ns.find("::", i);
    const std::string part = ns.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (part.empty()) refuse("it has an empty part (parts are separated by a single ::)");
    if (!ir::isIdentifier(part)) {
      refuse("'" + part + "' is not a C identifier (letters, digits, _)");
    }
    const bool standard = part == "std" || part == "posix" ||
                          (part.size() > 3 && part.starts_with("std") &&
                           part.find_first_not_of("0123456789", 3) == std::string::npos);
    if (i == 0 && standard) {
      refuse("'" + part +
             "' is reserved for the C++ standard library (std, std followed by "
             "digits, posix)");
    }
    if (const std::optional<std::string> why = ir::reservedIdentifierReason(part)) {
      refuse("'" + part + "' is " + *why);
    }
    if (end == std::string::npos) return;
    i = end + 2;
  }
}

std::string cType(ScalarType t) { return std::string(cudaTypeName(t)); }

// `text` as a C string literal: quotes, backslashes and control characters escaped (octal, so
// no following character can extend the escape).
std::string cStringLiteral(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f || c == '?') {  // '?': no trigraphs
      const char octal[] = {'\\', static_cast<char>('0' + (c >> 6)),
                            static_cast<char>('0' + ((c >> 3) & 7)),
                            static_cast<char>('0' + (c & 7)), 0};
      out += octal;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool writes(const KernelIR& k, const Param& p) { return p.output || k.arrays[p.array].writable; }

// The launcher of one kernel, in namespace `ns`. It names the kernel only by its qualified name
// (::ns::k), so the kernel may share a name with the launcher's parameters (in0, stream):
// unqualified, those would hide it. Its locals are obsidian_*, which no parameter may be named;
// the one other name it declares, `stream`, is reserved for parameters in
// src/ir/identifiers.cpp.
std::string launcher(const Kernel& captured, const std::string& ns) {
  const KernelIR& k = captured.ir();
  const uint32_t sharedBytes = captured.sharedBytes();
  // Launch-time expressions are host C++ here: divisions are checked (ir::printHostExp), and
  // after each expression that divides, a zero divisor returns cudaErrorInvalidValue.
  bool divides = false;
  auto show = [&](const ExpPtr& e) {
    bool d = false;
    std::string text = ir::printHostExp(e, k.arrays, "obsidian_zero_divisor", &d);
    divides = divides || d;
    return text;
  };
  auto zeroCheck = [&](const std::string& what) {
    if (!divides) return std::string();
    divides = false;
    return "  if (obsidian_zero_divisor) {\n"
           "#ifdef OBSIDIAN_CHECKED\n"
           "    std::fprintf(stderr, \"obsidian: kernel %s: %s divides by zero; nothing was "
           "launched\\n\", \"" +
           k.name + "\", " + cStringLiteral(what) +
           ");\n"
           "#endif\n"
           "    return cudaErrorInvalidValue;\n"
           "  }\n";
  };
  const std::string kernel = "::" + ns + "::" + k.name;
  std::ostringstream sig, body;
  // [[maybe_unused]]: nvcc warns of a flag that is set and never read even after (void).
  body << "  [[maybe_unused]] bool obsidian_zero_divisor = false;  // set by a division by zero "
          "(obsidian_host)\n";
  bool first = true;
  auto arg = [&](const std::string& s) {
    sig << (first ? "" : ", ") << s;
    first = false;
  };
  std::vector<std::string> callArgs;
  std::set<std::string> lengthsSet;
  for (const Param& p : k.params) {
    switch (p.kind) {
      case ParamKind::Array: {
        arg(std::string(writes(k, p) ? "" : "const ") + cType(p.type) + "* " + p.name);
        arg("size_t " + p.name + "Count");
        body << "  if (" << p.name << " == nullptr && " << p.name
             << "Count > 0) return cudaErrorInvalidValue;  // null array\n";
        if (const uint32_t align = k.arrays[p.array].alignment; align > 1) {
          body << "  if ((unsigned long long)" << p.name << " % " << align
               << " != 0) return cudaErrorInvalidValue;  // "
             << (p.output ? "written with " : "read with ") << align
             << (p.output ? "-byte vector stores\n" : "-byte vector loads\n");
        }
        if (p.length && p.length->kind == ExpKind::Var) {
          const std::string& n = p.length->name;
          if (lengthsSet.insert(n).second) {
            body << "  if (" << p.name << "Count > 0xffffffffull) return cudaErrorInvalidValue;"
                 << "  // lengths are 32-bit\n"
                 << "  const uint32_t " << n << " = (uint32_t)" << p.name << "Count;\n";
          } else {
            body << "  if (" << p.name << "Count != " << n
                 << ") return cudaErrorInvalidValue;  // components of one array\n";
          }
        }
        callArgs.push_back(p.name);
        break;
      }
      case ParamKind::Length: callArgs.push_back(p.name); break;
      case ParamKind::Scalar:
        arg(cType(p.type) + " " + p.name);
        callArgs.push_back(p.name);
        break;
    }
  }
  arg("cudaStream_t stream = 0");
  // As bindArguments: an array the kernel writes shares no byte with another array argument.
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    if (p.kind != ParamKind::Array || !writes(k, p)) continue;
    for (size_t j = 0; j < k.params.size(); ++j) {
      const Param& q = k.params[j];
      if (j == i || q.kind != ParamKind::Array || (writes(k, q) && j < i)) continue;
      body << "  if (" << p.name << "Count > 0 && " << q.name << "Count > 0 && (uintptr_t)"
           << p.name << " < (uintptr_t)(" << q.name << " + " << q.name << "Count) && (uintptr_t)"
           << q.name << " < (uintptr_t)(" << p.name << " + " << p.name
           << "Count)) return cudaErrorInvalidValue;  // " << p.name << " overlaps " << q.name
           << "\n";
    }
  }
  // A precondition's message is the user's text: written as a string literal only (in a
  // comment a newline or a final backslash would end or continue it).
  // A precondition that divides by zero fails (as bindArguments says).
  for (const Precondition& c : k.preconditions) {
    const std::string holds = show(c.holds);
    body << "  if (!(" << holds << ")" << (divides ? " || obsidian_zero_divisor" : "") << ") {\n"
         << "#ifdef OBSIDIAN_CHECKED\n"
         << "    std::fprintf(stderr, \"obsidian: kernel " << k.name
         << ": precondition failed: %s\\n\", " << cStringLiteral(c.message) << ");\n"
         << "#endif\n"
         << "    return cudaErrorInvalidValue;\n"
         << "  }\n";
    divides = false;
  }
  for (const Param& p : k.params) {
    if (p.kind != ParamKind::Array) continue;
    body << "  if ((unsigned long long)" << p.name << "Count < (unsigned long long)("
         << show(p.length) << ")) return cudaErrorInvalidValue;  // " << p.name
         << (p.output ? " too small for the output" : " shorter than the kernel reads") << "\n"
         << zeroCheck(std::string("the length of ") + (p.output ? "output " : "") + p.name + " (" +
                      ir::printExp(p.length, k.arrays) + ")");
  }
  // At most maxRealBlocks real blocks (indices and the grid's stride fit in 32 bits); the
  // kernel's virtual blocks loop over them.
  body << "  uint32_t obsidian_blocks = " << show(k.gridBlocks) << ";\n"
       << zeroCheck("the grid size (" + ir::printExp(k.gridBlocks, k.arrays) + ")")
       << "  if (obsidian_blocks == 0) return cudaSuccess;  // nothing to compute\n"
       << "  if (obsidian_blocks > " << maxRealBlocks(k.threadsPerBlock)
       << "u) obsidian_blocks = " << maxRealBlocks(k.threadsPerBlock)
       << "u;  // virtual blocks loop over the real ones\n";
  if (sharedBytes > 48 * 1024) {
    body << "  {\n"
         << "    const cudaError_t obsidian_error = cudaFuncSetAttribute(" << kernel
         << ", cudaFuncAttributeMaxDynamicSharedMemorySize, " << sharedBytes << ");\n"
         << "    if (obsidian_error != cudaSuccess) return obsidian_error;\n"
         << "  }\n";
  }
  // -DOBSIDIAN_CHECKED: the kernel's writes to global arrays are bounds-checked (see
  // emitKernelFunction); the launcher clears the record, waits, and reports a violation.
  const std::string record = violationSymbol(k);
  body << "#ifdef OBSIDIAN_CHECKED\n"
       << "  {\n"
       << "    const unsigned long long obsidian_zero = 0;\n"
       << "    const cudaError_t obsidian_error = cudaMemcpyToSymbolAsync(" << record
       << ", &obsidian_zero, sizeof obsidian_zero, 0, cudaMemcpyHostToDevice, stream);\n"
       << "    if (obsidian_error != cudaSuccess) return obsidian_error;\n"
       << "  }\n"
       << "#endif\n";
  body << "  " << kernel << "<<<obsidian_blocks, " << k.threadsPerBlock << ", " << sharedBytes
       << ", stream>>>(";
  for (size_t i = 0; i < callArgs.size(); ++i) body << (i ? ", " : "") << callArgs[i];
  body << ");\n";
  std::string names, lengths;
  for (size_t a = 0; a < k.arrays.size(); ++a) {
    std::string n = std::to_string(k.arrays[a].length) + "ull";
    for (const Param& p : k.params) {
      if (p.kind == ParamKind::Array && p.array == a)
        n = "(unsigned long long)(" + show(p.length) + ")";
    }
    names += (a ? ", \"" : "\"") + k.arrays[a].name + "\"";
    lengths += (a ? ", " : "") + n;
  }
  body << "#ifdef OBSIDIAN_CHECKED\n"
       << "  {\n"
       << "    cudaError_t obsidian_error = cudaGetLastError();\n"
       << "    unsigned long long obsidian_found = 0;\n"
       << "    if (obsidian_error == cudaSuccess)\n"
       << "      obsidian_error = cudaMemcpyFromSymbolAsync(&obsidian_found, " << record
       << ", sizeof obsidian_found, 0, cudaMemcpyDeviceToHost, stream);\n"
       << "    if (obsidian_error == cudaSuccess) obsidian_error = cudaStreamSynchronize(stream);\n"
       << "    if (obsidian_error != cudaSuccess) return obsidian_error;\n"
       << "    if (obsidian_found != 0) {\n"
       << "      const char* const obsidian_names[] = {" << names << "};\n"
       << "      const unsigned long long obsidian_lengths[] = {" << lengths << "};\n"
       << "      std::fprintf(stderr, \"obsidian: kernel " << k.name
       << " (OBSIDIAN_CHECKED): a write to %s[%u] is out of bounds: %s has %llu elements (the "
          "first out-of-bounds write of the launch; it was not done)\\n\", "
          "obsidian_names[(obsidian_found >> 32) - 1], "
          "(unsigned)(obsidian_found & 0xffffffffu), obsidian_names[(obsidian_found >> 32) - 1], "
          "obsidian_lengths[(obsidian_found >> 32) - 1]);\n"
       << "      return cudaErrorAssert;\n"
       << "    }\n"
       << "    return cudaSuccess;\n"
       << "  }\n"
       << "#else\n"
       << "  return cudaGetLastError();\n"
       << "#endif\n";
  std::ostringstream out;
  out << "// Launches " << k.name << " (" << k.threadsPerBlock << " threads per block, "
      << sharedBytes << " bytes of shared memory). Arrays are device pointers with their "
      << "element counts.\n// Returns cudaErrorInvalidValue, launching nothing, when a check "
      << "below fails.\ninline cudaError_t " << k.name << "_launch(" << sig.str() << ") {\n"
      << body.str() << "}\n";
  return out.str();
}

}  // namespace

namespace {
std::string headerText(const std::vector<Kernel>& kernels, const ExportOptions& options);
}

std::string exportHeader(const std::vector<Kernel>& kernels, const ExportOptions& options) {
  uint32_t depth = 0;  // the printers recurse (see ir/deep_stack.hpp)
  for (const Kernel& k : kernels) depth = std::max(depth, ir::maxDepth(k.ir()));
  return ir::withStackFor(depth, [&] { return headerText(kernels, options); });
}

namespace {
std::string headerText(const std::vector<Kernel>& kernels, const ExportOptions& options) {
  checkNamespace(options.ns);
  if (kernels.empty()) throw Error("export: no kernel to export");
  std::set<std::string> names;
  for (const Kernel& k : kernels) {
    if (!names.insert(k.name()).second) {
      throw Error("export: two kernels are named " + k.name() + "; give them distinct names");
    }
  }
  // What else each kernel declares in the namespace: its launcher and its grid state arrays.
  for (const Kernel& k : kernels) {
    std::vector<std::string> declared = {k.name() + "_launch"};
    for (const ArrayDecl& a : k.ir().arrays) {
      if (a.space == MemorySpace::GridState) declared.push_back(a.name);
    }
    for (const std::string& name : declared) {
      if (names.count(name)) {
        throw Error("export: kernel " + name + " is named like a declaration of kernel " +
                    k.name() + " (its launcher or grid state); give it another name");
      }
    }
  }
  std::ostringstream out;
  out << "// Generated by obsidian: ";
  for (size_t i = 0; i < kernels.size(); ++i) out << (i ? ", " : "") << kernels[i].name();
  out << ". Do not edit.\n"
      << "// Needs only the CUDA runtime: compile with nvcc (-arch=sm_90 or another).\n";
  for (const Kernel& k : kernels) {
    if (k.nvrtcOptions().empty()) continue;
    out << "// " << k.name() << " was captured with NVRTC options";
    for (const std::string& o : k.nvrtcOptions()) out << " " << o;
    out << ": give nvcc the same.\n";
  }
  out << "#pragma once\n\n#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n#include "
         "<limits>\n#include <type_traits>\n#include <cuda_runtime.h>\n\n"
      << ir::printHostArithmetic() << "\n";
  for (const Kernel& k : kernels) {
    if (!usesSmallFloats(k.ir())) continue;
    out << ir::printSmallFloatPrelude() << "\n";
    break;
  }
  out << "namespace " << options.ns << " {\n\n";
  for (const Kernel& k : kernels) {
    out << emitKernelFunction(k.ir(), detail::KernelAccess::lowered(k).memory, false,
                              Checks::IfDefined)
        << "\n"
        << launcher(k, options.ns) << "\n";
  }
  if (!options.extraHostCode.empty()) out << options.extraHostCode << "\n";
  out << "}  // namespace " << options.ns << "\n";
  return out.str();
}
}  // namespace

namespace {

// Creates `dir` and its parents, or throws Error naming the directory and the reason (the
// filesystem's own exceptions are not part of the documented interface).
void createDirectories(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw Error("export: cannot create the directory " + dir.string() + ": " + error.message());
  }
  if (!std::filesystem::is_directory(dir, error)) {
    throw Error("export: cannot create the directory " + dir.string() +
                ": a file that is not a directory is in the way");
  }
}

// Writes the file at `path` (its directory created first), or throws Error naming the path and
// the reason from errno: the system's words (permission denied, is a directory, file name too
// long...), which a stream would not give.
void writeFile(const std::filesystem::path& path, const char* data, size_t size) {
  if (path.has_parent_path()) createDirectories(path.parent_path());
  auto fail = [&] {
    throw Error("export: cannot write " + path.string() + ": " + std::strerror(errno));
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail();
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int why = errno;
      ::close(fd);
      errno = why;
      fail();
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) fail();
}

}  // namespace

void writeHeader(const std::filesystem::path& path, const std::vector<Kernel>& kernels,
                 const ExportOptions& options) {
  const std::string text = exportHeader(kernels, options);
  writeFile(path, text.data(), text.size());
}

namespace {
// The name of a pipeline's host function: the rule for kernel names (src/ir/identifiers.cpp).
void checkFunctionName(const std::string& function, const char* what) {
  if (!ir::isIdentifier(function)) {
    throw Error(std::string(what) + ": function name '" + function +
                "' is not a C identifier (letters, digits, _)");
  }
  if (const std::optional<std::string> why = ir::reservedIdentifierReason(function)) {
    throw Error(std::string(what) + ": function name '" + function + "' is " + *why +
                "; choose another name");
  }
}

// The array parameters of k, checked to be `kinds` ("input", "mutable", "output") of one type.
ScalarType checkShape(const Kernel& k, const std::vector<std::string>& kinds, const char* what) {
  std::vector<std::string> got;
  ScalarType type = ScalarType::U32;
  bool sameType = true, first = true;
  for (const Param& p : k.ir().params) {
    if (p.kind == ParamKind::Scalar) got.push_back("scalar");
    if (p.kind != ParamKind::Array) continue;
    got.push_back(p.output ? "output" : (k.ir().arrays[p.array].writable ? "mutable" : "input"));
    if (!first && p.type != type) sameType = false;
    type = p.type;
    first = false;
  }
  if (got != kinds || !sameType) {
    std::string want;
    for (const std::string& s : kinds) want += (want.empty() ? "" : ", ") + s;
    throw Error(std::string(what) + ": kernel " + k.name() + " must take arrays (" + want +
                ") of one element type");
  }
  return type;
}

// The pipelines derive each level's size as ceil(n / chunk): the kernel must make exactly
// that many blocks (checked on its grid size at n = chunk and chunk + 1).
void checkChunk(const Kernel& k, uint32_t chunk, const char* what) {
  if (chunk < 2) {
    throw Error(std::string(what) + ": chunk must be at least 2 (each level must shrink); got " +
                std::to_string(chunk));
  }
  auto blocksFor = [&](uint64_t n) {
    BoundArguments b;
    const size_t params = k.ir().params.size();
    b.bits.assign(params, 0);
    b.reals.assign(params, 0.0);
    for (size_t i = 0; i < params; ++i) {
      if (k.ir().params[i].kind == ParamKind::Length) b.bits[i] = n;
    }
    return evaluateParams(k.ir(), k.ir().gridBlocks, b);
  };
  if (blocksFor(chunk) != 1 || blocksFor(uint64_t{chunk} + 1) != 2) {
    throw Error(std::string(what) + ": kernel " + k.name() + " does not reduce chunks of " +
                std::to_string(chunk) + " elements to one block each");
  }
}
}  // namespace

// The pipelines' host code calls launchers (k_launch), never a kernel, so a kernel may share a
// name with its locals; the globals it calls are reserved in src/ir/identifiers.cpp.
std::string exportReducePipeline(const Kernel& partial, uint32_t chunk,
                                 const std::string& function) {
  const KernelIR& k = partial.ir();
  checkFunctionName(function, "exportReducePipeline");
  const ScalarType type = checkShape(partial, {"input", "output"}, "exportReducePipeline");
  checkChunk(partial, chunk, "exportReducePipeline");
  const std::string t = cType(type), c = std::to_string(chunk);
  std::ostringstream out;
  out << "// Reduces n >= 1 elements of `in` (device memory) into *result (device memory), "
      << "level by level with " << k.name << ":\n// each level turns n elements into "
      << "ceil(n / " << c << ") partial results. Scratch comes from cudaMallocAsync on `stream`.\n"
      << "inline cudaError_t " << function << "(const " << t << "* in, size_t n, " << t
      << "* result, cudaStream_t stream = 0) {\n"
      << "  if (n == 0 || in == nullptr || result == nullptr) return cudaErrorInvalidValue;\n"
      << "  auto partials = [](size_t m) { return m / " << c << " + (m % " << c << " != 0); };\n"
      << "  const size_t first = partials(n);\n"
      << "  " << t << "* scratch = nullptr;  // two levels of partial results, ping-pong\n"
      << "  if (first > 1) {\n"
      << "    const cudaError_t e = cudaMallocAsync((void**)&scratch, (first + partials(first)) * "
         "sizeof("
      << t << "), stream);\n"
      << "    if (e != cudaSuccess) return e;\n"
      << "  }\n"
      << "  const " << t << "* src = in;\n"
      << "  size_t count = n;\n"
      << "  bool ping = true;\n"
      << "  cudaError_t e = cudaSuccess;\n"
      << "  while (e == cudaSuccess) {\n"
      << "    const size_t next = partials(count);\n"
      << "    " << t << "* dst = next == 1 ? result : (ping ? scratch : scratch + first);\n"
      << "    e = " << k.name << "_launch(src, count, dst, next, stream);\n"
      << "    if (next == 1) break;\n"
      << "    src = dst;\n"
      << "    count = next;\n"
      << "    ping = !ping;\n"
      << "  }\n"
      << "  if (scratch != nullptr) {\n"
      << "    const cudaError_t f = cudaFreeAsync(scratch, stream);\n"
      << "    if (e == cudaSuccess) e = f;\n"
      << "  }\n"
      << "  return e;\n"
      << "}\n";
  return out.str();
}

std::string exportScanPipeline(const Kernel& inclusive, const Kernel& exclusive,
                               const Kernel& addBack, uint32_t chunk, const std::string& function) {
  const char* what = "exportScanPipeline";
  checkFunctionName(function, what);
  const ScalarType t1 = checkShape(inclusive, {"input", "mutable", "output"}, what);
  const ScalarType t2 = checkShape(exclusive, {"input", "mutable", "output"}, what);
  const ScalarType t3 = checkShape(addBack, {"input", "input", "output"}, what);
  if (t1 != t2 || t2 != t3) throw Error("exportScanPipeline: the kernels' element types differ");
  checkChunk(inclusive, chunk, what);
  checkChunk(exclusive, chunk, what);
  const std::string t = cType(t1), c = std::to_string(chunk);
  const std::string ns = "detail_" + function;
  std::ostringstream out;
  out << "namespace " << ns << " {\n"
      << "inline size_t blocks(size_t n) { return n / " << c << " + (n % " << c << " != 0); }\n"
      << "// Elements of scratch a scan of n needs: per level the block sums, the block scans and\n"
      << "// the sums' prefixes, while a level has more than one block.\n"
      << "inline size_t scratch(size_t n) {\n"
      << "  const size_t b = blocks(n);\n"
      << "  return b == 1 ? 1 : b + n + b + scratch(b);\n"
      << "}\n"
      << "inline cudaError_t level(const " << t << "* in, size_t n, " << t
      << "* out, bool exclusive, " << t << "* scratch, cudaStream_t stream) {\n"
      << "  const size_t b = blocks(n);\n"
      << "  auto blockScans = exclusive ? " << exclusive.name() << "_launch : " << inclusive.name()
      << "_launch;\n"
      << "  " << t << "* sums = scratch;\n"
      << "  if (b == 1) return blockScans(in, n, sums, 1, out, n, stream);\n"
      << "  " << t << "* partial = sums + b;\n"
      << "  " << t << "* prefix = partial + n;\n"
      << "  cudaError_t e = blockScans(in, n, sums, b, partial, n, stream);\n"
      << "  if (e == cudaSuccess) e = level(sums, b, prefix, true, prefix + b, stream);\n"
      << "  if (e == cudaSuccess) e = " << addBack.name()
      << "_launch(partial, n, prefix, b, out, n, stream);\n"
      << "  return e;\n"
      << "}\n"
      << "}  // namespace " << ns << "\n\n"
      << "// The inclusive (or exclusive) scan of n >= 1 elements of `in` into `out` (device\n"
      << "// memory), in chunks of " << c << ": block scans, a scan of the block sums, add-back.\n"
      << "inline cudaError_t " << function << "(const " << t << "* in, size_t n, " << t
      << "* out, bool exclusive = false, cudaStream_t stream = 0) {\n"
      << "  if (n == 0 || in == nullptr || out == nullptr) return cudaErrorInvalidValue;\n"
      << "  " << t << "* scratch = nullptr;\n"
      << "  cudaError_t e = cudaMallocAsync((void**)&scratch, " << ns << "::scratch(n) * sizeof("
      << t << "), stream);\n"
      << "  if (e != cudaSuccess) return e;\n"
      << "  e = " << ns << "::level(in, n, out, exclusive, scratch, stream);\n"
      << "  const cudaError_t f = cudaFreeAsync(scratch, stream);\n"
      << "  return e != cudaSuccess ? e : f;\n"
      << "}\n";
  return out.str();
}

ExportedBinary exportBinary(const Kernel& k, const std::filesystem::path& directory,
                            const CompileOptions& options) {
  const CompileResult& r = k.compile(options);
  createDirectories(directory);
  ExportedBinary b{directory / (k.name() + ".ptx"), directory / (k.name() + ".cubin"),
                   directory / (k.name() + ".json")};
  nlohmann::json j;
  j["kernel"] = k.name();
  j["entry"] = k.name();  // extern "C": the PTX entry has the kernel's plain name
  j["arch"] = options.arch;
  j["options"] = detail::utf8Text(r.options);
  j["threadsPerBlock"] = k.threadsPerBlock();
  j["sharedBytes"] = k.sharedBytes();
  const nlohmann::json report = toJson(k.report());
  j["params"] = report["params"];
  j["gridBlocks"] = report["gridBlocks"];
  j["preconditions"] = report["preconditions"];
  j["registers"] = r.registers;
  writeFile(b.ptx, r.ptx.data(), r.ptx.size());
  writeFile(b.cubin, r.cubin.data(), r.cubin.size());
  const std::string js = j.dump(2) + "\n";
  writeFile(b.json, js.data(), js.size());
  return b;
}

}  // namespace obsidian
