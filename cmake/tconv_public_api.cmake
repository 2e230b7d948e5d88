# tconv_public_functions(<out-var> <header>...): the functions the public headers declare, sorted.
# A declaration is "tconv_<name>(" outside comments; function-pointer typedefs ("(*tconv_x)(")
# and macros (upper case) do not match. Used to generate the shared library's version script and
# by tests/api/check_exports.cmake, so the exported symbols are exactly the documented API.
function(tconv_public_functions out_var)
  set(names "")
  foreach(header ${ARGN})
    file(READ "${header}" text)
    string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")
    string(REGEX MATCHALL "[ *]tconv_[a-z0-9_]+\\(" decls "${text}")
    foreach(decl ${decls})
      string(REGEX REPLACE "^[ *](tconv_[a-z0-9_]+)\\($" "\\1" name "${decl}")
      list(APPEND names "${name}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()
