# Install rules: the library, its public headers (the generated ones included) under
# include/tdispatch, the CMake package (tdispatch::tdispatch, with a version file) and
# tdispatch.pc, and tdinfo when built. Both package files are relocatable: cmake --install
# --prefix P works.
include(CMakePackageConfigHelpers)

set(TD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tdispatch)
install(TARGETS tdispatch EXPORT tdispatchTargets
        FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tdispatch)
install(EXPORT tdispatchTargets NAMESPACE tdispatch:: DESTINATION ${TD_CMAKE_DIR})
if(TARGET tdinfo)
  install(TARGETS tdinfo)
endif()
# Said again for users with CMake < 3.23, which ignores the installed header set.
target_include_directories(tdispatch INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tdispatch>)

# What a static library's users must link too, from what the library was linked with.
td_link_closure(tdispatch td_private_libs td_packages)
get_target_property(td_type tdispatch TYPE)
set(TD_CONFIG_SHARED OFF)
if(td_type STREQUAL "SHARED_LIBRARY")
  set(TD_CONFIG_SHARED ON)
endif()
string(REPLACE ";" " " TD_CONFIG_BACKENDS "${TD_ENABLED_BACKENDS}")
set(TD_CONFIG_DEPENDENCIES)
foreach(p IN LISTS td_packages)
  string(APPEND TD_CONFIG_DEPENDENCIES "  ${p}\n")
endforeach()
# The generator and the op specs, for tdispatch_add_backend (cmake/tdispatchAddBackend.cmake).
set(TD_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/tdispatch)
install(FILES ${PROJECT_SOURCE_DIR}/gen/tdgen.lua DESTINATION ${TD_SHARE_DIR}/gen)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/gen/tdgen DESTINATION ${TD_SHARE_DIR}/gen FILES_MATCHING PATTERN "*.lua")
install(FILES ${PROJECT_SOURCE_DIR}/specs/dtypes.lua DESTINATION ${TD_SHARE_DIR}/specs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/specs/ops DESTINATION ${TD_SHARE_DIR}/specs FILES_MATCHING PATTERN "*.lua")
install(FILES ${PROJECT_SOURCE_DIR}/cmake/tdispatchAddBackend.cmake DESTINATION ${TD_CMAKE_DIR})
# The specs of the built-in backends this library was built with, so that a module's
# generated suites (tdispatch_add_backend(... TESTS)) compare it with the CPU backend and
# its td_kinds.h names the same backends as the installed one. Their kernels are compiled
# into the library; the generator only checks that each spec's kernel folder exists, so
# an empty one stands for it (share/tdispatch/runtime/<name>, with a note saying so).
foreach(be IN LISTS TD_ENABLED_BACKENDS)
  if(EXISTS ${PROJECT_SOURCE_DIR}/specs/backends/${be}.lua)
    install(FILES ${PROJECT_SOURCE_DIR}/specs/backends/${be}.lua DESTINATION ${TD_SHARE_DIR}/specs/backends)
    file(WRITE ${PROJECT_BINARY_DIR}/td_kernels_note/${be}/README
         "The ${be} backend's kernels are compiled into libtdispatch. This folder stands for its\n"
         "spec's kernel folder (specs/backends/${be}.lua), which the generator checks exists.\n")
    install(FILES ${PROJECT_BINARY_DIR}/td_kernels_note/${be}/README DESTINATION ${TD_SHARE_DIR}/runtime/${be})
  endif()
endforeach()
# The cmocka helpers of the generated suites (tests/common/tdt.*), compiled by
# tdispatch_add_backend(... TESTS) in the module's project.
install(FILES ${PROJECT_SOURCE_DIR}/tests/common/tdt.c ${PROJECT_SOURCE_DIR}/tests/common/tdt.h
        DESTINATION ${TD_SHARE_DIR}/testing)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tdispatchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tdispatchConfig.cmake INSTALL_DESTINATION ${TD_CMAKE_DIR} PATH_VARS TD_SHARE_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tdispatchConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tdispatchConfig.cmake ${PROJECT_BINARY_DIR}/tdispatchConfigVersion.cmake
        DESTINATION ${TD_CMAKE_DIR})

# pkg-config: prefix found from the file's own place (one ../ per directory of libdir, and
# one for pkgconfig/); Libs.private for static linking (pkg-config --static).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(FATAL_ERROR "tdispatch: CMAKE_INSTALL_LIBDIR must be relative to the prefix for tdispatch.pc")
endif()
string(REGEX REPLACE "[^/]+" ".." TD_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
string(REPLACE ";" " " TD_PC_LIBS_PRIVATE "${td_private_libs}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tdispatch.pc.in ${PROJECT_BINARY_DIR}/tdispatch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tdispatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
td_summary("install: ${CMAKE_INSTALL_PREFIX} (lib, include/tdispatch, CMake package, tdispatch.pc)")
