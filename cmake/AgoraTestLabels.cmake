# ctest labels: every test carries exactly one of `sim` (the simulator),
# `unit` (single-process unit tests), `mpi` (real Open MPI ranks, the
# toolchain and the launcher) and `bench` (the benchmark programs and
# bench/run), so that a developer runs one slice: `ctest -L sim`.
#
# Tiers: scripts/run-tests.sh runs the fast tier, every test without the
# label `full` (ctest -LE full); `--full` runs them all. A test is full-tier
# only when its name matches AGORA_FULL_TIER_ONLY below, each pattern with
# the reason the fast tier can do without it (docs/testing.md).
#
# Each CMakeLists.txt under tests/ ends with agora_label_tests(<label>): the
# tests it declared that carry no label yet get <label>, except those named
# bench_*, which get `bench`. The test `ctest_labels` (tests/check_labels.py)
# fails if any test has none of the four labels or more than one.
# regc and regc-page are one engine (src/protocol/regc) that differs in one
# decision: whether a span's entries and small ordinary diffs travel as
# updates or as notices. The fast tier keeps regc-page where that decision
# is exercised (locks with writes in spans, flush, eviction, home writes,
# one-sided reads, store tracing, the programs that lock) and runs the rest,
# which the decision does not reach, only under the other three protocols.
set(AGORA_FAST_REGC_PAGE
  "^(regc_|lrc_|sync_|wait_block_lrc|threadsync_(locks|condvar|sem)_|flush_|cache_|one_sided_|store_trace_|stats_api_|programs_water_like)")
# Besides regc-page outside AGORA_FAST_REGC_PAGE, the full tier alone runs:
set(AGORA_FULL_TIER_ONLY
  # 140 000 separately protected pages (20-40 s each): the fast tier keeps
  # one run with the kernel's asynchronous home-write tracking (hlrc) and one
  # with the synchronous tracker (regc_sync); sc's traps, regc's and the
  # other runs repeat the same mapping pressure.
  "^cache_maps_2_(sc|regc|regc-page|hlrc_sync|regc-page_sync)$"
  # Nested spans (20-25 s): regc-page takes the same span path as regc.
  "^regc_nested_2_regc-page$"
  # The pthreads synchronisation shims (4-5 s): every call is an Agora lock,
  # condition or semaphore operation, which the fast tier's regc tests
  # cover; sc and hlrc run the program in the fast tier.
  "^program_sync_shims_2_regc$"
  # The trylock-spin barrier (1-3 s each): the naps are the API layer's,
  # the same under every protocol; sc, where spinning cost most, runs it
  # in the fast tier.
  "^program_trylock_spin_2_(hlrc|regc)$"
  # Flush with several threads per rank (3-4 s each): sc's flush does
  # nothing (every copy is current), and the basic model was only ever
  # wrong under hlrc; the fast tier keeps both models under hlrc and regc
  # and the observer model under regc-page.
  "^flush_threads_(observer|basic)_2x2_sc$"
  "^flush_threads_basic_2x2_regc-page$"
  # Memory the program maps: the shim is protocol-independent (a mapping is
  # placed global memory); sc and hlrc run it in the fast tier, regc moves
  # the mapped pages as it moves every placed page (its tests cover those).
  "^program_mapped_2_regc$"
  # Thread-specific data (1 s): its only Agora objects are one lock and a
  # mutex, which the fast tier's regc tests cover; sc and hlrc run it.
  "^program_thread_keys_2_regc$"
  # C++ threads (1 s): std::thread's start and join and the condition
  # variable are the pthreads shim's calls, which sc and hlrc run in the
  # fast tier and the fast tier's regc tests cover.
  "^program_std_thread_2_regc$"
  # libc's process-wide state (random generators, environment, directory):
  # the shims are protocol independent; sc and hlrc run it in the fast tier.
  "^program_process_state_2_regc$"
  # Job-wide descriptors (1-2 s each): forwarding is rank calls and the
  # table one address-named lock, the same under every protocol; hlrc runs
  # every mode in the fast tier.
  "^program_descriptors_(share|closed)_2_(sc|regc)$"
  # The stress matrix (2-8 ranks, 1-2 threads per rank, every protocol, with
  # and without a cache, memory servers; about 10 minutes): the fast tier
  # keeps 2x2 runs under hlrc and regc (with the cache), the race-injection
  # control and a rank killed mid-run (tests/mpi/stress.cmake).
  "^stress_long_"
  # What stores in spans must show after thread barriers and joins: regc
  # needs it in the fast tier; sc and hlrc pass it by construction.
  "^span_visibility_2_(sc|hlrc)$"
  # Atomics under sc are the hardware's instructions, as before the atomic
  # service (docs/atomics.md): the fast tier runs the service under hlrc
  # and regc (regc-page, as above, only here).
  "^program_atomics(_cxx)?_2_sc$"
  # OpenMP constructs (2-5 s each): the runtime's state moves under the
  # team's Agora lock and barriers, which hlrc and regc exercise in the fast
  # tier; sc shares every page at once, regc-page differs from regc only in
  # how span entries travel.
  "^program_omp_(constructs|apps)_2_(sc|regc-page)$"
  # 4 ranks on 2 cores (4-14 s): the same runtime as the 2-rank runs, with
  # one team member per rank; 2 ranks x 2 threads cover the placement.
  "^program_omp_constructs_4_hlrc$"
  # A real Slurm (about 100 s, most of it waiting for Slurm to end a job at
  # its 1-minute time limit, which it checks every 30 s): the fast tier
  # keeps agorarun's srun command line and forwarding (launcher_choice).
  "^slurm_jobs$"
  CACHE INTERNAL "")

# Tests that time things (idle servers, oversubscription, wake-ups, hang
# warnings) or pin CPUs run alone even under ctest -j2 (RUN_SERIAL).
set(AGORA_SERIAL_TESTS
  "^(wait_|service_wakeup_|hang_|signals_flood|signals_blocked|cluster_|doorbell_|servers_idle|servers_wake)"
  CACHE INTERNAL "")

function(agora_label_tests default_label)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} LABELS labels)
    if(NOT labels)
      if(test MATCHES "^bench_")
        set(labels bench)
      else()
        set(labels ${default_label})
      endif()
    endif()
    set(full_only FALSE)
    if(test MATCHES "regc-page" AND NOT test MATCHES "${AGORA_FAST_REGC_PAGE}")
      set(full_only TRUE)
    endif()
    foreach(pattern IN LISTS AGORA_FULL_TIER_ONLY)
      if(test MATCHES "${pattern}")
        set(full_only TRUE)
      endif()
    endforeach()
    if(full_only AND NOT "full" IN_LIST labels)
      list(APPEND labels full)
    endif()
    set_tests_properties(${test} PROPERTIES LABELS "${labels}")
    if(test MATCHES "${AGORA_SERIAL_TESTS}")
      set_tests_properties(${test} PROPERTIES RUN_SERIAL TRUE)
    endif()
    # Open MPI 4's mpirun processes of one user share a session directory
    # under /tmp, and under ctest -j one job's clean-up can remove it while
    # another starts (open-mpi/ompi#8510): each test gets its own, short
    # (PMIx's sockets live there).
    string(MD5 key "${CMAKE_BINARY_DIR}/${test}")
    string(SUBSTRING "${key}" 0 12 key)
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "OMPI_MCA_orte_tmpdir_base=/tmp/agora-test-${key}")
  endforeach()
endfunction()
