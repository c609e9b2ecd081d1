// Invariants of a page copy in hlrc and regc (PageCopy), checked by
// AGORA_ASSERT in debug builds (AGORA_CHECKS) after every step that changes
// one; the unit tests also call it on hand-made states.
#pragma once
#include "protocol/shared/page_copies.h"

namespace agora {

// True if `s` is a state the page-copy steps can reach:
//   - a fetch is outstanding only for an invalid copy, and waiters wait
//     only for a fetch;
//   - a twin exists exactly while the copy is dirty (home pages: never,
//     unless the protocol twins them, `twin_home`);
//   - no write goes untracked: a writable copy is dirty, except a home page
//     no other rank has fetched or one whose writes the host tracks; a
//     dirty copy is writable or invalidated;
//   - only a home page is "cached elsewhere", and only such a page has its
//     writes tracked.
bool page_copy_consistent(const EngineHost &host, PageId page, const PageCopy &s, bool twin_home);

}  // namespace agora
