# cmake -DBUILD_DIR=... -DCONSUMER_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DCONFIG=...]
#       [-DMAKE_PROGRAM=...] [-DCXX=...] [-DCUDA_ROOT=...] -P run_consumer.cmake
# Installs the obsidian build tree into WORK_DIR/prefix, then configures, builds and runs the
# consumer project against that prefix; any failing step fails the test.
cmake_minimum_required(VERSION 3.25)  # policies for script mode (e.g. IN_LIST)

foreach(var BUILD_DIR CONSUMER_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

function(step what)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "[install.consumer] ${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "[install.consumer] ${what} failed (${result}): ${shown}")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")  # fresh prefix: nothing stale can satisfy find_package

set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})

set(configure_args -S "${CONSUMER_DIR}" -B "${build}" -G "${GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  # Only the installed package may be found, never the build tree's export or the registry.
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(CONFIG)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
if(CUDA_ROOT)
  list(APPEND configure_args "-DCUDAToolkit_ROOT=${CUDA_ROOT}")
endif()
step("configure consumer" "${CMAKE_COMMAND}" ${configure_args})
step("build consumer" "${CMAKE_COMMAND}" --build "${build}" ${config_args})

find_program(consumer_exe consumer PATHS "${build}" "${build}/${CONFIG}" NO_DEFAULT_PATH)
if(NOT consumer_exe)
  message(FATAL_ERROR "[install.consumer] built consumer executable not found under ${build}")
endif()
step("run consumer" "${consumer_exe}")
message(STATUS "[install.consumer] OK: installed package works from ${prefix}")
