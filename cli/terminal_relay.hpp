// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run --tty`: cordon's own side of a run under a pseudo-terminal. The run's terminal
// (runtime/pty.hpp) is the command's; cordon holds its master and relays to it what the person
// (or the pipe) on cordon's stdin types, and the size of cordon's own terminal as it changes. The
// command's output reaches cordon's stdout through the live writer, as any run's does.
//
// cordon's own terminal is never the command's: the command holds only the slave of the run's
// terminal, in a session of its own, so TIOCSTI, a mode change or an escape sequence reaches
// that terminal alone, and what reaches the person is what cordon copies, byte for byte.
//
// While the run has it, cordon's terminal is raw as ssh -t and script(1) make theirs
// (cfmakeraw): every key, Ctrl-C and Ctrl-D among them, goes to the run's terminal, whose line
// discipline does what a terminal does with it (SIGINT to the command's foreground group, the
// end of a line, of the input). Output processing is off too: what is relayed was processed by
// the run's terminal already, and a program that turned ONLCR off on it (vim, for one) moves the
// cursor down with a bare \n that a second pass would turn into \r\n. cordon's own lines come
// after the modes are back.
#pragma once

#include <termios.h>

#include <memory>
#include <optional>
#include <system_error>
#include <thread>
#include <variant>

#include "cordon/terminal.hpp"
#include "cordon/unique_fd.hpp"

namespace cordon::cli {

// The size of the terminal `fd` is, or nullopt when it is not one (or says it has no size, as
// a serial line may: 0 rows).
[[nodiscard]] std::optional<runtime::terminal_size> terminal_size_of(int fd);

// The terminal whose size the run's follows: cordon's stdout when it is one (where the output is
// shown), else its stdin; -1 when neither is.
[[nodiscard]] int own_terminal();

// cordon's stdin in raw mode for as long as this lives, and in the modes it had before once it
// is gone (or restore() was called). Nothing is changed when `fd` is not a terminal of which
// cordon is in the foreground: a cordon started in the background (`&`) would be stopped by
// SIGTTOU for changing the modes, and by SIGTTIN for reading it.
class raw_terminal {
public:
    explicit raw_terminal(int fd);
    ~raw_terminal();
    raw_terminal(const raw_terminal&) = delete;
    raw_terminal& operator=(const raw_terminal&) = delete;

    // Whether `fd` is the foreground's terminal, now raw.
    [[nodiscard]] bool engaged() const noexcept { return saved_.has_value(); }
    // The modes as they were, and what waits in the terminal's input discarded; called again,
    // it does nothing.
    void restore() noexcept;

private:
    int fd_;
    std::optional<termios> saved_;
};

// A thread that copies what `source` (cordon's stdin) gives into the run's terminal, as typed.
// From a terminal every byte goes as it comes, until the terminal hangs up. From anything else
// (a pipe, a file, /dev/null) the bytes go the same way, and at the source's end the terminal's
// end-of-file character (VEOF, ^D) is typed as a person types it, so that a program reading its
// terminal sees the end: at the prompt (what was typed has been read), twice after a partial
// line in canonical mode, and once more should the program go back to editing its line raw
// after a ^D typed in canonical mode (terminal_relay.cpp, type_the_end, says why).
//
// The source is read and the terminal written through poll(2), with a pipe of its own to stop
// it: stop() (and the destructor) ends the copy wherever it waits and joins the thread. Neither
// descriptor's file status flags are changed (the master's description is non-blocking from its
// start, runtime/pty.hpp); cordon's stdin may be shared with the shell that started it.
class input_relay {
public:
    // Starts the copy; `source` is a descriptor of cordon's own (it is not closed). Or why it
    // could not start: no pipe, no descriptor, no thread.
    [[nodiscard]] static std::variant<std::unique_ptr<input_relay>, std::error_code> start(
        int source, bool source_is_terminal, std::shared_ptr<const unique_fd> master);
    ~input_relay();
    input_relay(const input_relay&) = delete;
    input_relay& operator=(const input_relay&) = delete;

    void stop();

private:
    input_relay() = default;

    unique_fd stop_write_;
    std::thread thread_;
};

}  // namespace cordon::cli
