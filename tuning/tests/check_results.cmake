# Runs obsidian-tune and checks its results file (the tuning.* tests in ../CMakeLists.txt).
#   -DTUNE=<obsidian-tune> -DSPACE=<space.json or, for MODE=bad, a directory> -DWORK=<scratch dir>
#   -DMODE=simulate | resume | wrong | skipped | bad | gpu | devices_bad | devices
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(results "${WORK}/results.jsonl")

function(tune expected_rc)
  execute_process(COMMAND "${TUNE}" ${ARGN} --no-progress
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "obsidian-tune ${ARGN}: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL expected_rc)
    message(FATAL_ERROR "obsidian-tune ${ARGN}: exit code ${rc}, expected ${expected_rc}")
  endif()
  set(tune_err "${err}" PARENT_SCOPE)
endfunction()

# As tune(0 ...), but where there is no GPU, says so and sets no_gpu.
function(tune_maybe_gpu)
  execute_process(COMMAND "${TUNE}" ${ARGN} --no-progress
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "obsidian-tune ${ARGN}: exit ${rc}\n${out}${err}")
  if(err MATCHES "no CUDA device")
    message(STATUS "SKIPPED: no CUDA device")
    set(no_gpu TRUE PARENT_SCOPE)
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "obsidian-tune ${ARGN}: exit code ${rc}, expected 0")
  endif()
endfunction()

# summary_field(<var> <field>): a number from ${WORK}/summary.json
function(summary_field var field)
  file(READ "${WORK}/summary.json" json)
  string(JSON value GET "${json}" "${field}")
  set(${var} ${value} PARENT_SCOPE)
endfunction()

# check_lines(<expected status> <expected count>): every readable line of the results file has
# that status (a regex: "ok|pruned"), no point appears twice, and there are exactly <count> of
# them. Timed points (on the GPU) must have a median time.
function(check_lines status count)
  file(STRINGS "${results}" lines)
  set(keys "")
  set(n 0)
  foreach(line IN LISTS lines)
    string(JSON key ERROR_VARIABLE bad GET "${line}" key)
    if(bad)
      continue()  # a line cut short by an interrupted run
    endif()
    string(JSON st GET "${line}" status)
    if(NOT st MATCHES "^(${status})$")
      string(JSON reason ERROR_VARIABLE none GET "${line}" reason)
      message(FATAL_ERROR "point ${key}: status ${st}, expected ${status} (${reason})")
    endif()
    if(status STREQUAL "wrong")
      string(JSON reason GET "${line}" reason)
      if(NOT reason MATCHES "expected")
        message(FATAL_ERROR "a wrong point's reason does not say what differs: ${reason}")
      endif()
      string(JSON timed ERROR_VARIABLE untimed GET "${line}" time_ms)
      if(NOT untimed)
        message(FATAL_ERROR "a wrong point was timed: ${line}")
      endif()
    endif()
    string(JSON mode GET "${line}" mode)
    if(mode STREQUAL "gpu" AND st STREQUAL "ok")
      string(JSON median ERROR_VARIABLE untimed GET "${line}" time_ms median)
      if(untimed)
        message(FATAL_ERROR "point ${key} is ok on the GPU but has no time")
      endif()
    endif()
    list(FIND keys "${key}" seen)
    if(NOT seen EQUAL -1)
      message(FATAL_ERROR "point ${key} appears twice in ${results}")
    endif()
    list(APPEND keys "${key}")
    math(EXPR n "${n} + 1")
  endforeach()
  if(NOT n EQUAL count)
    message(FATAL_ERROR "${results}: ${n} points, expected ${count}")
  endif()
endfunction()

if(MODE STREQUAL "simulate")
  tune(0 "${SPACE}" --simulate -o "${results}" --summary "${WORK}/summary.json")
  summary_field(points points)
  summary_field(ok ok)
  if(points LESS 50 OR NOT ok EQUAL points)
    message(FATAL_ERROR "${ok} of ${points} points ok")
  endif()
  check_lines(ok ${points})
  # Every ok line has the simulator's counters and the cost model's prediction at full size.
  file(STRINGS "${results}" lines)
  foreach(line IN LISTS lines)
    string(JSON us ERROR_VARIABLE missing GET "${line}" predicted microseconds)
    string(JSON stores ERROR_VARIABLE missing2 GET "${line}" counters globalStoreRequests)
    string(JSON full ERROR_VARIABLE missing3 GET "${line}" fullKey)
    if(missing OR missing2 OR missing3 OR NOT us GREATER 0 OR NOT stores GREATER 0)
      message(FATAL_ERROR "a simulated line without counters or prediction: ${line}")
    endif()
  endforeach()

elseif(MODE STREQUAL "resume")
  tune(0 "${SPACE}" --simulate -o "${results}" --max-points 5 --summary "${WORK}/summary.json")
  summary_field(ran ran)
  summary_field(points points)
  if(NOT ran EQUAL 5 OR NOT points EQUAL 12)
    message(FATAL_ERROR "first run: ran ${ran} of ${points} points; expected 5 of 12")
  endif()
  check_lines(ok 5)
  # As if the run had been killed in the middle of writing a line.
  file(APPEND "${results}" "{\"family\":\"reduce\",\"mode\":\"simul")
  tune(0 "${SPACE}" --simulate -o "${results}" --summary "${WORK}/summary.json")
  summary_field(ran ran)
  summary_field(resumed resumed)
  if(NOT ran EQUAL 7 OR NOT resumed EQUAL 5)
    message(FATAL_ERROR "resumed run: ran ${ran}, resumed ${resumed}; expected 7 and 5")
  endif()
  check_lines(ok 12)
  tune(0 "${SPACE}" --simulate -o "${results}" --summary "${WORK}/summary.json")
  summary_field(ran ran)
  if(NOT ran EQUAL 0)
    message(FATAL_ERROR "a finished sweep ran ${ran} points again")
  endif()
  check_lines(ok 12)

elseif(MODE STREQUAL "wrong")
  tune(1 "${SPACE}" --simulate -o "${results}" --summary "${WORK}/summary.json")
  summary_field(wrong wrong)
  if(NOT wrong EQUAL 2)
    message(FATAL_ERROR "${wrong} points recorded wrong; expected 2")
  endif()
  check_lines(wrong 2)

elseif(MODE STREQUAL "skipped")
  tune(0 "${SPACE}" --simulate -o "${results}" --summary "${WORK}/summary.json")
  check_lines(skipped 3)
  file(READ "${results}" text)
  foreach(reason "red5'\\(32\\) needs a tile of 32 x a power of two elements; got 16"
                 "chunk must be a power of two. got 48"
                 "needs 393216 bytes of shared memory at its peak, over the limit")
    if(NOT text MATCHES "${reason}")
      message(FATAL_ERROR "no skipped point says: ${reason}")
    endif()
  endforeach()

elseif(MODE STREQUAL "bad")
  # <file contents> <regex the error message must match>
  set(cases
    "{\"family\": \"reduction\"}|unknown kernel family \"reduction\". known families: reduce, "
    "{\"family\": \"reduce\", \"params\": {\"thread\": 32}}|unknown parameter \"thread\". reduce has: type, n, chunk, threads"
    "{\"family\": \"reduce\", \"params\": {\"chunk\": 256, \"threads\": 32, \"variant\": \"red9\"}}|parameter \"variant\": unknown value \"red9\". expected one of red1, "
    "{\"family\": \"reduce\", \"params\": {\"chunk\": 256, \"threads\": {\"from\": 32, \"to\": 64, \"times\": 2}, \"variant\": \"red1\"}}|parameter \"threads\": unknown range key \"times\""
    "{\"family\": \"reduce\", \"params\": {\"chunk\": 256, \"threads\": 2048, \"variant\": \"red1\"}}|parameter \"threads\": 2048 is outside \\[1, 1024\\]"
    "{\"family\": \"reduce\", \"params\": {\"chunk\": 256, \"threads\": 32, \"variant\": \"red1\", \"n\": {\"from\": 1, \"to\": 9223372036854775807, \"mul\": 2}}}|parameter \"n\": the range .* reaches 4611686018427387904, outside the parameter's \\[1, 2147483648\\]"
    "{\"family\": \"reduce\", \"params\": {\"chunk\": {\"from\": 1, \"to\": 1024, \"step\": 1}, \"threads\": {\"from\": 1, \"to\": 1024, \"step\": 1}, \"variant\": \"red1\"}}|the space expands to more than 100000 points \\(chunk 1024 x threads 1024\\). a space may have at most 100000"
    "{\"family\": \"reduce\", \"params\": {\"threads\": 32, \"variant\": \"red1\"}}|parameter \"chunk\" \\(elements per block\\) has no default"
    "{\"family\": \"reduce\", \"params\": {\"chunk\": 256,}}|not valid JSON"
    "{\"family\": \"scan\", \"parms\": {}}|unknown key \"parms\""
    "{\"family\": \"blas\", \"params\": {\"sequence\": \"SGEMV\", \"size\": 10, \"cols\": 20, \"pitch\": 5}}|blas: pitch \\(5\\) must be at least cols \\(20\\)")
  set(i 0)
  foreach(case IN LISTS cases)
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 text)
    list(GET parts 1 regex)
    file(WRITE "${WORK}/bad${i}.json" "${text}")
    tune(2 "${WORK}/bad${i}.json" --simulate -o "${WORK}/bad${i}.jsonl")
    if(NOT tune_err MATCHES "${regex}")
      message(FATAL_ERROR "bad${i}.json: the message\n  ${tune_err}\ndoes not match\n  ${regex}")
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
elseif(MODE STREQUAL "gpu")
  # The GPU path (timed, checked) on the CI space: skipped where there is no device (the tool
  # says "no CUDA device"; the test's SKIP_REGULAR_EXPRESSION matches it).
  tune_maybe_gpu("${SPACE}" -o "${results}" --min-time-ms 1 --summary "${WORK}/summary.json")
  if(no_gpu)
    return()  # the test is reported skipped
  endif()
  summary_field(points points)
  check_lines(ok ${points})
  # Again with pruning, into another file: each point ok or pruned with its reason.
  set(results "${WORK}/pruned.jsonl")
  tune(0 "${SPACE}" -o "${results}" --min-time-ms 1 --prune --summary "${WORK}/summary.json")
  check_lines("ok|pruned" ${points})
elseif(MODE STREQUAL "devices_bad")
  # --devices: malformed lists and conflicting options are reported, whatever the host has.
  foreach(case "x|expected \"all\" or device numbers separated by commas"
               "0,|expected \"all\" or device numbers separated by commas"
               "0,0|device 0 twice")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 spec)
    list(GET parts 1 regex)
    tune(2 "${SPACE}" --devices "${spec}" -o "${results}")
    if(NOT tune_err MATCHES "--devices ${spec}: ${regex}")
      message(FATAL_ERROR "--devices ${spec}: the message\n  ${tune_err}\ndoes not match ${regex}")
    endif()
  endforeach()
  tune(2 "${SPACE}" --devices all --simulate -o "${results}")
  if(NOT tune_err MATCHES "--devices spreads points over GPUs; --simulate runs them on the CPU")
    message(FATAL_ERROR "--devices with --simulate: ${tune_err}")
  endif()
  tune(2 "${SPACE}" --devices all --shard 0/2 -o "${results}")
  if(NOT tune_err MATCHES "--devices and --shard go in separate commands")
    message(FATAL_ERROR "--devices with --shard: ${tune_err}")
  endif()
elseif(MODE STREQUAL "devices")
  # Every device of the host, one worker each: the merged file holds every point once, ok and
  # timed, and each worker's file is there; skipped where there is no device.
  # (skipped only on the tool's own "--devices all: no CUDA device", not on a worker's failure)
  execute_process(COMMAND "${TUNE}" "${SPACE}" --devices all -o "${results}" --min-time-ms 1
                          --summary "${WORK}/summary.json"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "obsidian-tune --devices all: exit ${rc}\n${out}${err}")
  if(err MATCHES "^obsidian-tune: --devices all: no CUDA device")
    message(STATUS "SKIPPED: no CUDA device")
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "obsidian-tune --devices all: exit code ${rc}, expected 0")
  endif()
  summary_field(points points)
  check_lines(ok ${points})
  file(READ "${WORK}/summary.json" json)
  string(JSON n LENGTH "${json}" devices)
  if(n LESS 1)
    message(FATAL_ERROR "the summary lists no device")
  endif()
  file(GLOB shards "${WORK}/results.device*.jsonl")
  list(LENGTH shards files)
  if(NOT files EQUAL n)
    message(FATAL_ERROR "${files} worker files for ${n} devices")
  endif()
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
