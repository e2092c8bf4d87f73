# Builds the device runtime and a static Hexagon hexllm-htp into <build>/hexagon whenever
# clang-19 and ld.lld-19 are present (scripts/setup.sh installs them with qemu-user); without
# them the host build goes on and --htp-target hexagon says what is missing.
include(ExternalProject)

option(HEXLLM_HEXAGON "Build the Hexagon device when clang-19 and lld-19 are present" ON)

find_program(HEXLLM_CLANG19 clang-19)
find_program(HEXLLM_CLANGXX19 clang++-19)
find_program(HEXLLM_LLD19 ld.lld-19)
set(HEXLLM_HEXAGON_DIR ${CMAKE_BINARY_DIR}/hexagon)
set(HEXLLM_HEXAGON_DEVICE ${HEXLLM_HEXAGON_DIR}/hexllm-htp)

set(missing "")
foreach(tool HEXLLM_CLANG19 HEXLLM_CLANGXX19 HEXLLM_LLD19)
  if(NOT ${tool} OR NOT EXISTS "${${tool}}")
    list(APPEND missing ${tool})
  endif()
endforeach()

if(HEXLLM_HEXAGON AND NOT missing)
  set(HEXLLM_HEXAGON_BUILD ON)
  message(STATUS "Hexagon device build: ON (${HEXLLM_CLANGXX19}, ${HEXLLM_LLD19}) -> ${HEXLLM_HEXAGON_DEVICE}")
  ExternalProject_Add(hexllm_hexagon
    SOURCE_DIR ${CMAKE_SOURCE_DIR}/cmake/hexagon
    BINARY_DIR ${HEXLLM_HEXAGON_DIR}
    CMAKE_ARGS
      -DCMAKE_TOOLCHAIN_FILE=${CMAKE_SOURCE_DIR}/cmake/hexagon-toolchain.cmake
      -DCMAKE_BUILD_TYPE=Release
      -DHEXLLM_SOURCE_DIR=${CMAKE_SOURCE_DIR}
      -DHEXLLM_WERROR=${HEXLLM_WERROR}
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    BUILD_BYPRODUCTS ${HEXLLM_HEXAGON_DEVICE})
else()
  set(HEXLLM_HEXAGON_BUILD OFF)
  if(NOT HEXLLM_HEXAGON)
    message(STATUS "Hexagon device build: OFF (HEXLLM_HEXAGON=OFF)")
  else()
    message(STATUS "Hexagon device build: OFF (needs clang-19, clang++-19 and ld.lld-19; scripts/setup.sh "
                   "installs them) - --htp-target hexagon is unavailable and the 'hexagon' tests skip")
  endif()
endif()
