// The per-page profile: write epochs as ranges, the words written, pages
// moved, allocations numbered per kind, and the JSON the report reads.
#include "observe/page_profile.h"

#include <gtest/gtest.h>

#include <sstream>

namespace agora {
namespace {

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

TEST(PageProfile, WriteEpochsAreRunLengthRanges) {
  PageProfile profile(0, 2, 0x200000000000, 4096);
  profile.fault(7, 1, true, 8);   // epoch 0
  profile.fault(7, 1, true, 16);  // epoch 0 again: no new range
  profile.next_epoch();
  profile.fault(7, 1, true, 8);  // epoch 1 extends [0, 0]
  profile.next_epoch();
  profile.next_epoch();
  profile.fault(7, 1, true, 8);   // epoch 3: a gap, a new range
  profile.fault(7, 1, false, 0);  // a read adds no epoch
  EXPECT_EQ(profile.write_epochs(7), (Ranges{{0, 1}, {3, 3}}));
  EXPECT_EQ(profile.write_offsets(7), (std::vector<uint32_t>{8, 16}));
  EXPECT_TRUE(profile.write_epochs(8).empty());
}

TEST(PageProfile, WriteAccessHeldAcrossBarriersCountsEveryEpoch) {
  PageProfile profile(0, 2, 0x200000000000, 4096);
  profile.fault(3, 0, true, 0);  // epoch 0: a write fault; the protocol grants write access
  profile.access_changed(3, true);
  profile.next_epoch();
  profile.next_epoch();                                  // epochs 1, 2: written without a fault (still writable)
  EXPECT_EQ(profile.write_epochs(3), (Ranges{{0, 2}}));  // an open period reaches the current epoch
  profile.access_changed(3, false);                      // taken away in epoch 2
  profile.next_epoch();
  profile.next_epoch();
  EXPECT_EQ(profile.write_epochs(3), (Ranges{{0, 2}}));
  profile.access_changed(3, true);  // granted again in epoch 4 (e.g. a home's page)
  profile.access_changed(3, false);
  EXPECT_EQ(profile.write_epochs(3), (Ranges{{0, 2}, {4, 4}}));
  profile.access_changed(9, false);  // never writable here: nothing recorded
  EXPECT_TRUE(profile.write_epochs(9).empty());
}

TEST(PageProfile, WordsAreBoundedAndAligned) {
  PageProfile profile(0, 1, 0x200000000000, 4096);
  for (uint64_t off = 0; off < 4096; off += 4) profile.fault(1, 0, true, off);
  std::vector<uint32_t> words = profile.write_offsets(1);
  ASSERT_EQ(words.size(), 64u);
  EXPECT_EQ(words.front(), 0u);
  EXPECT_EQ(words[1], 8u);  // offsets 4 and 12 fold into words 0 and 8
  std::ostringstream out;
  profile.write_json(out);
  EXPECT_NE(out.str().find("\"write_offsets_truncated\":true"), std::string::npos);
}

TEST(PageProfile, WritesPagesAndAllocations) {
  PageProfile profile(1, 2, 0x200000000000, 4096);
  profile.allocation(AllocKind::Collective, 0x200000000000, 16384, 0, 0);
  profile.allocation(AllocKind::Local, 0x200080000000, 8, 0, 0);
  profile.allocation(AllocKind::Collective, 0x200000004000, 4096, 2, 1);
  profile.fault(2, 0, true, 0x10);  // still writable after the barrier below: epochs 0 and 1
  profile.page_received(2, 4096);
  profile.page_sent(3, 4104);
  profile.next_epoch();
  std::ostringstream out;
  profile.write_json(out);
  const std::string json = out.str();
  EXPECT_NE(json.find("\"rank\":1,\"nranks\":2,\"page_size\":4096,\"base\":\"0x200000000000\",\"epochs\":2"),
            std::string::npos);
  EXPECT_NE(json.find("{\"kind\":\"agora_alloc\",\"number\":1,\"rank\":1,\"addr\":\"0x200000000000\","
                      "\"bytes\":16384,\"placement\":\"block\"}"),
            std::string::npos);
  EXPECT_NE(json.find("{\"kind\":\"agora_malloc\",\"number\":1,"), std::string::npos);
  EXPECT_NE(json.find("{\"kind\":\"agora_alloc\",\"number\":2,\"rank\":1,\"addr\":\"0x200000004000\","
                      "\"bytes\":4096,\"placement\":\"rank\",\"on_rank\":1}"),
            std::string::npos);
  EXPECT_NE(json.find("{\"page\":2,\"addr\":\"0x200000002000\",\"home\":0,\"read_faults\":0,\"write_faults\":1,"
                      "\"pages_in\":1,\"bytes_in\":4096,\"pages_out\":0,\"bytes_out\":0,\"write_epochs\":[[0,1]],"
                      "\"write_offsets\":[16],\"write_offsets_truncated\":false}"),
            std::string::npos);
  EXPECT_NE(json.find("\"page\":3,\"addr\":\"0x200000003000\",\"home\":-1"), std::string::npos);
}

}  // namespace
}  // namespace agora
