// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/terminal_prompt.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include "cordon/unique_fd.hpp"
#include "policy/display.hpp"
#include "policy/question.hpp"
#include "sandbox/write_all.hpp"

namespace cordon::policy {

namespace {

// How often a wait for the answer looks at the stop token: short enough that a cancelled or
// timed-out question is withdrawn at once, as the service expects of its responders.
constexpr int poll_slice_ms = 100;
// A line longer than this is not an answer.
constexpr std::size_t longest_answer = 1024;

unique_fd open_terminal() {
    return unique_fd(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
}

// A process outside the terminal's foreground process group is stopped (SIGTTIN, SIGTTOU) when it
// reads, flushes or, with TOSTOP, writes: such a cordon cannot ask.
bool in_foreground(int tty) {
    const pid_t foreground = ::tcgetpgrp(tty);
    return foreground >= 0 && foreground == ::getpgrp();
}

policy::approval_outcome outcome_of(std::string line, bool offer_session) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ' ||
                             line.back() == '\t')) {
        line.pop_back();
    }
    const std::size_t start = line.find_first_not_of(" \t");
    line.erase(0, start == std::string::npos ? line.size() : start);
    for (char& c : line) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (line == "y" || line == "yes") return policy::approval_outcome::allowed_once;
    if (offer_session && (line == "s" || line == "session")) {
        return policy::approval_outcome::allowed_for_session;
    }
    return policy::approval_outcome::rejected;
}

// One question at a time on a terminal: two cordons asking at once would share one line of
// input, and the "y" typed under one question could approve the other command. The lock is an
// flock(2) of the terminal device itself (/dev/pts/N, what ttyname names: every process asking
// on that terminal locks the same inode), held until the answer is read. Waiting for it honours
// `stop`. Null when the wait was stopped or the terminal cannot be locked.
unique_fd lock_terminal(int tty, std::string_view asker, const std::stop_token& stop) {
    char name[256];
    unique_fd device;
    if (::ttyname_r(tty, name, sizeof name) == 0) {
        device.reset(::open(name, O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
    }
    if (!device) return device;
    bool told = false;
    for (;;) {
        if (::flock(device.get(), LOCK_EX | LOCK_NB) == 0) return device;
        if (errno != EWOULDBLOCK && errno != EINTR) return unique_fd();
        if (!told) {
            told = true;
            const std::string waiting = "\n" + policy::shown_compactly(asker) +
                                        ": another question is open on this terminal; this one "
                                        "waits for it to be answered\n";
            (void)write_all(tty, waiting);
        }
        if (stop.stop_requested()) return unique_fd();
        ::poll(nullptr, 0, poll_slice_ms);
    }
}

}  // namespace

bool terminal_can_ask() {
    const unique_fd tty = open_terminal();
    return tty && in_foreground(tty.get());
}

std::optional<policy::approval_outcome> terminal_prompt::answer(
    const policy::approval_request& request, std::stop_token stop) {
    const unique_fd tty = open_terminal();
    if (!tty || !in_foreground(tty.get())) return std::nullopt;
    const unique_fd turn = lock_terminal(tty.get(), request.tool, stop);
    if (!turn) {
        if (stop.stop_requested()) return policy::approval_outcome::cancelled;
        return std::nullopt;  // a terminal that cannot be locked is not one to ask on
    }
    // Whatever was typed before the question was seen is not an answer to it.
    if (::tcflush(tty.get(), TCIFLUSH) != 0) return std::nullopt;
    // A standing grant covers later runs nobody looks at: only a command shown whole, exactly as
    // it is, may have one (display.hpp).
    const bool offer = offer_session_ && policy::session_grant_refusal(request).empty();
    // The width the rows are cut to: the terminal's, else the 80 columns of one.
    winsize size{};
    const std::size_t columns =
        ::ioctl(tty.get(), TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
    if (!write_all(tty.get(), policy::terminal_question(request, offer_session_, offer, columns)))
        return std::nullopt;

    std::string line;
    for (;;) {
        if (stop.stop_requested()) {
            (void)write_all(tty.get(), "\n(withdrawn: nothing runs)\n");
            return policy::approval_outcome::cancelled;
        }
        pollfd readable{tty.get(), POLLIN, 0};
        const int ready = ::poll(&readable, 1, poll_slice_ms);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return policy::approval_outcome::cancelled;
        }
        if (ready == 0) continue;
        char block[256];
        const ssize_t n = ::read(tty.get(), block, sizeof block);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return policy::approval_outcome::cancelled;  // EIO: the terminal hung up
        }
        if (n == 0) return policy::approval_outcome::cancelled;  // end of input (^D)
        line.append(block, static_cast<std::size_t>(n));
        if (line.find_first_of("\n\r") != std::string::npos) break;
        if (line.size() > longest_answer) return policy::approval_outcome::rejected;
    }
    // Only the first line is the answer; in raw mode Enter may arrive as "\r".
    line.erase(line.find_first_of("\n\r"));
    return outcome_of(std::move(line), offer);
}

}  // namespace cordon::policy
