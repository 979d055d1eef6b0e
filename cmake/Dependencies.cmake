# External dependencies of obsidian. Every missing one stops configuration with the
# package to install, so a fresh machine tells you what to do instead of failing later.

# --- CUDA toolkit: only the headers of NVRTC and the driver (nvrtc.h, cuda.h) are needed to
# build; both libraries are loaded with dlopen at run time. No CUDA language, no GPU.
if(NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT})
  set(CUDAToolkit_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit that provides NVRTC")
endif()
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  find_path(OBSIDIAN_NVRTC_INCLUDE_DIR nvrtc.h HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
endif()
if(NOT CUDAToolkit_FOUND OR NOT OBSIDIAN_NVRTC_INCLUDE_DIR)
  message(FATAL_ERROR
    "obsidian needs the CUDA toolkit's NVRTC at /usr/local/cuda "
    "(set CUDAToolkit_ROOT to use another); looked in CUDAToolkit_ROOT='${CUDAToolkit_ROOT}'")
endif()
# Recorded in obsidianConfig.cmake so consumers find the same toolkit by default.
get_filename_component(OBSIDIAN_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)

# --- Boost.Hana (header-only). Debian's libboost-dev ships BoostConfig.cmake, which
# defines Boost::headers; elsewhere we fall back to finding the header ourselves.
set(OBSIDIAN_BOOST_FROM_CONFIG FALSE)
find_package(Boost CONFIG QUIET)
if(TARGET Boost::headers)
  get_target_property(_obsidian_boost_inc Boost::headers INTERFACE_INCLUDE_DIRECTORIES)
  find_path(OBSIDIAN_HANA_INCLUDE_DIR boost/hana.hpp HINTS ${_obsidian_boost_inc})
  unset(_obsidian_boost_inc)
  set(OBSIDIAN_BOOST_FROM_CONFIG TRUE)
else()
  find_path(OBSIDIAN_HANA_INCLUDE_DIR boost/hana.hpp)
  if(OBSIDIAN_HANA_INCLUDE_DIR)
    add_library(Boost::headers INTERFACE IMPORTED)
    set_target_properties(Boost::headers PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${OBSIDIAN_HANA_INCLUDE_DIR}")
  endif()
endif()
if(NOT OBSIDIAN_HANA_INCLUDE_DIR)
  message(FATAL_ERROR
    "obsidian needs Boost.Hana (boost/hana.hpp): install the Debian package libboost-dev "
    "(apt-get install -y libboost-dev)")
endif()

# --- nlohmann/json. Debian's nlohmann-json3-dev ships nlohmann_jsonConfig.cmake.
set(OBSIDIAN_JSON_FROM_CONFIG FALSE)
find_package(nlohmann_json CONFIG QUIET)
if(TARGET nlohmann_json::nlohmann_json)
  set(OBSIDIAN_JSON_FROM_CONFIG TRUE)
else()
  find_path(OBSIDIAN_JSON_INCLUDE_DIR nlohmann/json.hpp)
  if(NOT OBSIDIAN_JSON_INCLUDE_DIR)
    message(FATAL_ERROR
      "obsidian needs nlohmann/json (nlohmann/json.hpp): install the Debian package "
      "nlohmann-json3-dev (apt-get install -y nlohmann-json3-dev)")
  endif()
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OBSIDIAN_JSON_INCLUDE_DIR}")
endif()

# --- doctest, for the tests only. Debian's doctest-dev ships doctestConfig.cmake, which
# also puts its doctest.cmake module (doctest_discover_tests) on CMAKE_MODULE_PATH.
if(OBSIDIAN_BUILD_TESTS)
  find_package(doctest CONFIG QUIET)
  if(NOT TARGET doctest::doctest)
    find_path(OBSIDIAN_DOCTEST_INCLUDE_DIR doctest/doctest.h)
    if(NOT OBSIDIAN_DOCTEST_INCLUDE_DIR)
      message(FATAL_ERROR
        "obsidian's tests need doctest (doctest/doctest.h): install the Debian package "
        "doctest-dev (apt-get install -y doctest-dev), or configure with "
        "-DOBSIDIAN_BUILD_TESTS=OFF")
    endif()
    add_library(doctest::doctest INTERFACE IMPORTED)
    set_target_properties(doctest::doctest PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${OBSIDIAN_DOCTEST_INCLUDE_DIR}")
  endif()
endif()

# --- CLI11, for the examples' and benchmarks' command lines. Debian's libcli11-dev ships CLI11Config.cmake;
# a copy of its headers under .deps/include (git-ignored) also works, for machines that cannot
# install packages.
if(OBSIDIAN_BUILD_EXAMPLES OR OBSIDIAN_BUILD_BENCH OR OBSIDIAN_BUILD_FUZZ)
  find_package(CLI11 CONFIG QUIET)
  if(NOT TARGET CLI11::CLI11)
    find_path(OBSIDIAN_CLI11_INCLUDE_DIR CLI/CLI.hpp HINTS "${PROJECT_SOURCE_DIR}/.deps/include")
    if(NOT OBSIDIAN_CLI11_INCLUDE_DIR)
      message(FATAL_ERROR
        "obsidian's examples need CLI11 (CLI/CLI.hpp): install the Debian package libcli11-dev "
        "(apt-get install -y libcli11-dev), or configure with -DOBSIDIAN_BUILD_EXAMPLES=OFF "
        "-DOBSIDIAN_BUILD_BENCH=OFF -DOBSIDIAN_BUILD_FUZZ=OFF")
    endif()
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    set_target_properties(CLI11::CLI11 PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${OBSIDIAN_CLI11_INCLUDE_DIR}")
  endif()
endif()
