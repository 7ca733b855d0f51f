// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/locked_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::base {

namespace fs = std::filesystem;

namespace {

// Opens `name` in `parent` as a directory of this uid, not through a symlink, and locks it.
unique_fd lock_own_directory(int parent, const char* name) {
    unique_fd fd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() ||
        ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 || !still_at(parent, name, fd.get())) {
        return unique_fd();
    }
    return fd;
}

}  // namespace

bool still_at(int parent, const char* name, int fd) {
    struct stat by_fd {};
    struct stat by_name {};
    return ::fstat(fd, &by_fd) == 0 &&
           ::fstatat(parent, name, &by_name, AT_SYMLINK_NOFOLLOW) == 0 &&
           by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

std::variant<locked_directory, std::string> make_locked_directory(const fs::path& parent,
                                                                  std::string_view prefix) {
    unique_fd listing(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing) return "cannot open " + parent.string() + ": " + std::strerror(errno);
    for (int attempt = 0; attempt < 8; ++attempt) {
        std::string path = (parent / (std::string(prefix) + "XXXXXX")).string();
        if (::mkdtemp(path.data()) == nullptr) {
            return "cannot make " + path + ": " + std::strerror(errno);
        }
        std::string name = fs::path(path).filename().string();
        if (unique_fd fd = lock_own_directory(listing.get(), name.c_str())) {
            return locked_directory{std::move(path), std::move(name), std::move(fd)};
        }
    }
    return "cannot make a directory under " + parent.string() +
           ": another process kept removing it";
}

std::vector<locked_directory> abandoned_directories(const fs::path& parent,
                                                    std::string_view prefix) {
    std::vector<locked_directory> out;
    unique_fd listing(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing) return out;
    std::vector<std::string> names;
    {
        unique_fd copy(::fcntl(listing.get(), F_DUPFD_CLOEXEC, 0));
        DIR* entries = copy ? ::fdopendir(copy.release()) : nullptr;
        if (entries == nullptr) return out;
        while (const dirent* entry = ::readdir(entries)) {
            if (std::string_view(entry->d_name).starts_with(prefix)) {
                names.emplace_back(entry->d_name);
            }
        }
        ::closedir(entries);
    }
    for (std::string& name : names) {
        if (unique_fd fd = lock_own_directory(listing.get(), name.c_str())) {
            fs::path path = parent / name;
            out.push_back({std::move(path), std::move(name), std::move(fd)});
        }
    }
    return out;
}

}  // namespace cordon::base
