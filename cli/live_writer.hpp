// Live output for `cordon run`: the command's chunks are copied to one of cordon's own streams by
// a writer thread, so that a reader who stops reading our stdout can never block the event loop
// (and with it the command's timeout and kill). The queue is bounded; bytes that do not fit are
// counted and dropped, never buffered without limit. The record and the spill file keep them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace cordon::cli {

class live_writer {
public:
    explicit live_writer(int fd, std::size_t max_queued = 8 << 20);
    ~live_writer();  // finish() with the default patience
    live_writer(const live_writer&) = delete;
    live_writer& operator=(const live_writer&) = delete;

    // Never blocks on the destination.
    void push(std::string_view chunk);
    // Waits until everything queued is written, the destination failed, or `patience` ran out
    // (a reader that never reads again must not keep cordon from exiting); returns the number of
    // bytes not shown: dropped because the queue was full, or still queued at the deadline.
    std::uint64_t finish(std::chrono::milliseconds patience = std::chrono::seconds(5));

private:
    void run();

    int fd_;
    std::size_t max_queued_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::string> queue_;
    std::size_t queued_ = 0;
    std::uint64_t dropped_ = 0;
    bool closing_ = false;
    bool drained_ = false;  // the thread has written (or given up on) everything
    bool finished_ = false;
    std::thread thread_;
};

}  // namespace cordon::cli
