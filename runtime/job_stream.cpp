// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/job_stream.hpp"

#include "base/log.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <variant>

namespace cordon::runtime {

job_stream::job_stream(std::string stream, std::size_t memory_bytes, std::uint64_t spill_max_bytes,
                       std::shared_ptr<spill_directory> spill)
    : stream_(std::move(stream)),
      memory_bytes_(std::max<std::size_t>(memory_bytes, 1)),
      spill_max_bytes_(spill_max_bytes),
      spill_directory_(std::move(spill)) {}

job_stream::~job_stream() {
    // Nobody can ask for the stream any more: its file goes with it.
    if (spill_) (void)spill_->remove();
}

void job_stream::drop_spill(std::string_view why) {
    log::debug("job stream {}: spill file dropped: {}", stream_, why);
    (void)spill_->remove();
    spill_.reset();  // the descriptor closes when the last reader lets go
}

void job_stream::append(std::string_view bytes) {
    if (bytes.empty()) return;
    {
        std::lock_guard lock(mutex_);
        if (sealed_) return;
        if (!spill_tried_ && spill_directory_) {
            spill_tried_ = true;
            auto created = spill_directory_->create_file(stream_);
            if (auto* file = std::get_if<spill_file>(&created)) {
                spill_ = std::make_shared<spill_file>(std::move(*file));
            } else {
                log::debug("job stream {}: no spill file: {}", stream_,
                           std::get<spill_error>(created).what);
            }
        }
        if (spill_) {
            if (total_ + bytes.size() > spill_max_bytes_) {
                drop_spill("the stream outgrew its spill cap");
            } else if (spill_->write_all(bytes)) {
                drop_spill("a write failed");
            }
        }
        total_ += bytes.size();
        memory_.append(bytes);
        // Trim in steps of at least memory_bytes_, so that appending stays amortised O(chunk).
        if (memory_.size() >= 2 * memory_bytes_) {
            const std::size_t drop = memory_.size() - memory_bytes_;
            memory_.erase(0, drop);
            memory_start_ += drop;
        }
    }
    changed_.notify_all();
}

void job_stream::seal() {
    {
        std::lock_guard lock(mutex_);
        sealed_ = true;
        if (memory_.size() > memory_bytes_) {
            const std::size_t drop = memory_.size() - memory_bytes_;
            memory_.erase(0, drop);
            memory_.shrink_to_fit();
            memory_start_ += drop;
        }
    }
    changed_.notify_all();
}

stream_read job_stream::read(std::uint64_t offset, std::size_t max_bytes) const {
    stream_read out;
    std::shared_ptr<spill_file> file;
    std::size_t from_file = 0;
    {
        std::lock_guard lock(mutex_);
        out.offset = std::min(offset, total_);
        const auto wanted =
            static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes, total_ - out.offset));
        if (out.offset < memory_start_ && spill_) {
            file = spill_;
            from_file = wanted;
        } else {
            if (out.offset < memory_start_) {
                out.lossy = true;
                out.offset = memory_start_;
            }
            const auto at = static_cast<std::size_t>(out.offset - memory_start_);
            out.data = memory_.substr(at, static_cast<std::size_t>(std::min<std::uint64_t>(
                                              max_bytes, total_ - out.offset)));
        }
        out.next_offset = out.offset + (file ? from_file : out.data.size());
        out.complete = sealed_ && out.next_offset == total_;
    }
    if (file) {
        std::string data(from_file, '\0');
        std::size_t got = 0;
        while (got < data.size()) {
            const ssize_t n = ::pread(file->fd(), data.data() + got, data.size() - got,
                                      static_cast<off_t>(out.offset + got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        if (got == data.size()) {
            out.data = std::move(data);
        } else {
            // The file failed under us: what memory still holds, said to be lossy.
            log::debug("job stream {}: spill read failed at {}", stream_, out.offset + got);
            std::lock_guard lock(mutex_);
            out.lossy = true;
            out.offset = memory_start_;
            out.data = memory_.substr(0, std::min<std::size_t>(max_bytes, memory_.size()));
            out.next_offset = out.offset + out.data.size();
            out.complete = sealed_ && out.next_offset == total_;
        }
    }
    return out;
}

bool job_stream::wait_for(std::uint64_t offset,
                          std::chrono::steady_clock::time_point deadline) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_until(lock, deadline, [&] { return sealed_ || total_ > offset; });
}

std::uint64_t job_stream::size() const {
    std::lock_guard lock(mutex_);
    return total_;
}

bool job_stream::sealed() const {
    std::lock_guard lock(mutex_);
    return sealed_;
}

std::optional<std::filesystem::path> job_stream::spill_path() const {
    std::lock_guard lock(mutex_);
    if (!spill_) return std::nullopt;
    return spill_->path();
}

}  // namespace cordon::runtime
