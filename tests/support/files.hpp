// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Files for the tests: scratch directories, reading a whole file, writing one (with its
// permissions), and publishing one whole to a polling reader. Plain system calls on CLOEXEC fds, as
// every fd of this project is born; nothing here needs a cordon library.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace cordon::test {

// A fresh directory (mkdtemp under `root`), removed with its contents at scope end.
class temp_dir {
public:
    explicit temp_dir(const std::filesystem::path& root = "/var/tmp",
                      std::string_view prefix = "cordon-test-") {
        std::string pattern = (root / (std::string(prefix) + "XXXXXX")).string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
        }
        path_ = std::filesystem::canonical(pattern);
    }
    ~temp_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] std::filesystem::path operator/(std::string_view name) const {
        return path_ / name;
    }

private:
    std::filesystem::path path_;
};

// The whole content of `path`, or nullopt when it cannot be opened.
inline std::optional<std::string> read_file_if_present(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char block[65536];
    for (;;) {
        const ssize_t got = ::read(fd, block, sizeof block);
        if (got > 0) {
            out.append(block, static_cast<std::size_t>(got));
        } else if (got == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(fd);
    return out;
}

// The whole content of `path`, or "" when it cannot be opened.
inline std::string read_file(const std::filesystem::path& path) {
    return read_file_if_present(path).value_or(std::string());
}

// Creates or truncates `path` with exactly `text`, then gives it `perms` when set (else the
// umask's default). Throws std::system_error when the file cannot be written.
inline void write_file(const std::filesystem::path& path, std::string_view text,
                       std::optional<std::filesystem::perms> perms = std::nullopt) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path.string());
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int error = errno;
            ::close(fd);
            throw std::system_error(error, std::generic_category(), "write " + path.string());
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (perms) std::filesystem::permissions(path, *perms);
}

// Writes `text` to a sibling and renames it into place, so a polling reader never sees half.
inline void publish_file(const std::filesystem::path& path, std::string_view text) {
    const std::filesystem::path staging = path.string() + ".staging";
    write_file(staging, text);
    std::filesystem::rename(staging, path);
}

}  // namespace cordon::test
