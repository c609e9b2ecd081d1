// What agora.hpp refuses at compile time, one case per macro (the
// cxx_api_refuses_* tests compile this with -DCASE and expect the message).
#include <agora/agora.hpp>

#include <string>

void plain_function(int) {}

int main() {
#if defined(FUNCTION_POINTER)
  agora::thread t(&plain_function, 1);  // an address that differs between ranks
#elif defined(NOT_TRIVIALLY_COPYABLE_CALLABLE)
  std::string s;
  agora::thread t([s] {});  // a std::string's bytes mean nothing on another rank
#elif defined(NOT_TRIVIALLY_COPYABLE_ELEMENT)
  agora::global_array<std::string> a(3);
#endif
  return 0;
}
