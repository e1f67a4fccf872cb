# CPU backend: kernel sources, OpenMP threads and CBLAS sgemm when found (portable otherwise).
target_sources(${TD_TARGET} PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cpu_device.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_info.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_elementwise.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_reduce.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_layout.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_matmul.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_dist.c)

# TD_OPENMP and TD_BLAS are AUTO, ON or OFF (td_use_dependency); this file is included once
# per library built, and its configure lines are printed once.
if(NOT TD_OPENMP STREQUAL "OFF")
  find_package(OpenMP COMPONENTS C QUIET)
endif()
td_use_dependency(TD_OPENMP "${OpenMP_C_FOUND}" "cpu: OpenMP threads" "OpenMP was not found, kernels run on one thread"
                  "a compiler with OpenMP support")
if(TD_OPENMP)
  target_link_libraries(${TD_TARGET} PRIVATE OpenMP::OpenMP_C)
  td_summary("cpu: OpenMP ${OpenMP_C_VERSION} threads")
endif()

set(td_cblas_found FALSE)
if(NOT TD_BLAS STREQUAL "OFF")
  # Debian/Ubuntu keep cblas.h under the multiarch include dir.
  find_path(TD_CBLAS_INCLUDE_DIR cblas.h
    PATH_SUFFIXES openblas x86_64-linux-gnu aarch64-linux-gnu)
  find_library(TD_CBLAS_LIBRARY NAMES openblas cblas blas)
  if(TD_CBLAS_INCLUDE_DIR AND TD_CBLAS_LIBRARY)
    set(td_cblas_found TRUE)
  endif()
endif()
td_use_dependency(TD_BLAS "${td_cblas_found}" "cpu: CBLAS sgemm" "CBLAS was not found, matmul uses the portable kernel"
                  "apt-get install libopenblas-dev")
if(TD_BLAS)
  target_compile_definitions(${TD_TARGET} PRIVATE TD_HAVE_CBLAS=1)
  target_include_directories(${TD_TARGET} PRIVATE ${TD_CBLAS_INCLUDE_DIR})
  target_link_libraries(${TD_TARGET} PRIVATE ${TD_CBLAS_LIBRARY})
  td_summary("cpu: matmul uses CBLAS sgemm (${TD_CBLAS_LIBRARY})")
endif()

# The math functions (expf, erff, ...) live in libm on Unix.
if(UNIX)
  target_link_libraries(${TD_TARGET} PRIVATE m)
endif()
