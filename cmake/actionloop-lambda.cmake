# actionloop_add_lambda(<name> [SOURCES] <sources...> [MAIN <entry>] [DATA <files or dirs...>]
#                       [ZIP <path>])
#
# Builds the C++ action <name> as actionloop_add_action does (same arguments, same rules), then
# makes <name>.zip (in ${CMAKE_CURRENT_BINARY_DIR}, or at ZIP) with lambda-zip: the deployment
# zip for AWS Lambda's OS-only runtimes (provided.al2023, provided.al2) holding bootstrap,
# bin/proxy, the action's exec and data files, and lib/ with the dynamic loader and every
# library they load (docs/LAMBDA.md), ready for
# `aws lambda create-function --runtime provided.al2023 --handler <name> --zip-file fileb://<name>.zip …`.
# The action's OpenWhisk zip is made on the way, as <name>.openwhisk.zip beside it.
#
# Targets: <name> (the executable; link more libraries with target_link_libraries), <name>_zip
# (the OpenWhisk zip) and <name>_lambda (the Lambda zip, built by default). lambda-zip is the
# installed one (PREFIX/bin/lambda-zip, found from this file's folder, lib/cmake/actionloop), or
# in actionloop-cpp's own build the staged one.
set(ACTIONLOOP_LAMBDA_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(actionloop_add_lambda name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MAIN;ZIP" "SOURCES;DATA")
  set(zip ${CMAKE_CURRENT_BINARY_DIR}/${name}.zip)
  if(DEFINED ARG_ZIP)
    get_filename_component(zip ${ARG_ZIP} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  string(REGEX REPLACE "\\.zip$" "" action_zip ${zip})
  set(action_zip ${action_zip}.openwhisk.zip)
  set(forwarded SOURCES ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  if(DEFINED ARG_MAIN)
    list(APPEND forwarded MAIN ${ARG_MAIN})
  endif()
  if(ARG_DATA)
    list(APPEND forwarded DATA ${ARG_DATA})
  endif()
  actionloop_add_action(${name} ${forwarded} ZIP ${action_zip})

  # The zip is made again when lambda-zip, the proxy or bootstrap changes.
  if(TARGET actionloop_lambda_stage)
    set(tool ${ACTIONLOOP_STAGE_DIR}/bin/lambda-zip)
    set(tool_depends actionloop_lambda_stage ${tool} proxy lambda_bootstrap)
  else()
    get_filename_component(prefix ${ACTIONLOOP_LAMBDA_CMAKE_DIR}/../../.. ABSOLUTE)
    set(tool ${prefix}/bin/lambda-zip)
    set(tool_depends ${tool} ${prefix}/bin/proxy ${prefix}/lib/actionloop/lambda/bootstrap)
    if(NOT EXISTS ${tool})
      message(FATAL_ERROR "actionloop_add_lambda(${name}): ${tool} is missing (actionloop-cpp "
                          "installs it beside the proxy on x86_64 and arm64)")
    endif()
  endif()
  # exec is in the OpenWhisk zip already, so lambda-zip compiles nothing: it adds the proxy,
  # bootstrap and the libraries, and checks the result.
  add_custom_command(
    OUTPUT ${zip}
    COMMAND ${tool} -o ${zip} ${action_zip}
    DEPENDS ${action_zip} ${tool_depends}
    COMMENT "Packaging the action ${name} for AWS Lambda as ${zip}"
    VERBATIM)
  add_custom_target(${name}_lambda ALL DEPENDS ${zip})
  add_dependencies(${name}_lambda ${name}_zip)
endfunction()
