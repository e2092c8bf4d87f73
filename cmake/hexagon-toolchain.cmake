# Cross toolchain for the Hexagon device build: clang-19 for Hexagon v67 with 128-byte HVX, and a
# static, freestanding link with ld.lld-19 (no libc: platform/hexagon provides _start, the system
# calls, the memory functions and the compiler-runtime helpers).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR hexagon)

find_program(HEXLLM_HEXAGON_CLANG NAMES clang-19 REQUIRED)
find_program(HEXLLM_HEXAGON_CLANGXX NAMES clang++-19 REQUIRED)
find_program(HEXLLM_HEXAGON_LLD NAMES ld.lld-19 REQUIRED)
set(CMAKE_C_COMPILER ${HEXLLM_HEXAGON_CLANG})
set(CMAKE_CXX_COMPILER ${HEXLLM_HEXAGON_CLANGXX})
set(CMAKE_C_COMPILER_TARGET hexagon)
set(CMAKE_CXX_COMPILER_TARGET hexagon)
set(CMAKE_LINKER ${HEXLLM_HEXAGON_LLD})
# Nothing can be linked before the device runtime exists.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(HEXLLM_HEXAGON_FLAGS "-mv67 -mhvx -mhvx-length=128b -ffreestanding -fno-exceptions -fno-rtti")
set(CMAKE_C_FLAGS_INIT "${HEXLLM_HEXAGON_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${HEXLLM_HEXAGON_FLAGS}")
set(CMAKE_CXX_LINK_EXECUTABLE
    "<CMAKE_LINKER> -static -e _start --gc-sections <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
