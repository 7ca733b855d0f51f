// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "proxy/budget.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace cordon::proxy {

std::size_t descriptor_limit() noexcept {
    constexpr std::size_t highest = std::size_t{1} << 20;  // fs.nr_open's default
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > highest) return highest;
    return static_cast<std::size_t>(limit.rlim_cur);
}

std::size_t connection_budget(std::size_t descriptors, std::size_t most) noexcept {
    return std::max<std::size_t>(1, std::min(descriptors / 4 / 2, most));
}

std::size_t lookup_thread_budget(std::size_t descriptors, std::size_t most) noexcept {
    return std::max<std::size_t>(1, std::min(descriptors / 16, most));
}

bool in_reserve(int fd, std::size_t descriptors) noexcept {
    return fd < 0 || static_cast<std::size_t>(fd) + call_reserve >= descriptors;
}

counted_slot& counted_slot::operator=(counted_slot&& other) noexcept {
    if (this != &other) {
        release();
        owner_ = std::move(other.owner_);
    }
    return *this;
}

void counted_slot::release() noexcept {
    if (owner_) {
        owner_->in_use_.fetch_sub(1);
        owner_.reset();
    }
}

std::optional<counted_slot> counted_slots::try_take(std::size_t most) {
    std::size_t taken = in_use_.load();
    do {
        if (taken >= most) return std::nullopt;
    } while (!in_use_.compare_exchange_weak(taken, taken + 1));
    return counted_slot(shared_from_this());
}

counted_slots& process_connections() {
    // Never destroyed: a detached lookup thread or a late connection may give its slot back
    // while the process exits.
    static auto* const count = new std::shared_ptr<counted_slots>(
        std::make_shared<counted_slots>(default_max_process_connections));
    return **count;
}

counted_slots& process_lookup_threads() {
    static auto* const count =
        new std::shared_ptr<counted_slots>(std::make_shared<counted_slots>(1));
    return **count;
}

}  // namespace cordon::proxy
