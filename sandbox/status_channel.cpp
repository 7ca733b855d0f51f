// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/status_channel.hpp"

#include <cstring>

namespace cordon::sandbox {

status_report decode_status(std::string_view bytes) {
    status_report report;
    if (bytes.empty()) return report;
    if (bytes.size() % sizeof(launcher_status_record) != 0) {
        report.outcome = status_report::verdict::malformed;
        report.message = "cordon-landlock: malformed status record";
        return report;
    }
    bool started = false;
    bool finished = false;  // a record that must be the last one was read
    for (std::size_t at = 0; at < bytes.size(); at += sizeof(launcher_status_record)) {
        launcher_status_record record{};
        std::memcpy(&record, bytes.data() + at, sizeof record);
        if (record.magic != launcher_status_magic) {
            report = {};
            report.outcome = status_report::verdict::malformed;
            report.message = "cordon-landlock: malformed status record";
            return report;
        }
        record.message[sizeof record.message - 1] = '\0';
        if (finished) {
            report = {};
            report.outcome = status_report::verdict::malformed;
            report.message = "cordon-landlock: status record out of order";
            return report;
        }
        switch (static_cast<launcher_record_kind>(record.kind)) {
            case launcher_record_kind::started:
                started = true;
                report.outcome = status_report::verdict::started;
                break;
            case launcher_record_kind::probe:
                report.outcome = status_report::verdict::probed;
                report.abi = record.abi;
                finished = true;
                break;
            case launcher_record_kind::ended:
                if (!started) {
                    // The launcher's child was killed before it could write `started` (it
                    // blocks every other signal until then): the command never ran, which
                    // proves as little as silence does. Any other ending without `started`
                    // is a record the launcher never writes.
                    if (record.signal < 1 || record.signal > 64 || record.exit_code != -1) {
                        report = {};
                        report.outcome = status_report::verdict::malformed;
                        report.message = "cordon-landlock: status record out of order";
                        return report;
                    }
                    report.outcome = status_report::verdict::silent;
                    report.ended = status_report::ending{std::nullopt, record.signal};
                    finished = true;
                    break;
                }
                // Exactly one of the two, each in its range: an exit status is 0-255, a signal
                // 1-64.
                if (record.signal < 0 || record.signal > 64 ||
                    (record.signal == 0 && (record.exit_code < 0 || record.exit_code > 255))) {
                    report = {};
                    report.outcome = status_report::verdict::malformed;
                    report.message = "cordon-landlock: impossible ending in the status record";
                    return report;
                }
                report.ended = status_report::ending{
                    record.signal > 0 ? std::nullopt : std::optional<int>(record.exit_code),
                    record.signal > 0 ? std::optional<int>(record.signal) : std::nullopt};
                finished = true;
                break;
            case launcher_record_kind::failure: {
                const auto stage = static_cast<launcher_stage>(record.stage);
                // After `started` only the command's own exec can fail; anything else would be a
                // record the launcher never writes in that order.
                if (started && stage != launcher_stage::exec) {
                    report = {};
                    report.outcome = status_report::verdict::malformed;
                    report.message = "cordon-landlock: status record out of order";
                    return report;
                }
                report.outcome = status_report::verdict::failed;
                report.stage = stage;
                report.error = record.error;
                report.message = record.message;
                finished = true;
                break;
            }
            default:
                report = {};
                report.outcome = status_report::verdict::malformed;
                report.message = "cordon-landlock: unknown status record";
                return report;
        }
    }
    return report;
}

}  // namespace cordon::sandbox
