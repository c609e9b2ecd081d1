// Whether a page fault was a read or a write, from the signal frame the
// kernel passes to a SA_SIGINFO handler. The protocol must know: a read
// fault on an invalid page fetches a readable copy, a write fault also takes
// ownership (sc) or makes a twin (hlrc, regc).
#include <ucontext.h>

#include "platform/arch.h"

#if defined(__aarch64__)
#include <asm/sigcontext.h>  // struct _aarch64_ctx, struct esr_context, ESR_MAGIC
#endif

namespace agora::platform {

#if defined(__x86_64__)

bool fault_is_write(const void *ucontext) {
  auto *uc = (const ucontext_t *)ucontext;
  // The page-fault error code: bit 1 is set for a write access.
  return (uc->uc_mcontext.gregs[REG_ERR] & 0x2) != 0;
}

#elif defined(__aarch64__)

namespace {
// ESR_ELx fields (Arm ARM D17.2.37; the kernel's asm/esr.h, not a uapi header).
constexpr uint64_t kEsrClassShift = 26, kEsrClassMask = 0x3f;  // ESR.EC
constexpr uint64_t kEsrClassDataAbortLowerEl = 0x24;           // a data abort taken from EL0
constexpr uint64_t kEsrWriteNotRead = 1u << 6;                 // ISS.WnR
}  // namespace

bool fault_syndrome(const void *ucontext, uint64_t *esr) {
  auto *uc = (const ucontext_t *)ucontext;
  // The kernel puts an esr_context record among the records of
  // __reserved (never in the extra space), ended by a record of magic 0.
  const unsigned char *at = uc->uc_mcontext.__reserved;
  const unsigned char *end = at + sizeof uc->uc_mcontext.__reserved;
  while (at + sizeof(_aarch64_ctx) <= end) {
    auto *head = (const _aarch64_ctx *)at;
    if (head->magic == 0 || head->size < sizeof(_aarch64_ctx)) return false;
    if (head->magic == ESR_MAGIC && head->size >= sizeof(esr_context)) {
      *esr = ((const esr_context *)at)->esr;
      return true;
    }
    at += head->size;
  }
  return false;
}

bool fault_is_write(const void *ucontext) {
  uint64_t esr = 0;
  // No syndrome (a kernel that reports none): a write. Taken for a read,
  // a store would fault again forever on the read-only copy it gets; taken
  // for a write, a load only costs what a write fault costs (ownership, a
  // twin), and stays correct.
  if (!fault_syndrome(ucontext, &esr)) return true;
  if (((esr >> kEsrClassShift) & kEsrClassMask) != kEsrClassDataAbortLowerEl)
    return false;  // e.g. an instruction fetch
  return (esr & kEsrWriteNotRead) != 0;
}

#endif

}  // namespace agora::platform
