// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-test-preload: an LD_PRELOAD probe for the hostile suite. Its constructor appends the
// basename of the executable it was loaded into, and a newline, to the file named by
// CORDON_TEST_PRELOAD_MARKER, so that a test can list every program that loaded it. libc only.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {

__attribute__((constructor)) void announce() {
    const char* marker = std::getenv("CORDON_TEST_PRELOAD_MARKER");
    if (marker == nullptr || *marker == '\0') return;
    char exe[4096];
    const ssize_t size = ::readlink("/proc/self/exe", exe, sizeof exe - 2);
    if (size <= 0) return;
    exe[size] = '\0';
    const char* slash = std::strrchr(exe, '/');
    char* name = slash != nullptr ? exe + (slash - exe) + 1 : exe;
    const std::size_t length = std::strlen(name);
    name[length] = '\n';
    const int fd = ::open(marker, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return;
    (void)!::write(fd, name, length + 1);
    ::close(fd);
}

}  // namespace
