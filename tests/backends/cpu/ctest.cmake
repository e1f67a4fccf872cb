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
