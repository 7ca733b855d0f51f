// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The executor end to end (cordon/executor.hpp) and the values it produces: the environment
// scrub, which runs consult the provider, fail-closed runner failures, missing programs, the
// timeout's default and cap, many concurrent runs on one event loop, prepare() and launch() apart,
// the record's JSON shape (record_json.hpp) and its human rendering (render.hpp).
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <signal.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "base/json_text.hpp"
#include "cordon/environment.hpp"
#include "cordon/executor.hpp"
#include "cordon/record_json.hpp"
#include "proxy/service.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/render.hpp"
#include "runtime_test_util.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using sandbox::sandbox_mode;
namespace fs = std::filesystem;

using test::child;
// Counts confine() calls; refuses like a host without any backend, so that a test which should
// never reach it cannot run anything by accident.
class counting_provider : public sandbox::provider {
public:
    sandbox::confined_argv confine(std::span<const std::string>,
                                   const sandbox::sandbox_policy& policy,
                                   const std::filesystem::path&) override {
        ++calls;
        throw sandbox::sandbox_unavailable_error(policy.mode);
    }
    std::atomic<int> calls{0};
};

std::map<std::string, std::string> parse_env(const std::string& text) {
    std::map<std::string, std::string> env;
    for (const auto& line : test::split_lines(text)) {
        auto equals = line.find('=');
        if (equals != std::string::npos) env[line.substr(0, equals)] = line.substr(equals + 1);
    }
    return env;
}

run_request request_for(std::vector<std::string> argv, sandbox_mode mode,
                        const fs::path& workspace) {
    run_request request;
    request.argv = std::move(argv);
    request.mode = mode;
    request.workspace_root = workspace;
    return request;
}

// --- environment ---------------------------------------------------------------------------------

// Every class of name the scrub drops is in environment_test.cpp; here, the markers in any case.
TEST(CredentialName, MatchesTheMarkersInAnyCase) {
    for (const char* name :
         {"MY_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "aws_secret_x", "key", "Token", "xPaSsWoRdx",
          "SECRET", "api_key_id", "KEYBOARD_LAYOUT", "monkey", "PASSWD", "my_cred", "Auth",
          "github_pat", "sEsSiOn", "cookie", "Private"}) {
        EXPECT_TRUE(is_credential_name(name)) << name;
    }
    for (const char* name : {"PATH", "HOME", "TERM", "USER", "", "KE", "TOKE", "PAS", "SECRE",
                             "LANG", "K_E_Y", "PAT", "PWD", "AUTHOR", "CRE", "SESSIO"}) {
        EXPECT_FALSE(is_credential_name(name)) << name;
    }
}

TEST(BuildEnvironment, ScrubsAddsDefaultsAndLetsExplicitEntriesWin) {
    const char* parent[] = {"PATH=/usr/bin:/bin",
                            "HOME=/home/agent",
                            "MY_API_KEY=k",
                            "github_token=t",
                            "DB_PASSWORD=p",
                            "aws_secret_x=s",
                            "TERM=xterm-256color",
                            "NOEQUALS",
                            "=orphan",
                            "EMPTY=",
                            "DUP=first",
                            "DUP=second",
                            "WITH_EQUALS=a=b",
                            "REMOVE_ME=1",
                            nullptr};
    std::map<std::string, std::optional<std::string>> explicit_vars{{"GITHUB_TOKEN", "x"},
                                                                    {"GIT_PAGER", "less"},
                                                                    {"REMOVE_ME", std::nullopt},
                                                                    {"PAGER", std::nullopt},
                                                                    {"NEW_VAR", "n"}};
    auto env = build_environment(parent, explicit_vars);

    EXPECT_TRUE(std::is_sorted(env.begin(), env.end()));
    std::map<std::string, std::string> got;
    for (const auto& entry : env) {
        auto equals = entry.find('=');
        ASSERT_NE(equals, std::string::npos) << entry;
        EXPECT_TRUE(got.emplace(entry.substr(0, equals), entry.substr(equals + 1)).second)
            << "duplicate " << entry;
    }
    const std::map<std::string, std::string> expected{
        {"DUP", "second"},       {"EMPTY", ""},
        {"GITHUB_TOKEN", "x"},   {"GIT_PAGER", "less"},
        {"HOME", "/home/agent"}, {"NEW_VAR", "n"},
        {"NO_COLOR", "1"},       {"PATH", "/usr/bin:/bin"},
        {"TERM", "dumb"},        {"WITH_EQUALS", "a=b"}};
    EXPECT_EQ(got, expected);
}

TEST(BuildEnvironment, NullParentGivesTheDefaultsOnly) {
    auto env = build_environment(nullptr, {});
    EXPECT_EQ(env,
              (std::vector<std::string>{"GIT_PAGER=cat", "NO_COLOR=1", "PAGER=cat", "TERM=dumb"}));
    EXPECT_EQ(non_interactive_defaults().size(), 4U);
}

class ExecutorEnvironmentTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (const auto& [name, value] : secrets_)
            ::setenv(name, value, 1);
        ::setenv("CORDON_TEST_REMOVE_ME", "present", 1);
    }
    void TearDown() override {
        for (const auto& [name, value] : secrets_)
            ::unsetenv(name);
        ::unsetenv("CORDON_TEST_REMOVE_ME");
    }
    void check(sandbox_mode mode, std::shared_ptr<sandbox::provider> provider) {
        auto request = request_for({child(), "print-env"}, mode, workspace_.path());
        request.env = {{"GITHUB_TOKEN", "x"},
                       {"TERM", "xterm"},
                       {"CORDON_TEST_REMOVE_ME", std::nullopt},
                       {"CORDON_TEST_ADDED", "added value"}};
        auto record = run(std::move(provider), std::move(request));
        ASSERT_EQ(record.outcome.exit_code, 0) << render(record);
        auto env = parse_env(record.stdout_output.text);
        EXPECT_FALSE(env.contains("MY_API_KEY"));
        EXPECT_FALSE(env.contains("DB_PASSWORD"));
        EXPECT_FALSE(env.contains("aws_secret_x"));
        EXPECT_FALSE(env.contains("CORDON_TEST_REMOVE_ME"));
        EXPECT_EQ(env["GITHUB_TOKEN"], "x");  // explicitly passed: wins over the scrub
        EXPECT_EQ(env["TERM"], "xterm");      // explicitly passed: wins over the defaults
        EXPECT_EQ(env["CORDON_TEST_ADDED"], "added value");
        EXPECT_EQ(env["NO_COLOR"], "1");
        EXPECT_EQ(env["PAGER"], "cat");
        EXPECT_EQ(env["GIT_PAGER"], "cat");
        ASSERT_NE(std::getenv("PATH"), nullptr);
        EXPECT_EQ(env["PATH"], std::getenv("PATH"));
        if (const char* home = std::getenv("HOME")) {
            EXPECT_EQ(env["HOME"], home);
        }
        for (const auto& [name, value] : env) {
            if (name != "GITHUB_TOKEN") {
                EXPECT_FALSE(is_credential_name(name)) << name;
            }
        }
    }
    const std::vector<std::pair<const char*, const char*>> secrets_{{"MY_API_KEY", "sk-1"},
                                                                    {"GITHUB_TOKEN", "ghp_2"},
                                                                    {"DB_PASSWORD", "hunter2"},
                                                                    {"aws_secret_x", "s3"}};
    test::temp_dir workspace_;
};

TEST_F(ExecutorEnvironmentTest, ScrubAndOverrideUnderDangerFullAccess) {
    check(sandbox_mode::danger_full_access, std::make_shared<counting_provider>());
}

TEST_F(ExecutorEnvironmentTest, ScrubAndOverrideUnderBwrap) {
    std::string why;
    auto provider = test::provider_for(sandbox::backend_choice::bwrap, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    check(sandbox_mode::read_only, provider);
}

// --- which runs reach the provider ---------------------------------------------------------------

TEST(ExecutorProvider, DangerFullAccessNeverCallsTheProvider) {
    auto provider = std::make_shared<counting_provider>();
    test::temp_dir workspace;
    // A stderr that carries a denial dialect: without a backend there is no dialect to match.
    auto record = run(provider, request_for({"bash", "-c",
                                             "echo 'x: Read-only file system' >&2; "
                                             "echo out; exit 1"},
                                            sandbox_mode::danger_full_access, workspace.path()));
    EXPECT_EQ(provider->calls.load(), 0);
    EXPECT_EQ(record.outcome.exit_code, 1);
    EXPECT_EQ(record.stdout_output.text, "out\n");
    EXPECT_EQ(record.sandbox.mode, sandbox_mode::danger_full_access);
    EXPECT_FALSE(record.sandbox.enforcement);
    EXPECT_FALSE(record.sandbox.backend);
    EXPECT_FALSE(record.sandbox.denied);
    auto json = to_json(record);
    EXPECT_EQ(json["sandbox"]["mode"], "danger-full-access");
    EXPECT_TRUE(json["sandbox"]["enforcement"].is_null());
    EXPECT_TRUE(json["sandbox"]["backend"].is_null());
    EXPECT_EQ(json["sandbox"]["denied"], false);
}

// Runs a marker-writing command under both confined modes through `provider`; each must fail
// closed: a runner_failed record, whose sandbox_unavailable_error (handed to `check`) says
// SANDBOX_UNAVAILABLE, and the marker must stay absent.
void expect_fails_closed(const std::shared_ptr<sandbox::provider>& provider,
                         const std::function<void(const sandbox::sandbox_unavailable_error&,
                                                  sandbox_mode)>& check = {}) {
    test::temp_dir workspace;
    const auto marker = workspace / "ran";
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(sandbox::to_string(mode)));
        const run_record record =
            run(provider,
                request_for({child(), "write", marker.string(), "x"}, mode, workspace.path()));
        ASSERT_EQ(record.outcome.kind, classify::outcome_kind::runner_failed)
            << record.outcome.message;
        const sandbox::sandbox_unavailable_error error = sandbox_unavailable(record);
        EXPECT_EQ(error.mode(), mode);
        EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
        if (check) check(error, mode);
    }
    EXPECT_FALSE(fs::exists(marker)) << "the command ran although nothing could confine it";
}

TEST(ExecutorProvider, ConfinedModeWithoutBackendFailsClosed) {
    auto provider = std::make_shared<counting_provider>();
    expect_fails_closed(provider);
    EXPECT_EQ(provider->calls.load(), 2);
}

TEST(ExecutorProvider, NoProviderComposedFailsClosedForConfinedModes) {
    expect_fails_closed(nullptr);
    // danger-full-access needs no provider at all.
    test::temp_dir workspace;
    const auto marker = workspace / "ran";
    auto record = run(nullptr, request_for({child(), "write", marker.string(), "x"},
                                           sandbox_mode::danger_full_access, workspace.path()));
    EXPECT_EQ(record.outcome.exit_code, 0);
    EXPECT_TRUE(fs::exists(marker));
}

// The bwrap rung is selected (the scripted probe says it works) but its binary cannot be
// executed: the run is a runner failure, reported as the fail-closed sandbox error, and the
// command never ran. Executable by anyone: cordon as root starts bwrap as the run's own uid.
TEST(ExecutorProvider, UnexecutableRunnerIsSandboxUnavailableWithRunnerFailure) {
    test::temp_dir runners;
    const fs::path bwrap = runners / "bwrap";
    test::write_file(bwrap, std::string("\x01\x02\x03\x04 not a program"),
                     fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                         fs::perms::others_read | fs::perms::others_exec);
    sandbox::local_provider_options options;
    options.choice = sandbox::backend_choice::bwrap;
    options.bwrap_path = bwrap;
    options.launcher_path = test::launcher_path();
    // The verdict that chose the broken runner is shared; the failure takes it back.
    test::temp_dir verdicts;
    options.verdict_directory = verdicts / "cache";
    std::atomic<int> probes{0};
    options.run_probe = [&probes](const sandbox::confined_argv& wrapped,
                                  std::chrono::milliseconds) {
        ++probes;
        sandbox::probe_run_result result;
        if (wrapped.argv.back() == "--probe") result.abi = sandbox::landlock::query_abi();
        return result;
    };
    auto provider = make_local_provider(options);
    ASSERT_TRUE(provider->selected());
    EXPECT_TRUE(fs::exists(test::verdict_file_in(verdicts / "cache", "bwrap")));

    expect_fails_closed(
        provider, [&bwrap](const sandbox::sandbox_unavailable_error& error, sandbox_mode) {
            const std::string message = error.what();
            EXPECT_NE(message.find("Runner failure:"), std::string::npos) << message;
            EXPECT_NE(message.find(bwrap.string()), std::string::npos) << message;
            ASSERT_TRUE(error.detail());
            EXPECT_NE(error.detail()->find("Exec format error"), std::string::npos);
            auto json = to_json(error);
            EXPECT_EQ(json["error"]["message"], message);
        });
    EXPECT_GT(probes.load(), 0);

    // The asynchronous form delivers the same facts as a runner-failed record instead.
    test::temp_dir workspace;
    const auto marker = workspace / "ran";
    boost::asio::io_context io;
    executor exec(io.get_executor(), provider);
    std::optional<run_record> result;
    exec.async_run(request_for({child(), "write", marker.string(), "x"},
                               sandbox_mode::workspace_write, workspace.path()),
                   [&](run_record r) { result = std::move(r); });
    io.run();
    ASSERT_TRUE(result);
    EXPECT_EQ(result->outcome.kind, classify::outcome_kind::runner_failed);
    ASSERT_TRUE(result->outcome.runner);
    EXPECT_EQ(result->outcome.runner->backend, sandbox::backend_kind::bwrap);
    EXPECT_EQ(result->sandbox.backend, sandbox::backend_kind::bwrap);
    EXPECT_EQ(result->outcome.message, sandbox_unavailable(*result).what());
    EXPECT_TRUE(result->stdout_output.text.empty());
    EXPECT_FALSE(fs::exists(marker));
    EXPECT_FALSE(fs::exists(test::verdict_file_in(verdicts / "cache", "bwrap")))
        << "the verdict that chose a broken runner is still shared";
}

// The provider's refusal is the request's fault: a record that was not started (stage policy,
// REQUEST_REFUSED), never the fail-closed sandbox error; the executor's spill files count.
TEST(ExecutorProvider, RefusedWorkspaceIsNotStartedAndNeverReachesConfine) {
    auto provider = make_local_provider();
    test::temp_dir spill_root;
    executor_options options;
    options.spill_root = spill_root.path();
    // Another cordon's spill directory (spill files are named after their pattern).
    const fs::path other_spill = spill_root / "cordon-spill-other";
    fs::create_directory(other_spill);
    for (const fs::path& root : {fs::path("/proc"), spill_root.path(), other_spill}) {
        SCOPED_TRACE(root.string());
        auto record =
            run(provider, request_for({"/bin/true"}, sandbox_mode::workspace_write, root), options);
        ASSERT_EQ(record.outcome.kind, classify::outcome_kind::not_started);
        EXPECT_EQ(record.outcome.start_failure->stage, spawn_stage::policy);
        EXPECT_NE(record.outcome.message.find("refusing a workspace-write workspace"),
                  std::string::npos)
            << record.outcome.message;
        EXPECT_EQ(to_json(record)["error"]["code"], "REQUEST_REFUSED");
    }
}

// The workspace can change between refusal() and confine() (a concurrent rename puts a symlink on
// its path): confine() refuses it then, and that is still the request's fault, reported as the
// refusal it is and never as an unusable sandbox.
class racing_provider : public sandbox::provider {
public:
    sandbox::confined_argv confine(std::span<const std::string>,
                                   const sandbox::sandbox_policy& policy,
                                   const std::filesystem::path&) override {
        throw sandbox::request_refused_error(
            policy.mode, "refusing a workspace-write workspace: " + policy.workspace_root.string() +
                             " is not the directory's own path (it resolves to /elsewhere)");
    }
};

TEST(ExecutorProvider, AWorkspaceThatChangedBeforeConfineIsRefusedNotUnavailable) {
    test::temp_dir workspace;
    auto provider = std::make_shared<racing_provider>();
    auto record =
        run(provider, request_for({"/bin/true"}, sandbox_mode::workspace_write, workspace.path()));
    ASSERT_EQ(record.outcome.kind, classify::outcome_kind::not_started);
    EXPECT_EQ(record.outcome.start_failure->stage, spawn_stage::policy);
    EXPECT_NE(record.outcome.message.find("is not the directory's own path"), std::string::npos)
        << record.outcome.message;
    EXPECT_EQ(to_json(record)["error"]["code"], "REQUEST_REFUSED");
}

// confine() itself: a workspace that is not its own path any more is refused with the request's
// error, which a caller who knows only sandbox_unavailable_error still catches (nothing runs).
TEST(ExecutorProvider, ConfineRefusesAWorkspaceBehindASymlinkAsTheRequests) {
    auto provider = make_local_provider();
    test::temp_dir scratch;
    fs::create_directory(scratch / "real");
    fs::create_directory_symlink(scratch / "real", scratch / "link");
    const std::vector<std::string> argv{"/bin/true"};
    const sandbox::sandbox_policy policy{sandbox_mode::workspace_write, scratch / "link"};
    try {
        (void)provider->confine(argv, policy, scratch / "link");
        ADD_FAILURE() << "confine() accepted a workspace behind a symlink";
    } catch (const sandbox::request_refused_error& error) {
        EXPECT_NE(error.reason().find("is not the directory's own path"), std::string::npos)
            << error.reason();
        const sandbox::sandbox_unavailable_error& general = error;
        EXPECT_EQ(general.code(), "SANDBOX_UNAVAILABLE");
    }
}

// A limit that was asked for is never dropped: without a cgroup to carry it the run is not
// started (cordon run: 125); a default limit degrades, and the record says none held.
TEST(ExecutorLimits, ARequestedLimitWithoutACgroupIsNotStarted) {
    test::temp_dir workspace;
    executor_options options;
    options.cgroup_containment = false;
    auto asked = request_for({"/bin/true"}, sandbox_mode::danger_full_access, workspace.path());
    asked.max_processes = 10;
    auto record = run(nullptr, asked, options);
    ASSERT_EQ(record.outcome.kind, classify::outcome_kind::not_started);
    EXPECT_EQ(record.outcome.start_failure->stage, spawn_stage::cgroup);
    EXPECT_NE(record.outcome.message.find("cannot enforce the requested limits"),
              std::string::npos);
    auto defaulted =
        run(nullptr, request_for({"/bin/true"}, sandbox_mode::danger_full_access, workspace.path()),
            options);
    EXPECT_NE(defaulted.outcome.kind, classify::outcome_kind::not_started);
    EXPECT_EQ(defaulted.outcome.exit_code, 0);
    EXPECT_FALSE(defaulted.limits.max_processes);
}

TEST(ExecutorLimits, TheMemoryLimitEndsARunThatExceedsIt) {
    std::string why;
    auto cgroups = test::cgroup_host_or(why);
    if (!cgroups) CORDON_SKIP_OR_FAIL(why);
    if (!cgroups->memory_unlimitable().empty()) {
        CORDON_SKIP_OR_FAIL("no memory controller: " + cgroups->memory_unlimitable());
    }
    test::temp_dir workspace;
    // The shell waits for both: had the OOM killer ended only the allocating process, the
    // sleeper would keep the run going until its timeout.
    const std::string child = test::test_child_path().string();
    auto request =
        request_for({"sh", "-c", "\"$0\" sleep 60000 & \"$0\" allocate 512; wait", child},
                    sandbox_mode::danger_full_access, workspace.path());
    request.max_memory = 64 * 1024 * 1024;
    request.timeout = 60s;
    auto record = run(nullptr, request);
    EXPECT_EQ(record.limits.max_memory, std::optional<std::uint64_t>(64 * 1024 * 1024));
    EXPECT_TRUE(record.limits_hit.memory) << render(record);
    EXPECT_EQ(record.outcome.kind, classify::outcome_kind::out_of_memory) << render(record);
    EXPECT_EQ(record.stdout_output.text.find("allocated"), std::string::npos)
        << "the command finished within the limit";
    EXPECT_LT(record.duration_ms, 30'000) << "the whole run should have ended at the OOM";
}

// Without a --max-memory, a run is limited all the same: half of what the host gives cordon.
TEST(ExecutorLimits, EveryRunHasTheDefaultMemoryLimitInItsCgroup) {
    std::string why;
    auto cgroups = test::cgroup_host_or(why);
    if (!cgroups) CORDON_SKIP_OR_FAIL(why);
    if (!cgroups->memory_unlimitable().empty()) {
        CORDON_SKIP_OR_FAIL("no memory controller: " + cgroups->memory_unlimitable());
    }
    const auto expected = runtime::default_max_memory();
    ASSERT_TRUE(expected);
    ASSERT_TRUE(runtime::host_memory());
    EXPECT_EQ(*expected % (1 << 20), 0u);
    EXPECT_LE(*expected, *runtime::host_memory() / 2);
    test::temp_dir workspace;
    auto record = run(nullptr, request_for({test::test_child_path().string(), "memory-limit"},
                                           sandbox_mode::danger_full_access, workspace.path()));
    EXPECT_EQ(record.outcome.exit_code, 0) << render(record);
    EXPECT_EQ(record.limits.max_memory, expected);
    // As the kernel holds it in the run's own cgroup, read from inside.
    EXPECT_EQ(record.stdout_output.text, std::to_string(*expected) + "\n") << render(record);
}

TEST(ExecutorProvider, MissingProgramIsNotStartedInEveryModeWithoutConsultingTheProvider) {
    auto provider = std::make_shared<counting_provider>();
    test::temp_dir workspace;
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write,
                      sandbox_mode::danger_full_access}) {
        for (const std::string program : {"no-such-program-xyz", "/nonexistent/no-such-program"}) {
            SCOPED_TRACE(std::string(sandbox::to_string(mode)) + " " + program);
            auto record = run(provider, request_for({program, "arg"}, mode, workspace.path()));
            ASSERT_EQ(record.outcome.kind, classify::outcome_kind::not_started);
            EXPECT_EQ(record.outcome.start_failure->stage, spawn_stage::resolve);
            EXPECT_EQ(record.outcome.start_failure->error, ENOENT);
            EXPECT_EQ(record.outcome.message, program + ": No such file or directory");
            EXPECT_EQ(record.sandbox.mode, mode);
            EXPECT_FALSE(record.outcome.exit_code);
            EXPECT_FALSE(record.outcome.signal);
            auto json = to_json(record);
            ASSERT_TRUE(json.contains("error"));
            EXPECT_EQ(json["error"]["stage"], "resolve");
            EXPECT_NE(render(record).find("[not started: " + program), std::string::npos);
        }
    }
    EXPECT_EQ(provider->calls.load(), 0);
}

TEST(ExecutorProvider, BadWorkdirIsNotStartedNotARunnerFailure) {
    auto provider = std::make_shared<counting_provider>();
    test::temp_dir workspace;
    auto request =
        request_for({child(), "exit", "0"}, sandbox_mode::danger_full_access, workspace.path());
    request.workdir = workspace / "missing";
    auto record = run(provider, std::move(request));
    ASSERT_EQ(record.outcome.kind, classify::outcome_kind::not_started);
    EXPECT_EQ(record.outcome.start_failure->stage, spawn_stage::chdir);
    EXPECT_EQ(record.outcome.start_failure->error, ENOENT);
}

// async_run() in its two steps: prepared on another thread, launched on the loop, the run gives
// the record async_run() gives; a preparation that cannot run is that record already, and a
// prepared run that is dropped starts nothing.
TEST(ExecutorPrepare, PreparedOnAnotherThreadAndLaunchedOnTheLoop) {
    test::temp_dir workspace;
    boost::asio::io_context io;
    executor exec(io.get_executor(), nullptr);
    const fs::path marker = workspace / "dropped";
    std::optional<preparation> ran;
    std::optional<preparation> missing;
    std::optional<preparation> dropped;
    std::thread preparing([&] {
        ran.emplace(exec.prepare(request_for({"/bin/sh", "-c", "echo hi; exit 3"},
                                             sandbox_mode::danger_full_access, workspace.path())));
        missing.emplace(exec.prepare(
            request_for({"no-such-program-xyz"}, sandbox_mode::read_only, workspace.path())));
        dropped.emplace(
            exec.prepare(request_for({"/bin/sh", "-c", "echo > '" + marker.string() + "'"},
                                     sandbox_mode::danger_full_access, workspace.path())));
    });
    preparing.join();

    ASSERT_TRUE(std::holds_alternative<prepared_run>(*ran));
    EXPECT_EQ(std::get<prepared_run>(*ran).mode(), sandbox_mode::danger_full_access);
    EXPECT_EQ(std::get<prepared_run>(*ran).timeout(), exec.options().default_timeout);
    std::optional<run_record> result;
    exec.launch(std::get<prepared_run>(std::move(*ran)),
                [&result](run_record record) { result = std::move(record); });

    ASSERT_TRUE(std::holds_alternative<run_record>(*missing));
    const run_record& not_started = std::get<run_record>(*missing);
    EXPECT_EQ(not_started.outcome.kind, classify::outcome_kind::not_started);
    EXPECT_EQ(not_started.outcome.start_failure->stage, spawn_stage::resolve);
    EXPECT_EQ(not_started.timeout, exec.options().default_timeout);

    ASSERT_TRUE(std::holds_alternative<prepared_run>(*dropped));
    dropped.reset();
    io.run();
    ASSERT_TRUE(result);
    EXPECT_EQ(result->outcome.kind, classify::outcome_kind::exited);
    EXPECT_EQ(result->outcome.exit_code, 3);
    EXPECT_EQ(result->stdout_output.text, "hi\n");
    EXPECT_FALSE(fs::exists(marker)) << "a dropped prepared run started";
}

TEST(ExecutorProvider, ContractViolationsThrowBeforeAnythingRuns) {
    boost::asio::io_context io;
    executor exec(io.get_executor(), std::make_shared<counting_provider>());
    auto noop = [](run_record) {};
    test::temp_dir workspace;
    EXPECT_THROW(
        exec.async_run(request_for({}, sandbox_mode::danger_full_access, workspace.path()), noop),
        std::invalid_argument);
    EXPECT_THROW(
        exec.async_run(request_for({""}, sandbox_mode::danger_full_access, workspace.path()), noop),
        std::invalid_argument);
    EXPECT_THROW(
        exec.async_run(
            request_for({"true"}, sandbox_mode::danger_full_access, "relative/workspace"), noop),
        std::invalid_argument);
    auto zero = request_for({"true"}, sandbox_mode::danger_full_access, workspace.path());
    zero.timeout = 0ms;
    EXPECT_THROW(exec.async_run(std::move(zero), noop), std::invalid_argument);
    EXPECT_EQ(io.run(), 0U);
}

// A stdout tail of 0 bytes is refused with the other contract violations, before the sandbox is
// asked for anything (it once got as far as the collector, after confine() had set the run up).
TEST(ExecutorProvider, AZeroStdoutTailIsRefusedBeforeTheSandboxIsAsked) {
    boost::asio::io_context io;
    auto provider = std::make_shared<counting_provider>();
    executor exec(io.get_executor(), provider);
    test::temp_dir workspace;
    auto request = request_for({"true"}, sandbox_mode::read_only, workspace.path());
    request.stdout_max_bytes = 0;
    EXPECT_THROW(check_request(request), std::invalid_argument);
    EXPECT_THROW(exec.async_run(request, [](run_record) {}), std::invalid_argument);
    EXPECT_THROW((void)exec.prepare(request), std::invalid_argument);
    EXPECT_THROW((void)run(provider, request), std::invalid_argument);
    EXPECT_EQ(provider->calls.load(), 0);
    EXPECT_EQ(io.run(), 0U);

    request.stdout_max_bytes = 1;  // the smallest tail is a tail
    EXPECT_NO_THROW(check_request(request));
}

// A live-output callback that throws ends its run: run() returns the record, which says why,
// instead of the exception reaching std::terminate on the run's loop, and the command's process
// and its group are gone. Through an executor's run() and through the default provider's.
TEST(ExecutorCallbacks, AThrowingCallbackEndsTheRunAndRunReturnsItsRecord) {
    for (const bool default_provider : {false, true}) {
        SCOPED_TRACE(default_provider ? "run(request)" : "run(provider, request)");
        test::temp_dir workspace;
        const fs::path pid_file = workspace.path() / "pid";
        auto request = request_for(
            {"/bin/sh", "-c", "echo $$ > \"$0\"; printf x; exec sleep 30", pid_file.string()},
            sandbox_mode::danger_full_access, workspace.path());
        int calls = 0;
        request.on_stdout = [&calls](std::string_view) {
            ++calls;
            throw std::runtime_error("the host's callback failed");
        };
        executor_options options;
        options.spill = false;
        const run_record record = default_provider ? run(std::move(request), options)
                                                   : run(std::make_shared<counting_provider>(),
                                                         std::move(request), options);
        const auto pid = test::read_pid_file(pid_file);
        ASSERT_TRUE(pid);
        errno = 0;
        EXPECT_EQ(::kill(*pid, 0), -1);
        EXPECT_EQ(errno, ESRCH) << "the command outlived its record";
        errno = 0;
        EXPECT_EQ(::kill(-*pid, 0), -1);
        EXPECT_EQ(errno, ESRCH) << "the command's process group outlived its record";
        test::kill_if_alive(*pid);
        EXPECT_EQ(record.outcome.kind, outcome_kind::aborted);
        EXPECT_EQ(record.outcome.message,
                  "a callback of the caller's threw: the host's callback failed");
        EXPECT_EQ(record.outcome.signal, SIGTERM);
        EXPECT_EQ(record.stdout_output.text, "x");
        EXPECT_EQ(calls, 1);
    }
}

// --- the timeout ---------------------------------------------------------------------------------

TEST(ExecutorTimeout, DefaultsToDefaultTimeoutAndIsCappedAtMaxTimeout) {
    test::temp_dir workspace;
    executor_options options;
    options.default_timeout = 1500ms;
    options.max_timeout = 2000ms;
    options.spill = false;
    auto provider = std::make_shared<counting_provider>();
    auto quick = [&](std::optional<std::chrono::milliseconds> timeout) {
        auto request =
            request_for({child(), "exit", "0"}, sandbox_mode::danger_full_access, workspace.path());
        request.timeout = timeout;
        return run(provider, std::move(request), options);
    };
    EXPECT_EQ(quick(std::nullopt).timeout, 1500ms);
    EXPECT_EQ(quick(700ms).timeout, 700ms);
    EXPECT_EQ(quick(2000ms).timeout, 2000ms);
    EXPECT_EQ(quick(10min).timeout, 2000ms);
    EXPECT_EQ(to_json(quick(10min))["timeoutMs"], 2000);
}

TEST(ExecutorTimeout, CapIsEnforcedNotJustReported) {
    test::temp_dir workspace;
    executor_options options;
    options.max_timeout = 500ms;
    options.plan = kill_plan::standard(300ms);
    options.spill = false;
    auto request = request_for({child(), "sleep", "30000"}, sandbox_mode::danger_full_access,
                               workspace.path());
    request.timeout = 60s;
    const auto start = std::chrono::steady_clock::now();
    auto record = run(std::make_shared<counting_provider>(), std::move(request), options);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_EQ(record.outcome.kind, classify::outcome_kind::timed_out);
    EXPECT_EQ(record.timeout, 500ms);
    EXPECT_EQ(record.outcome.signal, SIGTERM);
    EXPECT_NE(render(record).find("[timed out after 500ms]"), std::string::npos) << render(record);
    EXPECT_NE(render(record).find("[killed by signal: SIGTERM]"), std::string::npos);
}

// --- many runs on one event loop -----------------------------------------------------------------

TEST(ExecutorConcurrency, TwoHundredRunsOnOneIoContext) {
    std::string why;
    auto bwrap = test::provider_for(sandbox::backend_choice::bwrap, why);
    if (!bwrap) CORDON_SKIP_OR_FAIL(why);

    // Measured outside the executor's lifetime: its event loop is its own. The process's cgroup
    // host, which the executor takes and leaves, is made first.
    std::optional<fs::path> cgroup_parent;
    if (auto shared = runtime::cgroup_host::for_this_process();
        auto* host = std::get_if<std::shared_ptr<runtime::cgroup_host>>(&shared)) {
        cgroup_parent = (*host)->directory().parent_path();
    }
    const std::size_t fds_before = test::count_open_fds();

    constexpr std::size_t total = 200;
    constexpr std::size_t bwrap_runs = 60;  // spread over the batch
    test::temp_dir workspace;
    test::temp_dir spill_root;
    executor_options options;
    options.spill_root = spill_root.path();
    options.default_timeout = 120s;

    auto io = std::make_unique<boost::asio::io_context>();
    auto exec = std::make_unique<executor>(io->get_executor(), bwrap, options);
    EXPECT_EQ(exec->cgroup_containment(), cgroup_parent.has_value());
    std::vector<std::optional<run_record>> results(total);
    std::vector<std::string> expected(total);
    std::vector<bool> confined(total);
    std::atomic<std::size_t> completed{0};
    for (std::size_t i = 0; i < total; ++i) {
        confined[i] = i % 10 < bwrap_runs * 10 / total;  // 3 of every 10: 60 in all
        // Every tenth run overflows the 64,000-byte tail, so spill files are made concurrently.
        const std::size_t repeat = i % 10 == 3 ? 9000 : 1;
        std::string token = "run-" + std::to_string(i) + "\n";
        expected[i].reserve(token.size() * repeat);
        for (std::size_t r = 0; r < repeat; ++r)
            expected[i] += token;
        auto request =
            request_for({child(), "cat"},
                        confined[i] ? sandbox_mode::read_only : sandbox_mode::danger_full_access,
                        workspace.path());
        request.stdin_data = expected[i];
        exec->async_run(std::move(request), [&results, &completed, i](run_record r) {
            results[i] = std::move(r);
            ++completed;
        });
    }
    const auto bwrap_count = std::count(confined.begin(), confined.end(), true);
    ASSERT_GE(bwrap_count, 50);

    const auto start = std::chrono::steady_clock::now();
    std::thread helper([&io] { io->run(); });
    io->run();
    helper.join();
    exec.reset();
    io.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 180s);
    ASSERT_EQ(completed.load(), total);

    std::size_t confined_ok = 0;
    for (std::size_t i = 0; i < total; ++i) {
        SCOPED_TRACE("run " + std::to_string(i));
        ASSERT_TRUE(results[i]);
        const run_record* record = &*results[i];
        ASSERT_NE(record->outcome.kind, classify::outcome_kind::runner_failed)
            << "sandbox error: " << record->outcome.message;
        ASSERT_NE(record->outcome.kind, classify::outcome_kind::not_started)
            << record->outcome.message;
        EXPECT_EQ(record->outcome.exit_code, 0) << record->stderr_output.text;
        EXPECT_EQ(record->stdout_output.bytes, expected[i].size());
        if (expected[i].size() > 64000) {
            EXPECT_TRUE(record->stdout_output.truncated);
            ASSERT_TRUE(record->stdout_output.spill_path);
            EXPECT_TRUE(test::read_file(*record->stdout_output.spill_path) == expected[i]);
            EXPECT_TRUE(expected[i].ends_with(record->stdout_output.text));
        } else {
            EXPECT_EQ(record->stdout_output.text, expected[i]);
        }
        if (confined[i]) {
            EXPECT_EQ(record->sandbox.mode, sandbox_mode::read_only);
            EXPECT_EQ(record->sandbox.backend, sandbox::backend_kind::bwrap);
            EXPECT_FALSE(record->sandbox.denied);
            if (record->outcome.exit_code == 0) ++confined_ok;
        } else {
            EXPECT_EQ(record->sandbox.mode, sandbox_mode::danger_full_access);
            EXPECT_FALSE(record->sandbox.backend);
        }
    }
    EXPECT_EQ(confined_ok, static_cast<std::size_t>(bwrap_count));
    EXPECT_TRUE(test::zombie_children().empty());
    EXPECT_EQ(test::count_open_fds(), fds_before) << "runs leaked fds in the parent";
    if (cgroup_parent) {
        // Every run's cgroup was removed. The executor's host was the process's, which outlives
        // it: the only host of this process, and empty once the kernel has freed the runs.
        auto shared = runtime::cgroup_host::for_this_process();
        ASSERT_TRUE(std::holds_alternative<std::shared_ptr<runtime::cgroup_host>>(shared));
        const auto& host = std::get<std::shared_ptr<runtime::cgroup_host>>(shared);
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (host->leftovers() > 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(10ms);
        EXPECT_EQ(host->leftovers(), 0U);
        const std::string prefix = "cordon-" + std::to_string(::getpid()) + "-";
        for (const auto& entry : fs::directory_iterator(*cgroup_parent)) {
            if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
            EXPECT_EQ(entry.path(), host->directory()) << "left behind: " << entry.path();
        }
        for (const auto& entry : fs::directory_iterator(host->directory())) {
            EXPECT_FALSE(entry.is_directory()) << "left behind: " << entry.path();
        }
    }
}

// --- the JSON record -----------------------------------------------------------------------------

std::set<std::string> keys_of(const nlohmann::json& object) {
    std::set<std::string> keys;
    for (const auto& [key, value] : object.items())
        keys.insert(key);
    return keys;
}

TEST(RecordJson, ShapeMatchesTheDesign) {
    run_record record;
    record.outcome.exit_code = 1;
    record.timeout = 120000ms;
    record.duration_ms = 3.9;
    record.stderr_output.text = "bash: line 1: /etc/x: Read-only file system\n";
    record.stderr_output.bytes = 45;
    record.sandbox.mode = sandbox_mode::read_only;
    record.sandbox.enforcement = sandbox::enforcement::full;
    record.sandbox.denied = true;
    record.sandbox.evidence = classify::denial_evidence{
        classify::denial_source::path, "/etc/x", "bash: line 1: /etc/x: Read-only file system"};
    record.sandbox.backend = sandbox::backend_kind::bwrap;
    record.sandbox.hidden_paths = {"/home/u/.ssh"};
    record.sandbox.quotas_per_run = true;
    record.sandbox.identity = sandbox::run_identity{1878982656, 1878982656, true, {}};
    record.sandbox.network = sandbox::network_facts{};
    record.sandbox.network->policy = sandbox::network_policy::deny;
    record.sandbox.network->level = sandbox::network_enforcement::full;
    auto json = to_json(record);

    EXPECT_EQ(keys_of(json), (std::set<std::string>{"outcome", "exitCode", "signal", "timedOut",
                                                    "aborted", "timeoutMs", "durationMs", "stdout",
                                                    "stderr", "sandbox", "limits", "tty"}));
    const std::set<std::string> stream_keys{"text", "truncated", "spillPath", "bytes"};
    EXPECT_EQ(keys_of(json["stdout"]), stream_keys);
    EXPECT_EQ(keys_of(json["stderr"]), stream_keys);
    EXPECT_EQ(keys_of(json["sandbox"]),
              (std::set<std::string>{"mode", "enforcement", "denied", "denial", "evidence",
                                     "backend", "identity", "policy", "network"}));
    EXPECT_EQ(keys_of(json["sandbox"]["identity"]),
              (std::set<std::string>{"uid", "gid", "reserved", "reason"}));
    EXPECT_EQ(
        keys_of(json["sandbox"]["network"]),
        (std::set<std::string>{"policy", "enforcement", "missing", "blocked", "blockedMore"}));
    EXPECT_EQ(keys_of(json["sandbox"]["policy"]),
              (std::set<std::string>{"writableRoots", "tmp", "protected", "judged", "hidden",
                                     "gaps", "quotas"}));

    const auto expected = nlohmann::json::parse(R"({
        "outcome": "exited", "exitCode": 1, "signal": null, "timedOut": false, "aborted": false, "timeoutMs": 120000,
        "durationMs": 3.9,
        "stdout": {"text": "", "truncated": false, "spillPath": null, "bytes": 0},
        "stderr": {"text": "bash: line 1: /etc/x: Read-only file system\n", "truncated": false,
                   "spillPath": null, "bytes": 45},
        "sandbox": {"mode": "read-only", "enforcement": "full", "denied": true, "denial": "file",
                    "evidence": {"by": "path", "path": "/etc/x",
                                 "line": "bash: line 1: /etc/x: Read-only file system"},
                    "backend": "bwrap",
                    "identity": {"uid": 1878982656, "gid": 1878982656, "reserved": true,
                                 "reason": null},
                    "policy": {"writableRoots": [], "tmp": null, "protected": [], "judged": null,
                               "hidden": ["/home/u/.ssh"], "gaps": [], "quotas": "run"},
                    "network": {"policy": "deny", "enforcement": "full", "missing": [],
                                "blocked": [], "blockedMore": 0}},
        "limits": {"maxProcesses": null, "maxMemoryBytes": null, "processLimitHit": false,
                   "memoryLimitHit": false, "socketLimitHit": false},
        "tty": null
    })");
    EXPECT_EQ(json, expected) << json.dump(2);
    EXPECT_TRUE(json["timeoutMs"].is_number_integer());
    EXPECT_TRUE(json["exitCode"].is_number_integer());
    EXPECT_TRUE(json["stdout"]["bytes"].is_number_unsigned());
}

// What the judgement of a workspace-write run took, as the record says it: each path with what it
// is, the action and where the original went; what dead cordons had left beside it.
TEST(RecordJson, TheJudgementOfWhatARunLeft) {
    run_record record;
    record.sandbox.mode = sandbox_mode::workspace_write;
    record.sandbox.enforcement = sandbox::enforcement::full;
    record.sandbox.denied = true;
    record.sandbox.judged = sandbox::judgement_report{
        "fanotify",
        "restored",
        {{"/w/sub/.git/hooks/pre-commit", "a git hook", sandbox::neutral_action::quarantined,
          "/q/w/sub/.git/hooks/pre-commit"},
         {"/w/sub/.git/config", "core.fsmonitor ...", sandbox::neutral_action::rewritten, ""}},
        std::nullopt,
        {{"/w/.envrc", "a protected name (.envrc)", sandbox::neutral_action::removed, ""}}};
    const auto json = to_json(record)["sandbox"]["policy"]["judged"];
    EXPECT_EQ(keys_of(json),
              (std::set<std::string>{"by", "kept", "neutralized", "failure", "abandoned"}));
    EXPECT_EQ(json["by"], "fanotify");
    EXPECT_EQ(json["kept"], "restored");
    EXPECT_TRUE(json["failure"].is_null());
    ASSERT_EQ(json["neutralized"].size(), 2U);
    EXPECT_EQ(keys_of(json["neutralized"][0]),
              (std::set<std::string>{"path", "what", "action", "keptAt"}));
    EXPECT_EQ(json["neutralized"][0]["action"], "quarantined");
    EXPECT_EQ(json["neutralized"][0]["keptAt"], "/q/w/sub/.git/hooks/pre-commit");
    EXPECT_EQ(json["neutralized"][1]["action"], "rewritten");
    EXPECT_TRUE(json["neutralized"][1]["keptAt"].is_null());
    ASSERT_EQ(json["abandoned"].size(), 1U);
    EXPECT_EQ(json["abandoned"][0]["path"], "/w/.envrc");
    EXPECT_EQ(json["abandoned"][0]["action"], "removed");
}

TEST(RecordJson, SignalNamesAndSpillPaths) {
    run_record record;
    record.outcome.signal = SIGTERM;
    record.outcome.kind = classify::outcome_kind::timed_out;
    record.timeout = 500ms;
    record.stdout_output.truncated = true;
    record.stdout_output.spill_path = "/var/tmp/cordon-spill-abc/1-stdout.log";
    record.stdout_output.bytes = 100000;
    record.sandbox.mode = sandbox_mode::workspace_write;
    record.sandbox.enforcement = sandbox::enforcement::partial;
    record.sandbox.backend = sandbox::backend_kind::landlock;
    auto json = to_json(record);
    EXPECT_EQ(json["outcome"], "timed-out");
    EXPECT_EQ(json["signal"], "SIGTERM");
    EXPECT_TRUE(json["exitCode"].is_null());
    EXPECT_EQ(json["timedOut"], true);
    EXPECT_EQ(json["stdout"]["spillPath"], "/var/tmp/cordon-spill-abc/1-stdout.log");
    EXPECT_EQ(json["stdout"]["truncated"], true);
    EXPECT_EQ(json["sandbox"]["mode"], "workspace-write");
    EXPECT_EQ(json["sandbox"]["enforcement"], "partial");
    EXPECT_EQ(json["sandbox"]["backend"], "landlock");
    // No network facts known: null, never a guess.
    EXPECT_TRUE(json["sandbox"]["network"].is_null());
}

TEST(RecordJson, RealSignalledRunSerialisesTheSignalName) {
    test::temp_dir workspace;
    auto record = run(std::make_shared<counting_provider>(),
                      request_for({child(), "kill-self", "15"}, sandbox_mode::danger_full_access,
                                  workspace.path()));
    auto json = to_json(record);
    EXPECT_EQ(json["outcome"], "signaled");
    EXPECT_EQ(json["signal"], "SIGTERM");
    // danger-full-access has the host's network, said plainly.
    EXPECT_EQ(
        json["sandbox"]["network"],
        nlohmann::json::parse(R"({"policy": "allow", "enforcement": "none", "missing": []})"));
    EXPECT_TRUE(json["exitCode"].is_null());
    EXPECT_EQ(json["timedOut"], false);
    EXPECT_EQ(json["aborted"], false);
    EXPECT_TRUE(json["durationMs"].is_number());
    EXPECT_GT(json["durationMs"].get<double>(), 0.0);
}

TEST(RecordJson, SandboxErrorShape) {
    sandbox::sandbox_unavailable_error error(sandbox_mode::read_only, "bwrap: setting up uid map");
    auto json = to_json(error);
    EXPECT_EQ(keys_of(json), (std::set<std::string>{"outcome", "error"}));
    EXPECT_EQ(json["outcome"], "runner-failed");
    EXPECT_EQ(keys_of(json["error"]),
              (std::set<std::string>{"name", "code", "message", "mode", "runnerFailure", "backend",
                                     "backends", "unenforced"}));
    EXPECT_TRUE(json["error"]["unenforced"].is_null());
    EXPECT_EQ(json["error"]["name"], "SandboxUnavailableError");
    EXPECT_EQ(json["error"]["code"], "SANDBOX_UNAVAILABLE");
    EXPECT_EQ(json["error"]["message"], error.what());
    EXPECT_EQ(json["error"]["mode"], "read-only");
    EXPECT_EQ(json["error"]["runnerFailure"], "bwrap: setting up uid map");
    EXPECT_EQ(json["error"]["backends"], nlohmann::json::array());
    // Which backend failed is known only once one was chosen and its runner ran.
    EXPECT_TRUE(json["error"]["backend"].is_null());
    const std::string message = json["error"]["message"];
    EXPECT_TRUE(message.ends_with(" Runner failure: bwrap: setting up uid map")) << message;

    // No usable backend: each one's reason, in the message and as data.
    sandbox::sandbox_unavailable_error none(
        sandbox_mode::workspace_write, std::nullopt,
        {{"bwrap", "bwrap not found in a root-owned directory on PATH"},
         {"landlock", "cordon-landlock: landlock is disabled on this kernel"}});
    auto unusable = to_json(none);
    EXPECT_TRUE(unusable["error"]["runnerFailure"].is_null());
    EXPECT_EQ(unusable["error"]["backends"], nlohmann::json::parse(R"([
        {"backend": "bwrap", "reason": "bwrap not found in a root-owned directory on PATH"},
        {"backend": "landlock", "reason": "cordon-landlock: landlock is disabled on this kernel"}
    ])"));
    EXPECT_TRUE(std::string(none.what())
                    .ends_with(" Unusable backends: bwrap: bwrap not found in a root-owned "
                               "directory on PATH; landlock: cordon-landlock: landlock is "
                               "disabled on this kernel."))
        << none.what();
}

// A run the sandbox could not run is a record like any other, and its error object is the one
// the thrown error gives (cordon confine --json): cordon run --json and the MCP job results
// print it.
TEST(RecordJson, ARunnerFailedRecordCarriesTheSandboxError) {
    run_record record = sandbox_unavailable_record(
        sandbox_mode::workspace_write,
        {"cordon-landlock: cannot apply the ruleset", sandbox::backend_kind::landlock, {}});
    record.timeout = 1000ms;
    const auto json = to_json(record);
    EXPECT_EQ(keys_of(json),
              (std::set<std::string>{"outcome", "exitCode", "signal", "timedOut", "aborted",
                                     "timeoutMs", "durationMs", "stdout", "stderr", "sandbox",
                                     "limits", "error", "tty"}));
    EXPECT_EQ(json["outcome"], "runner-failed");
    EXPECT_EQ(json["sandbox"]["runnerFailed"], true);
    EXPECT_EQ(json["sandbox"]["backend"], "landlock");
    EXPECT_EQ(json["sandbox"]["denied"], false);
    const sandbox::sandbox_unavailable_error error = sandbox_unavailable(record);
    EXPECT_EQ(error.failed_backend(), "landlock");
    EXPECT_EQ(json["error"], to_json(error)["error"]);
    EXPECT_EQ(json["error"]["backend"], "landlock");
    EXPECT_EQ(json["error"]["runnerFailure"], "cordon-landlock: cannot apply the ruleset");
    EXPECT_EQ(json["error"]["message"], error.what());
    EXPECT_EQ(render_markers(record), runner_failed_marker(sandbox_mode::workspace_write));

    // No backend could enforce the mode: no runner ran, and the marker says why instead.
    const run_record none = sandbox_unavailable_record(
        sandbox_mode::read_only, {std::nullopt, std::nullopt, {{"seatbelt", "not here"}}});
    const auto unusable = to_json(none);
    EXPECT_TRUE(unusable["error"]["runnerFailure"].is_null());
    EXPECT_TRUE(unusable["error"]["backend"].is_null());
    EXPECT_EQ(unusable["error"], to_json(sandbox_unavailable(none))["error"]);
    EXPECT_EQ(render_markers(none), "[sandbox unavailable: " + none.outcome.message + "]\n");
}

// Every string of the record, each holding a different kind of byte string that is not UTF-8:
// the record is written (it used to abort with nlohmann's type_error 316, or lose the bytes to
// U+FFFD in the output), it parses as strict JSON, and each string unescapes to its very bytes.
TEST(RecordJson, EveryStringFieldKeepsBytesThatAreNotUtf8) {
    const std::vector<std::string> planted = {"out \xff",
                                              "err \xe2\x82",
                                              "/spill/\xc0\xaf",
                                              "/root/\xed\xa0\x80",
                                              "/prot/\xfe",
                                              "/mask/\x80",
                                              "/hide/\xf5",
                                              "gap \xf4\x90\x80\x80",
                                              "msg \xc1\xbf",
                                              "runner \xe0\x80",
                                              "why \xff\xfe",
                                              std::string("nul \0 \xff", 7),
                                              "/spill2/\xf4\x8f\xbb\xbf" /* a literal U+10FEFF */};
    const auto collect = [](const nlohmann::json& value, std::set<std::string>& into,
                            const auto& self) -> void {
        if (value.is_string()) into.insert(value.get<std::string>());
        if (!value.is_structured()) return;
        for (const auto& element : value)
            self(element, into, self);
    };

    run_record ran;
    ran.stdout_output.text = planted[0];
    ran.stderr_output.text = planted[1];
    ran.stdout_output.spill_path = planted[2];
    ran.stderr_output.spill_path = planted[12];
    ran.sandbox.enforcement = sandbox::enforcement::partial;
    ran.sandbox.backend = sandbox::backend_kind::landlock;
    ran.sandbox.writable_roots = {planted[3]};
    ran.sandbox.protected_paths = {planted[4]};
    ran.sandbox.judged = sandbox::judgement_report{
        "scan",
        "restored",
        {{planted[5], planted[5], sandbox::neutral_action::quarantined, planted[5]}},
        {},
        {{planted[5], planted[5], sandbox::neutral_action::removed, ""}}};
    ran.sandbox.hidden_paths = {planted[6]};
    ran.sandbox.gaps = {planted[7]};
    run_record refused;
    refused.outcome.kind = classify::outcome_kind::not_started;
    refused.outcome.message = planted[8];
    run_record failed = sandbox_unavailable_record(
        sandbox_mode::read_only,
        {planted[9], sandbox::backend_kind::bwrap, {{"landlock", planted[10]}}});
    run_record lost;
    lost.outcome.message = planted[11];
    lost.outcome.kind = classify::outcome_kind::not_started;

    std::set<std::string> seen;
    for (const run_record* record : {&ran, &refused, &failed, &lost}) {
        std::string text;
        ASSERT_NO_THROW(text = dump(to_json(*record)));
        nlohmann::json back = nlohmann::json::parse(text);  // strict UTF-8
        base::unescape_json_strings(back);
        collect(back, seen, collect);
    }
    for (const std::string& bytes : planted) {
        EXPECT_TRUE(seen.contains(bytes)) << testing::PrintToString(bytes);
    }
    // The SANDBOX_UNAVAILABLE message carries the runner's line: whole, with its bytes.
    EXPECT_NE(dump(to_json(failed)).find("runner \xf4\x8f\xbb\xa0\xf4\x8f\xba\x80"),
              std::string::npos);
}

// --- rendering -----------------------------------------------------------------------------------

TEST(Render, TheDenialHintFollowsTheDenialMarker) {
    run_record record;
    record.sandbox.mode = sandbox_mode::workspace_write;
    record.sandbox.denied = true;
    record.outcome.exit_code = 1;
    EXPECT_EQ(render_markers(record, "[hint]\n"),
              "[sandbox: file access denied under workspace-write mode]\n"
              "[hint]\n"
              "[exit code: 1]\n");
    // No denial, no hint.
    record.sandbox.denied = false;
    EXPECT_EQ(render_markers(record, "[hint]\n"), "[exit code: 1]\n");
}

// A name a command chose cannot end a marker line or forge the next one.
TEST(Render, AJudgedNameStaysOnItsMarkersLine) {
    sandbox::judgement_report judged;
    judged.neutralized.push_back({"/w/a\n[sandbox: restored /w/.envrc]\\x", "a protected name",
                                  sandbox::neutral_action::quarantined, "/q/a\tb"});
    EXPECT_EQ(judgement_markers(judged),
              "[sandbox: quarantined /w/a\\x0a[sandbox: restored /w/.envrc]\\\\x after the run: "
              "a protected name; kept at /q/a\\x09b]\n");
}

// A denial of the network says so, and its record names it: an agent told "file access denied"
// would ask for a wider mode, which gives no network.
TEST(Render, ANetworkDenialIsNamedAsTheNetworks) {
    run_record record;
    record.sandbox.mode = sandbox_mode::workspace_write;
    record.sandbox.denied = true;
    record.sandbox.network_denied = true;
    record.outcome.exit_code = 6;
    EXPECT_EQ(render_markers(record, "[hint]\n"),
              "[sandbox: network access denied under workspace-write mode, network deny]\n"
              "[hint]\n"
              "[exit code: 6]\n");
    EXPECT_EQ(to_json(record)["sandbox"]["denial"], "network");
    record.sandbox.network_denied = false;
    EXPECT_EQ(to_json(record)["sandbox"]["denial"], "file");
    record.sandbox.denied = false;
    EXPECT_TRUE(to_json(record)["sandbox"]["denial"].is_null());
}

// Under proxy the marker names what was refused (three at most: the record has the rest), the
// hint asks for the first destination a domain would let through, and a proxy that stopped early
// says so.
TEST(Render, AProxyRefusalNamesTheDestinations) {
    run_record record;
    record.sandbox.mode = sandbox_mode::read_only;
    record.sandbox.denied = true;
    record.sandbox.network_denied = true;
    record.outcome.exit_code = 56;
    sandbox::network_facts network;
    network.policy = sandbox::network_policy::proxy;
    network.level = sandbox::network_enforcement::full;
    network.blocked = {{"gist.github.com:443", "in denied_domains", 1},
                       {"localhost:80", "resolves to a private address (127.0.0.1)", 1},
                       {"[2606:4700::1111]:443", "an address, not a name", 2, true}};
    record.sandbox.network = network;
    EXPECT_EQ(render_markers(record),
              "[sandbox: network access to gist.github.com:443 (in denied_domains), localhost:80 "
              "(resolves to a private address (127.0.0.1)), [2606:4700::1111]:443 (an address, "
              "not a name) blocked under read-only mode, network proxy]\n"
              "[exit code: 56]\n");
    // The askable one, exactly its host and port; never everything after a refusal that asking
    // cannot lift.
    EXPECT_EQ(network_retry_after(record.sandbox).destination,
              std::optional<std::string>("[2606:4700::1111]:443"));
    record.sandbox.network->blocked.push_back({"npmjs.org:443", "not in allowed_domains", 1, true});
    record.sandbox.network->proxy_failure = "the proxy's thread failed";
    EXPECT_EQ(
        render_markers(record),
        "[sandbox: network access to gist.github.com:443 (in denied_domains), localhost:80 "
        "(resolves to a private address (127.0.0.1)), [2606:4700::1111]:443 (an address, "
        "not a name) and others (the record lists them) blocked under read-only mode, network "
        "proxy]\n"
        "[sandbox: the network proxy stopped during the run (the proxy's thread failed): no "
        "connection went out through it afterwards]\n"
        "[exit code: 56]\n");
    // Nothing a domain would let through: no domain to ask for.
    record.sandbox.network->blocked.erase(record.sandbox.network->blocked.begin() + 2,
                                          record.sandbox.network->blocked.end());
    EXPECT_EQ(network_retry_after(record.sandbox).destination, std::nullopt);
    EXPECT_FALSE(network_retry_after(record.sandbox).whole_network);
    record.sandbox.network->blocked.push_back(
        {"registry.npmjs.org:443", "not in allowed_domains", 3, true});
    EXPECT_EQ(network_retry_after(record.sandbox).destination,
              std::optional<std::string>("registry.npmjs.org:443"));
    // Nothing refused by the proxy (the denial is the command's own words): the whole network
    // may be offered, unless the operator denies some of it.
    record.sandbox.network->blocked.clear();
    EXPECT_TRUE(network_retry_after(record.sandbox).whole_network);
    record.sandbox.network->denied_domains = {"gist.github.com"};
    EXPECT_FALSE(network_retry_after(record.sandbox).whole_network);
}

TEST(Render, MarkersInOrderDenialTimeoutSignal) {
    run_record record;
    record.sandbox.mode = sandbox_mode::read_only;
    record.sandbox.denied = true;
    record.outcome.kind = classify::outcome_kind::timed_out;
    record.timeout = 500ms;
    record.outcome.signal = SIGKILL;
    EXPECT_EQ(render_markers(record),
              "[sandbox: file access denied under read-only mode]\n"
              "[timed out after 500ms]\n"
              "[killed by signal: SIGKILL]\n");
}

TEST(Render, TheMemoryLimitIsNamedWithItsSize) {
    run_record record;
    record.outcome.kind = classify::outcome_kind::out_of_memory;
    record.outcome.signal = SIGKILL;
    record.limits.max_memory = 64 << 20;
    record.limits_hit.memory = true;
    EXPECT_EQ(render_markers(record),
              "[out of memory: the kernel's OOM killer ended the run (memory limit 64 MiB)]\n"
              "[killed by signal: SIGKILL]\n");
    EXPECT_EQ(to_json(record)["outcome"], "out-of-memory");
    EXPECT_EQ(to_json(record)["limits"]["memoryLimitHit"], true);
    EXPECT_FALSE(to_json(record).contains("error"));
    EXPECT_EQ(memory_size(std::uint64_t{2} << 30), "2 GiB");
    EXPECT_EQ(memory_size(1000000), "1000000 bytes");
}

TEST(Render, ExitCodeMarkerOnlyForNonZeroExit) {
    run_record record;
    record.outcome.exit_code = 3;
    record.sandbox.mode = sandbox_mode::workspace_write;
    record.sandbox.denied = true;
    EXPECT_EQ(render_markers(record),
              "[sandbox: file access denied under workspace-write mode]\n[exit code: 3]\n");
    record.sandbox.denied = false;
    EXPECT_EQ(render_markers(record), "[exit code: 3]\n");
    record.outcome.exit_code = 0;
    EXPECT_EQ(render_markers(record), "");
}

TEST(Render, OutputSectionsAndTruncationNotice) {
    run_record record;
    EXPECT_EQ(render_output(record), "(no output)\n");

    record.stdout_output.text = "partial";
    record.stderr_output.text = "warning\n";
    EXPECT_EQ(render_output(record), "partial\n[stderr]\nwarning\n");

    record.stdout_output.text = "tail of a long output\n";
    record.stdout_output.truncated = true;
    record.stdout_output.spill_path = "/var/tmp/cordon-spill-x/1-stdout.log";
    record.stderr_output = {};
    record.outcome.exit_code = 1;
    const std::string text = render(record);
    EXPECT_NE(text.find("[output truncated; full output: /var/tmp/cordon-spill-x/1-stdout.log]"),
              std::string::npos)
        << text;
    EXPECT_TRUE(text.starts_with("tail of a long output\n"));
    EXPECT_TRUE(text.ends_with("[exit code: 1]\n")) << text;
    // The output comes before the markers.
    EXPECT_LT(text.find("[output truncated"), text.find("[exit code: 1]"));

    record.stdout_output.spill_path.reset();
    EXPECT_NE(render(record).find("[output truncated; full output: (unavailable)]"),
              std::string::npos);
}

TEST(Render, RealTimedOutRunRendersTimeoutThenSignal) {
    test::temp_dir workspace;
    executor_options options;
    options.plan = kill_plan::standard(300ms);
    options.spill = false;
    auto request = request_for(test::ignoring_term({child(), "ignore-term", "30000"}),
                               sandbox_mode::danger_full_access, workspace.path());
    request.timeout = 500ms;
    auto record = run(std::make_shared<counting_provider>(), std::move(request), options);
    const std::string text = render(record);
    EXPECT_EQ(record.outcome.kind, classify::outcome_kind::timed_out);
    EXPECT_NE(text.find("[timed out after 500ms]\n[killed by signal: SIGKILL]\n"),
              std::string::npos)
        << text;
}

// ---- what executors share
// ------------------------------------------------------------------------

// Every executor of a process given no proxy serves the process's one (run() makes an executor
// per call, and must not make a proxy per call); one given its own keeps it. A forked child that
// uses cordon gets its own: the parent's may be mid-call in a thread the child does not have.
TEST(ExecutorHost, ExecutorsOfAProcessShareOneProxyUnlessGivenTheirOwn) {
    boost::asio::io_context io;
    const executor first(io.get_executor(), nullptr);
    const executor second(io.get_executor(), nullptr);
    ASSERT_NE(first.options().proxy, nullptr);
    EXPECT_EQ(first.options().proxy, second.options().proxy);
    executor_options own;
    own.proxy = std::make_shared<proxy::service>();
    const executor apart(io.get_executor(), nullptr, own);
    EXPECT_EQ(apart.options().proxy, own.proxy);

    const void* parents = first.options().proxy.get();
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        boost::asio::io_context child_io;
        const executor in_child(child_io.get_executor(), nullptr);
        ::_exit(in_child.options().proxy != nullptr && in_child.options().proxy.get() != parents
                    ? 0
                    : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child served the parent's";
}

}  // namespace
}  // namespace cordon::runtime
