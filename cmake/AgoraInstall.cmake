# cmake --install build --prefix P: the layout agoracc, AgoraConfig.cmake and
# agora.pc assume (all relative to P, so P can be moved):
#   P/lib/libagora.so*            the library (Agora::agora)
#   P/lib/agora/                  program mode: linker script, --wrap list, startup object
#   P/lib/cmake/Agora/            find_package(Agora)
#   P/lib/pkgconfig/agora.pc      pkg-config agora
#   P/include/agora/*.h, *.hpp    agora.h, parmacs.h, agora.hpp, ...
#   P/bin/agorarun, agora-info, agoracc, agoracxx (agorarun reads its options from agora-info)
#   P/share/agora/c.m4.agora      PARMACS for SPLASH makefiles
#   P/share/doc/agora/            README, LICENSE, docs
# The static archives stay in the build tree (the tests and benchmarks).
include(CMakePackageConfigHelpers)

install(TARGETS agora_shared EXPORT AgoraTargets LIBRARY DESTINATION lib)
install(TARGETS agora_omp LIBRARY DESTINATION lib)  # agoracc -fopenmp (docs/openmp.md)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/agora DESTINATION include FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(PROGRAMS ${CMAKE_BINARY_DIR}/bin/agorarun DESTINATION bin)
install(TARGETS agora-info RUNTIME DESTINATION bin)
install(PROGRAMS ${CMAKE_BINARY_DIR}/bin/agora-report DESTINATION bin)
install(FILES ${PROJECT_SOURCE_DIR}/share/c.m4.agora DESTINATION share/agora)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION share/doc/agora)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/agora/docs)

# Program mode, when this tree has it (src/program/, cmake/AgoraWrappers.cmake).
# agoracc -fopenmp links Agora's OpenMP runtime, not libgomp (docs/openmp.md).
install(FILES ${AGORA_PROGRAM_DIR}/openmp/libgomp.spec DESTINATION lib/agora/openmp)
foreach(file agora-program.ld agora-program.wrap)
  if(EXISTS ${AGORA_PROGRAM_DIR}/${file})
    install(FILES ${AGORA_PROGRAM_DIR}/${file} DESTINATION lib/agora)
  endif()
endforeach()
if(TARGET ${AGORA_PROGRAM_START_TARGET})
  install(FILES $<TARGET_OBJECTS:${AGORA_PROGRAM_START_TARGET}> DESTINATION lib/agora
    RENAME ${AGORA_PROGRAM_START_INSTALLED})
endif()

# find_package(Agora): Agora::agora, plus the tools' paths.
install(EXPORT AgoraTargets NAMESPACE Agora:: DESTINATION lib/cmake/Agora)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/AgoraConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/AgoraConfig.cmake INSTALL_DESTINATION lib/cmake/Agora)
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/AgoraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/AgoraConfig.cmake ${CMAKE_BINARY_DIR}/cmake/AgoraConfigVersion.cmake
  DESTINATION lib/cmake/Agora)

# pkg-config: paths relative to the .pc file's own directory.
configure_file(${PROJECT_SOURCE_DIR}/cmake/agora.pc.in ${CMAKE_BINARY_DIR}/cmake/agora.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/agora.pc DESTINATION lib/pkgconfig)
