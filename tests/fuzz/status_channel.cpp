// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The status-channel decoder: what the launcher (or a command that got hold of the channel)
// wrote. The fuzzer's bytes are records; with the first byte odd, every record gets the right
// magic, so that the search reaches past the magic check to the order of the records.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "sandbox/status_channel.hpp"
#include "tests/fuzz/property.hpp"

using cordon::sandbox::decode_status;
using cordon::sandbox::launcher_status_magic;
using cordon::sandbox::launcher_status_record;
using cordon::sandbox::status_report;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const bool stamp = (data[0] & 1) != 0;
    std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (stamp) {
        for (std::size_t at = 0; at + sizeof(launcher_status_record) <= bytes.size();
             at += sizeof(launcher_status_record)) {
            const auto magic = launcher_status_magic;
            std::memcpy(bytes.data() + at + offsetof(launcher_status_record, magic), &magic,
                        sizeof magic);
        }
    }
    const status_report report = decode_status(bytes);
    using verdict = status_report::verdict;
    // Nothing written is silence. So is an ending by a signal with no `started` before it (the
    // command's child killed before it could say it started): silence that carries the ending.
    if (bytes.empty()) CORDON_FUZZ_CHECK(report.outcome == verdict::silent);
    if (report.outcome == verdict::silent && !bytes.empty()) {
        CORDON_FUZZ_CHECK(report.ended.has_value() && report.ended->signal.has_value());
    }
    if (report.outcome == verdict::malformed) CORDON_FUZZ_CHECK(!report.message.empty());
    // A message comes from a fixed-size field (or is ours): never longer than it.
    CORDON_FUZZ_CHECK(report.message.size() < sizeof(launcher_status_record{}.message) ||
                      report.outcome == verdict::malformed);
    // An ending is exactly one of the two, each in its range.
    if (report.ended) {
        CORDON_FUZZ_CHECK(report.ended->exit_code.has_value() != report.ended->signal.has_value());
        if (report.ended->exit_code)
            CORDON_FUZZ_CHECK(*report.ended->exit_code >= 0 && *report.ended->exit_code <= 255);
        if (report.ended->signal)
            CORDON_FUZZ_CHECK(*report.ended->signal >= 1 && *report.ended->signal <= 64);
    }
    if (report.outcome != verdict::malformed)
        CORDON_FUZZ_CHECK(bytes.size() % sizeof(launcher_status_record) == 0);
    return 0;
}
