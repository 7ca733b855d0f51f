// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/pty.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace cordon::runtime {

namespace {

std::string failed(const char* what, int error) {
    return std::string("cannot open a pseudo-terminal: ") + what + ": " + std::strerror(error);
}

}  // namespace

std::variant<pty_pair, std::string> open_pty(terminal_size size) {
    pty_pair out;
    out.master.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!out.master) return failed("posix_openpt", errno);
    // Every descriptor of the master shares this open file description: the run's reader, the
    // job's writer, the caller's copy. Non-blocking for all of them, from the start, so that none
    // sees it change when another sets it.
    if (::fcntl(out.master.get(), F_SETFL, ::fcntl(out.master.get(), F_GETFL) | O_NONBLOCK) != 0) {
        return failed("O_NONBLOCK", errno);
    }
    if (::grantpt(out.master.get()) != 0) return failed("grantpt", errno);
    if (::unlockpt(out.master.get()) != 0) return failed("unlockpt", errno);
    // The peer through the master itself (Linux 4.13): no path under /dev/pts to look up, where
    // another devpts mounted over it could answer with a terminal that is not this one.
    out.slave.reset(::ioctl(out.master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!out.slave) {
        char name[PATH_MAX];
        if (::ptsname_r(out.master.get(), name, sizeof name) != 0) return failed("ptsname", errno);
        out.slave.reset(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
        if (!out.slave) return failed(name, errno);
    }
    termios modes{};
    if (::tcgetattr(out.slave.get(), &modes) == 0) {
        modes.c_iflag |= IUTF8;
        (void)::tcsetattr(out.slave.get(), TCSANOW, &modes);
    }
    if (const int error = resize_pty(out.master.get(), size); error != 0) {
        return failed("TIOCSWINSZ", error);
    }
    return out;
}

int resize_pty(int master, terminal_size size) noexcept {
    winsize window{};
    window.ws_row = size.rows;
    window.ws_col = size.cols;
    return ::ioctl(master, TIOCSWINSZ, &window) == 0 ? 0 : errno;
}

}  // namespace cordon::runtime
