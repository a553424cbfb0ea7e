# The precompiled headers `compile` uses: one per optimisation level in ACTIONLOOP_PCH_LEVELS.
# g++ must not use a .gch built at another -O level (an -O1 PCH with -O2 crashes cc1plus), so
# compile picks lib/actionloop/pch (-O1, its default) or lib/actionloop/pch-O<level>, and
# compiles without a PCH for a level that has none (slower, never wrong). Each is ~80 MB.
set(ACTIONLOOP_PCH_LEVELS "1;2" CACHE STRING
    "optimisation levels with a precompiled header for compile (1 is always built)")

# actionloop_pch_levels(<stage> <files-var> <commands-var> <dirs-var>): the .gch files, the
# `COMMAND compile --make-pch ...` arguments that build them, and their folders under lib/.
function(actionloop_pch_levels stage files_var commands_var dirs_var)
  set(levels ${ACTIONLOOP_PCH_LEVELS})
  list(PREPEND levels 1)
  list(REMOVE_DUPLICATES levels)
  set(files "")
  set(commands "")
  set(dirs "")
  foreach(level IN LISTS levels)
    if(level STREQUAL "1")
      set(dir actionloop/pch)
    else()
      set(dir actionloop/pch-O${level})
    endif()
    list(APPEND files ${stage}/lib/${dir}/actionloop/action.hpp.gch)
    list(APPEND commands COMMAND ${stage}/bin/compile --make-pch ${stage}/lib/${dir} ${level})
    list(APPEND dirs ${dir})
  endforeach()
  set(${files_var} ${files} PARENT_SCOPE)
  set(${commands_var} ${commands} PARENT_SCOPE)
  set(${dirs_var} ${dirs} PARENT_SCOPE)
endfunction()
