# obsidian_add_kernels(TARGET <target> GENERATOR <executable target> OUTPUTS <file>...
#                      [OUTPUT_DIR <dir>])
#
# Builds GENERATOR (a program written with obsidian that writes its exported kernels into the
# directory given as its only argument), runs it at build time, and adds the OUTPUTS (paths
# relative to OUTPUT_DIR, default <binary dir>/<target>_kernels) to TARGET, an nvcc-compiled
# target, with OUTPUT_DIR on its include path. Editing the generator rebuilds it and
# regenerates the kernels before TARGET compiles again.
function(obsidian_add_kernels)
  cmake_parse_arguments(ARG "" "TARGET;GENERATOR;OUTPUT_DIR" "OUTPUTS" ${ARGN})
  if(NOT ARG_TARGET OR NOT TARGET "${ARG_TARGET}")
    message(FATAL_ERROR "obsidian_add_kernels: TARGET must name an existing target; got '${ARG_TARGET}'")
  endif()
  if(NOT ARG_GENERATOR OR NOT TARGET "${ARG_GENERATOR}")
    message(FATAL_ERROR "obsidian_add_kernels: GENERATOR must name an executable target; got '${ARG_GENERATOR}'")
  endif()
  if(NOT ARG_OUTPUTS)
    message(FATAL_ERROR "obsidian_add_kernels: OUTPUTS lists the files the generator writes")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}_kernels")
  endif()
  set(outputs)
  foreach(output IN LISTS ARG_OUTPUTS)
    list(APPEND outputs "${ARG_OUTPUT_DIR}/${output}")
  endforeach()
  add_custom_command(OUTPUT ${outputs}
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${ARG_OUTPUT_DIR}"
    COMMAND "$<TARGET_FILE:${ARG_GENERATOR}>" "${ARG_OUTPUT_DIR}"
    DEPENDS "${ARG_GENERATOR}"
    COMMENT "Generating obsidian kernels for ${ARG_TARGET} with ${ARG_GENERATOR}"
    VERBATIM)
  target_sources(${ARG_TARGET} PRIVATE ${outputs})
  target_include_directories(${ARG_TARGET} PRIVATE "${ARG_OUTPUT_DIR}")
endfunction()
