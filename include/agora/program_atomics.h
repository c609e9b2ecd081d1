/* Included first in every translation unit agoracc compiles in program mode
 * with gcc (-include, next to -fno-inline-atomics; docs/atomics.md).
 *
 * -fno-inline-atomics turns the __atomic builtins (and so C11 <stdatomic.h>
 * and C++ std::atomic) into calls to __atomic_fetch_add_4 and the like, which
 * Agora provides (src/api/atomic_calls.cpp), but gcc still inlines the older
 * __sync builtins and the two atomic_flag builtins (__atomic_test_and_set,
 * __atomic_clear). These macros restate them in the __atomic forms that
 * become calls, with the same semantics: __sync operations are full
 * barriers (seq_cst); __sync_lock_test_and_set is an acquire exchange and
 * __sync_lock_release a release store of 0, as gcc documents. Not in an
 * installed program's API: agoracc alone includes it. */
#ifndef AGORA_PROGRAM_ATOMICS_H
#define AGORA_PROGRAM_ATOMICS_H

#define __sync_fetch_and_add(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define __sync_fetch_and_sub(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_SEQ_CST)
#define __sync_fetch_and_or(p, v) __atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST)
#define __sync_fetch_and_and(p, v) __atomic_fetch_and((p), (v), __ATOMIC_SEQ_CST)
#define __sync_fetch_and_xor(p, v) __atomic_fetch_xor((p), (v), __ATOMIC_SEQ_CST)
#define __sync_fetch_and_nand(p, v) __atomic_fetch_nand((p), (v), __ATOMIC_SEQ_CST)
#define __sync_add_and_fetch(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define __sync_sub_and_fetch(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_SEQ_CST)
#define __sync_or_and_fetch(p, v) __atomic_or_fetch((p), (v), __ATOMIC_SEQ_CST)
#define __sync_and_and_fetch(p, v) __atomic_and_fetch((p), (v), __ATOMIC_SEQ_CST)
#define __sync_xor_and_fetch(p, v) __atomic_xor_fetch((p), (v), __ATOMIC_SEQ_CST)
#define __sync_nand_and_fetch(p, v) __atomic_nand_fetch((p), (v), __ATOMIC_SEQ_CST)
#define __sync_lock_test_and_set(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define __sync_lock_release(p) __atomic_store_n((p), 0, __ATOMIC_RELEASE)

/* The expected value lives in a local of the object's type without its
 * qualifiers (a volatile int's is an int): in C the comma makes an rvalue;
 * in C++ the type of an atomic load's result is the unqualified one. */
#ifdef __cplusplus
#define AGORA_SYNC_VALUE_TYPE_(p) __typeof__(__atomic_load_n((p), __ATOMIC_RELAXED))
#else
#define AGORA_SYNC_VALUE_TYPE_(p) __typeof__((void)0, *(p))
#endif
#define __sync_val_compare_and_swap(p, o, n)                                                                           \
    __extension__({                                                                                                    \
        AGORA_SYNC_VALUE_TYPE_(p) agora_sync_expected_ = (o);                                                          \
        __atomic_compare_exchange_n((p), &agora_sync_expected_, (n), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);           \
        agora_sync_expected_;                                                                                          \
    })
#define __sync_bool_compare_and_swap(p, o, n)                                                                          \
    __extension__({                                                                                                    \
        AGORA_SYNC_VALUE_TYPE_(p) agora_sync_expected_ = (o);                                                          \
        __atomic_compare_exchange_n((p), &agora_sync_expected_, (n), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);           \
    })

/* atomic_flag (C's atomic_flag_test_and_set/_clear, C++'s std::atomic_flag):
 * one byte, as gcc's own builtins treat it. */
#define __atomic_test_and_set(p, order)                                                                                \
    (__atomic_exchange_n((volatile unsigned char *)(p), (unsigned char)1, (order)) != 0)
#define __atomic_clear(p, order) __atomic_store_n((volatile unsigned char *)(p), (unsigned char)0, (order))

#endif
