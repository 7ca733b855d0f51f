// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A real workspace-write run through the executor in a mount namespace without /proc: refused as
// the request's fault, with the documented reason, and the command never runs. The executor's
// cgroup host says why it has no cgroups there rather than inventing another reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <string>

#include "child_and_clock.hpp"
#include "cordon/executor.hpp"
#include "cordon/record_json.hpp"
#include "runtime/local_provider_factory.hpp"
#include "without_proc.hpp"

namespace cordon::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ExecutorWithoutProc, AWorkspaceWriteRunIsRefusedAndNeverRuns) {
    sandbox::local_provider_options options;
    options.launcher_path = test::launcher_path();
    auto provider = make_local_provider(options);
    if (!provider->selected()) GTEST_SKIP() << "no usable sandbox backend on this host";
    test::temp_dir workspace;
    const fs::path marker = workspace / "ran";
    const fs::path self_dir = fs::canonical("/proc/self/exe").parent_path();
    const std::string writer = test::child();  // found through /proc: before it goes
    auto answer = test::without_proc([&] {
        std::string out;
        for (const fs::path& root : {workspace.path(), self_dir}) {
            run_request request;
            request.argv = {writer, "write", marker.string(), "x"};
            request.mode = sandbox::sandbox_mode::workspace_write;
            request.workspace_root = root;
            const run_record record = run(provider, request);
            out += std::string(classify::to_string(record.outcome.kind)) + " | " +
                   to_json(record)["error"]["code"].get<std::string>() + " | " +
                   record.outcome.message + "\n";
        }
        boost::asio::io_context io;
        executor plain(io.get_executor(), provider, {});
        out += "cgroups: " + plain.cgroup_unavailable();
        return out;
    });
    if (auto* unavailable = std::get_if<test::proc_unavailable>(&answer)) {
        GTEST_SKIP() << "no private mount namespace: " << unavailable->reason;
    }
    const std::string refused =
        "not-started | REQUEST_REFUSED | refusing a workspace-write workspace: cannot read "
        "/proc/self/mountinfo: No such file or directory; cordon cannot tell which filesystems "
        "the command could write\n";
    EXPECT_EQ(
        std::get<std::string>(answer),
        refused + refused + "cgroups: cannot read /proc/self/mountinfo: No such file or directory");
    EXPECT_FALSE(fs::exists(marker)) << "the command ran";
}

}  // namespace
}  // namespace cordon::runtime
