// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The test build's stops (test_hook.hpp). Only cordon-landlock-test-hooks compiles this file.
#include "sandbox/launcher/test_hook.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "sandbox/launcher/reporter.hpp"

namespace cordon::launcher::test_hook {

namespace {

constexpr char arming_prefix[] = "cordon-test-stop-at=";

struct named_step {
    step value;
    const char* name;
};
constexpr named_step steps[] = {{step::setup, "setup"},
                                {step::before_fork, "before-fork"},
                                {step::before_started, "before-started"},
                                {step::after_started, "after-started"},
                                {step::after_ended, "after-ended"}};

const char* armed_name = nullptr;
step armed = step::setup;
int stderr_copy = -1;  // --report-ending's parent points fds 0-2 at /dev/null

}  // namespace

void arm(char** command) noexcept {
    for (char** word = command; word != nullptr && *word != nullptr; ++word) {
        if (std::strncmp(*word, arming_prefix, sizeof arming_prefix - 1) != 0) continue;
        const char* name = *word + sizeof arming_prefix - 1;
        for (const named_step& each : steps) {
            if (std::strcmp(each.name, name) != 0) continue;
            armed = each.value;
            armed_name = each.name;
            stderr_copy = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        }
    }
}

void at(step at) noexcept {
    if (armed_name == nullptr || at != armed) return;
    char line[128];
    const std::size_t prefix = std::strlen(line_prefix);
    const char middle[] = "test hook: stopped at ";
    std::size_t size = 0;
    std::memcpy(line, line_prefix, prefix);
    size += prefix;
    std::memcpy(line + size, middle, sizeof middle - 1);
    size += sizeof middle - 1;
    const std::size_t name = std::strlen(armed_name);
    std::memcpy(line + size, armed_name, name);
    size += name;
    line[size++] = '\n';
    // SIGCONT is blocked before the line goes out and waited for after it: one that arrives
    // before the wait begins stays pending (a SIGSTOP raised after the line would have lost the
    // race with a SIGCONT sent on seeing it, and stopped for good). Signals this step leaves
    // unblocked (SIGTERM at `setup`, say) end the launcher right here, in the wait.
    sigset_t cont;
    sigset_t previous;
    ::sigemptyset(&cont);
    ::sigaddset(&cont, SIGCONT);
    ::sigprocmask(SIG_BLOCK, &cont, &previous);
    (void)write_all(stderr_copy, line, size);
    while (::sigwaitinfo(&cont, nullptr) < 0) {
    }
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace cordon::launcher::test_hook
