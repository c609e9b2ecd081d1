// The home side of sc: the directory entry of each page homed here, and the
// transactions that move it between exclusive and shared.
#include <cstring>
#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"
#include "protocol/sc/sc_engine.h"

namespace agora {

namespace {
constexpr int kStatusUnallocated = AGORA_ERR_BAD_POINTER;
}

ScEngine::DirEntry &ScEngine::entry(PageId page) {
  auto [it, fresh] = directory_.try_emplace(page);
  if (fresh) {
    it->second.owner = host_.rank();  // pages start owned by their home
    it->second.copyset.assign(host_.nranks(), false);
  }
  return it->second;
}

void ScEngine::home_request(PageId page, Request r) {
  if (!host_.page_allocated(page)) {
    if (r.requester == host_.rank())
      fail_local(page, kStatusUnallocated);
    else
      host_.send(r.requester, {Channel::Protocol, kNack, 0, page, (uint64_t)(int64_t)kStatusUnallocated, 0});
    return;
  }
  DirEntry &e = entry(page);
  if (e.busy) {
    e.queue.push_back(r);
    return;
  }
  home_start(page, e, r);
  AGORA_ASSERT(entry_consistent(page, e));
}

void ScEngine::home_start(PageId page, DirEntry &e, Request r) {
  const Rank home = host_.rank();
  e.current = r;
  if (e.owner >= 0) {
    Rank o = e.owner;
    if (o == r.requester) {  // already exclusive there: nothing to change
      grant(page, r.requester, Access::Write, false);
      return;
    }
    if (o == home) {  // the home's copy is the only one: give it away locally
      if (r.mode == Access::Read) {
        set_local(page, Access::Read);
        e.owner = -1;
        e.copyset[home] = true;
        e.copyset[r.requester] = true;
        grant(page, r.requester, Access::Read, true);
      } else {
        set_local(page, Access::None);
        e.owner = r.requester;
        grant(page, r.requester, Access::Write, true);
      }
      return;
    }
    // A remote owner has the newest data: bring it home first.
    e.busy = true;
    e.fetched_from = o;
    Access keep = r.mode == Access::Read ? Access::Read : Access::None;
    if (keep == Access::None) host_.stats().invalidations_sent++;
    host_.send_request(o, {Channel::Protocol, kFetch, 0, page, (uint64_t)keep, 0});
    return;
  }
  if (r.mode == Access::Read) {
    e.copyset[r.requester] = true;
    grant(page, r.requester, Access::Read, true);
    return;
  }
  // Write to a shared page: invalidate every other copy, wait for the acks.
  // A copy the directory lists but the requester no longer holds (a
  // prefetch it dropped, sc_prefetch.cpp) must be sent again.
  e.requester_had_copy = e.copyset[r.requester] && (r.holds_copy || r.requester == home);
  e.acks_left = 0;
  for (Rank c = 0; c < host_.nranks(); ++c) {
    if (!e.copyset[c] || c == r.requester) continue;
    if (c == home) {
      set_local(page, Access::None);
    } else {
      host_.stats().invalidations_sent++;
      host_.send_request(c, {Channel::Protocol, kInvalidate, 0, page, 0, 0});
      e.acks_left++;
    }
  }
  if (e.acks_left == 0) {
    home_finish(page, e);
  } else {
    e.busy = true;
  }
}

// Completes the write transaction in e.current once no other copy remains,
// then starts queued transactions.
void ScEngine::home_finish(PageId page, DirEntry &e) {
  Request r = e.current;
  e.owner = r.requester;
  e.copyset.assign(host_.nranks(), false);
  e.busy = false;
  grant(page, r.requester, Access::Write, !e.requester_had_copy);
  home_drain(page, e);
}

void ScEngine::home_drain(PageId page, DirEntry &e) {
  while (!e.busy && !e.queue.empty()) {
    Request next = e.queue.front();
    e.queue.pop_front();
    home_start(page, e, next);
  }
  AGORA_ASSERT(entry_consistent(page, e));
}

void ScEngine::home_on_ack(PageId page) {
  DirEntry &e = entry(page);
  AGORA_ASSERT(e.busy && e.acks_left > 0);  // an acknowledgement the home awaits
  if (--e.acks_left == 0) home_finish(page, e);
}

void ScEngine::home_on_fetch_data(PageId page, Payload p) {
  DirEntry &e = entry(page);
  AGORA_ASSERT(e.busy && e.fetched_from >= 0 && e.owner == e.fetched_from);  // the fetch in progress
  // The home's frame becomes the newest copy (the home itself holds no access).
  std::memcpy(host_.frame(page), p.data, host_.page_size());
  Request r = e.current;
  if (r.mode == Access::Read) {
    e.owner = -1;
    e.copyset.assign(host_.nranks(), false);
    e.copyset[e.fetched_from] = true;
    e.copyset[r.requester] = true;
    e.busy = false;
    grant(page, r.requester, Access::Read, true);
    home_drain(page, e);
  } else {
    e.requester_had_copy = false;
    home_finish(page, e);
  }
}

void ScEngine::grant(PageId page, Rank to, Access a, bool with_data) {
  if (to == host_.rank()) {
    complete_local(page, a, {});  // the home's frame is already current
    return;
  }
  Payload data = with_data ? Payload{host_.frame(page), host_.page_size()} : Payload{};
  host_.send(to, {Channel::Protocol, kGrant, 0, page, (uint64_t)a, with_data ? 1u : 0u}, data);
}

}  // namespace agora
