// Which of a peer's addresses a remote doorbell ring goes to
// (platform/ipv4_route.h): the one on a subnet this host shares, else its first.
#include "platform/ipv4_route.h"

#include <gtest/gtest.h>

namespace agora::platform {
namespace {

constexpr uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; }
constexpr uint32_t kSlash24 = 0xffffff00u, kSlash16 = 0xffff0000u;

TEST(Ipv4Route, PicksTheAddressOnASharedSubnet) {
  std::vector<Ipv4Interface> mine = {{ip(192, 168, 1, 5), kSlash24}, {ip(10, 77, 0, 11), kSlash24}};
  std::vector<Ipv4Interface> theirs = {{ip(172, 17, 0, 1), kSlash16}, {ip(10, 77, 0, 12), kSlash24}};
  EXPECT_EQ(ipv4_pick_address(mine, theirs), 1u);
}

TEST(Ipv4Route, TheFirstSharedOneWins) {
  std::vector<Ipv4Interface> mine = {{ip(10, 1, 0, 1), kSlash16}};
  std::vector<Ipv4Interface> theirs = {{ip(10, 2, 0, 1), kSlash16},
                                       {ip(10, 1, 9, 9), kSlash24},
                                       {ip(10, 1, 0, 2), kSlash16}};
  EXPECT_EQ(ipv4_pick_address(mine, theirs), 1u);
}

TEST(Ipv4Route, OurMaskDecides) {
  // Their /16 covers us, but our /24 does not cover them: not on our subnet.
  std::vector<Ipv4Interface> mine = {{ip(10, 1, 0, 1), kSlash24}};
  std::vector<Ipv4Interface> theirs = {{ip(192, 0, 2, 1), kSlash24}, {ip(10, 1, 5, 1), kSlash16}};
  EXPECT_EQ(ipv4_pick_address(mine, theirs), 0u);
}

TEST(Ipv4Route, NoSharedSubnetMeansTheFirst) {
  std::vector<Ipv4Interface> mine = {{ip(192, 168, 1, 5), kSlash24}};
  std::vector<Ipv4Interface> theirs = {{ip(10, 0, 0, 1), kSlash24}, {ip(10, 0, 1, 1), kSlash24}};
  EXPECT_EQ(ipv4_pick_address(mine, theirs), 0u);
}

TEST(Ipv4Route, AnInterfaceWithoutMaskMatchesNothing) {
  std::vector<Ipv4Interface> mine = {{ip(10, 0, 0, 1), 0}};
  std::vector<Ipv4Interface> theirs = {{ip(192, 0, 2, 1), kSlash24}, {ip(10, 0, 0, 2), kSlash24}};
  EXPECT_EQ(ipv4_pick_address(mine, theirs), 0u);
  EXPECT_FALSE(ipv4_same_subnet(mine[0], ip(10, 0, 0, 1)));
}

TEST(Ipv4Route, AnEmptyListGivesZero) { EXPECT_EQ(ipv4_pick_address({{ip(10, 0, 0, 1), kSlash24}}, {}), 0u); }

}  // namespace
}  // namespace agora::platform
