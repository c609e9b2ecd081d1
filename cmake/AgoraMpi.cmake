# Which MPI Agora is built with (docs/mpi.md). Debian installs Open MPI and
# MPICH side by side, with mpicc/mpirun naming one of them: AGORA_MPI names
# the one to use, its compiler wrappers give FindMPI the headers and
# libraries, and its launcher is the one agorarun (and so the tests) start
# ranks with. Sets:
#   AGORA_MPI_VENDOR    openmpi or mpich (the MPICH family: MPICH, Intel MPI,
#                       MVAPICH), from mpi.h and checked against the library
#   AGORA_MPI_LIBRARY   the library's own words (MPI_Get_library_version)
#   AGORA_MPI_LAUNCHER  that MPI's mpirun/mpiexec (absolute path)
set(AGORA_MPI "" CACHE STRING
  "MPI to build with: mpich, openmpi, or empty for the one the mpicc on PATH (or MPI_C_COMPILER) belongs to")
set_property(CACHE AGORA_MPI PROPERTY STRINGS "" mpich openmpi)

# FindMPI caches the headers and libraries it found: another AGORA_MPI in the
# same build directory would build against a mix of the two.
if(DEFINED AGORA_MPI_CONFIGURED AND NOT "${AGORA_MPI}" STREQUAL "${AGORA_MPI_CONFIGURED}")
  message(FATAL_ERROR "AGORA_MPI changed from '${AGORA_MPI_CONFIGURED}' to '${AGORA_MPI}' in the existing build "
    "directory ${CMAKE_BINARY_DIR}, whose cached MPI headers and libraries are the old one's: configure a new "
    "build directory (cmake -B build-${AGORA_MPI} -DAGORA_MPI=${AGORA_MPI})")
endif()
set(AGORA_MPI_CONFIGURED "${AGORA_MPI}" CACHE INTERNAL "AGORA_MPI this build directory was configured for")

if(AGORA_MPI STREQUAL "mpich" OR AGORA_MPI STREQUAL "openmpi")
  # Debian's names for each MPI's wrappers (update-alternatives points the
  # plain names at one of them); elsewhere give MPI_C_COMPILER.
  if(NOT MPI_C_COMPILER)
    find_program(AGORA_MPI_C_WRAPPER NAMES mpicc.${AGORA_MPI})
    if(NOT AGORA_MPI_C_WRAPPER)
      message(FATAL_ERROR "AGORA_MPI=${AGORA_MPI}: no mpicc.${AGORA_MPI} on PATH. Install it (Debian: "
        "apt-get install lib${AGORA_MPI}-dev; Open MPI's is libopenmpi-dev) or name that MPI's mpicc with "
        "-DMPI_C_COMPILER=/path/to/mpicc")
    endif()
    set(MPI_C_COMPILER ${AGORA_MPI_C_WRAPPER} CACHE FILEPATH "MPI C compiler wrapper (from AGORA_MPI)")
  endif()
elseif(NOT AGORA_MPI STREQUAL "")
  message(FATAL_ERROR "AGORA_MPI=${AGORA_MPI} is not an MPI Agora knows (allowed: mpich, openmpi, or empty for "
    "the system's mpicc)")
endif()

find_package(MPI REQUIRED COMPONENTS C)

# What mpi.h says and what the library says, from one small program built
# the way libagora is: a header of one MPI with the library of another
# (a stale cache, an include path of the other's) stops the configure.
set(_agora_mpi_probe ${CMAKE_BINARY_DIR}/CMakeFiles/agora_mpi_probe.c)
file(WRITE ${_agora_mpi_probe} [[
#include <mpi.h>
#include <stdio.h>
int main(void) {
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
#if defined(OPEN_MPI)
  puts("openmpi");
#elif defined(MPICH_VERSION)
  puts("mpich");
#else
  puts("unknown");
#endif
  puts(library);
  return 0;
}
]])
try_run(_agora_mpi_ran _agora_mpi_built ${CMAKE_BINARY_DIR}/CMakeFiles/agora_mpi_probe ${_agora_mpi_probe}
  LINK_LIBRARIES MPI::MPI_C
  COMPILE_OUTPUT_VARIABLE _agora_mpi_compile_output
  RUN_OUTPUT_VARIABLE _agora_mpi_run_output)
if(NOT _agora_mpi_built OR NOT _agora_mpi_ran EQUAL 0)
  message(FATAL_ERROR "cannot build and run a program calling MPI_Get_library_version with the MPI found "
    "(${MPI_C_COMPILER}: headers ${MPI_C_INCLUDE_DIRS}, libraries ${MPI_C_LIBRARIES}):\n"
    "${_agora_mpi_compile_output}${_agora_mpi_run_output}")
endif()
string(FIND "${_agora_mpi_run_output}" "\n" _agora_mpi_eol)
string(SUBSTRING "${_agora_mpi_run_output}" 0 ${_agora_mpi_eol} _agora_mpi_header)
math(EXPR _agora_mpi_eol "${_agora_mpi_eol} + 1")
string(SUBSTRING "${_agora_mpi_run_output}" ${_agora_mpi_eol} -1 _agora_mpi_library)
string(STRIP "${_agora_mpi_library}" _agora_mpi_library)
if(_agora_mpi_library MATCHES "Open MPI")
  set(_agora_mpi_lib_vendor openmpi)
elseif(_agora_mpi_library MATCHES "MPICH|Intel|MVAPICH")
  set(_agora_mpi_lib_vendor mpich)
else()
  set(_agora_mpi_lib_vendor unknown)
endif()
if(NOT _agora_mpi_header STREQUAL _agora_mpi_lib_vendor)
  message(FATAL_ERROR "the MPI found mixes two MPIs: mpi.h is ${_agora_mpi_header}'s (FindMPI's include directories: "
    "${MPI_C_INCLUDE_DIRS}; also look at CFLAGS, CPATH and CMAKE_C_FLAGS '${CMAKE_C_FLAGS}') "
    "but the library is '${_agora_mpi_library}' (${MPI_C_LIBRARIES}). Configure a new build directory with "
    "-DAGORA_MPI=mpich or -DAGORA_MPI=openmpi")
endif()
if(AGORA_MPI AND NOT AGORA_MPI STREQUAL _agora_mpi_header)
  message(FATAL_ERROR "AGORA_MPI=${AGORA_MPI}, but MPI_C_COMPILER=${MPI_C_COMPILER} is ${_agora_mpi_header}'s")
endif()
set(AGORA_MPI_VENDOR ${_agora_mpi_header})
# Its first line, e.g. "MPICH Version: 4.0.2" or "Open MPI v4.1.4, package: ...".
string(FIND "${_agora_mpi_library}" "\n" _agora_mpi_eol)
string(SUBSTRING "${_agora_mpi_library}" 0 ${_agora_mpi_eol} _agora_mpi_library)
string(REGEX REPLACE "[\t ]+" " " AGORA_MPI_LIBRARY "${_agora_mpi_library}")

# That MPI's launcher: its names, looked for beside its mpicc first, each
# checked with --version (Debian's plain mpirun/mpiexec may be the other MPI's).
if(AGORA_MPI_VENDOR STREQUAL "mpich")
  set(_agora_launcher_names mpiexec.hydra mpiexec.mpich mpiexec mpirun)
  set(_agora_launcher_says "HYDRA")
else()
  set(_agora_launcher_names mpirun.openmpi mpiexec.openmpi mpirun mpiexec)
  set(_agora_launcher_says "Open MPI|OpenRTE")
endif()
get_filename_component(_agora_mpi_bin "${MPI_C_COMPILER}" DIRECTORY)
if(NOT AGORA_MPI_LAUNCHER)
  foreach(name ${_agora_launcher_names})
    unset(_agora_launcher_candidate CACHE)
    find_program(_agora_launcher_candidate NAMES ${name} HINTS ${_agora_mpi_bin})
    if(_agora_launcher_candidate)
      execute_process(COMMAND ${_agora_launcher_candidate} --version OUTPUT_VARIABLE _agora_launcher_version
        ERROR_QUIET TIMEOUT 20)
      if(_agora_launcher_version MATCHES "${_agora_launcher_says}")
        set(AGORA_MPI_LAUNCHER ${_agora_launcher_candidate} CACHE FILEPATH
          "the launcher of the MPI Agora is built with (agorarun starts ranks with it)")
        break()
      endif()
    endif()
  endforeach()
  unset(_agora_launcher_candidate CACHE)
endif()
if(NOT AGORA_MPI_LAUNCHER)
  message(WARNING "no launcher of ${AGORA_MPI_VENDOR} found (tried ${_agora_launcher_names}, checking "
    "--version); agorarun will use the ${_agora_launcher_names} on PATH. Give -DAGORA_MPI_LAUNCHER=/path")
endif()
# FindMPI's own variable, for the CMake code that reads it.
set(MPIEXEC_EXECUTABLE ${AGORA_MPI_LAUNCHER} CACHE FILEPATH "MPI launcher (AGORA_MPI_LAUNCHER)" FORCE)
# The library file agora-info loads to ask its version (not linked: agorarun
# runs agora-info at every launch, and loading MPI costs it 6 to 15 ms).
list(GET MPI_C_LIBRARIES 0 AGORA_MPI_LIBRARY_FILE)
get_filename_component(AGORA_MPI_LIBRARY_FILE "${AGORA_MPI_LIBRARY_FILE}" REALPATH)
message(STATUS "Agora's MPI: ${AGORA_MPI_VENDOR} (${AGORA_MPI_LIBRARY}), launcher ${AGORA_MPI_LAUNCHER}")
