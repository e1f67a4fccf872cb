# tdispatch_add_backend(NAME <name> SPEC <dir> KERNELS <sources>...): a backend built as a
# loadable module against an installed tdispatch (docs/adding-a-backend.md, "Loadable
# modules"). <dir> holds backends/<name>.lua (an out-of-tree id, 32-62) and the kernel
# folder it names; the generator shipped with the package (share/tdispatch/gen, with the
# op specs in share/tdispatch/specs) writes the backend's header and module table into
# the build folder, and the module target <name> (file <name>.so) is built from them and
# the kernel sources. Load it with TD_BACKEND_PATH=<file> or td_backend_load. The module
# does not link libtdispatch: it uses the copy the program has loaded (a shared
# libtdispatch, or a program linked with ENABLE_EXPORTS against a static one).
# Needs Lua 5.4 (lua5.4) at build time.
# With TESTS, the backend's generated suites are built too, against the installed library:
# test_ops_<name> (the specs' known values, the error paths, the many-shape comparisons
# with the CPU backend) and test_autodiff_<name> (the gradient checks), with the cmocka
# helpers the package ships (share/tdispatch/testing), and registered with this project's
# ctest with TD_BACKEND_PATH naming the module, so they run it through the loader. Needs
# cmocka (its header and library) then, and enable_testing() (or include(CTest)) in the
# project's top-level CMakeLists.txt, without which ctest finds no test.
function(tdispatch_add_backend)
  cmake_parse_arguments(TDB "TESTS" "NAME;SPEC" "KERNELS" ${ARGN})
  if(NOT TDB_NAME OR NOT TDB_SPEC OR NOT TDB_KERNELS)
    message(FATAL_ERROR "tdispatch_add_backend: give NAME, SPEC and KERNELS")
  endif()
  if(TDB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tdispatch_add_backend: unknown arguments: ${TDB_UNPARSED_ARGUMENTS} (NAME, SPEC, KERNELS, TESTS)")
  endif()
  get_filename_component(spec_dir "${TDB_SPEC}" ABSOLUTE)
  if(NOT EXISTS "${spec_dir}/backends/${TDB_NAME}.lua")
    message(FATAL_ERROR "tdispatch_add_backend: ${spec_dir}/backends/${TDB_NAME}.lua does not exist")
  endif()
  find_program(TDISPATCH_LUA NAMES lua5.4 lua54 lua DOC "Lua 5.4, for tdispatch's generator")
  if(NOT TDISPATCH_LUA)
    message(FATAL_ERROR "tdispatch_add_backend: Lua 5.4 not found (apt-get install lua5.4), or set -DTDISPATCH_LUA=")
  endif()
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/tdispatch_${TDB_NAME})
  file(GLOB spec_files CONFIGURE_DEPENDS ${spec_dir}/backends/*.lua)
  file(GLOB gen_files CONFIGURE_DEPENDS ${tdispatch_GENERATOR_DIR}/tdgen/*.lua)
  set(outputs ${gen}/td_backend_${TDB_NAME}.h ${gen}/td_backend_${TDB_NAME}_module.c)
  if(TDB_TESTS)
    list(APPEND outputs ${gen}/td_kinds.h ${gen}/td_ops.h ${gen}/test_ops_${TDB_NAME}.c ${gen}/test_autodiff_${TDB_NAME}.c)
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${TDISPATCH_LUA} ${tdispatch_GENERATOR_DIR}/tdgen.lua --specs ${tdispatch_SPECS_DIR}
            --extra-specs ${spec_dir} --out ${gen}
    DEPENDS ${spec_files} ${gen_files} ${tdispatch_GENERATOR_DIR}/tdgen.lua
    COMMENT "tdispatch: generating the ${TDB_NAME} backend's header, module table and tests"
    VERBATIM)
  add_library(${TDB_NAME} MODULE ${TDB_KERNELS} ${gen}/td_backend_${TDB_NAME}_module.c)
  target_include_directories(${TDB_NAME} PRIVATE ${gen}
    $<TARGET_PROPERTY:tdispatch::tdispatch,INTERFACE_INCLUDE_DIRECTORIES>)
  set_target_properties(${TDB_NAME} PROPERTIES PREFIX "" C_STANDARD 11)
  if(NOT TDB_TESTS)
    return()
  endif()

  find_path(TDISPATCH_CMOCKA_INCLUDE_DIR cmocka.h DOC "cmocka's header, for tdispatch's generated suites")
  find_library(TDISPATCH_CMOCKA_LIBRARY cmocka DOC "cmocka, for tdispatch's generated suites")
  if(NOT TDISPATCH_CMOCKA_INCLUDE_DIR OR NOT TDISPATCH_CMOCKA_LIBRARY)
    message(FATAL_ERROR "tdispatch_add_backend: TESTS needs cmocka (apt-get install libcmocka-dev), or set "
                        "-DTDISPATCH_CMOCKA_INCLUDE_DIR= and -DTDISPATCH_CMOCKA_LIBRARY=")
  endif()
  # The helpers, compiled here over this backend's generated headers (its td_kinds.h names
  # TD_BACKEND_<NAME>; the op numbering and the other backends are the installed library's).
  set(helpers ${TDB_NAME}_tdt)
  add_library(${helpers} STATIC ${tdispatch_TESTING_DIR}/tdt.c)
  target_include_directories(${helpers} BEFORE PUBLIC ${gen} ${tdispatch_TESTING_DIR} ${TDISPATCH_CMOCKA_INCLUDE_DIR})
  target_link_libraries(${helpers} PUBLIC tdispatch::tdispatch ${TDISPATCH_CMOCKA_LIBRARY} m)
  # The installed td_core.h includes its sibling td_kinds.h, which lacks this backend: the
  # generated one is included first, and its include guard keeps the installed one out.
  if(MSVC)
    target_compile_options(${helpers} PUBLIC "/FI${gen}/td_kinds.h")
  else()
    target_compile_options(${helpers} PUBLIC "SHELL:-include ${gen}/td_kinds.h")
  endif()
  set_target_properties(${helpers} PROPERTIES C_STANDARD 11)
  # td_kinds.h / td_ops.h are generated with the suites.
  add_custom_target(${TDB_NAME}_generated DEPENDS ${outputs})
  add_dependencies(${helpers} ${TDB_NAME}_generated)
  foreach(kind ops autodiff)
    set(t test_${kind}_${TDB_NAME})
    add_executable(${t} ${gen}/test_${kind}_${TDB_NAME}.c)
    target_link_libraries(${t} PRIVATE ${helpers})
    # The module uses the library the program has loaded: a static libtdispatch must be
    # exported from the program.
    set_target_properties(${t} PROPERTIES C_STANDARD 11 ENABLE_EXPORTS ON)
    add_dependencies(${t} ${TDB_NAME})
    # Megabytes of straight-line calls: optimizing them costs minutes and saves nothing.
    if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
      target_compile_options(${t} PRIVATE -O0)
    endif()
    add_test(NAME ${t} COMMAND ${t})
    set_tests_properties(${t} PROPERTIES ENVIRONMENT "TD_BACKEND_PATH=$<TARGET_FILE:${TDB_NAME}>")
  endforeach()
endfunction()
