// Reserved identifiers (see identifiers.hpp). A kernel's name is declared in two places that
// share no scope with the user's program: at global scope, extern "C", in the source NVRTC
// compiles (where every function, type and macro its built-in headers declare is visible), and
// inside the export namespace of a header that nvcc compiles after <cuda_runtime.h> (where the
// kernel hides any same-named global that the code beside it calls, and where any macro of the
// C headers rewrites it). So a name is refused when any of those could see it otherwise.
#include "ir/identifiers.hpp"

#include <algorithm>
#include <string_view>

#include "obsidian/exp.hpp"
#include "obsidian/ir.hpp"
#include "obsidian/types.hpp"

namespace obsidian::ir {
namespace {

using Names = std::set<std::string, std::less<>>;

// The words of `text`, separated by spaces.
Names words(std::string_view text) {
  Names names;
  while (!text.empty()) {
    const size_t end = std::min(text.find(' '), text.size());
    if (end > 0) names.emplace(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return names;
}

// C++20's keywords and alternative tokens, and the contextual import and module (refused with
// them: a kernel named so would be too easily misread).
const Names& keywords() {
  static const Names names = words(
      "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
      "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
      "continue co_await co_return co_yield decltype default delete do double dynamic_cast else "
      "enum explicit export extern false float for friend goto if inline int long mutable "
      "namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
      "register reinterpret_cast requires return short signed sizeof static static_assert "
      "static_cast struct switch template this thread_local throw true try typedef typeid "
      "typename union unsigned using virtual void volatile wchar_t while xor xor_eq import "
      "module");
  return names;
}

// CUDA's built-in variables (__global__, __shared__ and the other CUDA keywords contain __).
const Names& cudaBuiltins() {
  static const Names names = words(
      "threadIdx blockIdx blockDim gridDim warpSize clusterIdx clusterDim clusterBlockIdx "
      "clusterGridDimInBlocks");
  return names;
}

// Functions and types of the C library and of CUDA's device library that NVRTC declares at
// global scope or <cuda_runtime.h> brings into an exported header: <math.h> and CUDA's further
// math (each with its float and long double variants), CUDA's integer, conversion and warp
// functions, <stdlib.h>, <stdio.h>, <string.h>, <time.h>, <ctype.h>, <stddef.h>, <stdint.h>,
// a program's entry point and the C++ library's namespace.
const Names& libraryNames() {
  static const Names names = [] {
    Names all = words(
        "abs labs llabs min max umin umax llmin llmax ullmin ullmax mul24 umul24 mulhi umulhi "
        "mul64hi umul64hi saturate float_as_int int_as_float float_as_uint uint_as_float "
        "float2int float2uint int2float uint2float float2double double2int double2uint double2ll "
        "double2ull int2double uint2double ll2double ull2double dadd dsub dmul fdividef any all "
        "ballot syncthreads_and syncthreads_count syncthreads_or clock clock64 clock_t dim3 "
        // <stdlib.h>, <stdio.h>, <string.h>, <time.h>, <ctype.h>
        "malloc calloc realloc free aligned_alloc exit abort atexit quick_exit getenv system rand "
        "srand qsort bsearch div ldiv lldiv div_t ldiv_t lldiv_t atoi atol atoll atof strtol "
        "strtoll strtoul strtoull strtod strtof strtold printf fprintf sprintf snprintf vprintf "
        "vfprintf vsprintf vsnprintf puts putchar getchar fopen fclose fread fwrite fflush FILE "
        "memcpy memmove memset memcmp memchr strlen strcpy strncpy strcat strncat strcmp strncmp "
        "strchr strrchr strstr strtok strerror strdup strcoll strcspn strpbrk strspn strxfrm time "
        "time_t difftime mktime tm timespec localtime gmtime asctime ctime strftime isalnum "
        "isalpha isblank iscntrl isdigit isgraph islower isprint ispunct isspace isupper isxdigit "
        "tolower toupper "
        // <stddef.h>, <stdint.h>
        "size_t ptrdiff_t max_align_t nullptr_t int8_t int16_t int32_t int64_t uint8_t uint16_t "
        "uint32_t uint64_t intptr_t uintptr_t intmax_t uintmax_t ssize_t int_least8_t "
        "int_least16_t int_least32_t int_least64_t uint_least8_t uint_least16_t uint_least32_t "
        "uint_least64_t int_fast8_t int_fast16_t int_fast32_t int_fast64_t uint_fast8_t "
        "uint_fast16_t uint_fast32_t uint_fast64_t "
        "main std");
    const Names math = words(
        "acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh cospi cyl_bessel_i0 "
        "cyl_bessel_i1 erf erfc erfcinv erfcx erfinv exp exp10 exp2 expm1 fabs fdim fdivide floor "
        "fma fmax fmin fmod fpclassify frexp hypot ilogb isfinite isgreater isgreaterequal isinf "
        "isless islessequal islessgreater isnan isnormal isunordered j0 j1 jn ldexp lgamma llrint "
        "llround log log10 log1p log2 logb lrint lround modf nan nearbyint nextafter nexttoward "
        "norm norm3d norm4d normcdf normcdfinv pow powi rcbrt remainder remquo rhypot rint rnorm "
        "rnorm3d rnorm4d round rsqrt scalbln scalbn signbit sin sincos sincospi sinh sinpi sqrt "
        "tan tanh tgamma trunc y0 y1 yn");
    for (const std::string& name : math) {
      all.insert(name);
      all.insert(name + "f");
      all.insert(name + "l");
    }
    return all;
  }();
  return names;
}

// Macros in lower case that the C headers under <cuda_runtime.h> define (glibc's among them);
// a kernel so named would be rewritten by the preprocessor. Macros in capitals are refused by
// the capitals rule instead.
const Names& lowerCaseMacros() {
  static const Names names = words(
      "assert assert_perror errno offsetof alloca stdin stdout stderr math_errhandling isascii "
      "toascii issubnormal strdupa strndupa htobe16 htobe32 htobe64 htole16 htole32 htole64 "
      "be16toh be32toh be64toh le16toh le32toh le64toh isalnum_l isalpha_l isascii_l isblank_l "
      "iscntrl_l isdigit_l isgraph_l islower_l isprint_l ispunct_l isspace_l isupper_l "
      "isxdigit_l toascii_l L_tmpnam L_ctermid L_cuserid P_tmpdir");
  return names;
}

bool hasPrefixThenUpper(std::string_view name, std::string_view prefix) {
  return name.size() > prefix.size() && name.starts_with(prefix) && name[prefix.size()] >= 'A' &&
         name[prefix.size()] <= 'Z';
}

// CUDA's vector types: (u)char, (u)short, (u)int, (u)long, (u)longlong, float and double with
// 1 to 4 components, and the 16- and 32-byte aligned _16a/_32a variants.
bool isVectorType(std::string_view name) {
  for (std::string_view aligned : {"_16a", "_32a"}) {
    if (name.ends_with(aligned)) name.remove_suffix(aligned.size());
  }
  if (name.size() < 2 || name.back() < '1' || name.back() > '4') return false;
  name.remove_suffix(1);
  for (std::string_view base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                "longlong", "ulonglong", "float", "double"}) {
    if (name == base) return true;
  }
  return false;
}

bool isCapitals(std::string_view name) {
  size_t capitals = 0;
  for (char c : name) {
    if (c >= 'a' && c <= 'z') return false;
    if (c >= 'A' && c <= 'Z') ++capitals;
  }
  return capitals >= 2;
}

}  // namespace

bool isIdentifier(const std::string& name) {
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (name.empty() || !(letter(name[0]) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(letter(c) || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

const std::set<std::string>& generatedCodeNames() {
  static const std::set<std::string> names = [] {
    std::set<std::string> all;
    // Math functions (print_exp.cpp): each operator's name, and its float variant with "f".
    auto addMath = [&](const std::string& name) {
      if (!isIdentifier(name)) return;  // +, <<, ...
      all.insert(name);
      all.insert(name + "f");
    };
    // The operator enums are uint8_t; their name tables answer "?" for values they do not have.
    for (int op = 0; op < 256; ++op) {
      addMath(unOpName(static_cast<UnOp>(op)));
      addMath(binOpName(static_cast<BinOp>(op)));
      const std::string atomic = atomicOpName(static_cast<AtomicOp>(op));
      if (atomic != "?") all.insert("atomic" + atomic);  // emit_cuda.cpp: atomicAdd(...)
    }
    // Element types and vector types (types.hpp), as casts, declarations and vector loads.
    for (int t = 0; t < 256; ++t) {
      const ScalarType type = static_cast<ScalarType>(t);
      if (cudaTypeName(type) == "?") continue;
      all.insert(std::string(cudaTypeName(type)));
      for (uint32_t width : {2u, 4u}) {
        if (const std::string vector = vectorTypeName(type, width); !vector.empty()) {
          all.insert(vector);
        }
      }
    }
    // Written literally by the emitters (the prelude's typedefs are the element types above).
    // A name added there must be added here; the test "capture: no kernel may be named like
    // an identifier of the code generated for it" finds omissions.
    addMath("fmin");  // print_exp.cpp: float min and max
    addMath("fmax");
    all.insert("smem");    // emit_cuda.cpp: the dynamic shared memory
    all.insert("size_t");  // export.cpp: element counts in launchers and pipelines
    all.insert("maybe_unused");  // export.cpp: the launcher's zero-divisor flag
    return all;
  }();
  return names;
}

std::optional<std::string> reservedIdentifierReason(const std::string& name) {
  if (keywords().count(name)) return "a C++ keyword";
  if (name.find("__") != std::string::npos) {
    return "reserved for the implementation (it contains __)";
  }
  if (name.size() > 1 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z') {
    return "reserved for the implementation (it starts with _ and a capital letter)";
  }
  if (cudaBuiltins().count(name)) return "a CUDA built-in variable";
  if (generatedCodeNames().count(name)) return "a name the generated code uses";
  // emit_cuda.cpp: the bounds-checked variant's record, obsidian_violation_<kernel>.
  if (name.starts_with("obsidian_")) return "a name the generated code uses (obsidian_*)";
  // cudaStream_t, CUDART_VERSION, CUresult...
  if (name.starts_with("cuda") || name.starts_with("CU")) {
    return "a CUDA runtime name (cuda* and CU* names are CUDA's)";
  }
  if (hasPrefixThenUpper(name, "atomic")) {
    return "a C/CUDA library name (atomic* functions are CUDA's)";
  }
  if (isVectorType(name)) return "a CUDA vector type";
  if (name.starts_with("make_") && isVectorType(std::string_view(name).substr(5))) {
    return "a C/CUDA library name";
  }
  if (libraryNames().count(name)) return "a C/CUDA library name";
  const bool mathConstant =  // M_PI, M_PIf, M_1_PI...
      name.size() > 2 && name.starts_with("M_") &&
      ((name[2] >= 'A' && name[2] <= 'Z') || (name[2] >= '0' && name[2] <= '9'));
  if (lowerCaseMacros().count(name) || mathConstant) {
    return "a C library macro";
  }
  if (isCapitals(name)) {
    return "written in capitals, as the macros of the C and CUDA headers are (EOF, NULL, "
           "INT_MAX...)";
  }
  return std::nullopt;
}

const std::set<std::string>& launcherLocalNames() {
  static const std::set<std::string> names = {"stream"};
  return names;
}

std::optional<std::string> parameterNameReason(const std::string& name) {
  if (std::optional<std::string> why = reservedIdentifierReason(name)) return why;
  if (launcherLocalNames().count(name)) {
    return "the exported launcher's stream parameter";
  }
  return std::nullopt;
}

}  // namespace obsidian::ir
