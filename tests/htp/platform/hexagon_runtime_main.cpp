// Hexagon side of the runtime-helper test: prints runtime_digest() as "digest <hex> <count>".
#include "htp/platform/hexagon/syscall.h"
#include "runtime_digest.h"

namespace {

char* put_hex(char* p, uint64_t v) {
  for (int i = 15; i >= 0; --i) *p++ = "0123456789abcdef"[(v >> (4 * i)) & 15];
  return p;
}

}  // namespace

extern "C" int main(int, char**) {
  const hexllm::test::Digest d = hexllm::test::runtime_digest();
  char line[64] = "digest ";
  char* p = put_hex(line + 7, d.h);
  *p++ = ' ';
  p = put_hex(p, d.n);
  *p++ = '\n';
  hexllm::htp::hx::sys(hexllm::htp::hx::SYS_write, 1, line, p - line);
  return 0;
}
