// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/random_name.hpp"

#include <sys/random.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace cordon::base {

std::string random_hex64() {
    std::uint64_t value = 0;
    if (::getrandom(&value, sizeof value, GRND_NONBLOCK) != sizeof value) {
        value =
            static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(value));
    return hex;
}

}  // namespace cordon::base
