// Loading NVRTC with dlopen (see nvrtc_loader.hpp).
#include "runtime/nvrtc_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <variant>

#include "obsidian/error.hpp"

// Set by CMakeLists.txt from the toolkit the library is built against.
#ifndef OBSIDIAN_NVRTC_SONAME
#error "OBSIDIAN_NVRTC_SONAME (libnvrtc.so.<CUDA major>) must be defined by the build"
#endif
#ifndef OBSIDIAN_NVRTC_TOOLKIT_DIR
#error "OBSIDIAN_NVRTC_TOOLKIT_DIR (the toolkit's library directory) must be defined by the build"
#endif

namespace obsidian::nvrtc {

std::vector<std::string> candidates(const char* variable) {
  if (variable != nullptr && *variable != '\0') return {variable};
  return {OBSIDIAN_NVRTC_SONAME, "libnvrtc.so",
          std::string(OBSIDIAN_NVRTC_TOOLKIT_DIR) + "/" + OBSIDIAN_NVRTC_SONAME};
}

Api load(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& name : candidates) {
    tried += (tried.empty() ? "" : ", ") + name;
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      // "No such file" says nothing the list does not; other reasons (a wrong architecture, a
      // missing dependency) are worth showing.
      const char* e = dlerror();
      const std::string why = e ? e : "";
      if (why.find("No such file or directory") == std::string::npos && !why.empty()) {
        tried += " (" + why + ")";
      }
      continue;
    }
    Api api;
    const char* missing = nullptr;
#define OBSIDIAN_NVRTC_FUNCTION(name)                                \
  api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name)); \
  if (api.name == nullptr && missing == nullptr) missing = #name;
#include "runtime/nvrtc_functions.inc"
#undef OBSIDIAN_NVRTC_FUNCTION
    if (missing == nullptr) return api;  // the library stays loaded for the process
    tried += std::string(" (lacks ") + missing + ")";
    dlclose(lib);
  }
  throw Error("NVRTC not found: tried " + tried + "; install the CUDA toolkit's NVRTC or set " +
              kLibraryVariable + " to its path");
}

const Api& api() {
  // Loaded once (thread-safe) and never destroyed; an absent NVRTC is remembered, not retried.
  static const std::variant<Api, std::string>& loaded =
      *new std::variant<Api, std::string>([]() -> std::variant<Api, std::string> {
        try {
          return load(candidates(std::getenv(kLibraryVariable)));
        } catch (const Error& e) {
          return std::string(e.what());
        }
      }());
  if (const auto* why = std::get_if<std::string>(&loaded)) throw Error(*why);
  return std::get<Api>(loaded);
}

}  // namespace obsidian::nvrtc
