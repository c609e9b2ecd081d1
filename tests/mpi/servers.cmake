# Memory servers (docs/memory-servers.md) on real ranks, each run bounded
# (agora_mpi_test: the launcher's --timeout, and ctest's TIMEOUT).
add_executable(test_servers servers.c)
target_link_libraries(test_servers PRIVATE agora)
foreach(protocol ${AGORA_TEST_PROTOCOLS})
  # N processes, M of them servers: 2+1 and 2+2 (the oversubscribed 2 cores).
  foreach(spec "3;1" "4;2")
    list(GET spec 0 n)
    list(GET spec 1 m)
    set(S --memory-servers ${m} --protocol ${protocol})
    agora_mpi_test(servers_layout_${n}_${m}_${protocol} ${n} 90 ${S} $<TARGET_FILE:test_servers> layout)
    agora_mpi_test(servers_lrc_mp_${n}_${m}_${protocol} ${n} 120 ${S} $<TARGET_FILE:test_lrc> mp 1000)
    agora_mpi_test(servers_lrc_counter_${n}_${m}_${protocol} ${n} 120 ${S} $<TARGET_FILE:test_lrc> counter 300)
    agora_mpi_test(servers_lrc_false_${n}_${m}_${protocol} ${n} 120 ${S} $<TARGET_FILE:test_lrc> false 100)
    agora_mpi_test(servers_sync_${n}_${m}_${protocol} ${n} 120 ${S} $<TARGET_FILE:test_sync> 300)
    agora_mpi_test(servers_threads_${n}_${m}_${protocol} ${n} 120 ${S} $<TARGET_FILE:test_threads>)
    agora_mpi_test(servers_forkjoin_${n}_${m}_${protocol} ${n} 120 ${S} --threads-per-rank 2
      $<TARGET_FILE:test_forkjoin>)
    agora_mpi_test(servers_jacobi_${n}_${m}_${protocol} ${n} 90 ${S} $<TARGET_FILE:jacobi> 256 40)
  endforeach()
  # Three compute ranks and 64 KiB stripes.
  agora_mpi_test(servers_layout_5_2_stripe64K_${protocol} 5 120 --memory-servers 2 --stripe 64K
    --protocol ${protocol} $<TARGET_FILE:test_servers> layout)
endforeach()
agora_mpi_test(servers_litmus_mp_4_2_sc 4 120 --memory-servers 2 --protocol sc $<TARGET_FILE:test_litmus> mp 1000)
agora_mpi_test(servers_litmus_sb_3_1_sc 3 120 --memory-servers 1 --protocol sc $<TARGET_FILE:test_litmus> sb 1000)
agora_mpi_test(servers_regc_accumulator_4_1 4 120 --memory-servers 1 --protocol regc $<TARGET_FILE:test_regc>
  accumulator 300 fetches)
# One compute rank; waiting threads that sleep (AGORA_WAIT=block); global
# pointers (compute ranks only).
agora_mpi_test(servers_layout_2_1_sc 2 60 --memory-servers 1 --protocol sc $<TARGET_FILE:test_servers> layout)
agora_mpi_test(servers_sync_4_1_hlrc_wait_block 4 120 --memory-servers 1 --wait block --protocol hlrc
  $<TARGET_FILE:test_sync> 200)
agora_mpi_test(servers_forkjoin_4_2_sc_wait_block 4 120 --memory-servers 2 --protocol sc --wait block --threads-per-rank 2
  $<TARGET_FILE:test_forkjoin>)
agora_mpi_test(servers_gptr_bulk_3_1 3 60 --memory-servers 1 $<TARGET_FILE:test_gptr> bulk)
agora_mpi_test(servers_regc_crosslock_4_1 4 120 --memory-servers 1 --protocol regc $<TARGET_FILE:test_regc>
  crosslock 200 ${CMAKE_CURRENT_BINARY_DIR}/servers_crosslock.flag)
# An idle server costs no CPU (< 2% of a core over 3 s; /proc/PID/stat).
foreach(protocol sc hlrc)
  agora_mpi_test(servers_idle_4_2_${protocol} 4 60 --memory-servers 2 --protocol ${protocol}
    $<TARGET_FILE:test_servers> idle 3)
endforeach()
# A fault on a page of a sleeping server is served at once (it is rung).
foreach(protocol sc hlrc)
  agora_mpi_test(servers_wake_3_1_${protocol} 3 60 --memory-servers 1 --protocol ${protocol} --prefetch 0
    $<TARGET_FILE:test_servers> wake)
endforeach()
# Bad configurations and a dead server end the job with a clear message.
agora_failure_test(servers_all_servers 20 "AGORA_MEMORY_SERVERS=2 leaves no compute rank"
  ${AGORARUN} -n 2 --memory-servers 2 $<TARGET_FILE:test_servers> layout)
agora_failure_test(servers_stripe_not_pages 20 "AGORA_STRIPE=6144 is not a multiple of the page size"
  ${AGORARUN} -n 3 --memory-servers 1 --stripe 6K $<TARGET_FILE:test_servers> layout)
agora_failure_test(servers_one_sided 20 "AGORA_FETCH=one-sided does not work with memory servers"
  ${AGORARUN} -n 3 --memory-servers 1 --fetch one-sided $<TARGET_FILE:test_servers> layout)
agora_failure_test(servers_dead_server 30 "process rank 2"
  ${AGORARUN} -n 3 --memory-servers 1 $<TARGET_FILE:test_servers> kill)
# A stopped server: the hang watch names it as the home rank 0 waits for.
agora_failure_test(servers_stuck_server 40 "its home is rank 2, a memory server"
  ${AGORARUN} -n 3 --memory-servers 1 --hang-warn 2 --hang-timeout 6 $<TARGET_FILE:test_servers> stop)
