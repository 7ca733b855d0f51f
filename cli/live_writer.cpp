#include "cli/live_writer.hpp"

#include <unistd.h>

#include <cerrno>

namespace cordon::cli {

live_writer::live_writer(int fd, std::size_t max_queued)
    : fd_(fd), max_queued_(max_queued), thread_([this] { run(); }) {}

live_writer::~live_writer() {
    (void)finish();
}

void live_writer::push(std::string_view chunk) {
    if (chunk.empty()) return;
    {
        std::lock_guard lock(mutex_);
        if (closing_) return;
        if (queued_ + chunk.size() > max_queued_) {
            dropped_ += chunk.size();
            return;
        }
        queued_ += chunk.size();
        queue_.emplace_back(chunk);
    }
    wake_.notify_one();
}

std::uint64_t live_writer::finish(std::chrono::milliseconds patience) {
    std::unique_lock lock(mutex_);
    if (finished_) return dropped_;
    closing_ = true;
    wake_.notify_all();
    if (wake_.wait_for(lock, patience, [this] { return drained_; })) {
        lock.unlock();
        thread_.join();
        lock.lock();
    } else {
        // The writer is blocked in write(2) on a reader that stopped reading. Leave it there:
        // the process is about to exit, and its pending bytes are reported as not shown.
        dropped_ += queued_;
        thread_.detach();
    }
    finished_ = true;
    return dropped_;
}

void live_writer::run() {
    bool broken = false;  // the destination failed (EPIPE, EBADF): discard from now on
    for (;;) {
        std::string chunk;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return closing_ || !queue_.empty(); });
            if (queue_.empty()) {  // closing and drained
                drained_ = true;
                wake_.notify_all();
                return;
            }
            chunk = std::move(queue_.front());
            queue_.pop_front();
            queued_ -= chunk.size();
        }
        std::string_view rest(chunk);
        while (!broken && !rest.empty()) {
            ssize_t n = ::write(fd_, rest.data(), rest.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                broken = true;
                break;
            }
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
    }
}

}  // namespace cordon::cli
