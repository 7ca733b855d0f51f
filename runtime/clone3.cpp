// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/clone3.hpp"

#include <sys/syscall.h>

#include <cerrno>

// cordon_clone3(args, size, fn, arg): the system call, then, in the child only, fn(arg) and exit.
// The kernel starts the child on the new stack with the caller's registers but the result: fn and
// arg are kept in registers the system call preserves (x86_64: every one but rax, rcx, r11;
// aarch64: every one but x0). The parent returns the kernel's result (a pid or -errno).
// The child aligns its stack to 16 bytes itself (the ABI's alignment at a call), whatever the
// caller's stack; the parent's part has its unwind information, the child's none (nothing unwinds
// past the function it calls, which never returns here: the system call exit follows).
#if defined(__x86_64__)
#define CORDON_HAS_CLONE3_ENTRY 1
// clang-format off
asm(R"(
    .pushsection .text
    .p2align 4
    .type cordon_clone3_entry, @function
cordon_clone3_entry:
    .cfi_startproc
    endbr64                 # a no-op where indirect branches are not tracked
    mov %rdx, %r8           # fn
    mov %rcx, %r9           # arg
    mov $435, %eax          # SYS_clone3
    syscall
    test %rax, %rax
    jz 1f
    ret
    .cfi_endproc
1:
    xor %ebp, %ebp
    and $-16, %rsp
    mov %r9, %rdi
    call *%r8
    mov %eax, %edi
    mov $60, %eax           # SYS_exit
    syscall
    hlt
    .size cordon_clone3_entry, .-cordon_clone3_entry
    .popsection
)");
// clang-format on
#elif defined(__aarch64__)
#define CORDON_HAS_CLONE3_ENTRY 1
// clang-format off
asm(R"(
    .pushsection .text
    .p2align 4
    .type cordon_clone3_entry, %function
cordon_clone3_entry:
    .cfi_startproc
    mov x8, #435            // SYS_clone3
    svc #0
    cbz x0, 1f
    ret
    .cfi_endproc
1:
    mov x29, #0
    mov x9, sp
    and x9, x9, #-16
    mov sp, x9
    mov x0, x3              // arg
    blr x2                  // fn
    mov x8, #93             // SYS_exit
    svc #0
    brk #0
    .size cordon_clone3_entry, .-cordon_clone3_entry
    .popsection
)");
// clang-format on
#endif

#if defined(CORDON_HAS_CLONE3_ENTRY)
extern "C" long cordon_clone3_entry(clone_args* args, unsigned long size, int (*fn)(void*),
                                    void* arg);
#endif

namespace cordon::runtime::detail {

bool clone3_entry_built() noexcept {
#if defined(CORDON_HAS_CLONE3_ENTRY)
    return true;
#else
    return false;
#endif
}

pid_t clone3_call(clone_args& args, int (*fn)(void*), void* arg) noexcept {
#if defined(CORDON_HAS_CLONE3_ENTRY)
    static_assert(SYS_clone3 == 435, "the entry code names clone3 by its number");
    const long result = cordon_clone3_entry(&args, sizeof args, fn, arg);
    if (result < 0) {
        errno = static_cast<int>(-result);
        return -1;
    }
    return static_cast<pid_t>(result);
#else
    (void)args;
    (void)fn;
    (void)arg;
    errno = ENOSYS;
    return -1;
#endif
}

}  // namespace cordon::runtime::detail
