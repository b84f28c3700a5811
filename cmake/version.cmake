# Runs at build time (not configure time): writes OUT with the current git
# commit. configure_file leaves OUT untouched when the text is unchanged, so
# only this one file recompiles after a commit.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE BITPROOF_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT BITPROOF_GIT_COMMIT)
  set(BITPROOF_GIT_COMMIT "unknown")
else()
  # Tracked files changed since that commit: the binary is not that commit's, and says so
  # (a report made with it names "<commit>-dirty").
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE changed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(changed)
    string(APPEND BITPROOF_GIT_COMMIT "-dirty")
  endif()
endif()
configure_file(${SRC}/src/version.cpp.in ${OUT} @ONLY)
