// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The keys no list names, end to end with the real runners (bwrap, and the Landlock rung on both
// of its paths): a private key or a service account key left anywhere in the home
// (~/work/old/deploy_key, ~/Downloads/gcp-sa.json) is unreadable to a confined command, found by
// its content (sandbox/secret_scan.hpp), while a key inside the run's own workspace (a test
// fixture) stays readable to it, in both confined modes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "cordon/executor.hpp"
#include "cordon/policy.hpp"
#include "cordon/sandbox_error.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::sandbox::secret_scan_tests {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto generous = std::chrono::milliseconds(60'000);

const std::string key_body = std::string(64, 'K');

std::string key(std::string_view label) {
    return "-----BEGIN " + std::string(label) + "-----\n" + key_body + "\n-----END " +
           std::string(label) + "-----\n";
}

class ContentScan : public ::testing::TestWithParam<test::real_backend> {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(test::choice_of(GetParam()), why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
        put(home_ / "work/old/deploy_key", key("OPENSSH PRIVATE KEY"));
        put(home_ / "Downloads/gcp-sa.json",
            R"({"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n)" +
                key_body + R"(\n-----END PRIVATE KEY-----\n"})");
        put(workspace_ / "test/fixture.pem", key("RSA PRIVATE KEY"));
    }

    static void put(const fs::path& path, const std::string& text) {
        fs::create_directories(path.parent_path());
        test::write_file(path, text);
    }

    std::optional<runtime::run_record> run(const std::string& script, sandbox_mode mode) {
        runtime::run_request request;
        request.argv = {"/bin/bash", "-c", script};
        request.mode = mode;
        request.workspace_root = workspace_;
        request.timeout = generous;
        request.env = {{"HOME", home_.string()}};
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        try {
            return test::run_or_throw(provider_, std::move(request), std::move(options));
        } catch (const sandbox_unavailable_error& error) {
            refused_ = error.what();
            return std::nullopt;
        }
    }

    test::temp_dir base_{"/var/tmp", "cordon-content-scan-"};
    fs::path home_ = base_ / "home";
    fs::path workspace_ = base_ / "home/src/project";
    std::shared_ptr<sandbox::local_provider> provider_;
    std::string refused_;
};

TEST_P(ContentScan, KeysAnywhereInTheHomeAreUnreadableThoseOfTheWorkspaceAreNot) {
    // The stores are those of the home cordon runs with.
    const test::scoped_env home("HOME", home_.string());
    for (sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        const auto record =
            run("cat ~/work/old/deploy_key; echo \"deploy=$?\"; cat ~/Downloads/gcp-sa.json; "
                "echo \"gcp=$?\"; cat test/fixture.pem; echo \"fixture=$?\"; ls ~/work/old",
                mode);
        ASSERT_TRUE(record) << to_string(mode) << ": refused: " << refused_;
        const std::string& out = record->stdout_output.text;
        EXPECT_THAT(out, HasSubstr("deploy=1")) << to_string(mode) << "\n" << out;
        EXPECT_THAT(out, HasSubstr("gcp=1")) << to_string(mode) << "\n" << out;
        EXPECT_THAT(out, HasSubstr("fixture=0")) << to_string(mode) << "\n" << out;
        EXPECT_THAT(out, HasSubstr("-----BEGIN RSA PRIVATE KEY-----")) << to_string(mode);
        EXPECT_THAT(out, Not(HasSubstr("OPENSSH PRIVATE KEY"))) << to_string(mode);
        EXPECT_THAT(out, Not(HasSubstr("service_account"))) << to_string(mode);
        // The directory holding the key is still listed: the file alone is hidden.
        EXPECT_THAT(out, HasSubstr("deploy_key\n")) << to_string(mode);
        EXPECT_THAT(record->stderr_output.text, HasSubstr("Permission denied")) << to_string(mode);
    }
    // On the host, nothing was changed.
    EXPECT_EQ(test::read_file(home_ / "work/old/deploy_key"), key("OPENSSH PRIVATE KEY"));
}

// More keys than a run may deny, where no directory below the home holds them together (each at
// the top of the home, or alone in its directory): those the run leaves readable are exactly
// those its record names.
TEST_P(ContentScan, TheKeysARunCannotHideAreNamedInItsRecord) {
    const test::scoped_env home("HOME", home_.string());
    constexpr int keys = 60;
    for (int i = 0; i < keys; ++i) {
        put(home_ / ("key-" + std::to_string(100 + i) + ".pem"), key("EC PRIVATE KEY"));
    }
    const auto record =
        run("for f in ~/key-*.pem ~/work/old/deploy_key ~/Downloads/gcp-sa.json; do cat \"$f\" "
            ">/dev/null 2>&1 && echo \"read $f\"; done; true",
            sandbox_mode::read_only);
    ASSERT_TRUE(record) << refused_;
    std::size_t read = 0;
    for (std::size_t at = 0;
         (at = record->stdout_output.text.find("read ", at)) != std::string::npos; ++at)
        ++read;
    std::optional<std::size_t> named;
    std::string first;
    for (const std::string& gap : record->sandbox.gaps) {
        if (gap.find("to hold a private key or a token stay readable") == std::string::npos)
            continue;
        named = std::stoul(gap);
        const std::size_t list = gap.find(": /");
        if (list != std::string::npos) first = gap.substr(list + 2, gap.find(',', list) - list - 2);
    }
    ASSERT_TRUE(named) << record->stdout_output.text;
    EXPECT_EQ(read, *named) << record->stdout_output.text;
    EXPECT_GT(read, 0U);
    EXPECT_LT(read, static_cast<std::size_t>(keys)) << "the budget's keys are hidden";
    // The paths it lists are the ones read.
    EXPECT_THAT(record->stdout_output.text, HasSubstr("read " + first + "\n"));
    EXPECT_EQ(record->sandbox.enforcement, enforcement::partial);
}

INSTANTIATE_TEST_SUITE_P(Backends, ContentScan, test::all_real_backends(), test::real_backend_name);

}  // namespace
}  // namespace cordon::sandbox::secret_scan_tests
