# CPU backend: kernel sources, OpenMP threads, and oneDNN and CBLAS sgemm when found (portable otherwise).
target_sources(${TD_TARGET} PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cpu_device.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_info.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_dtypes.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_threads.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_elementwise.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_vecmath.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_reduce.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_layout.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_matmul.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_quant.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_dist.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_activation.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_bool.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_float_math.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_reduce_sort.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_int.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_indexing.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_module.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_attention.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_norm.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_optim.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_f64.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_half.c
)

# TD_OPENMP, TD_BLAS and TD_DNNL are AUTO, ON or OFF (td_use_dependency); this file is included once
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

# BLAS for sgemm. We choose OpenBLAS's OpenMP build on purpose: the CPU kernels run on
# libgomp's thread pool, and OpenBLAS's pthread build keeps a second pool of its own, which
# oversubscribes the cores when both are busy and prints "Detect OpenMP Loop ... may hang"
# when sgemm is called from inside an OpenMP region. The OpenMP build shares libgomp's pool.
# Debian installs the builds side by side (libopenblas0-openmp, -pthread, -serial) and
# points the plain libopenblas.so / libblas.so.3 at one of them through update-alternatives,
# which differs from machine to machine with what else is installed; so we link the chosen
# build from its own directory and CMake records that directory in the RPATH, and the
# library loaded at run time is the one chosen here whatever the alternatives say.
# Without OpenMP the pthread build is the right one; failing both, any CBLAS (reference
# libblas3 has the cblas_ symbols); failing that, the portable kernel.
set(td_cblas_found FALSE)
if(NOT TD_BLAS STREQUAL "OFF")
  if(TD_OPENMP)
    set(td_blas_variants openblas-openmp openblas-pthread)
  else()
    set(td_blas_variants openblas-pthread openblas-serial openblas-openmp)
  endif()
  set(td_blas_dirs)
  foreach(arch IN ITEMS ${CMAKE_LIBRARY_ARCHITECTURE} x86_64-linux-gnu aarch64-linux-gnu)
    foreach(v IN LISTS td_blas_variants)
      list(APPEND td_blas_dirs /usr/lib/${arch}/${v})
    endforeach()
  endforeach()
  find_library(TD_BLAS_LIBRARY NAMES openblas PATHS ${td_blas_dirs} NO_DEFAULT_PATH
               DOC "The BLAS library that provides cblas_sgemm")
  if(TD_BLAS_LIBRARY)
    get_filename_component(td_blas_variant ${TD_BLAS_LIBRARY} DIRECTORY)
    get_filename_component(td_blas_variant ${td_blas_variant} NAME)
    find_path(TD_BLAS_INCLUDE_DIR cblas.h NO_DEFAULT_PATH
              PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/${td_blas_variant}
                    /usr/include/x86_64-linux-gnu/${td_blas_variant} /usr/include/aarch64-linux-gnu/${td_blas_variant})
  else()
    find_library(TD_BLAS_LIBRARY NAMES openblas cblas blas DOC "The BLAS library that provides cblas_sgemm")
    find_path(TD_BLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu aarch64-linux-gnu)
  endif()
  if(TD_BLAS_INCLUDE_DIR AND TD_BLAS_LIBRARY)
    set(td_cblas_found TRUE)
  endif()
endif()
td_use_dependency(TD_BLAS "${td_cblas_found}" "cpu: CBLAS sgemm" "CBLAS was not found, matmul uses the portable kernel"
                  "apt-get install libopenblas-openmp-dev")
if(TD_BLAS)
  target_compile_definitions(${TD_TARGET} PRIVATE TD_HAVE_CBLAS=1)
  target_include_directories(${TD_TARGET} PRIVATE ${TD_BLAS_INCLUDE_DIR})
  target_link_libraries(${TD_TARGET} PRIVATE ${TD_BLAS_LIBRARY})
  if(TD_BLAS_LIBRARY MATCHES "openblas")
    target_compile_definitions(${TD_TARGET} PRIVATE TD_HAVE_OPENBLAS=1) # openblas_get_corename()
  endif()
  td_summary("cpu: CBLAS sgemm (${TD_BLAS_LIBRARY})")
endif()

# oneDNN (Debian libdnnl-dev, its OpenMP build) for matmul (dnnl_sgemm) and conv2d (its
# convolution primitives, cached by shape): it picks its JIT kernels from what the processor
# has, where OpenBLAS may mis-detect a newer CPU as an old one (docs/kernels.md).
set(td_dnnl_found FALSE)
if(NOT TD_DNNL STREQUAL "OFF")
  find_path(TD_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.h)
  find_library(TD_DNNL_LIBRARY NAMES dnnl DOC "oneDNN (libdnnl)")
  if(TD_DNNL_INCLUDE_DIR AND TD_DNNL_LIBRARY)
    set(td_dnnl_found TRUE)
  endif()
endif()
td_use_dependency(TD_DNNL "${td_dnnl_found}" "cpu: oneDNN matmul and conv2d"
                  "oneDNN was not found, matmul and conv2d use CBLAS or the portable kernels" "apt-get install libdnnl-dev")
if(TD_DNNL)
  target_sources(${TD_TARGET} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cpu_dnnl.c)
  target_compile_definitions(${TD_TARGET} PRIVATE TD_HAVE_DNNL=1)
  target_include_directories(${TD_TARGET} PRIVATE ${TD_DNNL_INCLUDE_DIR})
  target_link_libraries(${TD_TARGET} PRIVATE ${TD_DNNL_LIBRARY})
  td_summary("cpu: oneDNN (${TD_DNNL_LIBRARY})")
endif()
if(TD_DNNL)
  td_summary("cpu: matmul and conv2d engine: oneDNN (TD_CPU_ENGINE=blas|portable lowers it at run time)")
elseif(TD_BLAS)
  td_summary("cpu: matmul and conv2d engine: CBLAS sgemm (conv2d through im2col)")
else()
  td_summary("cpu: matmul and conv2d engine: portable loops")
endif()

# SLEEF (Debian libsleef-dev) for the transcendental kernels: 8 lanes at a time with AVX2,
# chosen at run time (cpu_vecmath.c); libm one element at a time without it.
set(td_sleef_found FALSE)
if(NOT TD_SLEEF STREQUAL "OFF")
  find_path(TD_SLEEF_INCLUDE_DIR sleef.h PATH_SUFFIXES x86_64-linux-gnu aarch64-linux-gnu)
  find_library(TD_SLEEF_LIBRARY NAMES sleef DOC "The SLEEF vectorized math library")
  if(TD_SLEEF_INCLUDE_DIR AND TD_SLEEF_LIBRARY)
    set(td_sleef_found TRUE)
  endif()
endif()
td_use_dependency(TD_SLEEF "${td_sleef_found}" "cpu: SLEEF vector math"
                  "SLEEF was not found, exp/log/tanh/... use libm one element at a time" "apt-get install libsleef-dev")
if(TD_SLEEF)
  target_compile_definitions(${TD_TARGET} PRIVATE TD_HAVE_SLEEF=1)
  target_include_directories(${TD_TARGET} PRIVATE ${TD_SLEEF_INCLUDE_DIR})
  target_link_libraries(${TD_TARGET} PRIVATE ${TD_SLEEF_LIBRARY})
  td_summary("cpu: exp/log/sin/cos/tanh/sigmoid/gelu use SLEEF (${TD_SLEEF_LIBRARY}) where AVX2 is present")
endif()

# The math functions (expf, erff, ...) live in libm on Unix.
if(UNIX)
  target_link_libraries(${TD_TARGET} PRIVATE m)
endif()
