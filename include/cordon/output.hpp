// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The output of a run as its record holds it, and the limits that bound it: each stream keeps a
// tail in memory and, from the first overflow on, the complete stream in a spill file under
// /var/tmp (docs/contract.md, "Output").
//
//     std::cout << record.stdout_output.text;           // the tail, cut on a UTF-8 boundary
//     if (record.stdout_output.truncated && record.stdout_output.spill_path)
//         read_all(*record.stdout_output.spill_path);   // every byte the command printed
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

struct output_limits {
    std::size_t tail_bytes = 64000;               // in-memory tail per stream; must be > 0
    std::uint64_t spill_max_bytes = 64ull << 20;  // spill file cap per stream (64 MiB)
};

// How much of the spill files that runs left behind is kept: once their cordon is gone (its lock
// on the spill directory free), the next cordon that spills removes the files older than
// `max_age`, then the oldest until the rest fit in `max_bytes` (docs/execution.md, "Output").
struct spill_budget {
    std::chrono::seconds max_age = std::chrono::hours(24);
    std::uint64_t max_bytes = 1ull << 30;  // 1 GiB, all of one uid's left-behind spill files
};

struct collected_output {
    std::string text;        // the retained tail, cut so it starts on a UTF-8 boundary
    bool truncated = false;  // bytes were dropped from memory
    std::optional<std::filesystem::path> spill_path;  // the complete stream, when intact
    std::uint64_t bytes = 0;                          // every byte the stream produced
};

// A piece of a stream read by cursor (a background job's output, jobs.hpp): every byte has an
// offset, and a reader that lost an answer asks again with the same offset.
struct stream_read {
    std::string data;
    std::uint64_t offset = 0;       // where `data` starts (later than asked when lossy)
    std::uint64_t next_offset = 0;  // ask for this next
    bool lossy = false;             // bytes between the asked offset and `offset` are gone
    bool complete = false;          // the stream is sealed and nothing is left after next_offset
};
}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::collected_output;
using runtime::output_limits;
using runtime::stream_read;
}  // namespace cordon
CORDON_PUBLIC_END
