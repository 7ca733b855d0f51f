// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/runner_image.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// errno is read by the caller right after the failing call, before anything can change it.
std::string failed(const std::string& what, int error) {
    return what + ": " + std::strerror(error);
}

}  // namespace

std::variant<unique_fd, std::string> open_runner(const fs::path& path) {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        const int error = errno;
        return failed("cannot open " + path.string(), error);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return path.string() + " is not a regular file";
    }
    return fd;
}

std::variant<unique_fd, std::string> load_sealed_image(const fs::path& path) {
    auto opened = open_runner(path);
    if (auto* error = std::get_if<std::string>(&opened)) return *error;
    const unique_fd source = std::move(std::get<unique_fd>(opened));
    // MFD_EXEC (Linux 6.3) keeps the copy executable where vm.memfd_noexec would otherwise make
    // new memfds non-executable; older kernels reject the flag and need none.
    constexpr unsigned int mfd_exec = 0x10U;
    const std::string name = path.filename().string();
    unique_fd image(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING | mfd_exec));
    if (!image && errno == EINVAL) {
        image.reset(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
    }
    if (!image) {
        const int error = errno;
        return failed("memfd_create", error);
    }
    // sendfile(2) copies in the kernel, without bouncing the image through a user buffer; the
    // loop below takes over where it cannot (and finishes what it started: the offset moves).
    for (;;) {
        const ssize_t sent = ::sendfile(image.get(), source.get(), nullptr, 1 << 30);
        if (sent > 0) continue;
        if (sent == 0) break;
        if (errno == EINTR) continue;
        if (errno == EINVAL || errno == ENOSYS) break;
        const int error = errno;
        return failed("cannot copy " + path.string(), error);
    }
    char buffer[64 * 1024];
    for (;;) {
        const ssize_t got = ::read(source.get(), buffer, sizeof buffer);
        if (got == 0) break;
        if (got < 0) {
            const int error = errno;
            if (error == EINTR) continue;
            return failed("cannot copy " + path.string(), error);
        }
        for (ssize_t done = 0; done < got;) {
            const ssize_t n =
                ::write(image.get(), buffer + done, static_cast<std::size_t>(got - done));
            if (n < 0) {
                const int error = errno;
                if (error == EINTR) continue;
                return failed("cannot copy " + path.string(), error);
            }
            done += n;
        }
    }
    if (::fcntl(image.get(), F_ADD_SEALS,
                F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
        const int error = errno;
        return failed("cannot seal the copy of " + path.string(), error);
    }
    return image;
}

}  // namespace cordon::sandbox
