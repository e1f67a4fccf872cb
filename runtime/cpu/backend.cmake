# CPU backend: kernel sources, OpenMP threads and CBLAS sgemm when found (portable otherwise).
target_sources(${TD_TARGET} PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cpu_device.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_elementwise.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_reduce.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_layout.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_matmul.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_dist.c)

find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND)
  target_link_libraries(${TD_TARGET} PRIVATE OpenMP::OpenMP_C)
  message(STATUS "tdispatch cpu: OpenMP threads enabled")
else()
  message(STATUS "tdispatch cpu: OpenMP not found, kernels run on one thread")
endif()

# Debian/Ubuntu keep cblas.h under the multiarch include dir.
find_path(TD_CBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas x86_64-linux-gnu aarch64-linux-gnu)
find_library(TD_CBLAS_LIBRARY NAMES openblas cblas blas)
if(TD_CBLAS_INCLUDE_DIR AND TD_CBLAS_LIBRARY)
  target_compile_definitions(${TD_TARGET} PRIVATE TD_HAVE_CBLAS=1)
  target_include_directories(${TD_TARGET} PRIVATE ${TD_CBLAS_INCLUDE_DIR})
  target_link_libraries(${TD_TARGET} PRIVATE ${TD_CBLAS_LIBRARY})
  message(STATUS "tdispatch cpu: matmul uses CBLAS sgemm (${TD_CBLAS_LIBRARY})")
else()
  message(STATUS "tdispatch cpu: CBLAS not found, matmul uses the portable kernel")
endif()

# The math functions (expf, erff, ...) live in libm on Unix.
if(UNIX)
  target_link_libraries(${TD_TARGET} PRIVATE m)
endif()
