// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// See quotas.hpp. Raw system calls only: no allocation, no libc state.
#include "sandbox/quotas.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::sandbox::quotas {

int lower_rlimits() noexcept {
    for (const resource_limit& limit : resource_limits) {
        const auto resource = static_cast<__rlimit_resource>(limit.resource);
        rlimit current{};
        if (::getrlimit(resource, &current) != 0) return errno;
        if (current.rlim_max > limit.value) current.rlim_max = limit.value;
        if (current.rlim_cur > current.rlim_max) current.rlim_cur = current.rlim_max;
        if (::setrlimit(resource, &current) != 0) return errno;
    }
    return 0;
}

int limit_user_namespace(int user_sysctls, const char** failed) noexcept {
    for (const namespace_limit& limit : namespace_limits) {
        *failed = limit.name;
        const int fd = ::openat(user_sysctls, limit.name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            if (errno == ENOENT && limit.optional) continue;
            return errno;
        }
        const std::size_t size = std::strlen(limit.value);
        ssize_t written;
        do {
            written = ::write(fd, limit.value, size);
        } while (written < 0 && errno == EINTR);
        const int error = written < 0 ? errno : 0;
        ::close(fd);
        if (error != 0) return error;
        if (static_cast<std::size_t>(written) != size) return EIO;
    }
    *failed = nullptr;
    return 0;
}

}  // namespace cordon::sandbox::quotas
