// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A private directory (0700) for the targets whose parser reads a file: the fuzzer's bytes are
// written to a file there and read through the code cordon reads the real file with. Removed at
// exit; libFuzzer ends a timed run with _Exit, so scripts/fuzz gives each run a TMPDIR of its own
// and removes that.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

#include "tests/fuzz/property.hpp"

namespace cordon::fuzz {

// Never destroyed: the exit handler that removes it runs after the static objects constructed
// before it returned are destroyed (it read a freed path under ASan).
inline const std::filesystem::path& scratch_directory() {
    static const std::filesystem::path* const directory = [] {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "cordon-fuzz-XXXXXX").string();
        CORDON_FUZZ_CHECK(::mkdtemp(pattern.data()) != nullptr);
        auto* made = new std::filesystem::path(pattern);
        std::atexit([] {
            std::error_code ignored;
            std::filesystem::remove_all(scratch_directory(), ignored);
        });
        return made;
    }();
    return *directory;
}

// Replaces `path` with `text`, mode 0600.
inline void write_file(const std::filesystem::path& path, std::string_view text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CORDON_FUZZ_CHECK(fd >= 0);
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t put = ::write(fd, text.data() + done, text.size() - done);
        CORDON_FUZZ_CHECK(put > 0);
        done += static_cast<std::size_t>(put);
    }
    ::close(fd);
}

}  // namespace cordon::fuzz
