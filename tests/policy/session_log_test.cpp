// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The session log: created whole and private, appended atomically by several processes at once,
// and read back with every bad line reported by its number.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "cordon/approval.hpp"
#include "cordon/session_log.hpp"
#include "policy/command_prefix.hpp"
#include "policy/escalation.hpp"
#include "support.hpp"
#include "support/processes.hpp"

namespace cordon::policy {
namespace {

using nlohmann::json;
using test::temp_dir;

session_log open_log(const std::filesystem::path& path, const std::filesystem::path& cwd = "/") {
    auto opened = session_log::open_or_create(path, cwd);
    if (auto* error = std::get_if<log_error>(&opened)) {
        ADD_FAILURE() << error->message;
        std::abort();
    }
    return std::get<session_log>(std::move(opened));
}

std::vector<session_event> events_of(const session_log& log) {
    auto read = log.read();
    if (auto* error = std::get_if<log_error>(&read)) {
        ADD_FAILURE() << "line " << error->line << ": " << error->message;
        return {};
    }
    return std::get<std::vector<session_event>>(read);
}

void append_raw(const std::filesystem::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << text;
}

TEST(SessionLog, IsCreatedPrivateWithTheSessionsWorkingDirectory) {
    temp_dir dir;
    const auto log = open_log(dir / "session.jsonl", dir.path());
    struct stat st {};
    ASSERT_EQ(::stat((dir / "session.jsonl").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const auto events = events_of(log);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].type, "session/start");
    EXPECT_EQ(events[0].body["cwd"], dir.path().string());
    EXPECT_EQ(events[0].line, 1u);
    // Opening it again creates nothing new.
    const auto again = open_log(dir / "session.jsonl", "/elsewhere");
    EXPECT_EQ(events_of(again).size(), 1u);
}

TEST(SessionLog, TheLastEventOfEachKindWins) {
    temp_dir dir;
    const auto log = open_log(dir / "s.jsonl", dir.path());
    ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "workspace-write"}}));
    ASSERT_FALSE(log.append({{"type", "approval/policy"}, {"policy", "never"}}));
    ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "danger-full-access"}}));
    ASSERT_FALSE(log.append({{"type", "permission/preset"}, {"preset", "danger-full-access"}}));
    auto state = log.state();
    ASSERT_TRUE(std::holds_alternative<session_state>(state));
    const auto& now = std::get<session_state>(state);
    EXPECT_EQ(now.mode, sandbox::sandbox_mode::danger_full_access);
    EXPECT_EQ(now.approval, approval_policy::never);
    EXPECT_EQ(now.preset, "danger-full-access");
    EXPECT_EQ(now.cwd, dir.path());
    EXPECT_EQ(now.events.size(), 5u);
    for (const auto& event : now.events)
        EXPECT_TRUE(event.body["at"].is_string());
}

TEST(SessionLog, RefusesToWriteAnEventOutsideTheVocabulary) {
    temp_dir dir;
    const auto log = open_log(dir / "s.jsonl");
    EXPECT_TRUE(log.append({{"type", "sandbox/mode"}, {"mode", "host-root"}}));
    EXPECT_TRUE(log.append({{"type", "approval/policy"}, {"policy", "sometimes"}}));
    EXPECT_TRUE(log.append({{"type", "made/up"}}));
    EXPECT_TRUE(log.append({{"mode", "read-only"}}));
    EXPECT_EQ(events_of(log).size(), 1u);
}

TEST(SessionLog, ACorruptLineIsReportedWithItsNumber) {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{not json\n", "not valid JSON"},
        {"\n", "an empty line"},
        {"[1,2]\n", "not a JSON object"},
        {R"({"type":"sandbox/mode","mode":"host-root"})"
         "\n",
         "is not a sandbox mode"},
        {R"({"type":"approval/decided","id":"x","outcome":"allowed-always"})"
         "\n",
         "is not an outcome"},
        {R"({"type":"approval/decided","id":"x","outcome":"allowed-for-session"})"
         "\n",
         "without a \"grant\""},
        {R"({"type":"surprise"})"
         "\n",
         "unknown event type"},
    };
    for (const auto& [line, complaint] : bad) {
        temp_dir dir;
        const auto log = open_log(dir / "s.jsonl");
        ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "read-only"}}));
        append_raw(dir / "s.jsonl", line);
        ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "read-only"}}));
        auto read = log.read();
        ASSERT_TRUE(std::holds_alternative<log_error>(read)) << line;
        EXPECT_EQ(std::get<log_error>(read).line, 3u) << line;
        EXPECT_NE(std::get<log_error>(read).message.find(complaint), std::string::npos)
            << std::get<log_error>(read).message;
        EXPECT_TRUE(std::holds_alternative<log_error>(log.state()));
    }
}

TEST(SessionLog, ATornLineIsNeverGluedToTheNextEvent) {
    temp_dir dir;
    const auto log = open_log(dir / "s.jsonl");
    append_raw(dir / "s.jsonl", R"({"type":"sandbox/mode","mo)");
    auto torn = log.read();
    ASSERT_TRUE(std::holds_alternative<log_error>(torn));
    EXPECT_EQ(std::get<log_error>(torn).line, 2u);
    EXPECT_NE(std::get<log_error>(torn).message.find("torn"), std::string::npos);

    ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "danger-full-access"}}));
    const std::string text = test::read_file(dir / "s.jsonl");
    EXPECT_NE(text.find("\"mo\n{"), std::string::npos) << text;
    auto read = log.read();
    ASSERT_TRUE(std::holds_alternative<log_error>(read));
    EXPECT_EQ(std::get<log_error>(read).line, 2u);
}

// What a command that can read the log can do to it: open it read-only and hold its flock.
struct held_lock {
    held_lock(const std::filesystem::path& path, int how)
        : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        EXPECT_GE(fd, 0);
        EXPECT_EQ(::flock(fd, how | LOCK_NB), 0);
    }
    ~held_lock() { ::close(fd); }
    held_lock(const held_lock&) = delete;
    held_lock& operator=(const held_lock&) = delete;
    int fd;
};

constexpr auto generous = std::chrono::milliseconds(30'000);

// A reader takes no lock a holder could keep: under a held exclusive flock the log still reads
// whole, without waiting for the holder (the wait bound is far beyond the test's).
TEST(SessionLog, AHeldLockNeverStallsAReader) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto log = open_log(path);
    ASSERT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "read-only"}}));
    log.set_lock_wait(std::chrono::hours(1));
    const held_lock squatter(path, LOCK_EX);
    const auto status = test::exit_within(
        [&] {
            auto read = log.read();
            if (!std::holds_alternative<std::vector<session_event>>(read)) return 2;
            return std::get<std::vector<session_event>>(read).size() == 2 ? 0 : 3;
        },
        generous);
    ASSERT_TRUE(status.has_value()) << "read() waited for the lock's holder";
    EXPECT_EQ(*status, 0);
}

// An append tries the lock for a bounded time, then fails with one line and writes nothing:
// whether the holder took it exclusive or shared (a shared one blocks a writer too).
TEST(SessionLog, AnAppendGivesUpOnAHeldLockWithOneLine) {
    for (const int how : {LOCK_EX, LOCK_SH}) {
        temp_dir dir;
        const auto path = dir / "s.jsonl";
        auto log = open_log(path);
        log.set_lock_wait(std::chrono::milliseconds(50));
        const std::string before = test::read_file(path);
        {
            const held_lock squatter(path, how);
            const auto status = test::exit_within(
                [&] {
                    auto error = log.append({{"type", "sandbox/mode"}, {"mode", "read-only"}});
                    if (!error) return 2;
                    const bool one_line = error->message.find('\n') == std::string::npos;
                    const bool says =
                        error->message.find("is locked by another process") != std::string::npos &&
                        error->message.find(path.string()) != std::string::npos;
                    return one_line && says ? 0 : 3;
                },
                generous);
            ASSERT_TRUE(status.has_value()) << "append() waited for the lock's holder " << how;
            EXPECT_EQ(*status, 0) << how;
            EXPECT_EQ(test::read_file(path), before) << how;
        }
        // Released, the same append goes through.
        EXPECT_FALSE(log.append({{"type", "sandbox/mode"}, {"mode", "read-only"}}));
        EXPECT_EQ(events_of(log).size(), 2u);
    }
}

// An escalation whose question the log cannot record, because another process holds its lock,
// is refused before anyone is asked, and its error says why: not a missing terminal.
TEST(SessionLog, AnEscalationTheHeldLogCannotRecordSaysSo) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto log = std::make_shared<session_log>(open_log(path));
    log->set_lock_wait(std::chrono::milliseconds(50));
    approval_service service({}, log);
    int asked = 0;
    service.add_responder(std::make_shared<function_responder>(
        "count", [&asked](const approval_request&, std::stop_token) {
            ++asked;
            return std::optional(approval_outcome::allowed_once);
        }));
    const held_lock squatter(path, LOCK_EX);
    escalation_request request;
    request.requested_mode = sandbox::sandbox_mode::workspace_write;
    request.effective_mode = sandbox::sandbox_mode::read_only;
    request.justification = "write the build output";
    request.command = "make";
    const auto result = approve_escalation(request, &service);
    EXPECT_FALSE(result.granted);
    EXPECT_EQ(asked, 0);
    EXPECT_NE(result.error.find("requires approval, but no approval channel is available (the "
                                "question could not be recorded: "),
              std::string::npos)
        << result.error;
    EXPECT_NE(result.error.find("is locked by another process"), std::string::npos) << result.error;
}

// A torn tail under a held lock could be an append in progress: it is read again until the
// wait is over, then reported torn, as without the holder.
TEST(SessionLog, ATornTailUnderAHeldLockIsReportedAfterTheBoundedWait) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    auto log = open_log(path);
    log.set_lock_wait(std::chrono::milliseconds(50));
    append_raw(path, R"({"type":"sandbox/mode","mo)");
    const held_lock squatter(path, LOCK_EX);
    const auto status = test::exit_within(
        [&] {
            auto read = log.read();
            const auto* error = std::get_if<log_error>(&read);
            return error != nullptr && error->line == 2 &&
                           error->message.find("torn") != std::string::npos
                       ? 0
                       : 3;
        },
        generous);
    ASSERT_TRUE(status.has_value()) << "read() waited for the lock's holder";
    EXPECT_EQ(*status, 0);
}

TEST(SessionLog, RefusesALogSomeoneElseCouldWrite) {
    temp_dir dir;
    { (void)open_log(dir / "s.jsonl"); }
    ASSERT_EQ(::chmod((dir / "s.jsonl").c_str(), 0620), 0);
    auto opened = session_log::open_existing(dir / "s.jsonl");
    ASSERT_TRUE(std::holds_alternative<log_error>(opened));
    EXPECT_NE(std::get<log_error>(opened).message.find("writable by group or others"),
              std::string::npos);

    ASSERT_EQ(::chmod((dir / "s.jsonl").c_str(), 0600), 0);
    std::filesystem::create_symlink(dir / "s.jsonl", dir / "link.jsonl");
    opened = session_log::open_or_create(dir / "link.jsonl", "/");
    ASSERT_TRUE(std::holds_alternative<log_error>(opened));
    EXPECT_NE(std::get<log_error>(opened).message.find("symbolic link"), std::string::npos);

    // A FIFO is refused at once, not waited on for a writer.
    ASSERT_EQ(::mkfifo((dir / "fifo.jsonl").c_str(), 0600), 0);
    for (auto open :
         {+[](const std::filesystem::path& p) { return session_log::open_existing(p); },
          +[](const std::filesystem::path& p) { return session_log::open_or_create(p, "/"); }}) {
        opened = open(dir / "fifo.jsonl");
        ASSERT_TRUE(std::holds_alternative<log_error>(opened));
        EXPECT_NE(std::get<log_error>(opened).message.find("not a regular file"),
                  std::string::npos);
    }

    std::filesystem::create_directory(dir / "d.jsonl");
    opened = session_log::open_existing(dir / "d.jsonl");
    ASSERT_TRUE(std::holds_alternative<log_error>(opened));

    opened = session_log::open_existing(dir / "missing.jsonl");
    ASSERT_TRUE(std::holds_alternative<log_error>(opened));
    EXPECT_FALSE(std::filesystem::exists(dir / "missing.jsonl"));
}

// Several processes append at once, each many events: every line is whole, none is lost.
TEST(SessionLog, ConcurrentProcessesNeverInterleaveALine) {
    temp_dir dir;
    const auto path = dir / "s.jsonl";
    const auto log = open_log(path);
    constexpr int writers = 4;
    constexpr int each = 200;
    // Long enough that a line spans several pages of the page cache.
    const std::string padding(10'000, 'x');
    std::vector<pid_t> children;
    for (int w = 0; w < writers; ++w) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            auto mine = session_log::open_existing(path);
            if (!std::holds_alternative<session_log>(mine)) ::_exit(2);
            // Above the 8 MB written here: every event stays (no compaction drops any).
            std::get<session_log>(mine).set_max_bytes(64u << 20);
            for (int i = 0; i < each; ++i) {
                json event{{"type", "permission/preset"},
                           {"preset", std::to_string(w) + ":" + std::to_string(i) + ":" + padding}};
                if (std::get<session_log>(mine).append(std::move(event))) ::_exit(3);
            }
            ::_exit(0);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    }
    const auto events = events_of(log);
    ASSERT_EQ(events.size(), 1u + writers * each);
    std::set<std::string> seen;
    for (const auto& event : events) {
        if (event.type != "permission/preset") continue;
        seen.insert(event.body["preset"].get<std::string>());
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(writers * each));
}

// Two processes that create the same session at once end with one session/start.
TEST(SessionLog, ConcurrentCreationMakesOneSession) {
    for (int round = 0; round < 20; ++round) {
        temp_dir dir;
        const auto path = dir / "s.jsonl";
        std::vector<pid_t> children;
        for (int w = 0; w < 3; ++w) {
            const pid_t pid = ::fork();
            ASSERT_GE(pid, 0);
            if (pid == 0) {
                auto made = session_log::open_or_create(path, "/w" + std::to_string(w));
                ::_exit(std::holds_alternative<session_log>(made) ? 0 : 1);
            }
            children.push_back(pid);
        }
        for (pid_t pid : children) {
            int status = 0;
            ASSERT_EQ(::waitpid(pid, &status, 0), pid);
            EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        const auto log = open_log(path);
        const auto events = events_of(log);
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(events[0].type, "session/start");
        // No temporary file is left behind.
        EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                                std::filesystem::directory_iterator()),
                  1);
    }
}

TEST(SessionLog, GrantsFoldAndRevoke) {
    temp_dir dir;
    const auto log = open_log(dir / "s.jsonl");
    ASSERT_FALSE(
        log.append({{"type", "approval/decided"},
                    {"id", "ap-1"},
                    {"outcome", "allowed-for-session"},
                    {"grant", {{"prefix", {"git", "push"}}, {"mode", "danger-full-access"}}}}));
    ASSERT_FALSE(log.append(
        {{"type", "approval/decided"},
         {"id", "ap-2"},
         {"outcome", "allowed-for-session"},
         {"grant",
          {{"id", "ap-1"}, {"prefix", {"git", "push"}}, {"mode", "danger-full-access"}}}}));
    ASSERT_FALSE(
        log.append({{"type", "approval/decided"}, {"id", "ap-3"}, {"outcome", "rejected"}}));
    auto state = std::get<session_state>(log.state());
    ASSERT_EQ(state.grants.size(), 1u);  // ap-2 used ap-1's grant
    EXPECT_EQ(state.grants[0].id, "ap-1");
    EXPECT_EQ(state.grants[0].prefix, (std::vector<std::string>{"git", "push"}));
    ASSERT_FALSE(log.append({{"type", "approval/revoked"}, {"grant", "ap-1"}}));
    EXPECT_TRUE(std::get<session_state>(log.state()).grants.empty());
}

// A command, a justification, a directory need not be UTF-8. Each is logged (it used to abort the
// process with nlohmann's type_error 316), and read back as the very bytes it was, so that a
// grant for such a command covers that command again.
TEST(SessionLog, BytesThatAreNotUtf8ReadBackAsTheSameBytes) {
    const std::vector<std::string> kinds = {"\xff", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80",
                                            "\xf4\x8f\xbb\xbf" /* U+10FEFF itself */};
    for (const std::string& bytes : kinds) {
        temp_dir dir;
        const std::filesystem::path root = dir / ("root" + bytes);
        std::filesystem::create_directory(root);
        const auto log = open_log(dir / "s.jsonl", root);
        const std::string command = "echo " + bytes;
        const session_grant grant = grant_for(command, sandbox::sandbox_mode::workspace_write);
        ASSERT_FALSE(log.append({{"type", "approval/asked"},
                                 {"id", "ap-1"},
                                 {"tool", "cordon run"},
                                 {"command", command},
                                 {"workdir", (root / bytes).string()},
                                 {"mode", "workspace-write"},
                                 {"justification", "because " + bytes},
                                 {"env", {"NAME=" + bytes}},
                                 {"input", bytes}}));
        ASSERT_FALSE(log.append({{"type", "approval/decided"},
                                 {"id", "ap-1"},
                                 {"outcome", "allowed-for-session"},
                                 {"grant",
                                  {{"id", "ap-1"},
                                   {"prefix", grant.prefix},
                                   {"exact", grant.exact},
                                   {"mode", "workspace-write"}}}}));
        // Every line on disk is strict JSON.
        std::istringstream lines(test::read_file(dir / "s.jsonl"));
        for (std::string line; std::getline(lines, line);)
            EXPECT_TRUE(json::accept(line)) << line;
        auto read = log.state();
        ASSERT_TRUE(std::holds_alternative<session_state>(read))
            << std::get<log_error>(read).message;
        const auto& state = std::get<session_state>(read);
        EXPECT_EQ(state.cwd, root);
        ASSERT_EQ(state.events.size(), 3u);
        const json& asked = state.events[1].body;
        EXPECT_EQ(asked["command"], command);
        EXPECT_EQ(asked["workdir"], (root / bytes).string());
        EXPECT_EQ(asked["justification"], "because " + bytes);
        EXPECT_EQ(asked["env"][0], "NAME=" + bytes);
        EXPECT_EQ(asked["input"], bytes);
        ASSERT_EQ(state.grants.size(), 1u);
        EXPECT_EQ(state.grants[0].prefix, grant.prefix);
        EXPECT_TRUE(covers(state.grants[0], command, sandbox::sandbox_mode::workspace_write));
        EXPECT_FALSE(covers(state.grants[0], "echo \xfe", sandbox::sandbox_mode::workspace_write));
    }
}

// Lines that are not JSON text, whatever their bytes: a corrupt line with its number, never a
// crash, and a string that decodes to NUL is only a string.
TEST(SessionLog, LinesThatAreNotUtf8OrHoldLoneSurrogatesAreCorruptLines) {
    const std::vector<std::string> bad = {
        "{\"type\":\"sandbox/mode\",\"mode\":\"\xff\"}\n",
        "{\"type\":\"sandbox/mode\",\"mode\":\"\xc0\xaf\"}\n",
        "{\"type\":\"sandbox/mode\",\"mode\":\"\xed\xa0\x80\"}\n",
        "{\"type\":\"sandbox/mode\",\"mode\":\"\xe2\x82\"}\n",
        R"({"type":"sandbox/mode","mode":"\ud800"})"
        "\n",
        R"({"type":"sandbox/mode","mode":"\udcff"})"
        "\n",
    };
    for (const auto& line : bad) {
        temp_dir dir;
        const auto log = open_log(dir / "s.jsonl");
        append_raw(dir / "s.jsonl", line);
        auto read = log.read();
        ASSERT_TRUE(std::holds_alternative<log_error>(read)) << line;
        EXPECT_EQ(std::get<log_error>(read).line, 2u);
        EXPECT_EQ(std::get<log_error>(read).message, "not valid JSON");
    }
    // Valid JSON whose strings decode to NUL or to bytes: the complaint quotes them, escaped.
    for (const std::string& line :
         {std::string(R"({"type":"sandbox/mode","mode":"read-only\u0000"})"),
          std::string("{\"type\":\"sandbox/mode\",\"mode\":\"\xf4\x8f\xbb\xbf\"}")}) {
        temp_dir dir;
        const auto log = open_log(dir / "s.jsonl");
        append_raw(dir / "s.jsonl", line + "\n");
        auto read = log.read();
        ASSERT_TRUE(std::holds_alternative<log_error>(read)) << line;
        EXPECT_EQ(std::get<log_error>(read).line, 2u);
        EXPECT_NE(std::get<log_error>(read).message.find("is not a sandbox mode"),
                  std::string::npos)
            << std::get<log_error>(read).message;
    }
}

}  // namespace
}  // namespace cordon::policy
