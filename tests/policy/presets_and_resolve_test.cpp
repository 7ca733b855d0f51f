// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Presets derived from the two knobs, written through only when something changes; and the
// precedence of resolve().
#include <unistd.h>

#include <gtest/gtest.h>

#include "policy/presets.hpp"
#include "policy/resolve.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

using sandbox::sandbox_mode;
using test::temp_dir;

session_log open_session_log(const temp_dir& dir) {
    return std::get<session_log>(session_log::open_or_create(dir / "s.jsonl", dir.path()));
}

session_state state_of(const session_log& log) {
    return std::get<session_state>(log.state());
}

resolved_policy resolved(const deployment& where, const resolve_request& request) {
    auto got = resolve(where, request);
    if (auto* refused = std::get_if<std::string>(&got)) {
        ADD_FAILURE() << *refused;
        return {};
    }
    return std::get<resolved_policy>(got);
}

TEST(Presets, TheDefaultTable) {
    const auto table = default_presets();
    ASSERT_EQ(table.size(), 2u);
    EXPECT_EQ(table[0].name, "workspace-write");
    EXPECT_EQ(table[0].mode, sandbox_mode::workspace_write);
    EXPECT_EQ(table[0].approval, approval_policy::ask);
    EXPECT_EQ(table[1].name, "danger-full-access");
    EXPECT_EQ(table[1].mode, sandbox_mode::danger_full_access);
    EXPECT_EQ(table[1].approval, approval_policy::never);
    EXPECT_EQ(check_presets(table), std::nullopt);
}

TEST(Presets, FoundByName) {
    const auto table = default_presets();
    ASSERT_NE(find_preset(table, "danger-full-access"), nullptr);
    EXPECT_EQ(find_preset(table, "danger-full-access")->approval, approval_policy::never);
    EXPECT_EQ(find_preset(table, "custom"), nullptr);
    EXPECT_EQ(unknown_preset(table, "yolo"),
              "unknown preset \"yolo\" (available: workspace-write, danger-full-access)");
}

TEST(Presets, ATableIsChecked) {
    EXPECT_TRUE(check_presets({}));
    EXPECT_TRUE(check_presets({{"custom", sandbox_mode::read_only, approval_policy::ask, ""}}));
    EXPECT_TRUE(check_presets({{"", sandbox_mode::read_only, approval_policy::ask, ""}}));
    EXPECT_TRUE(check_presets({{"a", sandbox_mode::read_only, approval_policy::ask, ""},
                               {"a", sandbox_mode::workspace_write, approval_policy::ask, ""}}));
}

TEST(Presets, CurrentIsDerivedFromTheKnobs) {
    const auto table = default_presets();
    session_state state;
    EXPECT_EQ(current_preset(table, state, {sandbox_mode::read_only, approval_policy::ask}),
              "custom");
    EXPECT_EQ(current_preset(table, state, {sandbox_mode::workspace_write, approval_policy::ask}),
              "workspace-write");
    state.mode = sandbox_mode::danger_full_access;
    EXPECT_EQ(current_preset(table, state, {sandbox_mode::workspace_write, approval_policy::ask}),
              "custom");
    state.approval = approval_policy::never;
    EXPECT_EQ(current_preset(table, state, {}), "danger-full-access");
}

TEST(Presets, TheRecordedPresetWinsATieOnlyWhileItStillMatches) {
    std::vector<preset> table = {
        {"first", sandbox_mode::workspace_write, approval_policy::ask, ""},
        {"second", sandbox_mode::workspace_write, approval_policy::ask, ""},
    };
    session_state state;
    state.mode = sandbox_mode::workspace_write;
    EXPECT_EQ(current_preset(table, state, {}), "first");
    state.preset = "second";
    EXPECT_EQ(current_preset(table, state, {}), "second");
    state.approval = approval_policy::never;
    EXPECT_EQ(current_preset(table, state, {}), "custom");
}

TEST(Presets, SetWritesOnlyWhatChanges) {
    temp_dir dir;
    const auto log = open_session_log(dir);
    const auto table = default_presets();
    const knobs defaults{sandbox_mode::workspace_write, approval_policy::ask};

    // The defaults already are workspace-write, the preset that matches them: its knobs are
    // recorded all the same (a session that records none leaves them to the files below it).
    auto written = set_preset(log, table, "workspace-write", defaults);
    ASSERT_TRUE(std::holds_alternative<std::vector<nlohmann::json>>(written));
    const auto& pinned = std::get<std::vector<nlohmann::json>>(written);
    ASSERT_EQ(pinned.size(), 2u);
    EXPECT_EQ(pinned[0]["mode"], "workspace-write");
    EXPECT_EQ(pinned[1]["policy"], "ask");
    EXPECT_TRUE(
        std::get<std::vector<nlohmann::json>>(set_preset(log, table, "workspace-write", defaults))
            .empty());

    written = set_preset(log, table, "danger-full-access", defaults);
    const auto& events = std::get<std::vector<nlohmann::json>>(written);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0]["type"], "permission/preset");
    EXPECT_EQ(events[1]["mode"], "danger-full-access");
    EXPECT_EQ(events[2]["policy"], "never");
    EXPECT_EQ(current_preset(table, state_of(log), defaults), "danger-full-access");

    // Selecting it again appends nothing.
    const auto before = state_of(log).events.size();
    written = set_preset(log, table, "danger-full-access", defaults);
    EXPECT_TRUE(std::get<std::vector<nlohmann::json>>(written).empty());
    EXPECT_EQ(state_of(log).events.size(), before);

    auto unknown = set_preset(log, table, "yolo", defaults);
    ASSERT_TRUE(std::holds_alternative<log_error>(unknown));
    EXPECT_EQ(std::get<log_error>(unknown).message,
              "unknown preset \"yolo\" (available: workspace-write, danger-full-access)");
}

TEST(Presets, SetOneKnob) {
    temp_dir dir;
    const auto log = open_session_log(dir);
    // The default, asked for, is recorded: a session that does not record its mode leaves it to
    // a configuration file below it, which may be danger-full-access.
    EXPECT_EQ(std::get<bool>(set_mode(log, sandbox_mode::read_only)), true);
    EXPECT_EQ(std::get<bool>(set_mode(log, sandbox_mode::read_only)), false);
    EXPECT_EQ(std::get<bool>(set_mode(log, sandbox_mode::workspace_write)), true);
    EXPECT_EQ(std::get<bool>(set_mode(log, sandbox_mode::workspace_write)), false);
    EXPECT_EQ(std::get<bool>(set_approval_policy(log, approval_policy::ask)), true);
    EXPECT_EQ(std::get<bool>(set_approval_policy(log, approval_policy::ask)), false);
    EXPECT_EQ(std::get<bool>(set_approval_policy(log, approval_policy::never)), true);
    const auto state = state_of(log);
    EXPECT_EQ(state.mode, sandbox_mode::workspace_write);
    EXPECT_EQ(state.approval, approval_policy::never);
    EXPECT_EQ(state.events.size(), 5u);
}

TEST(Resolve, ModePrecedenceInEveryCombination) {
    temp_dir dir;
    const deployment where{sandbox_mode::read_only, dir.path()};
    for (std::optional<sandbox_mode> approved :
         {std::optional<sandbox_mode>(), std::optional(sandbox_mode::danger_full_access)}) {
        for (std::optional<sandbox_mode> logged :
             {std::optional<sandbox_mode>(), std::optional(sandbox_mode::workspace_write)}) {
            for (bool with_session : {false, true}) {
                session_state session;
                session.mode = logged;
                const auto got = resolved(where, {with_session ? &session : nullptr, approved});
                sandbox_mode expected = sandbox_mode::read_only;
                if (approved) {
                    expected = *approved;
                } else if (with_session && logged) {
                    expected = *logged;
                }
                EXPECT_EQ(got.mode, expected);
                EXPECT_EQ(got.workspace_root, dir.path());
            }
        }
    }
}

TEST(Resolve, TheSessionsWorkingDirectoryIsTheRoot) {
    temp_dir fallback;
    temp_dir session_dir;
    session_state session;
    session.cwd = session_dir.path();
    const deployment where{sandbox_mode::read_only, fallback.path()};
    EXPECT_EQ(resolved(where, {&session, std::nullopt}).workspace_root, session_dir.path());
    // An approved mode keeps the root.
    EXPECT_EQ(resolved(where, {&session, sandbox_mode::workspace_write}).workspace_root,
              session_dir.path());
    session_state without_cwd;
    EXPECT_EQ(resolved(where, {&without_cwd, std::nullopt}).workspace_root, fallback.path());
}

TEST(Resolve, LinkDotDotLandsWhereChdirLands) {
    temp_dir dir;
    std::filesystem::create_directories(dir / "physical/child");
    std::filesystem::create_directories(dir / "elsewhere");
    std::filesystem::create_directory_symlink(dir / "physical/child", dir / "elsewhere/link");
    session_state session;
    session.cwd = dir / "elsewhere/link/..";
    const auto got = resolved({sandbox_mode::read_only, "/"}, {&session, std::nullopt});
    EXPECT_EQ(got.workspace_root, dir / "physical");
    // The same for the deployment's root.
    EXPECT_EQ(resolved({sandbox_mode::read_only, dir / "elsewhere/link/.."}, {}).workspace_root,
              dir / "physical");
    // A root that does not exist keeps its spelling, normalised.
    EXPECT_EQ(resolved({sandbox_mode::read_only, dir / "gone/../gone2"}, {}).workspace_root,
              dir / "gone2");
}

// A session's root is recorded canonical. A symlink put where it was (a run that can write the
// root's parent: /tmp under the Landlock rung) must not carry the session's mode and grants to
// another directory.
TEST(Resolve, ARootReplacedByASymlinkIsRefused) {
    temp_dir dir;
    std::filesystem::create_directories(dir / "project");
    std::filesystem::create_directories(dir / "victim");
    session_state session;
    session.cwd = dir / "project";
    session.mode = sandbox_mode::workspace_write;
    const deployment where{sandbox_mode::read_only, dir / "project"};
    EXPECT_EQ(resolved(where, {&session, std::nullopt}).workspace_root, dir / "project");

    std::filesystem::rename(dir / "project", dir / "project.old");
    std::filesystem::create_directory_symlink(dir / "victim", dir / "project");
    for (const resolve_request& request :
         {resolve_request{&session, std::nullopt},
          resolve_request{&session, sandbox_mode::danger_full_access},
          resolve_request{nullptr, std::nullopt}}) {
        auto got = resolve(where, request);
        ASSERT_TRUE(std::holds_alternative<std::string>(got));
        EXPECT_NE(std::get<std::string>(got).find("now resolves to " + (dir / "victim").string()),
                  std::string::npos)
            << std::get<std::string>(got);
    }
}

TEST(Resolve, ASessionRecordsItsRootAsChdirWouldResolveIt) {
    temp_dir dir;
    std::filesystem::create_directories(dir / "physical/child");
    std::filesystem::create_directory_symlink(dir / "physical/child", dir / "link");
    const auto log =
        std::get<session_log>(session_log::open_or_create(dir / "s.jsonl", dir / "link/.."));
    const auto state = state_of(log);
    EXPECT_EQ(state.cwd, dir / "physical");
    EXPECT_EQ(resolved({sandbox_mode::read_only, "/"}, {&state, std::nullopt}).workspace_root,
              dir / "physical");
}

}  // namespace
}  // namespace cordon::policy
