# TD_PYTHON: the CPython extension module `tdispatch` (python/*.c and the generated op
# functions, ${TD_GENERATED}/td_python.c), built into ${PROJECT_BINARY_DIR}/python: put that
# folder on PYTHONPATH. AUTO: on where CPython's development files and NumPy are found (NumPy
# for the tests and Tensor.numpy(); the module itself includes no NumPy header). Off under
# the sanitizers and fuzzing (an instrumented module would need the runtime preloaded into
# an uninstrumented interpreter) and in a selective build (TD_OPS: the ops are fewer).
# A project that includes tdispatch (add_subdirectory) gets it only when it asks (ON).
set(td_py_default OFF)
if(PROJECT_IS_TOP_LEVEL)
  set(td_py_default AUTO)
endif()
td_dependency_option(TD_PYTHON "The Python module tdispatch (python3-dev, python3-numpy)" ${td_py_default})
set(td_py_found FALSE)
set(td_py_reason "Python 3 development files or NumPy were not found")
if((TD_SANITIZE OR TD_TSAN OR TD_FUZZ OR TD_OPS) AND NOT TD_PYTHON STREQUAL "ON")
  td_summary("Python module: off (not built under sanitizers, fuzzing or a selective build)")
  set(TD_PYTHON OFF)
elseif(NOT TD_PYTHON STREQUAL "OFF")
  # Debian's interpreter (the one python3-numpy serves) unless told otherwise.
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module NumPy QUIET)
  if(Python3_FOUND AND Python3_Development.Module_FOUND AND Python3_NumPy_FOUND)
    set(td_py_found TRUE)
  endif()
endif()
if(NOT TD_PYTHON STREQUAL "OFF" OR NOT (TD_SANITIZE OR TD_TSAN OR TD_FUZZ OR TD_OPS))
  td_use_dependency(TD_PYTHON "${td_py_found}" "Python module" "${td_py_reason}"
                    "apt-get install python3-dev python3-numpy")
endif()
if(TD_PYTHON)
  Python3_add_library(tdispatch_python MODULE WITH_SOABI
                      ${PROJECT_SOURCE_DIR}/python/tdispatch_module.c ${TD_GENERATED}/td_python.c)
  set_target_properties(tdispatch_python PROPERTIES OUTPUT_NAME tdispatch
                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python C_VISIBILITY_PRESET hidden)
  target_include_directories(tdispatch_python PRIVATE ${PROJECT_SOURCE_DIR}/python)
  # Python's headers are not -Wpedantic / -Wconversion clean; the module's own code is
  # built with the project's warnings otherwise.
  target_compile_options(tdispatch_python PRIVATE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                         $<$<BOOL:${TD_WERROR}>:-Werror>)
  target_link_libraries(tdispatch_python PRIVATE tdispatch)
  get_target_property(td_lib_type tdispatch TYPE)
  if(td_lib_type STREQUAL "STATIC_LIBRARY")
    set_target_properties(tdispatch PROPERTIES POSITION_INDEPENDENT_CODE ON) # linked into a shared module
  endif()
  # The stub beside the module, for editors and type checkers, and the specs' examples as
  # data for tests/python/test_examples.py.
  add_custom_command(TARGET tdispatch_python POST_BUILD
                     COMMAND ${CMAKE_COMMAND} -E copy_if_different ${TD_GENERATED}/tdispatch.pyi
                             ${PROJECT_BINARY_DIR}/python/tdispatch.pyi
                     COMMAND ${CMAKE_COMMAND} -E copy_if_different ${TD_GENERATED}/tdispatch_examples.py
                             ${PROJECT_BINARY_DIR}/python/tdispatch_examples.py)
  td_summary("Python module: ${Python3_EXECUTABLE} ${Python3_VERSION}, NumPy ${Python3_NumPy_VERSION}; "
             "PYTHONPATH=${PROJECT_BINARY_DIR}/python")
endif()
