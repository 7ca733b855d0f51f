// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The session log reader: the file holds the session's standing choices and grants, one JSON
// event per line; a torn or foreign line must be reported, never skipped or crashed on.
// Properties: read() gives every event or names a line that exists; the fold of what it read
// never throws and holds only grants the log vouched for.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "cordon/session_log.hpp"
#include "tests/fuzz/property.hpp"
#include "tests/fuzz/scratch.hpp"

using namespace cordon::policy;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto path = cordon::fuzz::scratch_directory() / "session.log";
    cordon::fuzz::write_file(path, text);

    auto opened = session_log::open_existing(path);
    CORDON_FUZZ_CHECK(std::holds_alternative<session_log>(opened));
    const session_log& log = std::get<session_log>(opened);
    auto read = log.read();
    std::size_t lines = 0;
    for (const char c : text)
        lines += c == '\n' ? 1 : 0;
    if (const auto* error = std::get_if<log_error>(&read)) {
        CORDON_FUZZ_CHECK(!error->message.empty());
        CORDON_FUZZ_CHECK(error->line >= 1 && error->line <= lines + 1);
        return 0;
    }
    auto& events = std::get<std::vector<session_event>>(read);
    CORDON_FUZZ_CHECK(events.size() == lines);
    for (std::size_t i = 0; i < events.size(); ++i)
        CORDON_FUZZ_CHECK(events[i].line == i + 1);
    const session_state state = fold(std::move(events));
    for (const session_grant& grant : state.grants) {
        CORDON_FUZZ_CHECK(!grant.id.empty() && !grant.prefix.empty());
        for (const auto& word : grant.prefix)
            CORDON_FUZZ_CHECK(!word.empty());
    }
    // What the log folds to is what reading it again folds to.
    auto again = log.state();
    CORDON_FUZZ_CHECK(std::holds_alternative<session_state>(again));
    CORDON_FUZZ_CHECK(std::get<session_state>(again).grants.size() == state.grants.size());
    return 0;
}
