// Which of another host's IPv4 addresses to send to: the one on a subnet
// this host is on (the network both hosts share, as MPI's own traffic
// would use), else its first. Pure, so that unit tests can check it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace agora::platform {

struct Ipv4Interface {
  uint32_t address = 0;  // host byte order
  uint32_t netmask = 0;  // host byte order; 0 for a point-to-point link without one
};

inline bool ipv4_same_subnet(const Ipv4Interface &mine, uint32_t address) {
  return mine.netmask != 0 && (mine.address & mine.netmask) == (address & mine.netmask);
}

// Index into `theirs` of the address to send to (0 also when `theirs` is
// empty: the caller checks).
inline size_t ipv4_pick_address(const std::vector<Ipv4Interface> &mine, const std::vector<Ipv4Interface> &theirs) {
  for (size_t i = 0; i < theirs.size(); ++i)
    for (const Ipv4Interface &m : mine)
      if (ipv4_same_subnet(m, theirs[i].address)) return i;
  return 0;
}

}  // namespace agora::platform
