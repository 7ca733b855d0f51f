// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The library in a host that ignores SIGCHLD (docs/execution.md, "Signals"). The library never
// touches dispositions, and the kernel then reaps what it spawns (whatever the spawn's exit
// signal, once the child has exec'd: runtime/process.cpp): it must not lie about what it did not
// see. A run whose status was taken says its status is unknown, never a made-up one, and a probe
// whose status was taken decides no verdict and caches none: the run fails closed, saying why
// (sandbox/probe.cpp). The `cordon` program resets SIGCHLD at start (tests/cli).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>

#include "classify/classify.hpp"
#include "cordon/local_provider.hpp"
#include "real_backend.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/process.hpp"
#include "runtime_test_util.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"
#include "support/files.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class SigchldIgnored : public ::testing::Test {
protected:
    void SetUp() override {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &previous_), 0);
    }
    void TearDown() override { ::sigaction(SIGCHLD, &previous_, nullptr); }

private:
    struct sigaction previous_ {};
};

TEST_F(SigchldIgnored, ARunWhoseStatusWasTakenSaysItIsUnknown) {
    const runtime::process_outcome exited =
        runtime::run_process(child_spec({test_child_path().string(), "exit", "7"}));
    EXPECT_FALSE(exited.spawn_failure);
    EXPECT_FALSE(exited.exit_code || exited.signal) << "a status nobody saw";
    const classify::run_outcome judged = classify::decide(exited, {}).outcome;
    EXPECT_EQ(judged.kind, classify::outcome_kind::exited);
    EXPECT_FALSE(judged.exit_code);
    EXPECT_NE(judged.message.find("exit status was lost"), std::string::npos) << judged.message;
}

class SigchldIgnoredProbe : public SigchldIgnored,
                            public ::testing::WithParamInterface<real_backend> {};

// A real probe of each rung, with an empty verdict cache: no verdict (neither "unusable" nor
// "usable without the Landlock wall"), nothing cached, and confine() fails closed saying why.
TEST_P(SigchldIgnoredProbe, DecidesNoVerdictAndCachesNone) {
    temp_dir verdicts;
    temp_dir workspace;
    sandbox::local_provider_options options;
    options.choice = choice_of(GetParam());
    options.launcher_path = launcher_path();
    options.probe_timeout = 60s;
    options.verdict_directory = verdicts / "cache";
    auto provider = runtime::make_local_provider(std::move(options));
    EXPECT_FALSE(provider->selected());
    EXPECT_FALSE(fs::exists(verdict_file_in(verdicts / "cache", backend_flag(GetParam()))));
    for (const sandbox::rung_report& rung : provider->probe_all()) {
        EXPECT_EQ(rung.state, sandbox::rung_state::not_probed) << rung.reason;
        EXPECT_TRUE(rung.reason.starts_with("no verdict: ")) << rung.reason;
    }
    try {
        (void)provider->confine(std::vector<std::string>{"/bin/true"},
                                {sandbox::sandbox_mode::read_only, workspace.path()},
                                workspace.path());
        ADD_FAILURE() << "confine() ran without a verdict";
    } catch (const sandbox::sandbox_unavailable_error& error) {
        EXPECT_NE(std::string(error.what()).find("no verdict: "), std::string::npos)
            << error.what();
    }
}

INSTANTIATE_TEST_SUITE_P(Rungs, SigchldIgnoredProbe,
                         ::testing::Values(real_backend::bwrap, real_backend::landlock),
                         real_backend_name);

// The class, whatever loses the status: a probe that proved nothing is no verdict. The rung is
// neither unusable nor usable, the run fails closed saying why, nothing is cached, and the next
// call probes again.
TEST(LostProbeStatus, IsNoVerdictAndIsNotCached) {
    for (const real_backend backend : {real_backend::bwrap, real_backend::landlock}) {
        SCOPED_TRACE(to_string(backend));
        temp_dir verdicts;
        temp_dir workspace;
        sandbox::local_provider_options options;
        options.choice = choice_of(backend);
        options.launcher_path = launcher_path();
        options.verdict_directory = verdicts / "cache";
        std::atomic<int> probes{0};
        std::atomic<bool> lose{true};
        options.run_probe = [&](const sandbox::confined_argv& wrapped, std::chrono::milliseconds) {
            ++probes;
            sandbox::probe_run_result result;
            if (wrapped.argv.back() == "--probe") {
                result.abi = sandbox::landlock::query_abi();
            } else if (lose) {
                // The runs of a rung's profiles (the launcher's --probe answered).
                result.status_lost = true;
                result.failure = "the exit status was lost: another process reaped the command";
            }
            return result;
        };
        sandbox::local_provider provider(std::move(options));
        EXPECT_FALSE(provider.selected());
        EXPECT_FALSE(fs::exists(verdict_file_in(verdicts / "cache", backend_flag(backend))));
        try {
            (void)provider.confine(std::vector<std::string>{"/bin/true"},
                                   {sandbox::sandbox_mode::read_only, workspace.path()},
                                   workspace.path());
            ADD_FAILURE() << "confine() ran without a verdict";
        } catch (const sandbox::sandbox_unavailable_error& error) {
            EXPECT_NE(std::string(error.what()).find("no verdict: the exit status was lost"),
                      std::string::npos)
                << error.what();
        }
        // The next call probes again, and an answer is a verdict.
        lose = false;
        const int before = probes;
        const auto rung = provider.selected();
        EXPECT_GT(probes, before);
        ASSERT_TRUE(rung);
        EXPECT_EQ(rung->state, sandbox::rung_state::usable);
        EXPECT_TRUE(fs::exists(verdict_file_in(verdicts / "cache", backend_flag(backend))));
    }
}

}  // namespace
}  // namespace cordon::test
