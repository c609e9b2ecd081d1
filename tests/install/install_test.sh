#!/usr/bin/env bash
# install_test.sh BUILD SOURCE WORK: installs BUILD into a prefix, moves the
# prefix (everything installed must be relocatable), then builds and runs on
# 2 ranks, with the installed agorarun:
#   examples/jacobi.c with agoracc -agora-spmd,
#   tests/install/consumer (find_package(Agora), Agora::agora),
#   the same program with pkg-config agora;
# and checks the versions, agoracc's program-mode flags, and the PARMACS
# m4 file with the installed header. Any failure stops with its message.
set -eu
build=$1 source=$2 work=$3
fail() { echo "FAIL install: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/staged" > "$work/install.log" || fail "cmake --install (see $work/install.log)"
mv "$work/staged" "$work/prefix"
P=$work/prefix
for f in lib/libagora.so lib/libagora.so.0 lib/libagora.so.0.9.0 include/agora/agora.h include/agora/agora.hpp include/agora/parmacs.h \
         bin/agorarun bin/agora-info bin/agoracc bin/agoracxx share/agora/c.m4.agora lib/cmake/Agora/AgoraConfig.cmake \
         lib/cmake/Agora/AgoraConfigVersion.cmake lib/cmake/Agora/AgoraTargets.cmake lib/pkgconfig/agora.pc \
         share/doc/agora/LICENSE share/doc/agora/README.md; do
  [ -e "$P/$f" ] || fail "$f is not installed"
done
run() {  # NAME PROGRAM ARGS...: 2 ranks, bounded
  local name=$1; shift
  "$P/bin/agorarun" -n 2 --timeout 60 "$@" > "$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name did not run"; }
  cat "$work/$name.out"
}

[ "$("$P/bin/agorarun" --version)" = "agorarun (Agora) 0.9.0" ] || fail "agorarun --version: $("$P/bin/agorarun" --version)"
# The installed agorarun reads its options from the installed agora-info.
"$P/bin/agora-info" | grep -q "^Agora 0.9.0$" || fail "agora-info: $("$P/bin/agora-info" 2>&1 | head -3)"
"$P/bin/agorarun" --help | grep -q -- "--threads-per-rank N" || fail "installed agorarun --help has no options table"
"$P/bin/agoracc" --showme:version | grep -qx "0.9.0" || fail "agoracc --showme:version"

# 1. agoracc -agora-spmd
"$P/bin/agoracc" -agora-spmd -O2 -o "$work/jacobi" "$source/examples/jacobi.c" -lm || fail "agoracc -agora-spmd jacobi.c"
run jacobi "$work/jacobi" 128 20
grep -q "residual" "$work/jacobi.out" || fail "jacobi printed no residual"

# 1b. the C++ header, with agoracxx -agora-spmd
"$P/bin/agoracxx" -agora-spmd -std=c++20 -O2 -Wall -Wextra -Werror -o "$work/cxx_api" "$source/tests/mpi/cxx_api.cpp" \
  || fail "agoracxx -agora-spmd -std=c++20 cxx_api.cpp (include/agora/agora.hpp)"
run cxx_api "$work/cxx_api"
grep -q "cxx_api: every check passed on 2 ranks" "$work/cxx_api.out" || fail "the agora.hpp program"

# 2. find_package(Agora)
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$P" > "$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "configuring the find_package(Agora) project"; }
cmake --build "$work/consumer" > "$work/consumer-build.log" 2>&1 || { cat "$work/consumer-build.log"; fail "building it"; }
run cmake_consumer "$work/consumer/hello_agora"
grep -q "PASS hello_agora on 2 ranks, Agora 0.9.0" "$work/cmake_consumer.out" || fail "find_package(Agora) program"

# 3. pkg-config agora
export PKG_CONFIG_PATH=$P/lib/pkgconfig
[ "$(pkg-config --modversion agora)" = 0.9.0 ] || fail "pkg-config --modversion agora"
# shellcheck disable=SC2046
cc $(pkg-config --cflags agora) -o "$work/hello_pc" "$source/tests/install/consumer/hello_agora.c" $(pkg-config --libs agora) \
  || fail "cc with pkg-config agora"
run pkg_config "$work/hello_pc"
grep -q "PASS hello_agora on 2 ranks" "$work/pkg_config.out" || fail "pkg-config program"

# 4. program mode: the flags point into the moved prefix; compiling works
# without the program-mode files; linking works when they are installed.
flags=$("$P/bin/agoracc" --showme:link)
for want in "-no-pie" "-Wl,-T,$P/lib/agora/agora-program.ld" "-Wl,@$P/lib/agora/agora-program.wrap" \
            "$P/lib/agora/agora_program_start.o" "-L$P/lib" "-lagora" "-Wl,-rpath,$P/lib"; do
  case " $flags " in *" $want "*) ;; *) fail "agoracc --showme:link lacks $want: $flags" ;; esac
done
[ "$("$P/bin/agoracc" --showme:compile)" = "-I$P/include -pthread -fno-pie -fstack-clash-protection -fno-inline-atomics -include $P/include/agora/program_atomics.h" ] || fail "agoracc --showme:compile: $("$P/bin/agoracc" --showme:compile)"
[ "$("$P/bin/agoracc" --showme -c x.c -o x.o)" = "cc -I$P/include -pthread -fno-pie -fstack-clash-protection -fno-inline-atomics -include $P/include/agora/program_atomics.h -c x.c -o x.o" ] || fail "agoracc --showme -c"
[ "$(AGORA_CC=gcc "$P/bin/agoracc" --showme -E x.c)" = "gcc -I$P/include -pthread -fno-pie -fstack-clash-protection -fno-inline-atomics -include $P/include/agora/program_atomics.h -E x.c" ] || fail "agoracc --showme -E"
[ "$("$P/bin/agoracxx" -agora-spmd --showme a.o b.o -o ab)" = "c++ -I$P/include a.o b.o -o ab -L$P/lib -lagora -Wl,-rpath,$P/lib" ] \
  || fail "agoracxx -agora-spmd --showme: $("$P/bin/agoracxx" -agora-spmd --showme a.o b.o -o ab)"

# 5. PARMACS: a SPLASH-style program through the installed m4 file and header.
m4 "$P/share/agora/c.m4.agora" "$source/tests/parmacs/phases.C" > "$work/phases.c" || fail "m4 c.m4.agora"
"$P/bin/agoracc" -Wall -Wextra -Werror -c "$work/phases.c" -o "$work/phases.o" || fail "agoracc -c phases.c"
if [ -f "$P/lib/agora/agora_program_start.o" ]; then
  "$P/bin/agoracc" -o "$work/phases" "$work/phases.o" || fail "agoracc -o phases (program mode link)"
  "$P/bin/agorarun" -n 2 --threads-per-rank 2 --timeout 60 "$work/phases" 4 splash3 > "$work/phases.out" 2>&1 \
    || { cat "$work/phases.out"; fail "phases did not run"; }
  grep -q "PASS phases P=4 splash3" "$work/phases.out" || fail "phases"
  # It links the MPI this Agora is built with, not another one installed
  # beside it (docs/mpi.md), and agorarun starts it with that MPI's launcher.
  vendor=$("$P/bin/agora-info" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["build"]["mpi_vendor"])')
  case $vendor in
    mpich) mine=libmpich.so theirs=libmpi.so launcher=mpiexec ;;
    openmpi) mine=libmpi.so theirs=libmpich.so launcher=mpirun ;;
    *) fail "agora-info --json names no MPI vendor: $vendor" ;;
  esac
  libraries=$(ldd "$work/phases")
  echo "$libraries" | grep -q "$mine" || fail "phases (built with $vendor) does not link $mine: $libraries"
  echo "$libraries" | grep -q "$theirs" && fail "phases (built with $vendor) links $theirs: $libraries"
  "$P/bin/agorarun" --dry-run -n 2 "$work/phases" | grep -Eq "(^| |/)$launcher(\.[a-z]+)? -n 2 " \
    || fail "agorarun of a $vendor build does not use $launcher: $("$P/bin/agorarun" --dry-run -n 2 "$work/phases")"
  echo "program mode: phases links $mine ($vendor), agorarun starts it with $launcher"
  echo "program mode: phases built and run from the installed prefix"
  # 6. OpenMP (docs/openmp.md): the installed libgomp.spec keeps libgomp out.
  "$P/bin/agoracc" -fopenmp -O2 -I"$source/tests/program" -o "$work/omp_constructs" \
    "$source/tests/program/omp_constructs.c" || fail "agoracc -fopenmp omp_constructs.c"
  ! ldd "$work/omp_constructs" | grep -q gomp || fail "agoracc -fopenmp linked libgomp"
  "$P/bin/agorarun" -n 2 --timeout 60 "$work/omp_constructs" > "$work/omp.out" 2>&1 \
    || { cat "$work/omp.out"; fail "omp_constructs did not run"; }
  grep -q "PASS program omp_constructs: 2 threads in 2 processes" "$work/omp.out" || fail "omp_constructs"
  echo "program mode: an OpenMP program built and run from the installed prefix"
else
  echo "program mode: not in this build (no agora_program_start.o); its link and run are skipped"
fi
echo "PASS install"
