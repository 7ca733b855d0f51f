// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/start_signals.hpp"

#include <signal.h>

#include <cstddef>
#include <initializer_list>
#include <iterator>

namespace cordon::cli {

namespace {

// Filled once, before any thread: SIGRTMIN is a function of the C library's (it keeps the first
// real-time signals for itself).
struct ending_list {
    int signals[64] = {};
    std::size_t count = 0;
    ending_list() noexcept {
        for (const int signal :
             {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ,
              SIGVTALRM, SIGPROF, SIGPOLL, SIGPWR, SIGSTKFLT}) {
            signals[count++] = signal;
        }
        for (int signal = SIGRTMIN; signal <= SIGRTMAX && count < std::size(signals); ++signal)
            signals[count++] = signal;
    }
};

sigset_t interrupts() noexcept {
    sigset_t set;
    ::sigemptyset(&set);
    for (const int signal : ending_signals())
        ::sigaddset(&set, signal);
    return set;
}

}  // namespace

std::span<const int> ending_signals() noexcept {
    static const ending_list list;
    return {list.signals, list.count};
}

void reset_inherited_signals() noexcept {
    // One call, so that SIGTERM is never unblocked in between: a pending one waits for the
    // command's own handling instead of killing cordon halfway through its start.
    const sigset_t held = interrupts();
    ::sigprocmask(SIG_SETMASK, &held, nullptr);
    // Only SIG_IGN survives execve (a handler cannot); flags are cleared by it, but SIGCHLD is set
    // explicitly all the same: SA_NOCLDWAIT would make the kernel reap cordon's children too.
    // sigaction fails (EINVAL) for SIGKILL, SIGSTOP and the C library's own real-time signals,
    // which nobody can set: nothing to do for those.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigemptyset(&default_action.sa_mask);
    for (int signal = 1; signal < NSIG; ++signal) {
        struct sigaction current {};
        if (::sigaction(signal, nullptr, &current) != 0) continue;
        if (signal == SIGCHLD || current.sa_handler == SIG_IGN) {
            ::sigaction(signal, &default_action, nullptr);
        }
    }
    // A reader of cordon's output that goes away (`cordon run ... | head -1`) must not kill
    // cordon before it has ended the command's tree: writes fail with EPIPE instead. Commands
    // start with every disposition at its default (runtime/spawn.hpp).
    ::signal(SIGPIPE, SIG_IGN);
}

void release_interrupts() noexcept {
    const sigset_t held = interrupts();
    ::sigprocmask(SIG_UNBLOCK, &held, nullptr);
}

}  // namespace cordon::cli
