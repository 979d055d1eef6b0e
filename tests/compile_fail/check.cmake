# cmake -DCXX=<compiler> -DSOURCE=<file.cpp> -DFLAGS_FILE=<compile_fail_flags.cmake> -P check.cmake
# Passes only if compiling SOURCE fails AND the diagnostics match the regex on its first line,
# "// EXPECT: <regex>". Written for GCC/Clang command lines.
cmake_minimum_required(VERSION 3.25)  # policies for script mode (e.g. IN_LIST)

foreach(var CXX SOURCE FLAGS_FILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check.cmake: -D${var}=... is required")
  endif()
endforeach()
include("${FLAGS_FILE}")

# file(READ), not file(STRINGS): the latter would escape a ';' inside the regex.
file(READ "${SOURCE}" head LIMIT 4096)
string(REGEX MATCH "^[^\r\n]*" first_line "${head}")
if(NOT first_line MATCHES "^// EXPECT: (.+)$")
  message(FATAL_ERROR
    "${SOURCE}: the first line must be '// EXPECT: <regular expression>', got '${first_line}'")
endif()
set(expect "${CMAKE_MATCH_1}")

set(args -std=c++20 -fsyntax-only)
foreach(dir IN LISTS CF_INCLUDES)
  # -I of a system dir such as /usr/include breaks libstdc++'s #include_next.
  if(NOT dir IN_LIST CF_IMPLICIT_INCLUDES)
    list(APPEND args "-I${dir}")
  endif()
endforeach()
foreach(def IN LISTS CF_DEFINES)
  list(APPEND args "-D${def}")
endforeach()

execute_process(
  COMMAND "${CXX}" ${args} "${SOURCE}"
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
string(REPLACE ";" " " shown "${CXX};${args};${SOURCE}")

if(result EQUAL 0)
  message(FATAL_ERROR
    "compile-fail test ${SOURCE} COMPILED, but it must be rejected with a diagnostic "
    "matching: ${expect}\n  command: ${shown}")
endif()
if(NOT output MATCHES "${expect}")
  message(FATAL_ERROR
    "compile-fail test ${SOURCE} was rejected, but no diagnostic matches: ${expect}\n"
    "  command: ${shown}\n--- compiler output ---\n${output}")
endif()
message(STATUS "rejected as expected (matched: ${expect})")
