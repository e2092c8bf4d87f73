// Process entry for a static Hexagon Linux executable: the kernel (or qemu-hexagon) jumps to
// _start with r29 pointing at argc, then argv[0..argc-1], NULL, envp..., NULL, auxv. We run the
// static constructors, call main(argc, argv) and leave with exit_group: there is no libc to
// return into, and static destructors are not run (the device holds nothing that outlives it).
#include <stdint.h>

#include "htp/platform/hexagon/syscall.h"

extern "C" {

using init_fn = void (*)();
// Defined by the linker around .preinit_array / .init_array.
extern init_fn __preinit_array_start[] __attribute__((weak));
extern init_fn __preinit_array_end[] __attribute__((weak));
extern init_fn __init_array_start[] __attribute__((weak));
extern init_fn __init_array_end[] __attribute__((weak));

char** hexllm_environ = nullptr;

// Called by _start with the initial stack pointer, before main.
void hexllm_start_init(uint32_t* sp) {
  const uint32_t argc = sp[0];
  hexllm_environ = (char**)(sp + 1 + argc + 1);
  for (init_fn* f = __preinit_array_start; f != __preinit_array_end; ++f) (*f)();
  for (init_fn* f = __init_array_start; f != __init_array_end; ++f) (*f)();
}

void hexllm_start_exit(int code) { hexllm::htp::hx::exit_group(code); }

}  // extern "C"

// r16 is callee-saved, so it keeps the initial stack pointer across the init call. The stack
// is realigned to 8 bytes (the ABI's requirement) before any call; r31 = 0 ends backtraces.
__asm__(R"(
  .text
  .globl _start
  .type _start, @function
  .p2align 4
_start:
  { r16 = r29
    r30 = #0
    r31 = #0 }
  r29 = and(r29, #-16)
  r0 = r16
  call hexllm_start_init
  r0 = memw(r16 + #0)
  r1 = add(r16, #4)
  call main
  call hexllm_start_exit
  .size _start, . - _start
)");
