# ctest labels: every test carries exactly one of `sim` (the simulator),
# `unit` (single-process unit tests), `mpi` (real Open MPI ranks, the
# toolchain and the launcher) and `bench` (the benchmark programs and
# bench/run), so that a developer runs one slice: `ctest -L sim`.
#
# Each CMakeLists.txt under tests/ ends with agora_label_tests(<label>): the
# tests it declared that carry no label yet get <label>, except those named
# bench_*, which get `bench`. The test `ctest_labels` (tests/check_labels.py)
# fails if any test has none of the four labels or more than one.
function(agora_label_tests default_label)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} LABELS labels)
    if(labels)
      continue()
    endif()
    if(test MATCHES "^bench_")
      set_tests_properties(${test} PROPERTIES LABELS bench)
    else()
      set_tests_properties(${test} PROPERTIES LABELS ${default_label})
    endif()
  endforeach()
endfunction()
