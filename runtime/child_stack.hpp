// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The stack the child of spawn_method::vfork runs on between clone and exec. The child shares the
// parent's memory (CLONE_VM), so an overflow of its stack would not fault: it would silently write
// into whatever mapping lies below, in the parent's address space. The stack is therefore its own
// mapping with a PROT_NONE guard page at its low end (stacks grow down on every architecture
// cordon builds for), so that an overflow ends the child with SIGSEGV instead.
//
// The child keeps a PATH_MAX buffer on it for the PATH search (sandbox/exec_search.cpp) and calls
// into the Landlock and seccomp code below that; 64 KiB leaves ample room.
#pragma once

#include <cstddef>

namespace cordon::runtime::detail {

class child_stack {
public:
    // What the child may use, before rounding up to whole pages.
    static constexpr std::size_t usable_size = 64 * 1024;

    // The calling thread's stack, mapped on first use and unmapped when the thread ends: the
    // parent is suspended until the child execs or exits, so one per spawning thread suffices.
    // nullptr, with errno set, when it cannot be mapped.
    [[nodiscard]] static child_stack* for_this_thread() noexcept;

    child_stack() noexcept = default;
    ~child_stack();
    child_stack(const child_stack&) = delete;
    child_stack& operator=(const child_stack&) = delete;

    // Maps the guard page and the stack above it; false with errno set on failure.
    [[nodiscard]] bool map() noexcept;
    [[nodiscard]] bool mapped() const noexcept { return base_ != nullptr; }

    // The highest address: where the child's stack pointer starts.
    [[nodiscard]] void* top() const noexcept;
    // The lowest address, where the guard page starts, and its size (one page).
    [[nodiscard]] void* guard() const noexcept { return base_; }
    [[nodiscard]] std::size_t guard_size() const noexcept { return guard_size_; }

    // Under AddressSanitizer: marks the stack's shadow addressable again after a child ran on it
    // (spawn.cpp), so that nothing placed at these addresses later inherits its redzones. A no-op
    // in other builds.
    void unpoison() const noexcept;

private:
    void* base_ = nullptr;
    std::size_t guard_size_ = 0;
    std::size_t total_size_ = 0;
};

}  // namespace cordon::runtime::detail
