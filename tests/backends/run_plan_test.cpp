// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One plan per run (provider::plan, local_plan.cpp): through the real executor on each real rung,
// a run reads the mount table once and plans its network walls once, in workspace-write and in
// read-only alike; a plan is confined once, by the provider that made it, and only while the
// workspace's path still names the directory the plan checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "cordon/executor.hpp"
#include "cordon/sandbox_error.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/local_provider.hpp"
#include "sandbox/mount_exposure.hpp"
#include "sandbox/network_plan.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class RunPlanTest : public ::testing::TestWithParam<test::real_backend> {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(test::choice_of(GetParam()), why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
        fs::create_directory(workspace_);
        fs::create_directory(denied_);
    }

    // `true` under `mode`, network deny, with a denied path that exists (so that read-only needs
    // the mount table too: the other names of a denied path); its record.
    runtime::run_record run_true(sandbox_mode mode) {
        runtime::run_request request;
        request.argv = {"/bin/true"};
        request.mode = mode;
        request.workspace_root = workspace_;
        request.rules = test::rules_for(GetParam());
        request.rules.deny_read.push_back(denied_);
        request.network.policy = network_policy::deny;
        request.timeout = 60s;
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        return test::run_or_throw(provider_, std::move(request), std::move(options));
    }

    [[nodiscard]] sandbox_policy workspace_write() const {
        return {sandbox_mode::workspace_write, workspace_};
    }

    test::temp_dir base_{"/var/tmp", "cordon-plan-test-"};
    fs::path workspace_ = base_ / "ws";
    fs::path denied_ = base_ / "denied";
    std::shared_ptr<local_provider> provider_;
};

TEST_P(RunPlanTest, AWorkspaceWriteRunReadsTheMountTableOnceAndPlansItsNetworkOnce) {
    const std::uint64_t reads = mount_table_reads();
    const std::uint64_t plans = network_plans();
    const runtime::run_record record = run_true(sandbox_mode::workspace_write);
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << record.outcome.message;
    EXPECT_EQ(mount_table_reads() - reads, 1U);
    EXPECT_EQ(network_plans() - plans, 1U);
}

TEST_P(RunPlanTest, AReadOnlyRunReadsTheMountTableOnceAndPlansItsNetworkOnce) {
    const std::uint64_t reads = mount_table_reads();
    const std::uint64_t plans = network_plans();
    const runtime::run_record record = run_true(sandbox_mode::read_only);
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << record.outcome.message;
    EXPECT_EQ(mount_table_reads() - reads, 1U);
    EXPECT_EQ(network_plans() - plans, 1U);
}

TEST_P(RunPlanTest, APlanIsConfinedOnceByTheProviderThatMadeIt) {
    const std::vector<std::string> argv{"/bin/true"};
    auto planned = provider_->plan(workspace_write(), workspace_, {});
    ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const run_plan>>(planned))
        << std::get<std::string>(planned);
    const run_plan& plan = *std::get<std::shared_ptr<const run_plan>>(planned);
    EXPECT_FALSE(provider_->confine_planned(plan, argv).argv.empty());
    EXPECT_THROW((void)provider_->confine_planned(plan, argv), std::logic_error);

    // Another provider's plan (here the interface's own, which keeps only the policy) is not this
    // provider's to confine.
    const run_plan foreign(workspace_write(), workspace_);
    EXPECT_THROW((void)provider_->confine_planned(foreign, argv), std::invalid_argument);
}

// What the plan checked is the workspace the runners get: a directory renamed into the
// workspace's place between the plan and its confinement is refused, as the request's fault.
TEST_P(RunPlanTest, AWorkspaceSwappedAfterThePlanIsRefusedWhenConfined) {
    auto planned = provider_->plan(workspace_write(), workspace_, {});
    ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const run_plan>>(planned))
        << std::get<std::string>(planned);
    fs::rename(workspace_, base_ / "checked");
    fs::create_directory(workspace_);
    const std::vector<std::string> argv{"/bin/true"};
    try {
        (void)provider_->confine_planned(*std::get<std::shared_ptr<const run_plan>>(planned), argv);
        ADD_FAILURE() << "a plan was confined after its workspace was swapped";
    } catch (const request_refused_error& error) {
        EXPECT_NE(error.reason().find("was moved while it was being checked"), std::string::npos)
            << error.reason();
    }
}

// A workspace the refusal refuses is the plan's answer, not an exception, and the same words as
// refusal()'s.
TEST_P(RunPlanTest, ARefusedWorkspaceIsThePlansAnswer) {
    fs::create_directory_symlink(workspace_, base_ / "link");
    const sandbox_policy policy{sandbox_mode::workspace_write, base_ / "link"};
    auto planned = provider_->plan(policy, base_ / "link", {});
    ASSERT_TRUE(std::holds_alternative<std::string>(planned));
    EXPECT_EQ(std::get<std::string>(planned), provider_->refusal(policy, {}).value_or(""));
    EXPECT_NE(std::get<std::string>(planned).find("is not the directory's own path"),
              std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(RealBackends, RunPlanTest, test::all_real_backends(),
                         test::real_backend_name);

}  // namespace
}  // namespace cordon::sandbox
