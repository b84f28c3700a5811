# bitproof_add_proof(NAME <test> SPEC <spec.json> [BACKEND cpu|cuda|all]
#                    [REPORT_DIR <dir>] [NO_REPORTS] [LABELS <label>...] [ARGS <arg>...])
# bitproof_add_proof(<test> <spec.json> ...)        (the same, NAME and SPEC positional)
#
# Adds the ctest test <test>: `bitproof prove <spec> --backend <backend> <args>`.
# The test passes on exit 0 (every claim holds, findings refuted as recorded), fails on
# exit 1 (a claim refuted, or two implementations disagree) and exit 2 (bad input), and
# is reported as skipped on exit 3 (the requested backend is missing here, e.g. cuda on
# a GPU-less runner).
#  SPEC     relative paths are relative to CMAKE_CURRENT_SOURCE_DIR; it must exist at
#           configure time. User recipes' sources are found relative to the spec.
#  BACKEND  default all: the CLI's default, every backend available, which must agree.
#  REPORT_DIR  default ${CMAKE_CURRENT_BINARY_DIR}/bitproof: the test writes
#           <test>.json (report), <test>.md (Markdown) and <test>.xml (JUnit) there.
#  NO_REPORTS  write none of them.
#  LABELS   ctest labels added to "bitproof".
#  ARGS     more arguments for `bitproof prove` (e.g. --expect 208/208, --keep 4).
# Requires find_package(bitproof) (the imported target bitproof::bitproof).
function(bitproof_add_proof)
  if(ARGC GREATER 0 AND NOT "${ARGV0}" STREQUAL "NAME")
    if(ARGC LESS 2)
      message(FATAL_ERROR "bitproof_add_proof: expected a test name and a spec")
    endif()
    set(positional NAME "${ARGV0}" SPEC "${ARGV1}")
    list(SUBLIST ARGV 2 -1 rest)
    cmake_parse_arguments(BP "NO_REPORTS" "NAME;SPEC;BACKEND;REPORT_DIR" "LABELS;ARGS" ${positional} ${rest})
  else()
    cmake_parse_arguments(BP "NO_REPORTS" "NAME;SPEC;BACKEND;REPORT_DIR" "LABELS;ARGS" ${ARGN})
  endif()
  if(BP_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "bitproof_add_proof: unexpected arguments: ${BP_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT BP_NAME OR NOT BP_SPEC)
    message(FATAL_ERROR "bitproof_add_proof: NAME and SPEC are required")
  endif()
  if(NOT TARGET bitproof::bitproof)
    message(FATAL_ERROR "bitproof_add_proof: no target bitproof::bitproof (call find_package(bitproof) first)")
  endif()
  if(NOT BP_BACKEND)
    set(BP_BACKEND all)
  endif()
  if(NOT BP_BACKEND MATCHES "^(cpu|cuda|all)$")
    message(FATAL_ERROR "bitproof_add_proof(${BP_NAME}): BACKEND ${BP_BACKEND}: expected cpu, cuda or all")
  endif()
  get_filename_component(spec "${BP_SPEC}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${spec}")
    message(FATAL_ERROR "bitproof_add_proof(${BP_NAME}): SPEC ${spec}: no such file")
  endif()
  set(outputs)
  if(NOT BP_NO_REPORTS)
    if(NOT BP_REPORT_DIR)
      set(BP_REPORT_DIR "${CMAKE_CURRENT_BINARY_DIR}/bitproof")
    endif()
    get_filename_component(dir "${BP_REPORT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    file(MAKE_DIRECTORY "${dir}")
    set(outputs --report "${dir}/${BP_NAME}.json" --markdown "${dir}/${BP_NAME}.md" --junit "${dir}/${BP_NAME}.xml")
  endif()
  add_test(NAME "${BP_NAME}" COMMAND bitproof::bitproof prove "${spec}" --backend ${BP_BACKEND} ${outputs} ${BP_ARGS})
  set(labels bitproof ${BP_LABELS})
  set_tests_properties("${BP_NAME}" PROPERTIES SKIP_RETURN_CODE 3 LABELS "${labels}")
endfunction()
