#!/usr/bin/env bash
# A selective build (TD_OPS): ten ops, plus what the generator adds for their gradients,
# the engine and the tests; its generated tests must pass. Prints the static library's
# size beside the full one (FULL_LIB, the suite's own libtdispatch.a, when static).
# usage: selective_build.sh REPO_ROOT [FULL_LIB]
set -euo pipefail
root=$1
full=${2:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/tdispatch-selective.XXXXXX")
trap 'rm -rf "$work"' EXIT
ops="float_add;float_matmul;float_relu;float_exp;float_log;float_sigmoid;float_mean_dim;float_sum_dim;float_reshape;float_swap_dims"
cmake -S "$root" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DTD_WERROR=ON -DTD_OPS="$ops" \
  -DTD_BACKEND_VULKAN=OFF -DTD_MPI=OFF -DTD_INSTALL=OFF >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 || { tail -60 "$work/build.log"; exit 1; }
grep "tdgen: selective build" "$work/build.log"
ctest --test-dir "$work/build" --output-on-failure || { echo "FAIL: the selective build's tests failed"; exit 1; }
n=$(grep -c '^td_status td_' "$work/build/generated/td_ops.h")
echo "entry points in td_ops.h: $n"
lib=$(stat -c %s "$work/build/libtdispatch.a")
echo "libtdispatch.a (10-op selective build, cpu only): $lib bytes"
if [ -n "$full" ] && [ -f "$full" ]; then echo "libtdispatch.a (this build, every op): $(stat -c %s "$full") bytes"; fi
echo "selective build: OK"
