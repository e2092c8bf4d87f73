// The translation unit that builds the tests' precompiled gtest header (tests/CMakeLists.txt).
