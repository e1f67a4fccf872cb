#!/usr/bin/env bash
# The proof of issue 23's loadable modules: a backend built against an *installed*
# tdispatch, from a folder outside the repository holding only the toy fixture's spec and
# kernels and a five-line CMakeLists.txt (find_package + tdispatch_add_backend), then
# loaded with TD_BACKEND_PATH by the installed tdinfo and by an example built before the
# module existed (tour, unchanged), which list its device and run ops on it. The same
# CMakeLists.txt asks for the module's generated suites (TESTS): they are built in that
# project against the installed package and run by its ctest through the loader, green;
# and the module built again with toy's planted bug (TOY_PLANT_BUG: float_add wrong from
# element 100 on) makes exactly the comparisons of float_add and float_sub fail.
# usage: installed_module.sh REPO_ROOT PREFIX TOUR C_COMPILER BUILD_TYPE
#   PREFIX: a tdispatch install (the downstream_install test's); TOUR: the tour program.
set -euo pipefail
root=$1 prefix=$2 tour=$3 cc=$4 build_type=${5:-Release}
work=$(mktemp -d "${TMPDIR:-/tmp}/tdispatch-module.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/spec/backends"
cp "$root/tests/fixture/backends/toy.lua" "$work/src/spec/backends/toy.lua"
cp -r "$root/tests/fixture/toy" "$work/src/spec/toy"
rm -f "$work/src/spec/toy/backend.cmake" # the in-library build's file: a module does not need it
cat >"$work/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(toy_backend LANGUAGES C)
find_package(tdispatch 1.0 REQUIRED)
enable_testing()
tdispatch_add_backend(NAME toy SPEC ${CMAKE_CURRENT_SOURCE_DIR}/spec KERNELS spec/toy/toy.c TESTS)
CM
cmake -S "$work/src" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_BUILD_TYPE="$build_type" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
module="$work/build/toy.so"
[ -f "$module" ] || { echo "FAIL: no module $module"; ls "$work/build"; exit 1; }
echo "built $module against $prefix"

info=$(TD_BACKEND_PATH="$module" "$prefix/bin/tdinfo" 2>&1) || { echo "$info"; echo "FAIL: tdinfo"; exit 1; }
echo "$info" | grep -E "backend modules|toy" || true
echo "$info" | grep -q "toy (id 32): .*toy.so, ABI version 2, 1 device" || { echo "$info"; echo "FAIL: tdinfo does not list the module"; exit 1; }
echo "$info" | grep -q "^toy: 1 device" || { echo "FAIL: tdinfo does not list the module's device"; exit 1; }
# TD_DEVICE picks the module's device as the default one; without the module, it names
# nothing that exists: an error listing the backends there are.
TD_DEVICE=toy:0 TD_BACKEND_PATH="$module" "$prefix/bin/tdinfo" | grep "^default device: toy:0 (TD_DEVICE=toy:0)$" \
  || { echo "FAIL: TD_DEVICE=toy:0 is not the default device"; exit 1; }
if bad=$(TD_DEVICE=toy:0 "$prefix/bin/tdinfo" 2>&1); then echo "FAIL: tdinfo accepted TD_DEVICE=toy:0 without the module"; exit 1; fi
echo "$bad" | grep "^default device: none: TD_E_DEVICE (TD_DEVICE 'toy:0': no backend 'toy' in this build or loaded (backends: cpu (1 device)" \
  || { echo "$bad"; echo "FAIL: no error for TD_DEVICE=toy:0 without the module"; exit 1; }
# Without TD_BACKEND_PATH nothing is loaded.
"$prefix/bin/tdinfo" | grep -q "backend modules: 0 loaded" || { echo "FAIL: a module loaded without TD_BACKEND_PATH"; exit 1; }

# A folder in TD_BACKEND_PATH works as well as the file.
# tour runs its ops until the first one toy cannot run (float_relu: toy has 13 kernels);
# the device must be opened and the first ops (from_data, a broadcast add) run on it.
out=$(TD_BACKEND_PATH="$work/build" "$tour" --backend toy 2>&1) || true
echo "$out" | head -12
echo "$out" | grep -q "^toy:0 is toy (software)" || { echo "FAIL: tour did not open the toy device"; exit 1; }
echo "$out" | grep -q "^backend toy$" || { echo "FAIL: tour did not run on toy"; exit 1; }
# [[1,-2,3],[-4,5,-6]] + [0.5,0.25,0.125], by hand
echo "$out" | grep -q "x + bias (broadcast) *shape \[2, 3\] 1.5 -1.75 3.125 -3.5 5.25 -5.875$" \
  || { echo "FAIL: tour's add did not run on toy"; exit 1; }
echo "$out" | grep -q "td_float_relu(y, &r) failed: TD_E_UNSUPPORTED: float_relu: .*not implemented by backend 'toy'" \
  || { echo "FAIL: tour stopped elsewhere than at float_relu"; exit 1; }

# The module's generated suites, built in its project, run by its ctest through the loader.
ctest --test-dir "$work/build" --output-on-failure >"$work/ctest.log" 2>&1 || { cat "$work/ctest.log"; echo "FAIL: the module's suites"; exit 1; }
grep -E "tests passed|test_ops_toy|test_autodiff_toy" "$work/ctest.log"
grep -q "100% tests passed, 0 tests failed out of 2" "$work/ctest.log" || { cat "$work/ctest.log"; echo "FAIL: not the two suites"; exit 1; }
ops=$(TD_BACKEND_PATH="$module" "$work/build/test_ops_toy" 2>&1) || { echo "$ops" | tail; exit 1; }
echo "$ops" | grep -q "PASSED.* [1-9][0-9]* test" || { echo "$ops" | tail; echo "FAIL: test_ops_toy ran no test"; exit 1; }
echo "$ops" | grep -q "test_float_add_vs_cpu" || { echo "FAIL: test_ops_toy has no comparison with the CPU"; exit 1; }
echo "test_ops_toy: $(echo "$ops" | grep "PASSED")"

# A planted kernel bug: the module alone built again with TOY_PLANT_BUG; the suite above,
# loading it, must fail exactly float_add's and float_sub's comparisons with the CPU.
cmake -S "$work/src" -B "$work/planted" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_C_FLAGS=-DTOY_PLANT_BUG=1 >"$work/planted.log" 2>&1 \
  && cmake --build "$work/planted" --target toy >>"$work/planted.log" 2>&1 || { cat "$work/planted.log"; exit 1; }
TD_BACKEND_PATH="$work/planted/toy.so" cmake -DPROGRAM="$work/build/test_ops_toy" \
  -DFAILED=test_float_add_vs_cpu,test_float_sub_vs_cpu -DSKIPPED= -DFROM_ELEMENT=100 \
  -P "$root/tests/fixture/cmocka_outcome.cmake" || { echo "FAIL: the planted bug was not found as expected"; exit 1; }
echo "planted bug: found by the module's own suite"
echo "installed module: OK"
