// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Live output for `cordon run`: the command's chunks are copied to one of cordon's own streams by
// a writer thread, so that a reader who stops reading our stdout can never block the event loop
// (and with it the command's timeout and kill). The command is paced by the reader instead:
// when more than `pace_bound` bytes wait, when_room() holds the run's `more` until the writer
// has caught up, and the command waits on its full pipe (run_request::stdout_pace). What comes
// when the run no longer waits (the command is being ended) is queued up to `max_queued`;
// bytes beyond that are counted and dropped, never buffered without limit. The record and the
// spill file keep them. A reader that goes away (EPIPE) is reported once, through
// `reader_gone`, so that the command can be ended as SIGPIPE would end it.
// The thread is started by the first chunk, so a command that prints nothing costs no thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace cordon::cli {

class live_writer {
public:
    // `reader_gone` is called at most once, on the writer thread, never after finish().
    explicit live_writer(int fd, std::function<void()> reader_gone = {},
                         std::size_t pace_bound = 1 << 20, std::size_t max_queued = 8 << 20);
    ~live_writer();  // finish() with the default patience
    live_writer(const live_writer&) = delete;
    live_writer& operator=(const live_writer&) = delete;

    // Never blocks on the destination.
    void push(std::string_view chunk);
    // Calls `more` now if fewer than `pace_bound` bytes wait to be written (or nothing will be
    // written any more), else once the writer has brought them below it. At most one waits.
    void when_room(std::function<void()> more);
    // Waits until everything queued is written, the destination failed, or `patience` ran out
    // (a reader that never reads again must not keep cordon from exiting); returns the number of
    // bytes not shown: dropped because the queue was full, left when the destination failed, or
    // still queued at the deadline. Never calls reader_gone or a waiting `more` afterwards. A
    // writer still blocked at the deadline is detached; it owns what it uses (the shared state), so
    // it never touches this object again.
    std::uint64_t finish(std::chrono::milliseconds patience = std::chrono::seconds(5));
    // After finish(): whether what was shown ends a line (nothing shown counts as ending one).
    // False when the writer was left blocked: where its output stopped is unknown.
    [[nodiscard]] bool at_line_start() const;
    // The destination's reader went away (a write failed with EPIPE).
    [[nodiscard]] bool reader_left() const;
    // Why the destination failed (EBADF for a closed stream, ENOSPC for a full disk, EPIPE, ...),
    // or 0 while it has not.
    [[nodiscard]] int failure() const;

private:
    struct state {
        int fd;
        std::size_t pace_bound;
        std::size_t max_queued;
        std::function<void()> reader_gone;  // cleared once called, and by finish()
        std::function<void()> more;         // when_room()'s, waiting for room
        std::mutex mutex;
        std::condition_variable wake;
        std::deque<std::string> queue;
        std::size_t queued = 0;
        std::uint64_t dropped = 0;
        bool closing = false;
        bool no_thread = false;              // the writer thread could not be started
        bool drained = false;                // the thread has written (or given up on) everything
        bool broken = false;                 // the destination failed: nothing is written any more
        bool reader_left = false;            // it failed with EPIPE
        int failure = 0;                     // the errno it failed with
        std::atomic<bool> line_start{true};  // the last byte written was '\n', or none was
    };
    static void run(const std::shared_ptr<state>& shared);

    std::shared_ptr<state> state_;
    bool finished_ = false;
    std::thread thread_;  // started by the first push(); guarded by state_->mutex
};

}  // namespace cordon::cli
