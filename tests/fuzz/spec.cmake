# libFuzzer harness of the spec loader and validator (tests/fuzz/fuzz_spec.c), included
# by tests/fuzz/CMakeLists.txt. Built only with -DTD_FUZZ=ON and clang; needs pkg-config
# and liblua5.4 (pkg-config lua5.4), and warns and skips the target without them.
#
# The CTest fuzz_spec_smoke runs it for a few seconds over the seed corpus in
# tests/fuzz/corpus_spec: it passes when nothing is found and fails on any crash.
#
# A long run, for hours, from the build directory (new inputs go to the first folder,
# crashes to fuzz_spec-crash-*; the seeds are only read):
#
#   mkdir -p fuzz_spec_corpus
#   tests/fuzz/fuzz_spec -max_len=8192 -timeout=30 -rss_limit_mb=2048 -max_total_time=14400 \
#       -jobs=2 -workers=2 -artifact_prefix=fuzz_spec- fuzz_spec_corpus <repo>/tests/fuzz/corpus_spec
#
# then replay a crash with `tests/fuzz/fuzz_spec fuzz_spec-crash-<hash>`, and keep inputs
# worth keeping as seeds with `tests/fuzz/fuzz_spec -merge=1 <repo>/tests/fuzz/corpus_spec
# fuzz_spec_corpus`.

if(NOT TD_FUZZ OR NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  return()
endif()
find_package(PkgConfig)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(TD_FUZZ_LUA IMPORTED_TARGET lua5.4)
endif()
if(NOT TD_FUZZ_LUA_FOUND)
  message(WARNING "fuzz_spec is not built: it needs pkg-config and liblua5.4 (apt-get install pkg-config liblua5.4-dev)")
  return()
endif()

get_filename_component(td_fuzz_spec_gen "${CMAKE_CURRENT_LIST_DIR}/../../gen" ABSOLUTE)
# The flags of tests/fuzz/CMakeLists.txt when it set them, else the same by hand.
if(NOT DEFINED TD_FUZZ_COMPILE_FLAGS)
  set(TD_FUZZ_COMPILE_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer -g)
  set(TD_FUZZ_LINK_FLAGS -fsanitize=fuzzer,address,undefined)
endif()
add_executable(fuzz_spec ${CMAKE_CURRENT_LIST_DIR}/fuzz_spec.c)
target_compile_options(fuzz_spec PRIVATE ${TD_FUZZ_COMPILE_FLAGS} -O1 -Wall -Wextra)
target_link_options(fuzz_spec PRIVATE ${TD_FUZZ_LINK_FLAGS})
target_compile_definitions(fuzz_spec PRIVATE TD_GEN_DIR="${td_fuzz_spec_gen}")
target_link_libraries(fuzz_spec PRIVATE PkgConfig::TD_FUZZ_LUA)

# New inputs go to the build tree, never into the seed corpus.
set(td_fuzz_spec_work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_spec_smoke)
file(MAKE_DIRECTORY ${td_fuzz_spec_work}/corpus)
add_test(NAME fuzz_spec_smoke
         COMMAND fuzz_spec -max_total_time=10 -runs=100000 -max_len=8192 -timeout=30 -rss_limit_mb=2048
                 -artifact_prefix=${td_fuzz_spec_work}/ ${td_fuzz_spec_work}/corpus ${CMAKE_CURRENT_LIST_DIR}/corpus_spec
         WORKING_DIRECTORY ${td_fuzz_spec_work})
set_tests_properties(fuzz_spec_smoke PROPERTIES TIMEOUT 120 LABELS "fuzz")
