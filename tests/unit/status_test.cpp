// agora_strerror for every status.
#include "common/status.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace agora {
namespace {

TEST(Status, EveryStatusHasItsNameAndMeaning) {
  int listed = 0;
#define CHECK_TEXT(pub, text)                                                 \
  EXPECT_EQ(std::string(agora_strerror(pub)), std::string(#pub ": ") + text); \
  ++listed;
  AGORA_STATUS_LIST(CHECK_TEXT)
#undef CHECK_TEXT
  EXPECT_EQ(listed, 13);  // AGORA_OK, nine errors, three outcomes
  EXPECT_STREQ(agora_strerror(AGORA_ERR_NO_MEMORY), "AGORA_ERR_NO_MEMORY: global memory exhausted");
  EXPECT_STREQ(agora_strerror(AGORA_OK), "AGORA_OK: success");
}

TEST(Status, EveryCodeFromMinusNineToThreeIsAStatus) {
  for (int code = -9; code <= 3; ++code) {
    ASSERT_NE(status_text(code), nullptr) << code;
    EXPECT_EQ(std::strncmp(agora_strerror(code), "AGORA_", 6), 0) << code;
  }
}

TEST(Status, UnknownNumbersAreNamedAsSuch) {
  EXPECT_STREQ(agora_strerror(-10), "unknown status -10");
  EXPECT_STREQ(agora_strerror(4), "unknown status 4");
  EXPECT_STREQ(agora_strerror(-2147483647 - 1), "unknown status -2147483648");
  EXPECT_EQ(status_text(42), nullptr);
}

}  // namespace
}  // namespace agora
