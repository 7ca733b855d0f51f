// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The job: its streams, its cursors, its stdin, kill() and how it settles (jobs.hpp). The
// supervisor that starts and retires jobs is in jobs.cpp.
#include "cordon/jobs.hpp"

#include "base/log.hpp"
#include "cordon/executor.hpp"
#include "runtime/job_state.hpp"

#include <boost/asio/post.hpp>
#include "runtime/job_stream.hpp"
#include "runtime/pty.hpp"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "runtime/sigpipe.hpp"
#include "runtime/write_within.hpp"

namespace cordon::runtime {

namespace {

using std::chrono::milliseconds;

// Whether the screen, or the last screen of an ended job, shows `text`. Under the terminal's lock.
bool shows_locked(const job_terminal& terminal, std::string_view text) {
    if (terminal.emulator) return terminal.emulator->shows(text);
    if (!terminal.final_screen) return false;
    const auto& rows = terminal.final_screen->rows;
    return std::any_of(rows.begin(), rows.end(), [text](const std::string& row) {
        return row.find(text) != std::string::npos;
    });
}

// How long job::write() waits for a command that does not read its stdin.
constexpr milliseconds write_patience{5000};

std::string joined(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& arg : argv) {
        if (!out.empty()) out += ' ';
        out += arg;
    }
    return out;
}

}  // namespace

job::job(private_tag, std::string id, const job_request& request, std::size_t memory_bytes,
         std::uint64_t spill_max_bytes, std::shared_ptr<spill_directory> spill)
    : state_(std::make_unique<state>(std::move(id), request, memory_bytes, spill_max_bytes,
                                     std::move(spill))) {}

job::state::state(std::string job_id, const job_request& request, std::size_t memory_bytes,
                  std::uint64_t spill_max_bytes, const std::shared_ptr<spill_directory>& spill)
    : id(std::move(job_id)),
      owner(request.owner),
      label(request.label.empty() ? joined(request.run.argv) : request.label),
      started_at(std::chrono::system_clock::now()),
      mode(request.run.mode),
      merged(std::make_unique<job_stream>(id + "-output", memory_bytes, spill_max_bytes, spill)),
      stdout_stream(
          std::make_unique<job_stream>(id + "-stdout", memory_bytes, spill_max_bytes, spill)),
      stderr_stream(
          std::make_unique<job_stream>(id + "-stderr", memory_bytes, spill_max_bytes, spill)),
      completion(promise.get_future().share()) {
    if (request.run.tty) {
        terminal = std::make_shared<job_terminal>(*request.run.tty, request.scrollback_lines);
    }
}

job::~job() = default;

const std::string& job::id() const noexcept {
    return state_->id;
}

std::shared_future<job_snapshot> job::completion() const {
    return state_->completion;
}

const job_stream& job::stream(job_output which) const {
    switch (which) {
        case job_output::stdout_only:
            return *state_->stdout_stream;
        case job_output::stderr_only:
            return *state_->stderr_stream;
        case job_output::merged:
            break;
    }
    return *state_->merged;
}

stream_read job::read(job_output which, std::uint64_t offset, std::size_t max_bytes) const {
    return stream(which).read(offset, max_bytes);
}

std::optional<std::filesystem::path> job::spill_path(job_output which) const {
    return stream(which).spill_path();
}

std::uint64_t job::cursor(job_output which) const noexcept {
    return state_->cursors[static_cast<std::size_t>(which)].load();
}

void job::set_cursor(job_output which, std::uint64_t offset) noexcept {
    state_->cursors[static_cast<std::size_t>(which)].store(offset);
}

bool job::wait_output(job_output which, std::uint64_t offset,
                      std::chrono::steady_clock::time_point deadline) const {
    return stream(which).wait_for(offset, deadline);
}

bool job::wait_settled(std::chrono::steady_clock::time_point deadline) const {
    std::unique_lock lock(state_->mutex);
    return state_->settled_changed.wait_until(lock, deadline, [this] { return state_->settled; });
}

job_snapshot job::snapshot() const {
    std::lock_guard lock(state_->mutex);
    job_snapshot out;
    if (state_->settled) {
        out = state_->final_snapshot;
    } else {
        out.id = state_->id;
        out.owner = state_->owner;
        out.label = state_->label;
        out.started_at = state_->started_at;
        out.sandbox.mode = state_->mode;
    }
    out.output_bytes = state_->merged->size();
    out.stdout_bytes = state_->stdout_stream->size();
    out.stderr_bytes = state_->stderr_stream->size();
    return out;
}

std::optional<run_record> job::record() const {
    std::lock_guard lock(state_->mutex);
    return state_->record;
}

bool job::kill_requested() const {
    std::lock_guard lock(state_->mutex);
    return state_->kill_requested;
}

bool job::kill(std::optional<kill_plan> plan) {
    run_handle handle;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->settled || state_->kill_requested) return false;
        state_->kill_requested = true;
        if (!state_->handle_set) {
            state_->requested_plan =
                std::move(plan);  // the start cancels it as soon as it has a handle
            return true;
        }
        handle = state_->handle;
    }
    handle.cancel(std::move(plan));
    return true;
}

job_write_result job::write(std::string_view data, bool eof) {
    if (std::this_thread::get_id() == state_->loop_thread) {
        throw std::logic_error("job::write: called on the supervisor's loop thread");
    }
    std::unique_lock stdin_lock(state_->stdin_mutex);
    job_write_result out;
    const auto deadline = std::chrono::steady_clock::now() + write_patience;
    // A terminal is typed into once the job is prepared, which start() does not wait for.
    if (state_->terminal) {
        const auto ready = [this] {
            if (state_->stdin_fd || state_->stdin_final) return true;
            std::lock_guard lock(state_->mutex);
            return state_->settled;
        };
        // In slices: settle() says so only when it gets this lock, which it never waits for.
        while (!ready() && std::chrono::steady_clock::now() < deadline) {
            state_->stdin_ready.wait_until(
                stdin_lock,
                std::min(deadline, std::chrono::steady_clock::now() + milliseconds(50)));
        }
    }
    {
        std::lock_guard lock(state_->mutex);
        if (state_->settled) {
            state_->stdin_fd.reset();
            out.error = job_write_failure{job_write_error::ended, "the job has ended"};
            return out;
        }
    }
    if (!state_->stdin_fd) {
        if (state_->terminal) {
            out.error = state_->stdin_final
                            ? job_write_failure{job_write_error::io,
                                                "cannot open the job's terminal for writing"}
                            : job_write_failure{job_write_error::not_reading,
                                                "the job's terminal was not ready within " +
                                                    std::to_string(write_patience.count()) + " ms"};
            return out;
        }
        out.error = job_write_failure{job_write_error::not_open, "the job's stdin is not open"};
        return out;
    }
    // Under a terminal, the end of input is its end-of-file character, typed.
    std::string typed;
    if (state_->terminal && eof) {
        typed.assign(data);
        termios modes{};
        typed += ::tcgetattr(state_->stdin_fd.get(), &modes) == 0 && modes.c_cc[VEOF] != 0
                     ? static_cast<char>(modes.c_cc[VEOF])
                     : '\x04';
        data = typed;
        eof = false;
    }
    const write_result wrote = write_within(state_->stdin_fd.get(), data, deadline);
    out.written = wrote.written;
    switch (wrote.end) {
        case write_end::written:
            break;
        case write_end::timed_out:
            out.error = job_write_failure{job_write_error::not_reading,
                                          "the command did not read its stdin within " +
                                              std::to_string(write_patience.count()) + " ms"};
            return out;
        case write_end::failed:
            // A terminal whose every process is gone answers EIO, as a pipe answers EPIPE.
            if (wrote.error == EPIPE || (state_->terminal && wrote.error == EIO)) {
                out.error = job_write_failure{job_write_error::closed_by_command,
                                              "the command closed its stdin"};
                state_->stdin_fd.reset();
                return out;
            }
            out.error = job_write_failure{
                job_write_error::io,
                std::string("cannot write to the job's stdin: ") + std::strerror(wrote.error)};
            return out;
    }
    if (eof) state_->stdin_fd.reset();
    return out;
}

void job::adopt_terminal(const std::shared_ptr<const unique_fd>& master) {
    // A descriptor of the job's own (the prepared run's goes with the run); the open file
    // description it shares with the run's reader is non-blocking (open_pty), as write() expects.
    unique_fd writer(::fcntl(master->get(), F_DUPFD_CLOEXEC, 3));
    {
        std::lock_guard lock(state_->terminal->mutex);
        state_->terminal->master = master;
        state_->terminal->ready_at = std::chrono::steady_clock::now();
    }
    {
        std::lock_guard stdin_lock(state_->stdin_mutex);
        state_->stdin_fd = std::move(writer);
        state_->stdin_final = true;
    }
    state_->stdin_ready.notify_all();
}

void job::take_terminal_output(std::string_view chunk) {
    // In the streams at once; on the screen once the screen thread drew it, in order (the screen
    // shows a prefix of the streams, never more).
    state_->merged->append(chunk);
    state_->stdout_stream->append(chunk);
    boost::asio::post(
        state_->terminal->screens,
        [terminal = state_->terminal, piece = std::string(chunk)] { terminal->draw(piece); });
}

void job_terminal::draw(std::string_view chunk) noexcept {
    std::string answers;
    std::shared_ptr<const unique_fd> to;
    {
        std::lock_guard lock(mutex);
        if (!emulator) return;
        try {
            answers = emulator->feed(chunk);
        } catch (const std::exception& error) {
            // Out of memory drawing: the bytes are in the streams all the same; the screen says
            // nothing it did not draw (the offset stays behind them).
            log::error("a job's screen could not draw its output: {}", error.what());
            return;
        }
        offset += chunk.size();
        last_output = std::chrono::steady_clock::now();
        to = master;
    }
    changed.notify_all();
    // As a terminal answers: at once, or not at all (a few bytes that a program which stopped
    // reading its terminal would not take; nothing here waits on a run).
    if (!answers.empty() && to) {
        if (write_without_sigpipe(to->get(), answers.data(), answers.size()) !=
            static_cast<ssize_t>(answers.size())) {
            log::debug("the terminal's answer was not taken whole");
        }
    }
}

void job_terminal::settle() noexcept {
    {
        std::lock_guard lock(mutex);
        if (emulator) {
            try {
                final_screen = emulator->snapshot(true, scrollback_lines);
                emulator.reset();
            } catch (const std::exception& error) {
                log::error("a job's last screen could not be kept: {}", error.what());
            }
        }
        settled = true;
        master.reset();
    }
    changed.notify_all();
}

bool job::has_terminal() const noexcept {
    return state_->terminal != nullptr;
}

std::optional<terminal_screen> job::screen(bool attributes, std::size_t scrollback) const {
    if (!state_->terminal) return std::nullopt;
    const job_terminal& terminal = *state_->terminal;
    std::lock_guard lock(terminal.mutex);
    terminal_screen out;
    if (terminal.emulator) {
        out = terminal.emulator->snapshot(attributes, scrollback);
    } else {
        // The job ended: its last screen, as asked for.
        out = *terminal.final_screen;
        if (!attributes) out.attributes.clear();
        const std::size_t kept = std::min(scrollback, out.scrollback.size());
        out.scrollback.erase(out.scrollback.begin(),
                             out.scrollback.end() - static_cast<std::ptrdiff_t>(kept));
    }
    out.offset = terminal.offset;
    return out;
}

job_write_result job::press(std::span<const terminal_key> keys) {
    if (!state_->terminal) {
        return {0, job_write_failure{job_write_error::not_open, "the job has no terminal"}};
    }
    std::string bytes;
    {
        std::lock_guard lock(state_->terminal->mutex);
        if (!state_->terminal->emulator) {
            return {0, job_write_failure{job_write_error::ended, "the job has ended"}};
        }
        bytes = state_->terminal->emulator->keys(keys);
    }
    return write(bytes, false);
}

bool job::resize(terminal_size size) {
    if (!state_->terminal || terminal_size_error(size)) return false;
    job_terminal& terminal = *state_->terminal;
    std::lock_guard lock(terminal.mutex);
    if (terminal.settled || !terminal.master || !terminal.emulator) return false;
    // Under the lock that output takes: the program's redraw after its SIGWINCH is fed to a
    // screen of the new size.
    if (resize_pty(terminal.master->get(), size) != 0) return false;
    terminal.emulator->resize(size);
    return true;
}

screen_wait_result job::wait_screen(const screen_wait& until,
                                    std::chrono::steady_clock::time_point deadline) const {
    if (!state_->terminal) return screen_wait_result::no_terminal;
    const job_terminal& terminal = *state_->terminal;
    const auto since = until.since.value_or(std::chrono::steady_clock::now());
    std::unique_lock lock(terminal.mutex);
    for (;;) {
        if (!until.shows.empty() && shows_locked(terminal, until.shows)) {
            return screen_wait_result::shown;
        }
        const auto now = std::chrono::steady_clock::now();
        std::chrono::steady_clock::time_point wake = deadline;
        // Quiet only once the program could have drawn: not while the job is still prepared.
        if (until.quiet && terminal.ready_at) {
            const auto quiet_at =
                std::max({since, terminal.last_output, *terminal.ready_at}) + *until.quiet;
            if (now >= quiet_at) return screen_wait_result::quiet;
            wake = std::min(wake, quiet_at);
        }
        if (terminal.settled) return screen_wait_result::settled;
        if (now >= deadline) return screen_wait_result::timed_out;
        terminal.changed.wait_until(lock, wake);
    }
}

void job::settle(run_record record, const std::function<void()>& retire) {
    job_snapshot out;
    out.id = state_->id;
    out.owner = state_->owner;
    out.label = state_->label;
    out.started_at = state_->started_at;
    out.finished_at = std::chrono::system_clock::now();
    out.outcome = record.outcome;
    out.sandbox = record.sandbox;
    const std::string& message = record.outcome.message;
    if (!record.outcome.started() && !message.empty()) {
        // A job that never ran says why where its output would be, once: on its screen too, so
        // that the screen still shows every byte of the output.
        const std::string line = "cordon: " + message + "\n";
        state_->stderr_stream->append(line);
        state_->merged->append(line);
        if (state_->terminal) {
            boost::asio::post(state_->terminal->screens,
                              [terminal = state_->terminal, line] { terminal->draw(line); });
        }
    }
    state_->merged->seal();
    state_->stdout_stream->seal();
    state_->stderr_stream->seal();
    // After every piece of output already posted to the screen thread, and before anyone sees
    // the job settled: its screen is then the last one, and it takes no more keys or sizes. The
    // wait is short (the run is over, and its output was paced: what is left to draw is what its
    // terminal held), and bounded all the same.
    if (state_->terminal) {
        auto drawn = std::make_shared<std::promise<void>>();
        std::future<void> last = drawn->get_future();
        boost::asio::post(state_->terminal->screens, [terminal = state_->terminal, drawn] {
            terminal->settle();
            drawn->set_value();
        });
        if (last.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
            log::warn("{}: its last screen was not drawn within 5 s", state_->id);
        }
    }
    retire();
    job_snapshot copy;
    {
        std::lock_guard lock(state_->mutex);
        state_->final_snapshot = out;
        state_->record = std::move(record);
        state_->settled = true;
        copy = state_->final_snapshot;
        // The process tree is done; holding it would keep its buffers, and its strand would
        // outlive the loop it belongs to.
        state_->handle = {};
    }
    // A writer waiting on the pipe closes it when it sees the job settled.
    if (std::unique_lock stdin_lock(state_->stdin_mutex, std::try_to_lock); stdin_lock) {
        state_->stdin_fd.reset();
        state_->stdin_final = true;
    }
    state_->stdin_ready.notify_all();
    copy.output_bytes = state_->merged->size();
    copy.stdout_bytes = state_->stdout_stream->size();
    copy.stderr_bytes = state_->stderr_stream->size();
    state_->settled_changed.notify_all();
    state_->promise.set_value(std::move(copy));
}

}  // namespace cordon::runtime
