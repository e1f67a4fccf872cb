# File formats (runtime/io): safetensors and GGUF. Included by td_add_library for every library built
# (${TD_TARGET}). GGUF needs nothing. The safetensors writer needs nothing; its reader parses
# the JSON header with cJSON (Debian libcjson-dev) when TD_CJSON finds it, and returns
# TD_E_UNSUPPORTED without it.
target_sources(${TD_TARGET} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/td_safetensors.c)
target_sources(${TD_TARGET} PUBLIC FILE_SET HEADERS BASE_DIRS ${CMAKE_CURRENT_LIST_DIR}
               FILES ${CMAKE_CURRENT_LIST_DIR}/td_safetensors.h ${CMAKE_CURRENT_LIST_DIR}/td_gguf.h)

# The library file and header, not cJSON's CMake package: its target has no namespace and
# would have to be found again by every user of a static libtdispatch's package.
set(td_cjson_found FALSE)
if(NOT TD_CJSON STREQUAL "OFF")
  find_path(TD_CJSON_INCLUDE_DIR cjson/cJSON.h DOC "The directory holding cjson/cJSON.h")
  find_library(TD_CJSON_LIBRARY NAMES cjson DOC "The cJSON library")
  if(TD_CJSON_INCLUDE_DIR AND TD_CJSON_LIBRARY)
    set(td_cjson_found TRUE)
  endif()
endif()
td_use_dependency(TD_CJSON "${td_cjson_found}" "safetensors reader (cJSON)"
                  "cJSON was not found, td_safetensors_load returns TD_E_UNSUPPORTED" "apt-get install libcjson-dev")
if(TD_CJSON)
  target_compile_definitions(${TD_TARGET} PRIVATE TD_HAVE_CJSON=1)
  target_include_directories(${TD_TARGET} PRIVATE ${TD_CJSON_INCLUDE_DIR})
  target_link_libraries(${TD_TARGET} PRIVATE ${TD_CJSON_LIBRARY})
  td_summary("safetensors: reader and writer (cJSON ${TD_CJSON_LIBRARY})")
else()
  td_summary("safetensors: writer only")
endif()

# GGUF (ggml's model files): reader and writer, no dependency.
target_sources(${TD_TARGET} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/td_gguf.c)
