// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The session log as a journal: standing() reads only what was appended since its last call
// (measured in bytes read, not in time), folds a replaced, truncated or compacted log again,
// leaves a line being appended for the next call; compaction keeps the fold and shrinks the log;
// the size bound compacts, then refuses; readers on several threads and a writer that compacts
// see states that only move forward.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "base/json_text.hpp"
#include "cordon/approval.hpp"
#include "cordon/session_log.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace journal_test {
namespace {

using nlohmann::json;
using test::temp_dir;

session_log open_log(const std::filesystem::path& path) {
    auto opened = session_log::open_or_create(path, "/");
    if (auto* error = std::get_if<log_error>(&opened)) {
        ADD_FAILURE() << error->message;
        std::abort();
    }
    return std::get<session_log>(std::move(opened));
}

void append_raw(const std::filesystem::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << text;
}

session_state standing_of(const session_log& log) {
    auto state = log.standing();
    if (auto* error = std::get_if<log_error>(&state)) {
        ADD_FAILURE() << "line " << error->line << ": " << error->message;
        return {};
    }
    return std::get<session_state>(std::move(state));
}

session_state state_of(const session_log& log) {
    auto state = log.state();
    if (auto* error = std::get_if<log_error>(&state)) {
        ADD_FAILURE() << "line " << error->line << ": " << error->message;
        return {};
    }
    return std::get<session_state>(std::move(state));
}

std::vector<std::string> grant_ids(const session_state& state) {
    std::vector<std::string> out;
    for (const auto& grant : state.grants)
        out.push_back(grant.id);
    return out;
}

// What the folds are compared on: everything but the trail.
void expect_same_fold(const session_state& a, const session_state& b) {
    EXPECT_EQ(a.cwd, b.cwd);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.approval, b.approval);
    EXPECT_EQ(a.preset, b.preset);
    ASSERT_EQ(a.grants.size(), b.grants.size());
    for (std::size_t i = 0; i < a.grants.size(); ++i) {
        EXPECT_EQ(a.grants[i].id, b.grants[i].id);
        EXPECT_EQ(a.grants[i].prefix, b.grants[i].prefix);
        EXPECT_EQ(a.grants[i].mode, b.grants[i].mode);
        EXPECT_EQ(a.grants[i].network, b.grants[i].network);
    }
}

std::string line_of(json event) {
    event["at"] = "2026-12-07T12:00:00.000Z";
    return base::dump_json(event) + "\n";
}

// A session's worth of events, as append() writes them (written here as text: 10,000 events
// built as JSON values take seconds in a debug build): questions and answers, grants given and
// revoked, and the mode changed now and then.
std::string session_text(int questions, int first = 0) {
    const std::string at = R"({"at":"2026-12-07T12:00:00.000Z",)";
    std::string text;
    for (int q = first; q < first + questions; ++q) {
        const std::string n = std::to_string(q);
        const std::string id = "\"ap-" + n + "\"";
        text += at + R"("command":"make target)" + n + R"(","from":"read-only","id":)" + id +
                R"(,"mode":"workspace-write","tool":"bash","type":"approval/asked"})" + "\n";
        if (q % 3 == 0) {
            text += at + R"("by":"terminal","grant":{"id":)" + id +
                    R"(,"mode":"workspace-write","prefix":["make","target)" + n + R"("]},"id":)" +
                    id + R"(,"outcome":"allowed-for-session","type":"approval/decided"})" + "\n";
        } else {
            text += at + R"("by":"terminal","id":)" + id + R"(,"outcome":")" +
                    (q % 3 == 1 ? "allowed-once" : "rejected") + R"(","type":"approval/decided"})" +
                    "\n";
        }
        if (q % 6 == 3) {
            text += at + R"("grant":)" + id + R"(,"type":"approval/revoked"})" + "\n";
        }
        if (q % 50 == 0) {
            text += at + R"("mode":")" + (q % 100 == 0 ? "workspace-write" : "read-only") +
                    R"(","type":"sandbox/mode"})" + "\n";
        }
    }
    return text;
}

std::size_t lines_in(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// After N events, one more call reads the new event and a bounded look at the file's first and
// last lines: the same bytes after 10,000 events as after 100.
TEST(SessionJournal, ACallReadsOnlyTheAppendedTailWhateverTheSessionsLength) {
    std::vector<std::uint64_t> cost;
    // 37 and 4579 questions: their last lines are alike but for the digits of their ids.
    for (const int questions : {37, 4579}) {
        temp_dir dir;
        const auto path = dir / "s.jsonl";
        auto log = open_log(path);
        log.set_max_bytes(8u << 20);  // 10,000 events are over the default bound
        const std::string text = session_text(questions);
        append_raw(path, text);
        if (questions > 37) {
            ASSERT_GE(lines_in(text) + 1, 10'000u);
        }
        const std::uint64_t whole = std::filesystem::file_size(path);

        const std::uint64_t cold = log.bytes_read();
        const session_state first = standing_of(log);
        EXPECT_GE(log.bytes_read() - cold, whole);  // the first call folds it all
        expect_same_fold(first, state_of(log));
        EXPECT_TRUE(first.events.empty());

        ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "danger-full-access"}}));
        const std::uint64_t appended = std::filesystem::file_size(path) - whole;
        const std::uint64_t before = log.bytes_read();
        const session_state next = standing_of(log);
        const std::uint64_t read = log.bytes_read() - before;
        EXPECT_GE(read, appended);
        EXPECT_LE(read, appended + 3 * session_log::head_bytes) << questions;
        EXPECT_EQ(next.mode, sandbox::sandbox_mode::danger_full_access);
        EXPECT_EQ(grant_ids(next), grant_ids(first));

        // Nothing new: nothing but the look at the first and last lines.
        const std::uint64_t idle = log.bytes_read();
        (void)standing_of(log);
        EXPECT_LE(log.bytes_read() - idle, 3 * session_log::head_bytes);
        cost.push_back(read);
    }
    EXPECT_EQ(cost[0], cost[1]);
}

// A copy of the log shares the cache (make_shared from a moved log, as the CLI and the server
// hold it): the first call of the copy is as cheap as the original's next.
TEST(SessionJournal, ACopySharesTheFold) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    const auto log = open_log(path);
    append_raw(path, session_text(300));
    (void)standing_of(log);
    const auto shared = std::make_shared<const session_log>(log);
    const std::uint64_t before = shared->bytes_read();
    (void)standing_of(*shared);
    EXPECT_LE(shared->bytes_read() - before, 3 * session_log::head_bytes);
}

TEST(SessionJournal, AReplacedLogIsFoldedAgain) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    const auto log = open_log(path);
    ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "workspace-write"}}));
    EXPECT_EQ(standing_of(log).mode, sandbox::sandbox_mode::workspace_write);
    // Another file renamed over it, as an editor saves, longer than the one it replaces.
    const std::string other = test::read_file(path) +
                              line_of({{"type", "approval/policy"}, {"policy", "never"}}) +
                              line_of({{"type", "sandbox/mode"}, {"mode", "read-only"}});
    {
        std::ofstream out(dir / "other", std::ios::binary);
        out << other;
    }
    ::chmod((dir / "other").c_str(), 0600);
    std::filesystem::rename(dir / "other", path);
    const session_state now = standing_of(log);
    EXPECT_EQ(now.mode, sandbox::sandbox_mode::read_only);
    EXPECT_EQ(now.approval, approval_policy::never);
    expect_same_fold(now, state_of(log));
}

TEST(SessionJournal, ATruncatedLogIsFoldedAgain) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    const auto log = open_log(path);
    const std::string start = test::read_file(path);
    append_raw(path, session_text(30));
    const session_state full = standing_of(log);
    ASSERT_FALSE(full.grants.empty());

    // Shorter than what was folded.
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(start.size())), 0);
    EXPECT_TRUE(standing_of(log).grants.empty());
    expect_same_fold(standing_of(log), state_of(log));

    // Folded, then truncated and written again in place past the old length, with the same
    // first line: the last folded line is not where it was.
    append_raw(path, session_text(30));
    ASSERT_EQ(standing_of(log).grants.size(), full.grants.size());
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(start.size())), 0);
    append_raw(path, session_text(40, 1000));
    const session_state again = standing_of(log);
    expect_same_fold(again, state_of(log));
    EXPECT_EQ(grant_ids(again).front(), "ap-1002");
}

// What the lock's holder is writing is left for the next call; a line torn by a crash (no
// holder) is reported as read() reports it.
TEST(SessionJournal, APartialLastLineIsLeftForTheNextCall) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    const auto log = open_log(path);
    ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "workspace-write"}}));
    const std::string next = line_of({{"type", "sandbox/mode"}, {"mode", "danger-full-access"}});
    {
        // A writer mid-append: it holds the lock and half its line is in the file.
        const int writer = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(writer, 0);
        ASSERT_EQ(::flock(writer, LOCK_EX | LOCK_NB), 0);
        append_raw(path, next.substr(0, 20));
        const session_state during = standing_of(log);
        EXPECT_EQ(during.mode, sandbox::sandbox_mode::workspace_write);
        append_raw(path, next.substr(20));
        ::close(writer);
    }
    EXPECT_EQ(standing_of(log).mode, sandbox::sandbox_mode::danger_full_access);

    append_raw(path, R"({"type":"sandbox/mode","mo)");
    auto torn = log.standing();
    ASSERT_TRUE(std::holds_alternative<log_error>(torn));
    EXPECT_EQ(std::get<log_error>(torn).line, 4u);
    EXPECT_NE(std::get<log_error>(torn).message.find("torn"), std::string::npos);
}

TEST(SessionJournal, ACorruptLineIsReportedWithItsNumberOnEveryCall) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    const auto log = open_log(path);
    (void)standing_of(log);
    append_raw(path, line_of({{"type", "sandbox/mode"}, {"mode", "read-only"}}) + "{not json\n");
    for (int call = 0; call < 2; ++call) {
        auto read = log.standing();
        ASSERT_TRUE(std::holds_alternative<log_error>(read));
        EXPECT_EQ(std::get<log_error>(read).line, 3u);
        EXPECT_EQ(std::get<log_error>(read).message, "not valid JSON");
    }
}

TEST(SessionJournal, CompactionKeepsTheFoldAndShrinksTheLog) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto log = open_log(path);
    log.set_max_bytes(64 * 1024);
    ASSERT_FALSE(log.append({{"type", "approval/policy"}, {"policy", "never"}}));
    ASSERT_FALSE(log.append({{"type", "permission/preset"}, {"preset", "workspace-write"}}));
    append_raw(path, session_text(300));
    // A question still waiting for its answer.
    append_raw(path, line_of({{"type", "approval/asked"},
                              {"id", "ap-open"},
                              {"tool", "bash"},
                              {"command", "make open"},
                              {"mode", "workspace-write"}}));
    append_raw(path, session_text(20, 300));
    const session_state before = state_of(log);
    (void)standing_of(log);  // a warm cache, which must notice the rewrite
    const std::uint64_t size_before = std::filesystem::file_size(path);
    struct stat st_before {};
    ASSERT_EQ(::stat(path.c_str(), &st_before), 0);

    auto compacted = log.compact();
    ASSERT_TRUE(std::holds_alternative<compaction>(compacted))
        << std::get<log_error>(compacted).message;
    const compaction& done = std::get<compaction>(compacted);
    EXPECT_TRUE(done.rewritten);
    EXPECT_EQ(done.bytes_before, size_before);
    EXPECT_EQ(done.bytes_after, std::filesystem::file_size(path));
    EXPECT_LT(done.bytes_after, size_before / 2);
    EXPECT_GT(done.dropped, 0u);
    // In place: the inode a running command's sandbox hides stays the log (not a new file
    // renamed over the path, which would detach that mount).
    struct stat st_after {};
    ASSERT_EQ(::stat(path.c_str(), &st_after), 0);
    EXPECT_EQ(st_after.st_ino, st_before.st_ino);
    EXPECT_EQ(st_after.st_mode, st_before.st_mode);

    const session_state after = state_of(log);
    expect_same_fold(after, before);
    expect_same_fold(standing_of(log), before);
    // Its first line says what was dropped; the question still open is kept, and so are the
    // latest events, byte for byte.
    ASSERT_FALSE(after.events.empty());
    EXPECT_EQ(after.events[0].type, "session/compacted");
    EXPECT_EQ(after.events[0].body["dropped"], done.dropped);
    EXPECT_EQ(after.events.size(), done.events_after);
    EXPECT_EQ(before.events.size() - done.dropped + 1, done.events_after);
    EXPECT_TRUE(std::any_of(after.events.begin(), after.events.end(), [](const auto& event) {
        return event.body.value("id", "") == "ap-open";
    }));
    EXPECT_EQ(after.events.back().body, before.events.back().body);
    // Every live grant keeps the question that gave it.
    for (const auto& grant : after.grants) {
        EXPECT_TRUE(std::any_of(after.events.begin(), after.events.end(), [&](const auto& e) {
            return e.type == "approval/asked" && e.body["id"] == grant.id;
        })) << grant.id;
    }

    // Compacted again, it has nothing more to drop; appends go on after it.
    auto again = log.compact();
    ASSERT_TRUE(std::holds_alternative<compaction>(again));
    EXPECT_FALSE(std::get<compaction>(again).rewritten);
    ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "workspace-write"}}));
    EXPECT_EQ(standing_of(log).mode, sandbox::sandbox_mode::workspace_write);
}

TEST(SessionJournal, ACompactedLogIsCheckedAgainstItsDigest) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto log = open_log(path);
    log.set_max_bytes(16 * 1024);
    append_raw(path, session_text(100));
    ASSERT_TRUE(std::get<compaction>(log.compact()).rewritten);
    std::string text = test::read_file(path);
    // One byte of a kept event changed, as a compaction cut short leaves the old bytes.
    const auto at = text.find("make target", text.find('\n'));
    ASSERT_NE(at, std::string::npos);
    text[at] = 'M';
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
    }
    log.set_lock_wait(std::chrono::milliseconds(0));
    for (const auto& error : {std::get<log_error>(log.read()), std::get<log_error>(log.standing()),
                              std::get<log_error>(log.compact())}) {
        EXPECT_EQ(error.line, 1u);
        EXPECT_NE(error.message.find("does not match its digest"), std::string::npos)
            << error.message;
    }
    // Nowhere but first.
    temp_dir other;
    const auto second = open_log(other / "s.jsonl");
    append_raw(other / "s.jsonl", text.substr(0, text.find('\n') + 1));
    auto read = second.read();
    ASSERT_TRUE(std::holds_alternative<log_error>(read));
    EXPECT_EQ(std::get<log_error>(read).line, 2u);
    EXPECT_TRUE(second.append({{"type", "session/compacted"},
                               {"dropped", 1},
                               {"length", 0},
                               {"digest", "0000000000000000"}}));
}

TEST(SessionJournal, AnAppendOverTheBoundCompactsFirst) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto log = open_log(path);
    log.set_max_bytes(32 * 1024);
    while (std::filesystem::file_size(path) < 32 * 1024 - 40)
        append_raw(path, session_text(1, static_cast<int>(std::filesystem::file_size(path))));
    const session_state before = state_of(log);
    const std::uint64_t full = std::filesystem::file_size(path);
    ASSERT_FALSE(log.append({{"type", "permission/preset"}, {"preset", "danger-full-access"}}));
    ASSERT_FALSE(log.append({{"type", "permission/preset"}, {"preset", "workspace-write"}}));
    EXPECT_LT(std::filesystem::file_size(path), full);
    const session_state after = state_of(log);
    EXPECT_EQ(after.events.front().type, "session/compacted");
    EXPECT_EQ(after.preset, "workspace-write");
    EXPECT_EQ(grant_ids(after), grant_ids(before));
}

// Nothing left to drop and no room: refused with one line, nothing written, and an escalation
// that cannot record its question is not asked (fail closed).
TEST(SessionJournal, AnAppendTheBoundHasNoRoomForIsRefused) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto log = std::make_shared<session_log>(open_log(path));
    log->set_max_bytes(1024);
    const std::string before = test::read_file(path);
    auto error = log->append({{"type", "permission/preset"}, {"preset", std::string(2000, 'x')}});
    ASSERT_TRUE(error);
    EXPECT_EQ(error->message.find('\n'), std::string::npos);
    EXPECT_NE(error->message.find("over its bound of 1024"), std::string::npos) << error->message;
    EXPECT_NE(error->message.find("nothing was appended"), std::string::npos);
    EXPECT_EQ(test::read_file(path), before);

    log->set_max_bytes(before.size() + 64);
    approval_service service({}, log);
    int asked = 0;
    service.add_responder(std::make_shared<function_responder>(
        "count", [&asked](const approval_request&, std::stop_token) {
            ++asked;
            return std::optional(approval_outcome::allowed_for_session);
        }));
    approval_request request;
    request.tool = "bash";
    request.command = "make install";
    request.requested_mode = sandbox::sandbox_mode::workspace_write;
    const approval_decision decision = service.request(request);
    EXPECT_FALSE(is_allowed(decision.outcome));
    EXPECT_EQ(asked, 0);
    EXPECT_NE(decision.detail.find("over its bound"), std::string::npos) << decision.detail;
    EXPECT_TRUE(service.grants().empty());
}

// Readers on several threads (one log, one cache) and a reader with a log of its own (a cold
// read each time) while a writer appends and, over the bound, compacts: every state read is
// whole and no older than the one read before it.
TEST(SessionJournal, ConcurrentReadersAndACompactingWriterSeeStatesThatOnlyMoveForward) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto writer = open_log(path);
    writer.set_max_bytes(2 * 1024);
    const auto shared = std::make_shared<const session_log>(open_log(path));
    constexpr int events = 120;
    std::atomic<bool> done{false};
    std::latch started(4);
    std::vector<std::string> failures(4);
    const auto preset_number = [](const session_state& state) {
        return state.preset ? std::stoi(state.preset->substr(1)) : -1;
    };
    std::vector<std::thread> readers;
    for (std::size_t r = 0; r < 4; ++r) {
        readers.emplace_back([&, r] {
            started.count_down();
            int seen = -1;
            for (bool last = false; !last;) {
                last = done.load();
                std::variant<session_state, log_error> read;
                if (r < 3) {
                    read = shared->standing();
                } else {
                    read = open_log(path).standing();  // cold: from the first byte
                }
                if (auto* error = std::get_if<log_error>(&read)) {
                    failures[r] = "line " + std::to_string(error->line) + ": " + error->message;
                    return;
                }
                const int now = preset_number(std::get<session_state>(read));
                if (now < seen) {
                    failures[r] = std::to_string(now) + " after " + std::to_string(seen);
                    return;
                }
                seen = now;
            }
            if (seen != events - 1) failures[r] = "ended at " + std::to_string(seen);
        });
    }
    started.wait();
    std::string refused;
    for (int i = 0; i < events && refused.empty(); ++i) {
        auto error =
            writer.append({{"type", "permission/preset"}, {"preset", "p" + std::to_string(i)}});
        if (error) refused = error->message;
    }
    done = true;
    for (auto& reader : readers)
        reader.join();
    ASSERT_EQ(refused, "");
    for (std::size_t r = 0; r < 4; ++r)
        EXPECT_EQ(failures[r], "") << "reader " << r;
    const session_state last = state_of(writer);
    EXPECT_EQ(last.events.front().type, "session/compacted");  // it did compact meanwhile
    EXPECT_LE(std::filesystem::file_size(path), 2u * 1024);
}

}  // namespace
}  // namespace journal_test
}  // namespace cordon::policy
