// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// See exec_search.hpp. Libc only and async-signal-safe: the launcher's last step, and the spawn
// child's when it confines the command itself.
#include "sandbox/exec_search.hpp"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::sandbox {

// execvp(3) in the command's own environment, without execvp's retry of a file the kernel cannot
// run (ENOEXEC) through /bin/sh: cordon's spawner never retries either, so a file that is not a
// program fails alike with and without a sandbox. Searches the PATH of `envp` (the spawner's
// default when unset; an empty entry is the working directory) and, as execvp, goes on past a
// directory where the file is missing or not executable, remembering EACCES. Returns errno.
int exec_searching(char* const* argv, char* const* envp) noexcept {
    const char* file = argv[0];
    if (*file == '\0') return ENOENT;
    if (std::strchr(file, '/') != nullptr) {
        ::execve(file, argv, envp);
        return errno;
    }
    const std::size_t file_size = std::strlen(file);
    if (file_size > NAME_MAX) return ENAMETOOLONG;
    const char* search = "/usr/local/bin:/usr/bin:/bin";
    for (char* const* entry = envp; *entry != nullptr; ++entry) {
        if (std::strncmp(*entry, "PATH=", 5) == 0) {
            search = *entry + 5;
            break;
        }
    }
    int result = ENOENT;
    for (const char* dir = search;; ++dir) {
        const char* end = ::strchrnul(dir, ':');
        const auto dir_size = static_cast<std::size_t>(end - dir);
        char candidate[PATH_MAX];
        // The directory ("." for an empty entry), '/', the name and its NUL must fit; a longer
        // candidate is passed over, as execvp does.
        if ((dir_size == 0 ? 1 : dir_size) + 1 + file_size + 1 <= sizeof(candidate)) {
            std::size_t at = 0;
            if (dir_size == 0) {
                candidate[at++] = '.';
            } else {
                std::memcpy(candidate, dir, dir_size);
                at = dir_size;
            }
            candidate[at++] = '/';
            std::memcpy(candidate + at, file, file_size + 1);
            ::execve(candidate, argv, envp);
            switch (errno) {
                case EACCES:
                    result = EACCES;
                    break;
                case ENOENT:
                case ENOTDIR:
                case ESTALE:
                case ENODEV:
                case ETIMEDOUT:
                    break;
                default:
                    return errno;
            }
        }
        if (*end == '\0') return result;
        dir = end;
    }
}

}  // namespace cordon::sandbox
