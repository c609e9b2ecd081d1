# Store tracing in-tree (docs/store-tracing.md): programs compiled with clang,
# with or without -fsanitize-coverage=func,trace-stores, linked against the
# static agora like every in-tree program. The project's compiler stays what
# it is (gcc); clang compiles only these sources, through a custom command.
#
#   agora_add_clang_executable(target SOURCE file [TRACED] [CXX]
#       [DEFINITIONS d...] [INCLUDES dir...] [LIBRARIES lib...])
#
# TRACED adds the coverage flags and -include agora/store_trace_mark.h (so
# that store_trace_active() is true before main). AGORA_CLANG_FOUND says
# whether clang (and clang++) were found; callers skip their targets if not.
find_program(AGORA_CLANG NAMES clang clang-14 clang-15 clang-16 clang-17 clang-18
  DOC "clang for the store-traced programs")
find_program(AGORA_CLANGXX NAMES clang++ clang++-14 clang++-15 clang++-16 clang++-17 clang++-18
  DOC "clang++ for the store-traced programs")
if(AGORA_CLANG AND AGORA_CLANGXX)
  set(AGORA_CLANG_FOUND ON)
else()
  set(AGORA_CLANG_FOUND OFF)
  message(STATUS "clang not found: store-traced benchmarks and tests are not built (install clang)")
endif()
# `func` is the coverage level trace-stores needs (without one it emits
# nothing); it inserts no other callback.
set(AGORA_STORE_TRACE_FLAGS -fsanitize-coverage=func,trace-stores)

function(agora_add_clang_executable target)
  cmake_parse_arguments(A "TRACED;CXX" "SOURCE" "DEFINITIONS;INCLUDES;LIBRARIES" ${ARGN})
  if(NOT AGORA_CLANG_FOUND)
    message(FATAL_ERROR "agora_add_clang_executable(${target}): clang not found")
  endif()
  get_filename_component(source ${A_SOURCE} ABSOLUTE)
  set(object ${CMAKE_CURRENT_BINARY_DIR}/${target}.clang.o)
  if(A_CXX)
    set(compiler ${AGORA_CLANGXX})
    set(flags -std=c++20)
    set(language CXX)
  else()
    set(compiler ${AGORA_CLANG})
    set(flags -std=gnu11)
    set(language C)
  endif()
  # Release flags as the rest of the tree (-O3 -DNDEBUG); position
  # independent because the toolchain links PIE by default.
  list(APPEND flags -O3 -DNDEBUG -fPIE -pthread -I${PROJECT_SOURCE_DIR}/include)
  foreach(dir ${A_INCLUDES})
    list(APPEND flags -I${dir})
  endforeach()
  foreach(def ${A_DEFINITIONS})
    list(APPEND flags -D${def})
  endforeach()
  set(label "clang")
  if(A_TRACED)
    set(label "clang, store-traced")
    list(APPEND flags ${AGORA_STORE_TRACE_FLAGS} -include ${PROJECT_SOURCE_DIR}/include/agora/store_trace_mark.h)
  endif()
  add_custom_command(OUTPUT ${object}
    COMMAND ${compiler} ${flags} -MD -MF ${object}.d -c ${source} -o ${object}
    DEPENDS ${source} ${PROJECT_SOURCE_DIR}/include/agora/store_trace_mark.h
    DEPFILE ${object}.d
    COMMENT "Building ${target} (${label})"
    VERBATIM)
  set_source_files_properties(${object} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_executable(${target} ${object})
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE ${language})
  target_link_libraries(${target} PRIVATE ${A_LIBRARIES})
endfunction()
