// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/live_writer.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <system_error>
#include <utility>

#include "base/log.hpp"

namespace cordon::cli {

namespace {

// The callbacks the writer thread calls are the run's (more: post to its loop; reader_gone: end
// it): one that throws (bad_alloc) is logged, never let out of the thread (std::terminate). A
// lost `more` leaves the command waiting on its pipe until its run ends otherwise.
void call_from_writer(const std::function<void()>& callback, const char* what) noexcept {
    try {
        callback();
    } catch (const std::exception& error) {
        log::error("the live output's {} failed: {}", what, error.what());
    } catch (...) {
        log::error("the live output's {} failed", what);
    }
}

}  // namespace

live_writer::live_writer(int fd, std::function<void()> reader_gone, std::size_t pace_bound,
                         std::size_t max_queued)
    : state_(std::make_shared<state>()) {
    state_->fd = fd;
    state_->pace_bound = pace_bound;
    state_->max_queued = max_queued;
    state_->reader_gone = std::move(reader_gone);
}

live_writer::~live_writer() {
    (void)finish();
}

void live_writer::push(std::string_view chunk) {
    if (chunk.empty()) return;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->closing) return;
        if (state_->no_thread || state_->broken ||
            state_->queued + chunk.size() > state_->max_queued) {
            state_->dropped += chunk.size();
            return;
        }
        state_->queued += chunk.size();
        state_->queue.emplace_back(chunk);
        // The thread starts with the first chunk: most commands an agent runs print little or
        // nothing, and a thread per stream is a visible part of a short run's cost. It finds
        // the chunk already queued.
        if (!thread_.joinable()) {
            try {
                thread_ = std::thread([shared = state_] { run(shared); });
            } catch (const std::system_error&) {
                // No thread: nothing can be shown without blocking the event loop. What was
                // queued, and all that follows, is counted as not shown.
                state_->no_thread = true;
                state_->dropped += state_->queued;
                state_->queue.clear();
                state_->queued = 0;
            }
            return;
        }
    }
    state_->wake.notify_one();
}

void live_writer::when_room(std::function<void()> more) {
    {
        std::lock_guard lock(state_->mutex);
        if (!state_->closing && !state_->no_thread && !state_->broken &&
            state_->queued >= state_->pace_bound) {
            state_->more = std::move(more);
            return;
        }
    }
    more();
}

std::uint64_t live_writer::finish(std::chrono::milliseconds patience) {
    std::unique_lock lock(state_->mutex);
    if (finished_) return state_->dropped;
    finished_ = true;
    state_->closing = true;
    state_->reader_gone = nullptr;
    state_->more = nullptr;
    if (!thread_.joinable()) {  // nothing was ever pushed, or no thread could be started
        state_->drained = true;
        return state_->dropped;
    }
    state_->wake.notify_all();
    if (state_->wake.wait_for(lock, patience, [this] { return state_->drained; })) {
        lock.unlock();
        thread_.join();
        lock.lock();
    } else {
        // The writer is blocked in write(2) on a reader that stopped reading. Leave it there,
        // holding its own reference to the state: the process is about to exit. Its pending
        // bytes are reported as not shown, and dropped, so that none of them can follow
        // cordon's own lines should the reader resume.
        state_->dropped += state_->queued;
        state_->queue.clear();
        state_->queued = 0;
        thread_.detach();
    }
    return state_->dropped;
}

bool live_writer::at_line_start() const {
    std::lock_guard lock(state_->mutex);
    return state_->drained && state_->line_start;
}

bool live_writer::reader_left() const {
    std::lock_guard lock(state_->mutex);
    return state_->reader_left;
}

int live_writer::failure() const {
    std::lock_guard lock(state_->mutex);
    return state_->failure;
}

void live_writer::run(const std::shared_ptr<state>& shared) {
    // A reader that goes away is an EPIPE here, never a SIGPIPE for the process (the cordon
    // program ignores it anyway; a host embedding this may not).
    sigset_t pipe_only;
    ::sigemptyset(&pipe_only);
    ::sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
    state& s = *shared;
    // The callbacks are called with the mutex held: finish() clears them under it, and each only
    // posts to the run's event loop.
    const auto release_waiting = [&s] {
        if (auto more = std::exchange(s.more, nullptr)) call_from_writer(more, "pacing");
    };
    for (;;) {
        std::string chunk;
        {
            std::unique_lock lock(s.mutex);
            s.wake.wait(lock, [&s] { return s.closing || !s.queue.empty(); });
            if (s.queue.empty()) {  // closing and drained
                s.drained = true;
                s.wake.notify_all();
                return;
            }
            chunk = std::move(s.queue.front());
            s.queue.pop_front();
            s.queued -= chunk.size();
            if (s.queued < s.pace_bound) release_waiting();
        }
        std::string_view rest(chunk);
        int error = 0;
        while (!rest.empty()) {
            const ssize_t n = ::write(s.fd, rest.data(), rest.size());
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                error = n < 0 ? errno : EIO;
                break;
            }
            s.line_start = rest[static_cast<std::size_t>(n) - 1] == '\n';
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        if (rest.empty()) continue;
        // The destination failed (EPIPE, EBADF, ENOSPC): what was not written, and everything
        // after it, is counted as not shown, and the run is no longer paced by it.
        std::lock_guard lock(s.mutex);
        s.dropped += rest.size();
        if (s.broken) continue;
        s.broken = true;
        s.failure = error;
        s.dropped += s.queued;
        s.queue.clear();
        s.queued = 0;
        release_waiting();
        if (error == EPIPE) {
            s.reader_left = true;
            if (auto gone = std::exchange(s.reader_gone, nullptr)) {
                call_from_writer(gone, "reader-gone callback");
            }
        }
    }
}

}  // namespace cordon::cli
