# The cpu kernels' vector paths: test_cpu_kernels and test_cpu_layout run as registered (the
# processor's widest level) and again with TD_CPU_CAPABILITY lowering it to AVX2 and to no
# vector instructions, so that a machine with AVX-512 checks all three.
foreach(t IN ITEMS test_cpu_kernels test_cpu_layout)
  if(TARGET ${t})
    foreach(cap IN ITEMS avx2 default)
      add_test(NAME ${t}_${cap} COMMAND ${t})
      set_tests_properties(${t}_${cap} PROPERTIES ENVIRONMENT "TD_CPU_CAPABILITY=${cap}")
    endforeach()
  endif()
endforeach()
# Large CPU storage asks for transparent huge pages unless TD_CPU_HUGE_PAGES=0: the layout
# test's 16 MiB results (streamed stores) run again on blocks left on the default pages.
if(TARGET test_cpu_layout)
  add_test(NAME test_cpu_layout_small_pages COMMAND test_cpu_layout)
  set_tests_properties(test_cpu_layout_small_pages PROPERTIES ENVIRONMENT "TD_CPU_HUGE_PAGES=0")
endif()
# The matmul and conv2d engines against loops written in the test, and the OpenBLAS core
# check (a pure function in cpu_internal.h, hence the library's internal includes); run again
# with OpenBLAS forced onto its Prescott (SSE3) kernels, which the test must see reported.
if(TARGET test_cpu_engines)
  target_include_directories(test_cpu_engines PRIVATE ${PROJECT_SOURCE_DIR}/runtime/cpu
                             ${PROJECT_SOURCE_DIR}/runtime/core ${TD_GENERATED})
  if(TD_DNNL)
    target_compile_definitions(test_cpu_engines PRIVATE TD_HAVE_DNNL=1)
  endif()
  if(TD_BLAS)
    target_compile_definitions(test_cpu_engines PRIVATE TD_HAVE_CBLAS=1)
    if(TD_BLAS_LIBRARY MATCHES "openblas")
      target_compile_definitions(test_cpu_engines PRIVATE TD_HAVE_OPENBLAS=1)
      # openblas_get_corename: the plain run expects the report the machine's own core calls for
      target_include_directories(test_cpu_engines PRIVATE ${TD_BLAS_INCLUDE_DIR})
      target_link_libraries(test_cpu_engines PRIVATE ${TD_BLAS_LIBRARY})
    endif()
  endif()
  add_test(NAME test_cpu_engines_openblas_prescott COMMAND test_cpu_engines)
  set_tests_properties(test_cpu_engines_openblas_prescott PROPERTIES ENVIRONMENT "OPENBLAS_CORETYPE=Prescott")
endif()
