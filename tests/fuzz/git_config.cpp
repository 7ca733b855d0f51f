// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// git configuration files a command wrote (a nested repository's `config`, `.gitmodules`), as the
// judgement of what a run left reads them (sandbox/git_config.hpp); and the record of a window a
// dead cordon owes (sandbox/run_journal.hpp). Properties: every entry's bytes lie in the text, in
// order, and begin with its name; taking out the entries that are not inert leaves a text that
// reads, and holds none of them; taking out nothing leaves the text as it was; a window read back
// is written again identically, and so are the copies a window records (sandbox/kept_copies.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sandbox/git_config.hpp"
#include "sandbox/kept_copies.hpp"
#include "sandbox/run_journal.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon::sandbox;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (auto record = parse_window(text)) {
        const std::string again = window_text(record->window, record->copies);
        const auto back = parse_window(again);
        CORDON_FUZZ_CHECK(back.has_value());
        CORDON_FUZZ_CHECK(window_text(back->window, back->copies) == again);
    }
    if (auto copies = kept_copies::parse(text)) {
        const std::string again = copies->text();
        const auto back = kept_copies::parse(again);
        CORDON_FUZZ_CHECK(back.has_value());
        CORDON_FUZZ_CHECK(back->text() == again);
    }

    const auto parsed = git_config::parse(text);
    if (const auto* refused = std::get_if<std::string>(&parsed)) {
        CORDON_FUZZ_CHECK(refused->starts_with("git cannot read line "));
        return 0;
    }
    const auto& entries = std::get<std::vector<git_config::entry>>(parsed);
    std::size_t previous_end = 0;
    for (const git_config::entry& e : entries) {
        CORDON_FUZZ_CHECK(e.begin < e.end && e.end <= text.size());
        CORDON_FUZZ_CHECK(e.begin >= previous_end);
        previous_end = e.end;
        // The name is where the entry's bytes begin, as git lowered it; but a NUL in a
        // subsection ends the name git obeys there (git_config::entry), and it may be empty.
        if (text.find('\0') == std::string_view::npos) {
            CORDON_FUZZ_CHECK(!e.name.empty());
            const char first = text[e.begin];
            CORDON_FUZZ_CHECK(first == e.name.front() || first + ('a' - 'A') == e.name.front());
        }
        if (e.value) CORDON_FUZZ_CHECK(e.value->find('\0') == std::string::npos);
        CORDON_FUZZ_CHECK(e.key().find('\0') == std::string::npos);
    }
    CORDON_FUZZ_CHECK(git_config::without(text, {}) == text);
    for (const auto kind : {git_config::file_kind::repository, git_config::file_kind::gitmodules}) {
        std::vector<git_config::entry> drop;
        std::size_t kept = 0;
        for (const git_config::entry& e : entries) {
            if (git_config::offence(e, kind)) {
                drop.push_back(e);
            } else {
                ++kept;
            }
        }
        const std::string rewritten = git_config::without(text, drop);
        const auto again = git_config::parse(rewritten);
        // What is left reads (the judgement takes the whole file when it does not), and holds
        // nothing more to take.
        if (const auto* left = std::get_if<std::vector<git_config::entry>>(&again)) {
            std::size_t inert = 0;
            for (const git_config::entry& e : *left) {
                if (!git_config::offence(e, kind)) ++inert;
            }
            if (inert == left->size()) CORDON_FUZZ_CHECK(left->size() == kept);
        }
    }
    return 0;
}
