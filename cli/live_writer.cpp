#include "cli/live_writer.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace cordon::cli {

live_writer::live_writer(int fd, std::size_t max_queued) : state_(std::make_shared<state>()) {
    state_->fd = fd;
    state_->max_queued = max_queued;
}

live_writer::~live_writer() {
    (void)finish();
}

void live_writer::push(std::string_view chunk) {
    if (chunk.empty()) return;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->closing) return;
        if (state_->no_thread || state_->queued + chunk.size() > state_->max_queued) {
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

std::uint64_t live_writer::finish(std::chrono::milliseconds patience) {
    std::unique_lock lock(state_->mutex);
    if (finished_) return state_->dropped;
    finished_ = true;
    state_->closing = true;
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

void live_writer::run(const std::shared_ptr<state>& shared) {
    // A reader that goes away is an EPIPE here, never a SIGPIPE for the process (the cordon
    // program ignores it anyway; a host embedding this may not).
    sigset_t pipe_only;
    ::sigemptyset(&pipe_only);
    ::sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
    state& s = *shared;
    bool broken = false;  // the destination failed (EPIPE, EBADF): discard from now on
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
        }
        std::string_view rest(chunk);
        while (!broken && !rest.empty()) {
            const ssize_t n = ::write(s.fd, rest.data(), rest.size());
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                broken = true;
                break;
            }
            s.line_start = rest[static_cast<std::size_t>(n) - 1] == '\n';
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        if (!rest.empty()) {  // never shown: counted like a chunk the full queue dropped
            std::lock_guard lock(s.mutex);
            s.dropped += rest.size();
        }
    }
}

}  // namespace cordon::cli
