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
function(tdispatch_add_backend)
  cmake_parse_arguments(TDB "" "NAME;SPEC" "KERNELS" ${ARGN})
  if(NOT TDB_NAME OR NOT TDB_SPEC OR NOT TDB_KERNELS)
    message(FATAL_ERROR "tdispatch_add_backend: give NAME, SPEC and KERNELS")
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
  add_custom_command(
    OUTPUT ${gen}/td_backend_${TDB_NAME}.h ${gen}/td_backend_${TDB_NAME}_module.c
    COMMAND ${TDISPATCH_LUA} ${tdispatch_GENERATOR_DIR}/tdgen.lua --specs ${tdispatch_SPECS_DIR}
            --extra-specs ${spec_dir} --out ${gen}
    DEPENDS ${spec_files} ${gen_files} ${tdispatch_GENERATOR_DIR}/tdgen.lua
    COMMENT "tdispatch: generating the ${TDB_NAME} backend's header and module table"
    VERBATIM)
  add_library(${TDB_NAME} MODULE ${TDB_KERNELS} ${gen}/td_backend_${TDB_NAME}_module.c)
  target_include_directories(${TDB_NAME} PRIVATE ${gen}
    $<TARGET_PROPERTY:tdispatch::tdispatch,INTERFACE_INCLUDE_DIRECTORIES>)
  set_target_properties(${TDB_NAME} PROPERTIES PREFIX "" C_STANDARD 11)
endfunction()
