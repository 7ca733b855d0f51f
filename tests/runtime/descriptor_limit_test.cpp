// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The descriptor limit a program raises for itself and gives back to its commands
// (cordon/limits.hpp, raise_descriptor_limit): through the one spawn path, under both spawn
// methods. What a process found is remembered for its life, and the test leaves the soft limit
// raised, as a program that called it would be: under ctest the suite has a process of its own.
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cordon/limits.hpp"
#include "runtime/process.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;

process_spec limit_spec(std::vector<std::string> argv, spawn_method method) {
    process_spec spec;
    spec.argv = std::move(argv);
    spec.env = test::child_env();
    spec.cwd = "/";
    spec.method = method;
    spec.timeout = 30s;
    spec.plan = kill_plan::standard(500ms);
    return spec;
}

class DescriptorLimit : public ::testing::TestWithParam<spawn_method> {
protected:
    void SetUp() override { CORDON_SKIP_VFORK_UNDER_TSAN(GetParam()); }
};

// The program raises its soft limit to the hard one; a command it starts sees the soft limit it
// was started with, the hard one unchanged. Without the raise nothing would differ, so the test
// starts from a soft limit below the hard one.
TEST_P(DescriptorLimit, ACommandGetsTheSoftLimitTheProgramWasStartedWith) {
    rlimit before{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
    if (before.rlim_max < 400) GTEST_SKIP() << "a hard descriptor limit below 400";
    const auto found = commands_descriptor_limit();
    if (!found) {
        // The first test of the process: start from 300, as a shell's `ulimit -Sn 300` would.
        rlimit lowered = before;
        lowered.rlim_cur = 300;
        ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
        EXPECT_EQ(raise_descriptor_limit(), before.rlim_max);
    }
    const std::uint64_t started_with = commands_descriptor_limit().value_or(0);
    ASSERT_EQ(started_with, found.value_or(300));
    rlimit now{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
    EXPECT_EQ(now.rlim_cur, now.rlim_max);
    EXPECT_EQ(raise_descriptor_limit(), now.rlim_max);  // again: the finding stands
    EXPECT_EQ(commands_descriptor_limit(), started_with);

    const auto outcome =
        run_process(limit_spec({"/bin/sh", "-c", "ulimit -Sn; ulimit -Hn"}, GetParam()));
    ASSERT_FALSE(outcome.spawn_failure);
    EXPECT_EQ(outcome.stdout_output.text,
              std::to_string(started_with) + "\n" + std::to_string(now.rlim_max) + "\n");
}

INSTANTIATE_TEST_SUITE_P(Methods, DescriptorLimit,
                         ::testing::Values(spawn_method::vfork, spawn_method::fork),
                         [](const auto& param_info) {
                             return test::method_name(param_info.param);
                         });

}  // namespace
}  // namespace cordon::runtime
