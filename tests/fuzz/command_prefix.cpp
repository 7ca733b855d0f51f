// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The grant tokenizer: which commands a standing grant covers. Properties: a grant covers the
// command it was made from; a grant is one the session log accepts; an exact grant covers that
// very text only, any other exactly the same words; a grant never covers a command that is not
// simple (shell syntax) unless it is its very text; describe() shows it printably.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cordon/session_log.hpp"
#include "policy/command_prefix.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon::policy;
using cordon::sandbox::sandbox_mode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const std::string granted = in.ConsumeRandomLengthString(256);
    const std::string later = in.ConsumeRemainingBytesAsString();

    const session_grant grant = grant_for(granted, sandbox_mode::workspace_write);
    CORDON_FUZZ_CHECK(!grant.prefix.empty());
    CORDON_FUZZ_CHECK(covers(grant, granted, sandbox_mode::workspace_write));
    CORDON_FUZZ_CHECK(!covers(grant, granted, sandbox_mode::read_only));

    // What approval records for it must be a grant the log reads back.
    nlohmann::json words = nlohmann::json::array();
    for (const auto& word : grant.prefix)
        words.push_back(word);
    if (cordon::fuzz::valid_utf8(granted)) {
        const nlohmann::json event{{"type", "approval/decided"},
                                   {"id", "a1"},
                                   {"outcome", "allowed-for-session"},
                                   {"grant",
                                    {{"id", "a1"},
                                     {"prefix", words},
                                     {"exact", grant.exact},
                                     {"mode", "workspace-write"}}}};
        const auto complaint = invalid_event(event);
        if (complaint) std::fprintf(stderr, "the log refuses the grant: %s\n", complaint->c_str());
        CORDON_FUZZ_CHECK(!complaint);
    }

    const bool covered = covers(grant, later, sandbox_mode::workspace_write);
    const auto later_words = simple_command_words(later);
    if (grant.exact) {
        CORDON_FUZZ_CHECK(covered == (later == granted));
    } else {
        CORDON_FUZZ_CHECK(covered == (later_words.has_value() && *later_words == grant.prefix));
    }
    // Nothing with shell syntax outside quotes is simple.
    if (later_words) {
        for (const char c : std::string_view(";&|<>()$`\\*?[]{}~#!\n")) {
            bool quoted_single = false;
            bool quoted_double = false;
            for (const char d : later) {
                if (d == '\'' && !quoted_double) quoted_single = !quoted_single;
                if (d == '"' && !quoted_single) quoted_double = !quoted_double;
                if (d == c && !quoted_single && !quoted_double) CORDON_FUZZ_CHECK(false);
            }
        }
    }

    const std::string shown = describe(grant);
    CORDON_FUZZ_CHECK(cordon::fuzz::valid_utf8(shown));
    for (const char c : shown)
        CORDON_FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F);
    return 0;
}
