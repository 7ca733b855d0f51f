// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Background jobs and the supervisor that owns them (docs/jobs.md).
//
//     cordon::supervisor jobs(provider);
//     auto started = jobs.start({.run = request});
//     auto job = std::get<std::shared_ptr<cordon::job>>(started);  // or a cordon::job_refused
//     std::uint64_t cursor = 0;
//     while (true) {
//         job->wait_output(cordon::job_output::merged, cursor, deadline);
//         const cordon::stream_read piece = job->read(cordon::job_output::merged, cursor, 4096);
//         std::cout << piece.data;
//         cursor = piece.next_offset;
//         if (piece.complete) break;
//     }
//
// supervisor::start() returns at once with a job whose id the supervisor minted ("job-1", never an
// OS pid). The job runs through the same executor as `cordon run` (confinement, classification,
// the kill plan, cgroup containment): it is prepared (executor::prepare: the program's lookup, the
// workspace refusal, confine(), the Landlock ruleset, which may wait on the file system) on one of
// a few preparing threads, then spawned on the supervisor's own event-loop thread, which delivers
// every job's output, timers and kills; a slow preparation never holds that loop. A job killed
// while it is being prepared is never spawned: it settles as aborted, with neither exit code nor
// signal. Its output is read by cursor: every stream (stdout, stderr, and both merged in arrival
// order) has byte offsets, and read(offset) returns the bytes from there and the offset to ask
// for next, so a read that a client lost can simply be asked for again.
//
// Nothing outlives the supervisor: shutdown() (and the destructor) ends every job's tree with the
// kill plan and waits for it; a job still being prepared is waited for until its preparation
// returns, and then never spawned. A supervisor whose process is SIGKILLed cannot do that; then
//   - under bwrap, bwrap's --die-with-parent ends the sandbox, and its pid namespace everything
//     in it;
//   - under the Landlock launcher and danger-full-access, the job's leader dies with the
//     supervisor's loop thread (PR_SET_PDEATHSIG: the thread that spawned it), and what it started
//     is swept from its cgroup by the next cordon that starts (docs/jobs.md).
//
// Thread safety: every member of supervisor and job may be called from any thread but one: the
// supervisor's loop thread, on which the live-output callbacks of run_request run. There, the
// calls that wait (supervisor::start, supervisor::shutdown, job::write) throw std::logic_error,
// and destroying the supervisor is a deadlock; job reads and kill() are fine.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/output.hpp"
#include "cordon/record.hpp"
#include "cordon/run.hpp"
#include "cordon/terminal.hpp"
#include "cordon/unique_fd.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

// The private parts a job and its supervisor hold (runtime/).
class executor;
class job_stream;
class prepared_run;
class spill_directory;

enum class job_status {
    running,
    completed,        // the command exited on its own (any exit code)
    killed,           // a signal ended it: kill(), the supervisor's shutdown, or any other
    timed_out,        // its lifetime ran out
    failed_to_start,  // it never ran: the program, the request, or the sandbox (runner_failed)
};
[[nodiscard]] std::string_view to_string(job_status status) noexcept;

// The status of a job that ended this way: the one mapping from a run's outcome to a job's.
[[nodiscard]] constexpr job_status status_of(outcome_kind kind) noexcept {
    switch (kind) {
        case outcome_kind::exited:
            return job_status::completed;
        case outcome_kind::signaled:
        case outcome_kind::out_of_memory:
        case outcome_kind::aborted:
            return job_status::killed;
        case outcome_kind::timed_out:
            return job_status::timed_out;
        case outcome_kind::not_started:
        case outcome_kind::runner_failed:
            return job_status::failed_to_start;
    }
    return job_status::failed_to_start;
}

enum class job_output {
    merged,  // stdout and stderr in the order they arrived
    stdout_only,
    stderr_only,
};

struct job_request {
    // What to run and how, as for executor::async_run. `run.timeout` is the job's lifetime:
    // unset, it runs until it ends, is killed, or the supervisor shuts down (or until
    // supervisor_options::max_lifetime).
    run_request run;
    std::string owner;  // the per-owner cap counts this owner's running jobs
    std::string label;  // what the job is, for lists; default: the argv joined by spaces
    // Keep the command's stdin open as a pipe that job::write() feeds. `run.stdin_data`, when
    // given, is written first, before start() returns (waiting as job::write() does); not with
    // `run.stdin_fd`. Otherwise stdin is `run.stdin_data`, `run.stdin_fd` or /dev/null.
    // A job under a terminal (`run.tty`) always reads it: write() and press() type into it,
    // `run.stdin_data` first (start() then waits for the job to be prepared, at most as long as
    // write() does), and keep_stdin_open changes nothing. Its command gets
    // TERM=xterm-256color (what the job's emulator understands) unless `run.env` names a TERM.
    bool keep_stdin_open = false;
    // A job under a terminal: how many lines that scrolled off its screen are kept for screen(),
    // at most max_scrollback_lines.
    std::size_t scrollback_lines = 1000;
    static constexpr std::size_t max_scrollback_lines = 100'000;
};

// What job::wait_screen() waits for, whichever comes first (either may be left out).
struct screen_wait {
    std::string shows;  // a visible row contains this text (empty: not waited for)
    // No output for this long, counted from the later of `since` and the last output: a
    // program has answered what was typed and is waiting for more.
    std::optional<std::chrono::milliseconds> quiet;
    // When the quiet may start at the earliest: when the keys were pressed (a caller that waits
    // in slices keeps it across them). Unset: the call.
    std::optional<std::chrono::steady_clock::time_point> since;
};

enum class screen_wait_result {
    shown,      // the screen shows the text
    quiet,      // the output has been quiet for as long as asked
    settled,    // the job ended first
    timed_out,  // the deadline came first
    no_terminal,
};
[[nodiscard]] std::string_view to_string(screen_wait_result result) noexcept;

struct job_snapshot {
    std::string id;
    std::string owner;
    std::string label;
    // How the run ended, once the job settled (its record's outcome): the exit code or signal,
    // and for a job that never ran, why (`message`; `runner` when the sandbox could not run it).
    std::optional<run_outcome> outcome;
    std::chrono::system_clock::time_point started_at;
    std::optional<std::chrono::system_clock::time_point> finished_at;
    // The mode until the job settles, then the record's facts (sandbox.denied is false for a
    // runner failure).
    sandbox_facts sandbox;
    std::uint64_t output_bytes = 0;
    std::uint64_t stdout_bytes = 0;
    std::uint64_t stderr_bytes = 0;

    [[nodiscard]] job_status status() const noexcept {
        return outcome ? status_of(outcome->kind) : job_status::running;
    }
};

// Why job::write() could not write everything: a kind for callers, beside the words for people.
enum class job_write_error {
    not_open,           // the job was not started with keep_stdin_open, or its stdin was closed
    ended,              // the job has settled
    closed_by_command,  // the command closed its end (EPIPE)
    not_reading,        // the command did not read within the write's patience
    io,                 // another write error (the message has strerror)
};

struct job_write_failure {
    job_write_error kind = job_write_error::io;
    std::string message;  // "the job's stdin is not open", ...
};

struct job_write_result {
    std::size_t written = 0;
    std::optional<job_write_failure> error;  // set when not every byte (or the eof) got through
};

class supervisor;

class job {
public:
    job(const job&) = delete;
    job& operator=(const job&) = delete;
    ~job();

    [[nodiscard]] const std::string& id() const noexcept;
    [[nodiscard]] job_snapshot snapshot() const;
    // The run's full record once the job settled.
    [[nodiscard]] std::optional<run_record> record() const;

    // Up to `max_bytes` of `which` from `offset`; see stream_read.
    [[nodiscard]] stream_read read(job_output which, std::uint64_t offset,
                                   std::size_t max_bytes) const;
    // The file that holds all of `which` while it does: none once the stream outgrew its spill
    // cap, or when it could not be written.
    [[nodiscard]] std::optional<std::filesystem::path> spill_path(job_output which) const;
    // Where a reader of `which` last stopped (0 until set_cursor): a consumer that reads the job
    // from several calls (the MCP job tools) keeps its place here, so that it goes with the job.
    [[nodiscard]] std::uint64_t cursor(job_output which) const noexcept;
    void set_cursor(job_output which, std::uint64_t offset) noexcept;
    // Until `which` has a byte at `offset` or is complete, or `deadline`. True if so.
    bool wait_output(job_output which, std::uint64_t offset,
                     std::chrono::steady_clock::time_point deadline) const;
    // Until the job settles or `deadline`. True once settled.
    bool wait_settled(std::chrono::steady_clock::time_point deadline) const;
    // Ready once the job settled; never holds an exception.
    [[nodiscard]] std::shared_future<job_snapshot> completion() const;

    // Writes to the command's stdin (keep_stdin_open), then closes it when `eof`. Waits at most a
    // few seconds for a command that does not read. Under a terminal the bytes are typed into it
    // as they are (so "\x03" is Ctrl-C), and `eof` types the terminal's end-of-file (Ctrl-D):
    // the terminal stays open. As at a keyboard, an end-of-file after a partial line hands the
    // program that line; a second one is the end of its input.
    job_write_result write(std::string_view data, bool eof);

    // A job under a terminal (job_request's `run.tty`; docs/terminal.md). Whether it has one:
    [[nodiscard]] bool has_terminal() const noexcept;
    // Its screen as the terminal shows it now: the visible rows, the cursor, the title, whether
    // the alternate screen is up, with each row's attributes when `attributes`, and up to
    // `scrollback` lines that scrolled off. `offset` says which output it shows: every byte of
    // the merged stream before it, none after. Nullopt without a terminal. Keep it in a variable
    // while its rows are read: `for (auto& row : job.screen()->rows)` reads a destroyed
    // temporary (operator-> does not extend the optional's life).
    [[nodiscard]] std::optional<terminal_screen> screen(bool attributes = false,
                                                        std::size_t scrollback = 0) const;
    // Presses `keys` (parse_key()), as the terminal sends them in its current modes (the arrows
    // of an application-cursor-keys program included). As write() for its outcome.
    [[nodiscard]] job_write_result press(std::span<const terminal_key> keys);
    // Resizes the terminal: its screen, and the command's size (SIGWINCH to its foreground
    // group). False without a terminal, once the job settled, or for a size no terminal has.
    [[nodiscard]] bool resize(terminal_size size);
    // Until `until` or `deadline`; see screen_wait_result.
    [[nodiscard]] screen_wait_result wait_screen(
        const screen_wait& until, std::chrono::steady_clock::time_point deadline) const;
    // Ends the job's whole tree with the supervisor's kill plan, or with `plan` (which always
    // ends in SIGKILL too). True the first time on a running job, false after that or once it
    // settled.
    bool kill(std::optional<kill_plan> plan = std::nullopt);

private:
    friend class supervisor;
    struct private_tag {};

public:
    job(private_tag, std::string id, const job_request& request, std::size_t memory_bytes,
        std::uint64_t spill_max_bytes, std::shared_ptr<spill_directory> spill);

private:
    // Whether kill() was called (by a caller or the shutdown) before the job was spawned.
    [[nodiscard]] bool kill_requested() const;
    // Stamps the outcome and seals the streams, calls `retire` (the supervisor's bookkeeping),
    // then publishes: whoever sees the job settled also sees it gone from the running jobs.
    void settle(run_record record, const std::function<void()>& retire);
    [[nodiscard]] const job_stream& stream(job_output which) const;
    // Under a terminal, on the preparing thread: the master, which write() then types into.
    void adopt_terminal(const std::shared_ptr<const unique_fd>& master);
    // Under a terminal, on the run's strand: the output, to the streams and the screen, and the
    // terminal's answers to what the program asked of it (the cursor's place, ...) to the master.
    void take_terminal_output(std::string_view chunk);

    // Its streams, cursors, stdin and the lock over how it settles (runtime/job_state.hpp).
    struct state;
    std::unique_ptr<state> state_;
};

struct supervisor_options {
    // How jobs run: the kill plan, output limits (the spill cap applies to each job stream too),
    // process and memory limits, the spill root. Its timeouts are replaced: a job's lifetime is
    // its request's `run.timeout`, capped at max_lifetime.
    executor_options executor;
    std::optional<std::chrono::milliseconds> max_lifetime;
    std::size_t max_running_per_owner = 10;
    std::size_t history = 100;                      // finished jobs kept readable, oldest dropped
    std::size_t memory_bytes_per_stream = 1 << 20;  // the rest is read back from the spill file
};

// start() refused the job: nothing was run.
enum class job_refusal {
    shut_down,  // the supervisor has shut down
    too_many,   // the owner's running-job cap: `running` names them
    no_stdin,   // the stdin pipe could not be made
};

struct job_refused {
    job_refusal kind = job_refusal::shut_down;
    std::string message;
    std::vector<std::string> running;  // the owner's running job ids, when the cap was the reason
};

class supervisor {
public:
    // `provider` as for executor (null: danger-full-access only).
    explicit supervisor(std::shared_ptr<sandbox::provider> provider,
                        supervisor_options options = {});
    // shutdown().
    ~supervisor();
    supervisor(const supervisor&) = delete;
    supervisor& operator=(const supervisor&) = delete;

    // Starts the job and returns at once. A request that breaks executor::async_run's contract
    // throws std::invalid_argument; the per-owner cap and a supervisor that was shut down refuse.
    std::variant<std::shared_ptr<job>, job_refused> start(job_request request);

    [[nodiscard]] std::shared_ptr<job> find(std::string_view id) const;
    // Running jobs first (oldest first), then the kept history (newest first).
    [[nodiscard]] std::vector<job_snapshot> list() const;

    // Refuses new jobs, ends every running job's tree with the kill plan (or with `plan`: a host
    // that must be gone soon gives a short grace), and waits until each settled. Idempotent.
    void shutdown(std::optional<kill_plan> plan = std::nullopt);

private:
    // On a preparing thread: prepares the job's run (unless it was killed first), then hands the
    // result to launch() on the loop.
    void prepare(const std::shared_ptr<job>& started, run_request run);
    // On the loop thread: spawns the prepared run, or settles the job when it cannot start or was
    // killed while it was being prepared.
    void launch(const std::shared_ptr<job>& started,
                std::variant<prepared_run, run_record> prepared);
    void retire(const std::shared_ptr<job>& finished);
    // Throws std::logic_error on the loop thread, where waiting would deadlock the loop.
    void not_on_the_loop(const char* what) const;

    struct loop;
    std::unique_ptr<loop> loop_;
    supervisor_options options_;
    std::shared_ptr<spill_directory> spill_;
    std::unique_ptr<executor> executor_;

    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<job>> running_;  // guarded by mutex_, in start order
    std::vector<std::shared_ptr<job>> history_;  // guarded by mutex_, oldest first
    std::uint64_t next_id_ = 1;                  // guarded by mutex_
    bool shut_down_ = false;                     // guarded by mutex_
};

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::job;
using runtime::job_output;
using runtime::job_refusal;
using runtime::job_refused;
using runtime::job_request;
using runtime::job_snapshot;
using runtime::job_status;
using runtime::job_write_error;
using runtime::job_write_failure;
using runtime::job_write_result;
using runtime::screen_wait;
using runtime::screen_wait_result;
using runtime::supervisor;
using runtime::supervisor_options;
using runtime::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
