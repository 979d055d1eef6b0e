// The one rule for names that obsidian writes into generated C++ and CUDA as given by the user
// (kernel names, the parts of an export namespace): which identifiers are taken, and why.
#pragma once

#include <optional>
#include <set>
#include <string>

namespace obsidian::ir {

// Whether `name` is a C identifier: a letter or _, then letters, digits and _.
bool isIdentifier(const std::string& name);

// Why the identifier `name` cannot be given to something obsidian declares in generated code
// (a kernel: an extern "C" function at global scope for NVRTC, a function next to its launcher
// in an exported header compiled by nvcc), or nullopt when it is free. The reason completes
// "'name' is ...": "a C++ keyword", "reserved for the implementation (it contains __)", "a name
// the generated code uses", "a CUDA built-in variable", "a CUDA runtime name (...)", "a CUDA
// vector type", "a C/CUDA library name", "a C library macro", "written in capitals (...)".
std::optional<std::string> reservedIdentifierReason(const std::string& name);

// Why `name` cannot name a kernel's parameter or output (CaptureOptions::names), or nullopt:
// reservedIdentifierReason's rules, and the locals and parameters of the exported launcher
// (export.cpp), which declares the kernel's parameters beside them.
std::optional<std::string> parameterNameReason(const std::string& name);

// The names export.cpp's launcher declares besides the kernel's parameters: written there
// literally, listed here once (test_identifiers checks the launcher declares no other).
const std::set<std::string>& launcherLocalNames();

// The identifiers that obsidian's generated code (emit_cuda.cpp, print_exp.cpp, export.cpp)
// uses besides keywords, __ names and cuda* names: derived from the operator and type tables
// where those are defined, plus the names the emitters write literally.
const std::set<std::string>& generatedCodeNames();

}  // namespace obsidian::ir
