// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One output stream of a background job, read by cursor (docs/jobs.md). Every byte has an offset
// in the stream; read(offset, max) returns the bytes from there and the offset to ask for next,
// so a reader that lost an answer asks again with the same offset and loses nothing.
//
// The newest `memory_bytes` are kept in memory; the whole stream also goes to a spill file (up
// to `spill_max_bytes`), from which older offsets are read back. Bytes that are in neither (the
// spill file was capped, could not be written, or there was none) are gone: a read that asks for
// them starts at the oldest byte still held and says `lossy`.
//
// Thread safety: append() and seal() come from the job's strand; read() and wait_for() from any
// thread. One mutex guards the state; a read from the spill file happens outside it, so that a
// large read never holds up the writer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/output_collector.hpp"

namespace cordon::runtime {

class job_stream {
public:
    // `spill` may be null: memory only. `stream` names the spill file (valid_stream_name).
    job_stream(std::string stream, std::size_t memory_bytes, std::uint64_t spill_max_bytes,
               std::shared_ptr<spill_directory> spill);
    ~job_stream();
    job_stream(const job_stream&) = delete;
    job_stream& operator=(const job_stream&) = delete;

    void append(std::string_view bytes);
    // No more bytes will come; wakes every waiter and trims memory to `memory_bytes`.
    void seal();

    // Up to `max_bytes` from `offset` (an offset past the end reads nothing from the end).
    [[nodiscard]] stream_read read(std::uint64_t offset, std::size_t max_bytes) const;
    // Waits until the stream holds a byte at `offset` or is sealed, or until `deadline`. True when
    // there is something to read (or the stream is sealed).
    bool wait_for(std::uint64_t offset, std::chrono::steady_clock::time_point deadline) const;

    [[nodiscard]] std::uint64_t size() const;
    [[nodiscard]] bool sealed() const;
    // The spill file's path while it holds the whole stream.
    [[nodiscard]] std::optional<std::filesystem::path> spill_path() const;

private:
    void drop_spill(std::string_view why);

    std::string stream_;
    std::size_t memory_bytes_;
    std::uint64_t spill_max_bytes_;
    std::shared_ptr<spill_directory> spill_directory_;

    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    // Holds [0, total_) while set. Shared so that a read can pread outside the lock: bytes below
    // total_ never change, and a dropped file stays open until its last reader is done.
    std::shared_ptr<spill_file> spill_;
    bool spill_tried_ = false;
    std::string memory_;  // bytes [memory_start_, total_)
    std::uint64_t memory_start_ = 0;
    std::uint64_t total_ = 0;
    bool sealed_ = false;
};

}  // namespace cordon::runtime
