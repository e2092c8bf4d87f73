# Writes OUT: a header defining HEXLLM_GENERATOR_FINGERPRINT, a hash of the files in SOURCES
# (separated by "|"). Tests name their cached synthetic models with it, so a change to the generator
# (or the quantizers and writer it uses) makes them generate afresh instead of reusing stale files.
string(REPLACE "|" ";" SOURCES "${SOURCES}")
set(all "")
foreach(f IN LISTS SOURCES)
  file(SHA256 "${f}" h)
  string(APPEND all "${h}")
endforeach()
string(SHA256 digest "${all}")
string(SUBSTRING "${digest}" 0 16 digest)
set(text "#pragma once\n#define HEXLLM_GENERATOR_FINGERPRINT \"${digest}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
