# The downstream test's steps, one per CTest test (cmake -DSTEP=... -P run.cmake):
#   install           install the build BUILD_DIR into PREFIX (emptied first)
#   find_package      configure, build and run the consumer project against PREFIX
#   pkg-config        compile the consumer with the flags of PREFIX's tdispatch.pc, run it
#   add_subdirectory  configure, build and run the consumer project with SOURCE_DIR inside
# Other inputs: WORK_DIR, LIBDIR (relative to PREFIX), C_COMPILER, BUILD_TYPE, SHARED
# (ON/OFF), FLAGS (compiler and linker flags, e.g. the sanitizers of the build under test).
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "downstream ${STEP}: failed (${rc}): ${cmd}")
  endif()
endfunction()

set(here ${CMAKE_CURRENT_LIST_DIR})
set(dir ${WORK_DIR}/${STEP})
if(STEP STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
elseif(STEP STREQUAL "find_package" OR STEP STREQUAL "add_subdirectory")
  file(REMOVE_RECURSE ${dir})
  set(args -S ${here} -B ${dir} -DTD_CONSUMER_MODE=${STEP} -DCMAKE_C_COMPILER=${C_COMPILER}
           -DCMAKE_BUILD_TYPE=${BUILD_TYPE} "-DCMAKE_C_FLAGS=${FLAGS}")
  if(STEP STREQUAL "find_package")
    list(APPEND args -DCMAKE_PREFIX_PATH=${PREFIX})
  else()
    # The Vulkan backend's sources and shaders off: what this step checks is the CMake
    # integration (targets, include paths, link interface), which the CPU build shows; the
    # Vulkan build is the main tree's. Halves the step's build (CI time, .ci/test).
    list(APPEND args -DTDISPATCH_SOURCE_DIR=${SOURCE_DIR} -DBUILD_SHARED_LIBS=${SHARED} -DTD_BACKEND_VULKAN=OFF)
  endif()
  run(${CMAKE_COMMAND} ${args})
  run(${CMAKE_COMMAND} --build ${dir} -j 2)
  run(${dir}/consumer)
elseif(STEP STREQUAL "pkg-config")
  find_program(PKG_CONFIG pkg-config REQUIRED)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  # As the README tells a user with a prefix of their own: PKG_CONFIG_PATH and nothing
  # else (no PKG_CONFIG_LIBDIR, no LD_LIBRARY_PATH: the rpath from --variable=libdir finds
  # a shared library).
  set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
  unset(ENV{PKG_CONFIG_LIBDIR})
  unset(ENV{LD_LIBRARY_PATH})
  # ... and the README says what this step does.
  file(READ ${SOURCE_DIR}/README.md readme)
  string(FIND "${readme}" "cc app.c $(pkg-config --cflags --libs tdispatch) -Wl,-rpath,$(pkg-config --variable=libdir tdispatch)" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "downstream pkg-config: README.md no longer shows the rpath command this step runs")
  endif()
  set(static)
  if(NOT SHARED)
    set(static --static)
  endif()
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ${static} tdispatch
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  execute_process(COMMAND ${PKG_CONFIG} --variable=libdir tdispatch
                  OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "downstream pkg-config: pkg-config does not know tdispatch in ${PREFIX}/${LIBDIR}/pkgconfig")
  endif()
  message("pkg-config --cflags --libs ${static} tdispatch: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  separate_arguments(extra UNIX_COMMAND "${FLAGS}")
  run(${C_COMPILER} -std=c11 ${extra} ${here}/consumer.c -o ${dir}/consumer ${flags} -Wl,-rpath,${libdir})
  run(${dir}/consumer)
else()
  message(FATAL_ERROR "run.cmake: unknown STEP '${STEP}'")
endif()
