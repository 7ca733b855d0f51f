// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a job holds, kept out of the public header (cordon/jobs.hpp): its streams, its cursors,
// its stdin, how it settles and the lock that guards it. job.cpp and the supervisor (jobs.cpp)
// use it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/any_io_executor.hpp>

#include "cordon/executor.hpp"
#include "cordon/jobs.hpp"
#include "cordon/unique_fd.hpp"
#include "runtime/job_stream.hpp"
#include "runtime/terminal_emulator.hpp"

namespace cordon::runtime {

// A job under a terminal: its screen, fed every byte of its output in order, and the master it
// types into and resizes. One lock over the screen and the offset, so that a screen read together
// with its offset shows exactly the output before it.
//
// The screen is drawn on the supervisor's screen thread, not on its loop: a screen costs in
// proportion to its cells (libvterm moves every cell of it for each line that scrolls), and a
// program that floods a large one would otherwise hold up every job's output, timers and kills.
// The job's output is read again only once its last piece was drawn (run_request::stdout_pace),
// so a program writes at its terminal's speed, as it would at a real one. Shared with the tasks
// of that thread, which may outlive the job.
struct job_terminal {
    job_terminal(terminal_size size, std::size_t scrollback)
        : emulator(std::make_unique<terminal_emulator>(size, scrollback)),
          scrollback_lines(scrollback) {}

    // Draws `chunk` (on the screen thread): its answers go to the master.
    void draw(std::string_view chunk) noexcept;
    // Once every piece of output was drawn (on the screen thread): the final screen is kept as
    // text and the emulator goes (a large one holds tens of MB; a supervisor keeps a hundred
    // ended jobs).
    void settle() noexcept;

    mutable std::mutex mutex;
    mutable std::condition_variable changed;  // output fed, or the job settled
    // Guarded by mutex: the emulator until the job settled, then its last screen.
    std::unique_ptr<terminal_emulator> emulator;
    std::optional<terminal_screen> final_screen;
    const std::size_t scrollback_lines;
    boost::asio::any_io_executor screens;  // the supervisor's screen thread; set at start
    std::uint64_t offset = 0;              // guarded by mutex: the output bytes fed
    std::chrono::steady_clock::time_point last_output = std::chrono::steady_clock::now();
    std::shared_ptr<const unique_fd> master;  // guarded by mutex: set once prepared
    // Guarded by mutex: when the terminal was there (prepared); quiet is counted from it at the
    // earliest.
    std::optional<std::chrono::steady_clock::time_point> ready_at;
    bool settled = false;  // guarded by mutex
};

struct job::state {
    state(std::string job_id, const job_request& request, std::size_t memory_bytes,
          std::uint64_t spill_max_bytes, const std::shared_ptr<spill_directory>& spill);

    const std::string id;
    const std::string owner;
    const std::string label;
    const std::chrono::system_clock::time_point started_at;
    const sandbox::sandbox_mode mode;

    std::unique_ptr<job_stream> merged;
    std::unique_ptr<job_stream> stdout_stream;
    std::unique_ptr<job_stream> stderr_stream;
    std::array<std::atomic<std::uint64_t>, 3> cursors{};  // by job_output

    mutable std::mutex mutex;
    mutable std::condition_variable settled_changed;
    job_snapshot final_snapshot;  // valid once settled
    std::optional<run_record> record;
    bool settled = false;
    bool kill_requested = false;
    std::optional<kill_plan> requested_plan;  // the plan kill() asked for, until the handle is set
    // Why the job was killed for its caller: a live-output callback of the caller's threw
    // (caller_threw_message); the record of a job it ended says so.
    std::string caller_failure;
    run_handle handle;
    bool handle_set = false;
    unique_fd stdin_fd;  // write end, O_NONBLOCK; guarded by stdin_mutex
    std::mutex stdin_mutex;
    // A job under a terminal: set once it is prepared (the terminal's master then in stdin_fd).
    std::condition_variable stdin_ready;     // with stdin_mutex
    bool stdin_final = false;                // guarded by stdin_mutex: stdin_fd will not be set now
    std::shared_ptr<job_terminal> terminal;  // null without a terminal
    std::thread::id loop_thread;  // set once by the supervisor before anyone else sees the job

    std::promise<job_snapshot> promise;
    std::shared_future<job_snapshot> completion;
};

}  // namespace cordon::runtime
