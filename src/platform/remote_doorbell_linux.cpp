// The remote doorbell: a UDP socket per rank that ranks on other hosts (or in
// another PID namespace), where a signal cannot reach, send a 1-byte
// datagram to, to wake its napping service thread at once. The datagram
// carries nothing: the request itself travels through MPI; the service
// thread waits on this socket beside the doorbell signal (doorbell.cpp).
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "platform/platform.h"

namespace agora::platform {

std::vector<Ipv4Interface> ipv4_interfaces() {
  std::vector<Ipv4Interface> out;
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs *i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    Ipv4Interface iface;
    iface.address = ntohl(((sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
    if (i->ifa_netmask) iface.netmask = ntohl(((sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr);
    out.push_back(iface);
  }
  freeifaddrs(list);
  return out;
}

std::string ipv4_text(uint32_t address) {
  in_addr a{htonl(address)};
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, text, sizeof text);
  return text;
}

// Bound to every address (INADDR_ANY): one socket serves all interfaces,
// and which one a peer reaches it through is the peer's choice
// (ipv4_pick_address). Anyone who can reach the port can only make the
// service thread poll once more: the content is never read.
int remote_doorbell_open(uint16_t *port, std::string *error) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket(AF_INET, SOCK_DGRAM) failed: ") + system_error_text(errno);
    return -1;
  }
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  any.sin_port = 0;  // the kernel picks a free port; peers learn it at start-up
  socklen_t length = sizeof any;
  if (bind(fd, (sockaddr *)&any, sizeof any) != 0 || getsockname(fd, (sockaddr *)&any, &length) != 0) {
    *error = std::string("bind of a UDP socket failed: ") + system_error_text(errno);
    close(fd);
    return -1;
  }
  *port = ntohs(any.sin_port);
  return fd;
}

bool remote_doorbell_ring(int fd, uint32_t address, uint16_t port) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(address);
  to.sin_port = htons(port);
  const char ring = 1;
  // Non-blocking: a full send buffer drops the ring, which only costs the
  // peer the rest of its nap.
  return sendto(fd, &ring, 1, MSG_DONTWAIT, (sockaddr *)&to, sizeof to) == 1;
}

int remote_doorbell_drain(int fd) {
  // Bounded, so that a flood of datagrams cannot keep the caller here.
  char buffer[64];
  int drained = 0;
  while (drained < 256 && recv(fd, buffer, sizeof buffer, MSG_DONTWAIT) >= 0) ++drained;
  return drained;
}

void remote_doorbell_close(int fd) {
  if (fd >= 0) close(fd);
}

}  // namespace agora::platform
