// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/child_stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORDON_CHILD_STACK_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CORDON_CHILD_STACK_ASAN 1
#endif
#if defined(CORDON_CHILD_STACK_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace cordon::runtime::detail {

child_stack* child_stack::for_this_thread() noexcept {
    thread_local child_stack stack;
    if (!stack.mapped() && !stack.map()) return nullptr;
    return &stack;
}

child_stack::~child_stack() {
    if (base_ == nullptr) return;
    unpoison();
    ::munmap(base_, total_size_);
}

void child_stack::unpoison() const noexcept {
#if defined(CORDON_CHILD_STACK_ASAN)
    if (base_ != nullptr) {
        ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(base_) + guard_size_,
                                    total_size_ - guard_size_);
    }
#endif
}

bool child_stack::map() noexcept {
    if (base_ != nullptr) return true;
    const long page_size = ::sysconf(_SC_PAGESIZE);
    const std::size_t page = page_size > 0 ? static_cast<std::size_t>(page_size) : 4096;
    const std::size_t usable = (usable_size + page - 1) / page * page;
    const std::size_t total = page + usable;
    void* mapped = ::mmap(nullptr, total, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mapped == MAP_FAILED) return false;
    if (::mprotect(mapped, page, PROT_NONE) != 0) {
        const int error = errno;
        ::munmap(mapped, total);
        errno = error;
        return false;
    }
    base_ = mapped;
    guard_size_ = page;
    total_size_ = total;
    return true;
}

void* child_stack::top() const noexcept {
    return base_ == nullptr ? nullptr : static_cast<char*>(base_) + total_size_;
}

}  // namespace cordon::runtime::detail
