// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon as `cmake --install` lays it out, in a prefix of the test's own: cordon in bin/, its
// launcher in libexec/cordon/ (sandbox/runner_path.hpp), found relative to cordon wherever the
// prefix lies, refused when it could have been changed, and protected from workspace-write runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "base/json_text.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

class InstalledLayout : public ::testing::Test {
protected:
    InstalledLayout() {
        fs::create_directories(prefix_ / "bin");
        fs::create_directories(launcher_.parent_path());
        fs::create_directories(workspace_);
        fs::copy_file(cordon_path(), cordon_);
        fs::copy_file(launcher_path(), launcher_);
    }

    // The installed cordon with `args`, in the workspace.
    [[nodiscard]] cli_result run(const std::vector<std::string>& args) const {
        std::vector<std::string> argv{cordon_.string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_program(std::move(argv), workspace_);
    }

    temp_dir scratch_{"/var/tmp", "cordon-install-test-"};
    fs::path prefix_ = scratch_.path() / "prefix";
    fs::path cordon_ = prefix_ / "bin" / "cordon";
    fs::path launcher_ =
        (prefix_ / "bin" / CORDON_LAUNCHER_RELATIVE_DIR / "cordon-landlock").lexically_normal();
    fs::path workspace_ = scratch_.path() / "ws";
};

TEST_F(InstalledLayout, CordonFindsItsLauncherInLibexecAndConfines) {
    const cli_result probe = run({"probe", "--json"});
    ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
    const nlohmann::json report = nlohmann::json::parse(probe.out);
    bool landlock = false;
    for (const auto& rung : report["rungs"]) {
        if (rung.value("backend", "") != "landlock") continue;
        landlock = true;
        EXPECT_EQ(rung.value("runner", ""), launcher_.string()) << base::dump_json(rung);
    }
    EXPECT_TRUE(landlock) << probe.out;

    const cli_result ok = run({"run", "-c", "echo ok"});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(ok.out, "ok\n");
}

// The launcher's directory holds what runs unconfined later, although cordon is not in it.
TEST_F(InstalledLayout, AWorkspaceHoldingTheLaunchersDirectoryIsRefused) {
    const fs::path holder = launcher_.parent_path().parent_path();
    const fs::path marker = holder / "marker";
    for (const char* backend : {"bwrap", "landlock"}) {
        SCOPED_TRACE(backend);
        const cli_result r =
            run({"run", "--backend", backend, "--mode", "workspace-write", "--workspace",
                 holder.string(), "-c", "touch " + marker.string()});
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find(launcher_.string() + " lies inside " + holder.string()),
                  std::string::npos)
            << r.err;
        EXPECT_FALSE(fs::exists(marker));
    }
}

// A launcher someone else could have written is named, and nothing runs: not the build tree's
// launcher, not the one configured at build time.
TEST_F(InstalledLayout, ALauncherOthersCouldWriteIsRefusedAndNamed) {
    fs::permissions(launcher_.parent_path(), fs::perms::group_write, fs::perm_options::add);
    const cli_result probe = run({"probe", "--json"});
    EXPECT_NE(probe.exit_code, 0) << probe.out;
    const std::string why = "cordon-landlock at " + launcher_.string() +
                            " is refused: " + launcher_.parent_path().string() +
                            " is writable by group or others";
    EXPECT_NE(probe.out.find(why), std::string::npos) << probe.out;

    const cli_result r = run({"run", "-c", "echo ran"});
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;

    // Made private again, the same launcher is taken: the verdict shared while it was refused
    // does not outlive the refusal.
    fs::permissions(launcher_.parent_path(), fs::perms::group_write, fs::perm_options::remove);
    const cli_result again = run({"run", "-c", "echo ran"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, "ran\n");
}

}  // namespace
}  // namespace cordon::test
