# agora_add_program(<target> <sources>...): an executable built in program
# mode (docs/programs.md), as agoracc builds one: position-dependent code and
# link, the linker script and wrap options of src/program/, the startup
# object, and agora. The flags are these variables, the one list the
# installed agoracc reproduces.
set(AGORA_PROGRAM_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE INTERNAL "")
set(AGORA_PROGRAM_LINKER_SCRIPT ${AGORA_PROGRAM_DIR}/agora-program.ld CACHE INTERNAL "")
set(AGORA_PROGRAM_WRAP_FILE ${AGORA_PROGRAM_DIR}/agora-program.wrap CACHE INTERNAL "")
# -fstack-clash-protection: frames larger than a page probe every page, so
# the guard below each stack in global memory catches every overflow.
set(AGORA_PROGRAM_COMPILE_OPTIONS -fno-pie -fstack-clash-protection CACHE INTERNAL "")
# gcc only (clang has no such option; docs/atomics.md): every atomic
# operation becomes a call to the __atomic_* functions Agora wraps, and the
# __sync and atomic_flag builtins gcc would still inline are restated as
# __atomic ones. The header is found on agora's include path.
set(AGORA_PROGRAM_GCC_ATOMIC_OPTIONS -fno-inline-atomics "SHELL:-include agora/program_atomics.h" CACHE INTERNAL "")
set(AGORA_PROGRAM_LINK_OPTIONS -no-pie "LINKER:-T,${AGORA_PROGRAM_LINKER_SCRIPT}"
    "LINKER:@${AGORA_PROGRAM_WRAP_FILE}" CACHE INTERNAL "")

function(agora_add_program target)
  add_executable(${target} ${ARGN} $<TARGET_OBJECTS:agora_program_start>)
  target_compile_options(${target} PRIVATE ${AGORA_PROGRAM_COMPILE_OPTIONS})
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE ${AGORA_PROGRAM_GCC_ATOMIC_OPTIONS})
  endif()
  target_link_options(${target} PRIVATE ${AGORA_PROGRAM_LINK_OPTIONS})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF
    LINK_DEPENDS "${AGORA_PROGRAM_LINKER_SCRIPT};${AGORA_PROGRAM_WRAP_FILE}")
  # The shared library, as agoracc links it: the --wrap options then apply to
  # the program's own references only (linked statically, Agora's own
  # malloc and operator new calls would be wrapped too).
  target_link_libraries(${target} PRIVATE agora_shared)
endfunction()
