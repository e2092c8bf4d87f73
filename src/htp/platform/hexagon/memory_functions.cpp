// memcpy / memmove / memset / memcmp for the freestanding Hexagon build. The compiler emits
// calls to them for struct copies and large initialisers even in freestanding code. Word-wise
// when the pointers allow it: under emulation every instruction counts. -ffreestanding keeps
// the compiler from turning these loops back into calls to themselves.
#include <stddef.h>
#include <stdint.h>

namespace {

bool aligned8(const void* a, const void* b) { return (((uintptr_t)a | (uintptr_t)b) & 7) == 0; }

}  // namespace

extern "C" {

void* memcpy(void* __restrict dst, const void* __restrict src, size_t n) {
  auto* d = (unsigned char*)dst;
  auto* s = (const unsigned char*)src;
  if (aligned8(d, s)) {
    for (; n >= 32; n -= 32, d += 32, s += 32) {
      const uint64_t a = ((const uint64_t*)s)[0], b = ((const uint64_t*)s)[1];
      const uint64_t c = ((const uint64_t*)s)[2], e = ((const uint64_t*)s)[3];
      ((uint64_t*)d)[0] = a;
      ((uint64_t*)d)[1] = b;
      ((uint64_t*)d)[2] = c;
      ((uint64_t*)d)[3] = e;
    }
    for (; n >= 8; n -= 8, d += 8, s += 8) *(uint64_t*)d = *(const uint64_t*)s;
  }
  for (; n > 0; --n) *d++ = *s++;
  return dst;
}

void* memmove(void* dst, const void* src, size_t n) {
  auto* d = (unsigned char*)dst;
  auto* s = (const unsigned char*)src;
  if (d == s || n == 0) return dst;
  if (d < s || d >= s + n) return memcpy(dst, src, n);
  // Overlapping with dst above src: copy from the end.
  d += n;
  s += n;
  if (aligned8(d, s))
    for (; n >= 8; n -= 8) {
      d -= 8;
      s -= 8;
      *(uint64_t*)d = *(const uint64_t*)s;
    }
  for (; n > 0; --n) *--d = *--s;
  return dst;
}

void* memset(void* dst, int v, size_t n) {
  auto* d = (unsigned char*)dst;
  const unsigned char b = (unsigned char)v;
  for (; n > 0 && ((uintptr_t)d & 7) != 0; --n) *d++ = b;
  const uint64_t w = b * 0x0101010101010101ull;
  for (; n >= 8; n -= 8, d += 8) *(uint64_t*)d = w;
  for (; n > 0; --n) *d++ = b;
  return dst;
}

int memcmp(const void* a, const void* b, size_t n) {
  auto* p = (const unsigned char*)a;
  auto* q = (const unsigned char*)b;
  for (; n > 0; --n, ++p, ++q)
    if (*p != *q) return *p < *q ? -1 : 1;
  return 0;
}

}  // extern "C"
