# agoracc / agoracxx (tools/agoracc.in), each twice: bin/ of the build tree
# (absolute paths into the source and build trees) and the install tree's
# (paths found from the script's own location: the prefix may be moved).

# Program mode (src/program/): the linker script, the --wrap list and the
# startup object, an OBJECT library linked into each executable itself.
set(AGORA_PROGRAM_DIR ${PROJECT_SOURCE_DIR}/src/program)
set(AGORA_PROGRAM_START_TARGET agora_program_start)
set(AGORA_PROGRAM_START_INSTALLED agora_program_start.o)  # agora-program.ld excludes *agora_program_start*

# The compile flags of program mode: the same list agora_add_program uses.
list(JOIN AGORA_PROGRAM_COMPILE_OPTIONS " " AGORA_PROGRAM_COMPILE_FLAGS)

function(agora_wrapper name compiler_var default_compiler)
  set(AGORA_WRAPPER_NAME ${name})
  set(AGORA_WRAPPER_COMPILER_VAR ${compiler_var})
  set(AGORA_WRAPPER_DEFAULT_COMPILER ${default_compiler})

  set(AGORA_WRAPPER_TREE "build tree ${CMAKE_BINARY_DIR}")
  if(TARGET ${AGORA_PROGRAM_START_TARGET})
    set(start "$<JOIN:$<TARGET_OBJECTS:${AGORA_PROGRAM_START_TARGET}>, >")
  else()
    set(start "")
  endif()
  set(AGORA_WRAPPER_LOCATIONS "includedir=${PROJECT_SOURCE_DIR}/include
libdir=${CMAKE_BINARY_DIR}/lib
programdir=${AGORA_PROGRAM_DIR}
startup_objects=\"${start}\"")
  configure_file(${PROJECT_SOURCE_DIR}/tools/agoracc.in ${CMAKE_BINARY_DIR}/tools/${name}.build @ONLY)
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/bin/${name} INPUT ${CMAKE_BINARY_DIR}/tools/${name}.build
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

  set(AGORA_WRAPPER_TREE "installed")
  set(AGORA_WRAPPER_LOCATIONS [=[prefix=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
includedir=$prefix/include
libdir=$prefix/lib
programdir=$prefix/lib/agora
startup_objects="$programdir/]=] "${AGORA_PROGRAM_START_INSTALLED}\"")
  string(JOIN "" AGORA_WRAPPER_LOCATIONS ${AGORA_WRAPPER_LOCATIONS})
  configure_file(${PROJECT_SOURCE_DIR}/tools/agoracc.in ${CMAKE_BINARY_DIR}/tools/${name}.install @ONLY)
  install(PROGRAMS ${CMAKE_BINARY_DIR}/tools/${name}.install DESTINATION bin RENAME ${name})
endfunction()

agora_wrapper(agoracc AGORA_CC cc)
agora_wrapper(agoracxx AGORA_CXX c++)
