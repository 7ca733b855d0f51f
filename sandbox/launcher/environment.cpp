// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/launcher/environment.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace cordon::launcher {

using sandbox::launcher_stage;

char** read_environment(const reporter& report, int fd) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int error = errno;
        report.fail(launcher_stage::environment, error, "cannot read the environment: %s",
                    std::strerror(error));
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    char* block = nullptr;
    std::size_t entries = 0;
    if (size > 0) {
        void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapped == MAP_FAILED) {
            const int error = errno;
            report.fail(launcher_stage::environment, error, "cannot read the environment: %s",
                        std::strerror(error));
        }
        block = static_cast<char*>(mapped);
        if (block[size - 1] != '\0') {
            report.fail(launcher_stage::environment, EINVAL,
                        "cannot read the environment: the block is not NUL-terminated");
        }
        for (std::size_t i = 0; i < size; ++i)
            entries += block[i] == '\0' ? 1 : 0;
    }
    ::close(fd);
    void* array = ::mmap(nullptr, (entries + 1) * sizeof(char*), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (array == MAP_FAILED) {
        report.fail(launcher_stage::out_of_memory, ENOMEM, "cannot read the environment: %s",
                    std::strerror(ENOMEM));
    }
    char** envp = static_cast<char**>(array);
    std::size_t n = 0;
    for (std::size_t at = 0; at < size; at += std::strlen(block + at) + 1) {
        if (block[at] != '\0') envp[n++] = block + at;  // an empty entry is skipped
    }
    envp[n] = nullptr;
    return envp;
}

}  // namespace cordon::launcher
