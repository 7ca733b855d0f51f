// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How a run ended, end to end through the real executor and the real runners: the record a
// program that cannot run gets under every backend, a runner that never proves it started the
// command, and the outcome field every report reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cordon/executor.hpp"
#include "cordon/record_json.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

namespace fs = std::filesystem;
using sandbox::backend_choice;
using sandbox::sandbox_mode;

// A provider that can only use `choice`, or the reason it cannot (a skip, or a failure in CI).
std::shared_ptr<sandbox::provider> provider_for(backend_choice choice, std::string& why) {
    sandbox::local_provider_options options;
    options.choice = choice;
    auto provider = make_local_provider(options);
    if (provider->selected()) return provider;
    const auto rungs = provider->probe_all();
    why = std::string(sandbox::to_string(choice)) +
          " unusable: " + (rungs.empty() ? std::string("no rung") : rungs.front().reason);
    return nullptr;
}

// One configuration a command can run under.
struct setting {
    std::string name;
    sandbox_mode mode;
    backend_choice backend;
    bool landlock_in_child = true;  // false: the Landlock rung execs cordon-landlock
};

const std::vector<setting>& every_setting() {
    static const std::vector<setting> all{
        {"danger-full-access", sandbox_mode::danger_full_access, backend_choice::automatic},
        {"bwrap read-only", sandbox_mode::read_only, backend_choice::bwrap},
        {"bwrap workspace-write", sandbox_mode::workspace_write, backend_choice::bwrap},
        {"landlock read-only", sandbox_mode::read_only, backend_choice::landlock},
        {"landlock workspace-write", sandbox_mode::workspace_write, backend_choice::landlock},
        {"landlock read-only via the launcher", sandbox_mode::read_only, backend_choice::landlock,
         false},
        {"landlock workspace-write via the launcher", sandbox_mode::workspace_write,
         backend_choice::landlock, false},
    };
    return all;
}

run_record run_under(const setting& where, std::vector<std::string> argv, const fs::path& workspace,
                     std::string& skip) {
    std::shared_ptr<sandbox::provider> provider;
    if (sandbox::is_confined(where.mode)) {
        provider = provider_for(where.backend, skip);
        if (!provider) return sandbox_unavailable_record(where.mode, {skip, std::nullopt, {}});
    }
    run_request request;
    request.argv = std::move(argv);
    request.mode = where.mode;
    request.workspace_root = workspace;
    request.rules = test::rules_for(where.backend);
    request.timeout = std::chrono::seconds(60);
    executor_options options;
    options.landlock_in_child = where.landlock_in_child;
    try {
        return test::run_or_throw(provider, std::move(request), std::move(options));
    } catch (const sandbox::sandbox_unavailable_error& error) {
        return sandbox_unavailable_record(where.mode,
                                          {error.detail(), std::nullopt, error.backends()});
    }
}

// The record as JSON without what legitimately differs between settings: how long it took and
// the sandbox facts.
nlohmann::json comparable(const run_record& result) {
    nlohmann::json json = to_json(result);
    json.erase("durationMs");
    json.erase("sandbox");
    return json;
}

class SameRecordEverywhere : public ::testing::Test {
protected:
    // Runs `argv` under every setting and expects one record, whose outcome is `kind`.
    void expect_one_record(const std::vector<std::string>& argv, outcome_kind kind) {
        std::map<std::string, nlohmann::json> records;
        for (const setting& where : every_setting()) {
            std::string skip;
            const run_record result = run_under(where, argv, workspace_.path(), skip);
            if (!skip.empty()) CORDON_SKIP_OR_FAIL(skip);
            ASSERT_NE(result.outcome.kind, outcome_kind::runner_failed)
                << where.name << ": " << to_json(result).dump();
            EXPECT_EQ(result.outcome.kind, kind) << where.name << ": " << to_json(result).dump();
            records[where.name] = comparable(result);
        }
        const nlohmann::json& first = records.begin()->second;
        for (const auto& [name, record] : records) {
            EXPECT_EQ(record, first) << name << " differs from " << records.begin()->first;
        }
    }

    test::temp_dir workspace_{"/var/tmp"};
};

TEST_F(SameRecordEverywhere, AProgramThatIsNotThere) {
    expect_one_record({"cordon-no-such-program-anywhere"}, outcome_kind::not_started);
    expect_one_record({(workspace_.path() / "missing").string()}, outcome_kind::not_started);
}

// A file the kernel cannot execute: the launcher inside a sandbox used to retry it through
// /bin/sh (execvp does), where the spawner outside does not.
TEST_F(SameRecordEverywhere, AFileThatIsNotAProgram) {
    const fs::path garbage = workspace_.path() / "not-a-program";
    test::write_file(garbage, "\x01\x02\x03 not a program\n", fs::perms::owner_all);
    expect_one_record({garbage.string()}, outcome_kind::not_started);
}

// The verified defect of the review: bwrap gives workspace-write a private /tmp, so a program
// under the host's /tmp resolves on the host and is missing in the sandbox. That used to be
// SANDBOX_UNAVAILABLE ("no sandbox backend is usable"), which was false; it is the record a run
// without a sandbox gives for a missing program.
TEST(HiddenProgram, AProgramBwrapHidesIsNotStartedNotASandboxFailure) {
    test::temp_dir host_tmp("/tmp");
    const fs::path program = host_tmp.path() / "prog";
    test::write_file(program, "#!/bin/sh\necho ran\n", fs::perms::owner_all);
    test::temp_dir workspace("/var/tmp");

    std::string skip;
    const run_record record =
        run_under({"bwrap workspace-write", sandbox_mode::workspace_write, backend_choice::bwrap},
                  {program.string()}, workspace.path(), skip);
    if (!skip.empty()) CORDON_SKIP_OR_FAIL(skip);
    ASSERT_NE(record.outcome.kind, outcome_kind::runner_failed) << to_json(record).dump();
    EXPECT_EQ(record.outcome.kind, outcome_kind::not_started);
    ASSERT_TRUE(record.outcome.start_failure);
    EXPECT_EQ(record.outcome.start_failure->stage, spawn_stage::exec);
    EXPECT_EQ(record.outcome.start_failure->error, ENOENT);
    EXPECT_EQ(record.outcome.message, program.string() + ": No such file or directory");
    EXPECT_EQ(record.stderr_output.text, "") << "the launcher's line is not the command's output";
}

// A launcher that answers its probe and runs `true` for the profile probes, then exits 0 for the
// real command without running it. No `started` record, no proof: the command did not run, and
// the run is the sandbox's failure, never a success. (The launcher's protocol: the run takes the
// launcher's path, which the Landlock rung in the child never execs.)
TEST(LyingLauncher, ExitingZeroWithoutRunningTheCommandIsARunnerFailure) {
    test::temp_dir dir("/var/tmp");
    const fs::path launcher = dir.path() / "cordon-fake-launcher";
    fs::copy_file(test::test_child_path(), launcher);
    test::temp_dir workspace("/var/tmp");
    const fs::path marker = workspace.path() / "ran";

    sandbox::local_provider_options options;
    options.choice = backend_choice::landlock;
    options.launcher_path = launcher;
    auto provider = make_local_provider(options);
    ASSERT_TRUE(provider->selected()) << "the fake launcher passes its probes";

    run_request request;
    request.argv = {"/bin/sh", "-c", "touch " + marker.string()};
    request.mode = sandbox_mode::workspace_write;
    request.workspace_root = workspace.path();
    request.rules.accept_partial = true;  // the Landlock rung (real_backend.hpp, rules_for)
    executor_options through_the_launcher;
    through_the_launcher.landlock_in_child = false;
    try {
        const run_record record =
            test::run_or_throw(provider, std::move(request), through_the_launcher);
        ADD_FAILURE() << "a silent exit 0 was taken for a run: " << to_json(record).dump();
    } catch (const sandbox::sandbox_unavailable_error& error) {
        ASSERT_TRUE(error.detail());
        EXPECT_EQ(*error.detail(),
                  "the sandbox runner exited with status 0 without starting the command");
        EXPECT_EQ(error.failed_backend(), std::optional<std::string>("landlock"));
        EXPECT_EQ(to_json(error)["error"]["backend"], "landlock");
    }
    EXPECT_FALSE(fs::exists(marker));
}

}  // namespace
}  // namespace cordon::runtime
