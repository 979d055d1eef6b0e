# cmake -DROOT=<a source tree> -P check_layering.cmake
# The library never includes examples/, and bench/, tuning/ and fuzz/ take their reductions
# and scans from the library: none of include/, src/, bench/, tuning/, fuzz/ may include a
# file under examples/, but for the example programs listed below, each shared for a reason.
# Fails naming every offending line.
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT)
  message(FATAL_ERROR "check_layering.cmake: -DROOT=<source tree> is required")
endif()

# "<file>|<examples header>": example programs that are not algorithms of the library.
set(allowed
  # Mandelbrot is itself swept: its example and its tuning family share the program.
  "tuning/families.cpp|examples/mandelbrot/mandelbrot.hpp"
  # Its plain reference on the device is checked against the example's CPU reference.
  "tuning/tests/test_device_data.cpp|examples/mandelbrot/mandelbrot.hpp"
  # Seed 002's fusion choices are swept as the paper's compiler searched them (the blas family),
  # checked against the example's reference computed on the device.
  "tuning/blas_family.cpp|examples/blas/blas.hpp"
  "tuning/blas_reference.hpp|examples/blas/blas.hpp"
  "tuning/blas_data.hpp|examples/blas/blas.hpp"
  # The array family sweeps the same sequences as array programs (issue 43).
  "tuning/array_family.cpp|examples/blas/scripts.hpp"
  "tuning/tests/test_array_family.cpp|examples/blas/scripts.hpp"
  # The paper's smallest program, as the runtime benchmark's probe of launch and compile costs.
  "bench/runtime/runtime_bench.cpp|examples/increment/increment.hpp"
  # The seeds' programs (issue 18): each family's example checks them, its benchmark races them.
  "bench/stencils/stencils_bench.cpp|examples/stencils/stencils.hpp"
  "bench/safegpu/safegpu_bench.cpp|examples/safegpu/safegpu.hpp"
  "bench/accelerate/accelerate_bench.cpp|examples/accelerate/accelerate.hpp"
  "bench/accelerate/spmv_bench.cpp|examples/accelerate/spmv.hpp"
  "bench/blas/blas_bench.cpp|examples/blas/blas.hpp"
  # The same sequences as array programs (issue 43): planned against the hand plans, and their
  # planning and first compiles timed (seed 004's Table 3).
  "bench/blas/blas_bench.cpp|examples/blas/scripts.hpp"
  "bench/array/array_bench.cpp|examples/blas/scripts.hpp"
  # The conjugate-gradient iteration runs on the SpMV benchmark's random CSR matrices.
  "bench/array/array_bench.cpp|examples/accelerate/spmv.hpp"
  # The seeds' programs as array programs, raced against their hand kernels (the examples').
  "bench/array/seeds_bench.cpp|examples/array/seeds.hpp"
  "bench/array/seeds_bench.cpp|examples/accelerate/spmv.hpp"
  "bench/array/seeds_bench.cpp|examples/safegpu/safegpu.hpp")

set(offences "")
foreach(dir include src bench tuning fuzz)
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${ROOT}"
    "${ROOT}/${dir}/*.hpp" "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.cu" "${ROOT}/${dir}/*.cuh"
    "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.inc")
  foreach(f ${files})
    file(STRINGS "${ROOT}/${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]*examples/")
    foreach(line ${lines})
      string(REGEX MATCH "examples/[^\">]*" header "${line}")
      if(NOT "${f}|${header}" IN_LIST allowed)
        string(APPEND offences "\n  ${f}: ${line}")
      endif()
    endforeach()
  endforeach()
endforeach()
if(offences)
  message(FATAL_ERROR "examples/ is not the library: these files include it (take the "
    "algorithm from include/obsidian instead):${offences}")
endif()
message(STATUS "layering: nothing in include/, src/, bench/, tuning/ or fuzz/ includes examples/")
