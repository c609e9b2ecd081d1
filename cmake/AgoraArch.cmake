# The CPU architecture, for the few sources written per architecture
# (src/platform/arch.h says what they are): AGORA_ARCH is x86_64 or aarch64.
# Any other stops the configuration here rather than at a compile error.
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" agora_processor)
if(agora_processor MATCHES "^(x86_64|amd64)$")
  set(AGORA_ARCH x86_64)
elseif(agora_processor MATCHES "^(aarch64|arm64)$")
  set(AGORA_ARCH aarch64)
else()
  message(FATAL_ERROR "Agora runs on x86-64 and aarch64 Linux; this is '${CMAKE_SYSTEM_PROCESSOR}'. "
    "To port it, write src/platform/call_on_stack_<arch>.cpp and fill in the per-architecture "
    "functions of src/platform/arch.h and src/platform/fault_access_linux.cpp, then add the "
    "architecture to cmake/AgoraArch.cmake.")
endif()
