# libagora.so (target agora_shared, exported as Agora::agora): everything the
# static agora target holds, as one shared library for installed programs.
# The in-tree tests and benchmarks keep linking the static agora.

# agora_version(), checked at compile time against project(agora VERSION).
target_sources(agora PRIVATE ${PROJECT_SOURCE_DIR}/src/api/version.cpp)
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/api/version.cpp TARGET_DIRECTORY agora
  PROPERTIES COMPILE_DEFINITIONS
  "AGORA_PROJECT_VERSION=\"${PROJECT_VERSION}\";AGORA_PROJECT_VERSION_MAJOR=${PROJECT_VERSION_MAJOR};AGORA_PROJECT_VERSION_MINOR=${PROJECT_VERSION_MINOR};AGORA_PROJECT_VERSION_PATCH=${PROJECT_VERSION_PATCH}")
# PARMACS thread table (include/agora/parmacs.h).
target_sources(agora PRIVATE ${PROJECT_SOURCE_DIR}/src/api/parmacs.cpp)

# The static objects go into the shared library whole: position independent.
set_target_properties(agora agora_global_io PROPERTIES POSITION_INDEPENDENT_CODE ON)

# Functions the program-mode link wraps (src/program/agora-program.wrap, one
# --wrap=NAME per line) may be defined in the library (__wrap_NAME) and call
# __real_NAME. ld resolves __real_NAME only in the link that has --wrap: the
# executable's. In libagora.so each __real_NAME is a hidden tail jump to NAME
# (libc's: the library itself is not linked with --wrap, so Agora's own calls
# and libc's and MPI's keep the real functions).
set(AGORA_WRAP_FILE ${PROJECT_SOURCE_DIR}/src/program/agora-program.wrap)
set(real_symbols "/* Generated from src/program/agora-program.wrap by cmake/AgoraLibrary.cmake. */\n")
if(EXISTS ${AGORA_WRAP_FILE})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${AGORA_WRAP_FILE})
  file(STRINGS ${AGORA_WRAP_FILE} wrap_lines REGEX "^[ \t]*--wrap=")
  foreach(line ${wrap_lines})
    string(REGEX REPLACE "^[ \t]*--wrap=([A-Za-z0-9_]+).*$" "\\1" name "${line}")
    # __wrap_main lives in the executable (the startup object), where
    # __real_main resolves.
    if(name STREQUAL "main")
      continue()
    endif()
    string(APPEND real_symbols "__asm__(\".globl __real_${name}\\n.hidden __real_${name}\\n"
      ".type __real_${name}, @function\\n__real_${name}:\\n\\tjmp ${name}@PLT\\n"
      ".size __real_${name}, .-__real_${name}\\n\");\n")
  endforeach()
endif()
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/src/agora_real_symbols.c CONTENT "${real_symbols}")

# Exported symbols: the API (agora_*), the program-mode wrappers (__wrap_*),
# and the functions Agora defines in place of libc's (global_io.cpp's read,
# write, fread, ...; signal_interpose.cpp's sigaction, signal, ...): found in
# the archives at build time as Agora's C symbols that libc also defines, so
# a new interposer is exported without a list to keep. Everything else
# (the C++ internals, C helpers) is local: it cannot clash with, or be
# replaced by, a program's own symbols.
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libc.so.6
  OUTPUT_VARIABLE AGORA_LIBC OUTPUT_STRIP_TRAILING_WHITESPACE)
set(AGORA_EXPORT_MAP ${CMAKE_BINARY_DIR}/src/libagora.map)
add_custom_command(OUTPUT ${AGORA_EXPORT_MAP}
  COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBC=${AGORA_LIBC} -DOUT=${AGORA_EXPORT_MAP}
    "-DINPUTS=$<TARGET_FILE:agora>|$<TARGET_FILE:agora_core>|$<JOIN:$<TARGET_OBJECTS:agora_global_io>,|>"
    -P ${PROJECT_SOURCE_DIR}/cmake/agora_export_map.cmake
  DEPENDS agora agora_core agora_global_io ${PROJECT_SOURCE_DIR}/cmake/agora_export_map.cmake
  COMMENT "Listing libagora.so's exported symbols"
  VERBATIM)
add_custom_target(agora_export_map DEPENDS ${AGORA_EXPORT_MAP})

add_library(agora_shared SHARED ${CMAKE_BINARY_DIR}/src/agora_real_symbols.c)
add_dependencies(agora_shared agora_export_map)
# Every object of the static agora (its dependencies, agora_core included,
# are pulled in as the API needs them), and global_io's objects (agora's
# INTERFACE sources).
target_link_libraries(agora_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,agora>")
# API functions defined in agora_core that no object of agora calls would be
# left out of the archive link: require them (agora_strerror lives beside
# the status list in common/status.cpp, which the unit tests link too).
target_link_options(agora_shared PRIVATE "LINKER:--require-defined=agora_strerror")
target_include_directories(agora_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
target_link_options(agora_shared PRIVATE
  "LINKER:--version-script=${AGORA_EXPORT_MAP}" "LINKER:--no-undefined")
set_target_properties(agora_shared PROPERTIES
  OUTPUT_NAME agora
  EXPORT_NAME agora
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  LINK_DEPENDS ${AGORA_EXPORT_MAP}
  INSTALL_RPATH_USE_LINK_PATH ON)

# libagora_omp.so (src/omp/, docs/openmp.md): the OpenMP runtime for gcc's
# GOMP_* ABI and the omp_* routines, over libagora's exported functions.
# A library of its own, linked by agoracc -fopenmp in program mode only, so
# that a program linking libagora and libgomp (OpenMP inside each rank of
# an SPMD program) keeps libgomp's functions. Exports GOMP_* and omp_* only.
add_library(agora_omp SHARED
  ${PROJECT_SOURCE_DIR}/src/omp/omp_team.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_icv.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_work_share.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_loops.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_single_sections.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_critical.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_locks.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_tasks.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_api.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_job_state.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_fatal.cpp
  # pure, also in agora_core for the unit tests
  ${PROJECT_SOURCE_DIR}/src/omp/omp_schedule.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/omp_work_share_state.cpp)
target_include_directories(agora_omp PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(agora_omp PRIVATE agora_shared ${CMAKE_DL_LIBS})
target_link_options(agora_omp PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/src/omp/libagora_omp.map" "LINKER:--no-undefined")
set_target_properties(agora_omp PROPERTIES
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/src/omp/libagora_omp.map
  INSTALL_RPATH_USE_LINK_PATH ON)
