// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/directory_listing.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace cordon::base {

std::optional<std::vector<std::string>> names_in(int dir) {
    const int listed = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listed < 0) return std::nullopt;
    DIR* stream = ::fdopendir(listed);
    if (stream == nullptr) {
        const int error = errno;
        ::close(listed);
        errno = error;
        return std::nullopt;
    }
    std::vector<std::string> out;
    errno = 0;
    while (const dirent* entry = ::readdir(stream)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..") out.emplace_back(name);
    }
    const int error = errno;
    ::closedir(stream);
    if (error != 0) {
        errno = error;
        return std::nullopt;
    }
    return out;
}

bool grant_owner_rights(int dir, mode_t wanted) {
    struct stat st {};
    if (::fstat(dir, &st) != 0) return false;
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
        errno = EPERM;
        return false;
    }
    if ((st.st_mode & wanted) == wanted) {
        errno = EACCES;  // not what stands in the way
        return false;
    }
    // fchmod() refuses an O_PATH descriptor, and fchmodat() has no working AT_SYMLINK_NOFOLLOW
    // (fchmodat(2)): the descriptor's /proc link names the directory itself, whatever its path
    // leads to now.
    const std::string link = "/proc/self/fd/" + std::to_string(dir);
    return ::chmod(link.c_str(), (st.st_mode & 07777) | wanted) == 0;
}

}  // namespace cordon::base
