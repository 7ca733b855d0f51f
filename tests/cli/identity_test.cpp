// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run --json` as root says who the command ran as (docs/sandbox.md, "Identity"): a uid of
// the range cordon reserves, or root with the reason when the workspace cannot be shown to it as
// its own (an idmapped mount needs a filesystem that supports one).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "real_backend.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/files.hpp"

namespace cordon::test::identity_tests {
namespace {

namespace fs = std::filesystem;

class RunIdentity : public ::testing::Test {
protected:
    void SetUp() override {
        if (::geteuid() != 0) {
            GTEST_SKIP() << "needs root (cordon's identity applies to cordon as root)";
        }
        fs::create_directories(workspace_);
    }

    temp_dir scratch_{"/var/tmp", "cordon-identity-"};
    fs::path workspace_ = scratch_ / "ws";
};

// The record names the uid the command had, which is not root's, and no reason.
TEST_F(RunIdentity, TheRecordNamesTheCommandsOwnUid) {
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            run_cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                        "workspace-write", "-c", "id -u"},
                       workspace_);
        const nlohmann::json record = nlohmann::json::parse(r.out);
        const nlohmann::json& identity = record["sandbox"]["identity"];
        ASSERT_TRUE(identity.is_object()) << r.out;
        EXPECT_EQ(identity["reserved"], true) << r.out;
        EXPECT_TRUE(identity["reason"].is_null()) << r.out;
        ASSERT_TRUE(identity["uid"].is_number_unsigned()) << r.out;
        EXPECT_NE(identity["uid"].get<unsigned>(), 0U) << r.out;
        EXPECT_NE(identity["gid"].get<unsigned>(), 0U) << r.out;
        EXPECT_EQ(record["stdout"]["text"], std::to_string(identity["uid"].get<unsigned>()) + "\n")
            << r.out;
    }
}

// ramfs takes no idmapping (it lacks FS_ALLOW_IDMAP): a workspace there cannot be shown to a uid
// of the range as its owner's. The run still works, as root as before, and the record says so
// and why. The ramfs is mounted in a mount namespace of the cordon's own, gone with it.
TEST_F(RunIdentity, AWorkspaceThatCannotBeIdmappedRunsAsRootAndTheRecordSaysWhy) {
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            run_program({"unshare", "-m", "--propagation", "private", "--", "sh", "-c",
                         "mount -t ramfs none \"$1\" && cd \"$1\" && shift && exec \"$@\"", "sh",
                         workspace_.string(), cordon_path().string(), "run", "--json", "--backend",
                         std::string(backend_flag(path)), "--mode", "workspace-write", "-c",
                         "echo made > made && cat made && id -u"},
                        workspace_);
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "made\n0\n") << r.out;
        const nlohmann::json& identity = record["sandbox"]["identity"];
        ASSERT_TRUE(identity.is_object()) << r.out;
        EXPECT_EQ(identity["uid"], 0) << r.out;
        EXPECT_EQ(identity["gid"], 0) << r.out;
        EXPECT_EQ(identity["reserved"], false) << r.out;
        ASSERT_TRUE(identity["reason"].is_string()) << r.out;
        EXPECT_NE(identity["reason"].get<std::string>().find("idmap"), std::string::npos) << r.out;
        EXPECT_NE(identity["reason"].get<std::string>().find(workspace_.string()),
                  std::string::npos)
            << r.out;
    }
}

// cordon run by a user who is not root: nothing changes. The command runs as that user (the record
// says so, reserved false and no reason), and what it makes in the workspace is the user's. The
// launcher builds its read rules as that user, who may not list a directory of root's holding a
// denied path: nothing beneath it is granted, and the run goes on (it failed as a runner failure,
// "cannot open rule path").
TEST_F(RunIdentity, CordonRunByAnotherUserRunsTheCommandAsThatUser) {
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) FAIL() << "setpriv is missing";
    // Somewhere the user can reach: a directory of its own under one anyone may enter.
    const fs::path base = scratch_ / "nobody";
    fs::create_directories(base / "home");
    fs::create_directories(base / "ws");
    fs::permissions(scratch_.path(), fs::perms::owner_all | fs::perms::others_exec);
    for (const fs::path& own : {base, base / "home", base / "ws"}) {
        ASSERT_EQ(::chown(own.c_str(), 65534, 65534), 0) << std::strerror(errno);
    }
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            run_program({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                         "HOME=" + (base / "home").string(), cordon_path().string(), "run",
                         "--json", "--backend", std::string(backend_flag(path)), "--mode",
                         "workspace-write", "-c", "id -u && echo made > made"},
                        base / "ws");
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "65534\n") << r.out;
        const nlohmann::json& identity = record["sandbox"]["identity"];
        ASSERT_TRUE(identity.is_object()) << r.out;
        EXPECT_EQ(identity["uid"], 65534) << r.out;
        EXPECT_EQ(identity["reserved"], false) << r.out;
        EXPECT_TRUE(identity["reason"].is_null()) << r.out;
        struct stat st {};
        ASSERT_EQ(::stat((base / "ws" / "made").c_str(), &st), 0) << r.out;
        EXPECT_EQ(st.st_uid, 65534U);
        fs::remove(base / "ws" / "made");
    }
}

}  // namespace
}  // namespace cordon::test::identity_tests
