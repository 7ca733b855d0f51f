// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/terminal_relay.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>

#include "base/log.hpp"

namespace cordon::cli {

std::optional<runtime::terminal_size> terminal_size_of(int fd) {
    winsize window{};
    if (::ioctl(fd, TIOCGWINSZ, &window) != 0 || window.ws_row == 0 || window.ws_col == 0) {
        return std::nullopt;
    }
    // A terminal larger than a run's may have (a wall of monitors): the run's gets the most it
    // may have, and the program draws in its top left corner.
    return runtime::terminal_size{
        std::clamp(window.ws_row, runtime::min_terminal_rows, runtime::max_terminal_rows),
        std::clamp(window.ws_col, runtime::min_terminal_cols, runtime::max_terminal_cols)};
}

int own_terminal() {
    for (const int fd : {STDOUT_FILENO, STDIN_FILENO}) {
        if (::isatty(fd) == 1) return fd;
    }
    return -1;
}

raw_terminal::raw_terminal(int fd) : fd_(fd) {
    if (::isatty(fd) != 1 || ::tcgetpgrp(fd) != ::getpgrp()) return;
    termios modes{};
    if (::tcgetattr(fd, &modes) != 0) return;
    termios raw = modes;
    ::cfmakeraw(&raw);  // also VMIN 1, VTIME 0: a read returns each key as it comes
    if (::tcsetattr(fd, TCSANOW, &raw) != 0) {
        log::warn("cannot put the terminal in raw mode: {}", std::strerror(errno));
        return;
    }
    saved_ = modes;
}

raw_terminal::~raw_terminal() {
    restore();
}

void raw_terminal::restore() noexcept {
    if (!saved_) return;
    // A process outside the terminal's foreground that changes its modes is stopped (SIGTTOU)
    // unless it blocks the signal; nothing may stop cordon on its way out.
    sigset_t ttou;
    sigset_t before;
    ::sigemptyset(&ttou);
    ::sigaddset(&ttou, SIGTTOU);
    ::pthread_sigmask(SIG_BLOCK, &ttou, &before);
    if (::tcsetattr(fd_, TCSANOW, &*saved_) != 0 && errno != EIO) {
        log::warn("cannot restore the terminal's modes: {}", std::strerror(errno));
    }
    // What reached the terminal's input after the relay stopped was typed for the command, or
    // is the terminal's answer to a query the command wrote (a report of the window's title,
    // say): neither is the shell's next command line.
    (void)::tcflush(fd_, TCIFLUSH);
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    saved_.reset();
}

namespace {

// Waits until `fd` is ready for `events`, or `stop` is (closed): false then, or on an error.
bool wait_for(int fd, short events, int stop) {
    for (;;) {
        pollfd ready[2] = {{fd, events, 0}, {stop, POLLIN, 0}};
        if (::poll(ready, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (ready[1].revents != 0) return false;
        if (ready[0].revents != 0) return true;
    }
}

// Types `data` into the terminal, waiting for room in its input queue (the command may not be
// reading yet); false once `stop` says so or the terminal is gone (EIO: no process of the run
// holds it any more).
bool type(int master, std::string_view data, int stop) {
    while (!data.empty()) {
        const ssize_t n = ::write(master, data.data(), data.size());
        if (n >= 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN || !wait_for(master, POLLOUT, stop)) return false;
    }
    return true;
}

// Bytes typed that the command has not read: FIONREAD on the slave, opened through the master
// for the moment it takes (held, it would keep the master from reading the end of the run's
// output). In canonical mode it counts complete lines only. nullopt when it cannot be told.
std::optional<int> unread(int master) {
    const unique_fd peer(::ioctl(master, TIOCGPTPEER, O_RDONLY | O_NOCTTY | O_CLOEXEC));
    int count = 0;
    if (!peer || ::ioctl(peer.get(), FIONREAD, &count) != 0) return std::nullopt;
    return count;
}

// The terminal's modes as the command left them; nullopt once they cannot be read.
std::optional<termios> modes_of(int master) {
    termios modes{};
    if (::tcgetattr(master, &modes) != 0) return std::nullopt;
    return modes;
}

bool edits_lines(const termios& modes) {
    return (modes.c_lflag & ICANON) != 0;
}

// Sleeps `pause` unless `stop` says the run is over (false then).
bool pause_unless_stopped(int stop, std::chrono::milliseconds pause) {
    pollfd stopped{stop, POLLIN, 0};
    return ::poll(&stopped, 1, static_cast<int>(pause.count())) == 0;
}

// Waits for the moment a person would type ^D: at the prompt, once the program has read the
// lines before it, and with the terminal either raw (the program edits its line itself, as
// readline does, and takes the ^D as the byte it expects) or in canonical mode for a while (a
// reader such as cat, which never leaves it). The modes then, or nullopt when the run ended or
// the terminal cannot be read. The queue is polled.
std::optional<termios> wait_for_the_prompt(int master, int stop) {
    constexpr auto settle = std::chrono::milliseconds(100);
    auto pause = std::chrono::milliseconds(2);
    std::optional<std::chrono::steady_clock::time_point> canonical_since;
    for (;;) {
        const auto left = unread(master);
        auto modes = modes_of(master);
        if (!left || !modes) return std::nullopt;
        const auto now = std::chrono::steady_clock::now();
        if (*left != 0) {
            canonical_since.reset();
        } else if (!edits_lines(*modes)) {
            return modes;
        } else if (!canonical_since) {
            canonical_since = now;
        } else if (now - *canonical_since >= settle) {
            return modes;
        }
        if (!pause_unless_stopped(stop, pause)) return std::nullopt;
        pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
}

// The end of what was piped in, typed as a person types it: at the prompt, the terminal's own
// VEOF character; twice after a partial line when the terminal edits lines (the first hands the
// line over, the second reads as the end).
//
// A ^D typed while the terminal edits lines is stored as the end of a line holding a NUL
// (n_tty's __DISABLED_CHAR). A program that was only between two reads of a raw line (readline
// runs each line in canonical mode, and a line may take long), and so leaves canonical mode
// again, reads that NUL as a byte, not as the end: then one more ^D is typed, raw, which it
// takes as the end, as it would a person's second ^D.
void type_the_end(int master, int stop, bool partial_line) {
    const auto at_prompt = wait_for_the_prompt(master, stop);
    if (!at_prompt) return;
    const char eof = at_prompt->c_cc[VEOF] != _POSIX_VDISABLE
                         ? static_cast<char>(at_prompt->c_cc[VEOF])
                         : '\x04';
    if (!edits_lines(*at_prompt)) {
        (void)type(master, std::string_view(&eof, 1), stop);
        return;
    }
    if (!type(master, std::string(partial_line ? 2 : 1, eof), stop)) return;
    for (;;) {
        if (!pause_unless_stopped(stop, std::chrono::milliseconds(20))) return;
        const auto modes = modes_of(master);
        if (!modes) return;
        if (!edits_lines(*modes)) {
            (void)type(master, std::string_view(&eof, 1), stop);
            return;
        }
    }
}

void relay(int source, bool from_terminal, const std::shared_ptr<const unique_fd>& master,
           const unique_fd& stop) {
    std::array<char, 16 * 1024> buffer{};
    char last = '\n';  // nothing typed is a line ended
    for (;;) {
        if (!wait_for(source, POLLIN, stop.get())) {
            if (from_terminal) return;  // stopped, or cordon's terminal went away
            break;
        }
        const ssize_t n = ::read(source, buffer.data(), buffer.size());
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        // From a terminal, 0 or EIO is its hangup (SIGHUP to cordon ends the run): nothing
        // more is typed, as nothing more would be by a person whose line dropped.
        if (n <= 0) {
            if (from_terminal) return;
            break;
        }
        if (!type(master->get(), std::string_view(buffer.data(), static_cast<std::size_t>(n)),
                  stop.get())) {
            return;
        }
        last = buffer[static_cast<std::size_t>(n) - 1];
    }
    type_the_end(master->get(), stop.get(), last != '\n' && last != '\r');
}

}  // namespace

std::variant<std::unique_ptr<input_relay>, std::error_code> input_relay::start(
    int source, bool source_is_terminal, std::shared_ptr<const unique_fd> master) {
    const auto failed = [] { return std::error_code(errno, std::generic_category()); };
    // Writes wait in poll(2), never in write(2), so that stop() can always end them: the
    // master's description is non-blocking from its start (runtime/pty.hpp).
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return failed();
    unique_fd stop_read(ends[0]);
    std::unique_ptr<input_relay> out(new input_relay());
    out->stop_write_.reset(ends[1]);
    try {
        out->thread_ = std::thread(
            [source, source_is_terminal, master = std::move(master), stop = std::move(stop_read)] {
                relay(source, source_is_terminal, master, stop);
            });
    } catch (const std::system_error& error) {
        return error.code();
    }
    return out;
}

input_relay::~input_relay() {
    stop();
}

void input_relay::stop() {
    stop_write_.reset();  // the thread's poll sees the pipe's end
    if (thread_.joinable()) thread_.join();
}

}  // namespace cordon::cli
