// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A denial is recorded whatever language the program uses (classify/file_denial.hpp): real
// programs refused by the real walls, on bwrap and on both paths of the Landlock rung. Each class
// once per runtime that words it its own way: Python without a writable temporary directory,
// SQLite writing a database it could only open read-only, Python and Node writing a denied read,
// the git directory moved away (bwrap's mount point), git writing its protected configuration.
// And the other side: "Permission denied" about a file of the workspace, which the walls let the
// run write, is the host's answer and no denial.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cordon/executor.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::sandbox::denial_languages_tests {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using strings = std::vector<std::string>;

constexpr auto generous = std::chrono::milliseconds(60'000);

std::string describe(const runtime::run_record& record) {
    std::ostringstream out;
    out << "exit="
        << (record.outcome.exit_code ? std::to_string(*record.outcome.exit_code) : "none")
        << " denied=" << record.sandbox.denied;
    if (record.sandbox.evidence) {
        out << " by=" << classify::to_string(record.sandbox.evidence->by)
            << " path=" << record.sandbox.evidence->path;
    }
    out << "\nstderr: " << record.stderr_output.text;
    if (!record.outcome.started()) out << "\nnot started: " << record.outcome.message;
    return out.str();
}

// Runs `script` with bash in `dir` on the host, outside any sandbox; its exit code.
int on_host(const fs::path& dir, const std::string& script) {
    const std::string command = "cd '" + dir.string() + "' && " + script + " >/dev/null 2>&1";
    return std::system(command.c_str());
}

class DenialLanguages : public ::testing::TestWithParam<test::real_backend> {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(test::choice_of(GetParam()), why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
        bwrap_ = provider_->selected()->kind == backend_kind::bwrap;
        fs::create_directories(workspace_);
        fs::create_directories(home_);
        test::write_file(secret_, "token\n");
    }

    // The request: a home of the test's own, and a denied read beside the workspace.
    [[nodiscard]] runtime::run_request request(strings argv, sandbox_mode mode) const {
        runtime::run_request out;
        out.argv = std::move(argv);
        out.mode = mode;
        out.workspace_root = workspace_;
        out.timeout = generous;
        out.rules.deny_credential_stores = false;
        out.rules.deny_read = {secret_};
        out.env = {{"HOME", home_.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
        return out;
    }

    runtime::run_record run(strings argv, sandbox_mode mode) {
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        return test::run_or_throw(provider_, request(std::move(argv), mode), std::move(options));
    }

    // A denial that the path proves: the record names `path`, and the line it was on.
    static void expect_denied_at(const runtime::run_record& record, const fs::path& path,
                                 std::string_view words) {
        ASSERT_TRUE(record.outcome.exit_code.has_value()) << describe(record);
        EXPECT_NE(*record.outcome.exit_code, 0) << describe(record);
        EXPECT_TRUE(record.sandbox.denied) << describe(record);
        ASSERT_TRUE(record.sandbox.evidence) << describe(record);
        EXPECT_EQ(record.sandbox.evidence->by, classify::denial_source::path) << describe(record);
        EXPECT_EQ(record.sandbox.evidence->path, path.string()) << describe(record);
        EXPECT_THAT(record.sandbox.evidence->line, HasSubstr(std::string(words)));
    }

    test::temp_dir base_{"/var/tmp", "cordon-denial-languages-"};
    fs::path workspace_ = base_ / "ws";
    fs::path home_ = base_ / "home";
    fs::path secret_ = base_ / "secret.env";
    std::shared_ptr<local_provider> provider_;
    bool bwrap_ = true;
};

TEST_P(DenialLanguages, PythonWithoutAWritableTemporaryDirectory) {
    // Read-only: not one of the places tempfile tries takes a file; it raises ENOENT, in words of
    // its own, and names them.
    const auto record =
        run({"python3", "-c", "import tempfile; tempfile.mkstemp()"}, sandbox_mode::read_only);
    ASSERT_TRUE(record.sandbox.evidence) << describe(record);
    EXPECT_THAT(record.sandbox.evidence->line, HasSubstr("No usable temporary directory"));
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
    EXPECT_EQ(record.sandbox.evidence->by, classify::denial_source::path);
}

TEST_P(DenialLanguages, SqliteWritingADatabaseItCouldOnlyOpenReadOnly) {
    const std::string create =
        "import sqlite3; c = sqlite3.connect('db.sqlite'); c.execute('create table t(x)'); "
        "c.commit()";
    ASSERT_EQ(on_host(workspace_, "python3 -c \"" + create + "\""), 0);
    const std::string before = test::read_file(workspace_ / "db.sqlite");
    // SQLite falls back to a read-only open and says so only at the first write, naming no path:
    // the dialect, a heuristic.
    const auto record = run({"python3", "-c",
                             "import sqlite3; c = sqlite3.connect('db.sqlite'); "
                             "c.execute('insert into t values (1)'); c.commit()"},
                            sandbox_mode::read_only);
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
    ASSERT_TRUE(record.sandbox.evidence) << describe(record);
    EXPECT_EQ(record.sandbox.evidence->by, classify::denial_source::dialect);
    EXPECT_THAT(record.sandbox.evidence->line, HasSubstr("attempt to write a readonly database"));
    EXPECT_EQ(test::read_file(workspace_ / "db.sqlite"), before);
}

TEST_P(DenialLanguages, PythonAndNodeWritingADeniedRead) {
    const strings python = {"python3", "-c", "open('" + secret_.string() + "', 'w').write('x')"};
    const strings node = {"node", "-e",
                          "require('fs').writeFileSync('" + secret_.string() + "', 'x')"};
    for (const strings& argv : {python, node}) {
        SCOPED_TRACE(argv.front());
        // bwrap answers EROFS (a read-only empty file over it), the Landlock rung EACCES; or
        // EROFS too where the file lies in a tree that cordon as root shows the run read-only
        // (here the test's private directory on the way to the workspace: docs/sandbox.md,
        // "Identity").
        const auto record = run(argv, sandbox_mode::workspace_write);
        const bool mapped = record.sandbox.identity && record.sandbox.identity->reserved;
        if (::geteuid() == 0) {
            EXPECT_TRUE(mapped) << describe(record);
        }
        expect_denied_at(record, secret_,
                         bwrap_ || mapped ? "ead-only file system" : "ermission denied");
        EXPECT_EQ(test::read_file(secret_), "token\n");
    }
}

TEST_P(DenialLanguages, MovingTheGitDirectoryAway) {
    ASSERT_EQ(on_host(workspace_, "git init -q ."), 0);
    const auto record = run({"mv", ".git", "moved"}, sandbox_mode::workspace_write);
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
    if (bwrap_) {
        // bwrap keeps the git directory in place, a mount point: EBUSY, in no dialect.
        expect_denied_at(record, workspace_ / ".git", "Device or resource busy");
    } else {
        // The Landlock rung lets it move, and the judgement puts the kept paths back afterwards:
        // denied by what the run left, not by what it printed.
        EXPECT_FALSE(record.sandbox.evidence) << describe(record);
        ASSERT_TRUE(record.sandbox.judged);
        EXPECT_FALSE(record.sandbox.judged->neutralized.empty());
    }
    EXPECT_TRUE(fs::is_directory(workspace_ / ".git"));
}

TEST_P(DenialLanguages, GitWritingItsProtectedConfiguration) {
    ASSERT_EQ(on_host(workspace_, "git init -q ."), 0);
    const std::string config = test::read_file(workspace_ / ".git" / "config");
    const auto record = run({"git", "-c", "safe.directory=*", "config", "core.hooksPath", "/tmp/h"},
                            sandbox_mode::workspace_write);
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
    if (bwrap_) {
        // git writes a lock file beside it and renames it over the read-only bind: EBUSY.
        expect_denied_at(record, workspace_ / ".git" / "config", "Device or resource busy");
    }
    EXPECT_EQ(test::read_file(workspace_ / ".git" / "config"), config);
}

// ---- not the walls' ------------------------------------------------------------------------

TEST_P(DenialLanguages, ARefusalInTheWorkspaceIsTheHostsAndNoDenial) {
    test::write_file(workspace_ / "build.sh", "#!/bin/sh\necho built\n");
    fs::permissions(workspace_ / "build.sh", fs::perms::owner_read | fs::perms::owner_write);
    // A script without its execute bit: EACCES, which the run would get on the host too. (Named
    // absolute: a relative name never refutes, ChangingDirectoryFirstHidesNoDenial.)
    const auto script =
        run({"bash", "-c", (workspace_ / "build.sh").string()}, sandbox_mode::workspace_write);
    EXPECT_EQ(script.outcome.exit_code, std::optional<int>(126)) << describe(script);
    EXPECT_THAT(script.stderr_output.text, HasSubstr("Permission denied"));
    EXPECT_FALSE(script.sandbox.denied) << describe(script);

    // A test suite that reports a PermissionError about a file of its own.
    const fs::path data = workspace_ / "data.bin";
    const auto suite =
        run({"python3", "-c",
             "import sys; print(\"FAILED test_io.py::test_save - PermissionError: [Errno 13] "
             "Permission denied: '" +
                 data.string() + "'\", file=sys.stderr); sys.exit(1)"},
            sandbox_mode::workspace_write);
    EXPECT_EQ(suite.outcome.exit_code, std::optional<int>(1)) << describe(suite);
    EXPECT_FALSE(suite.sandbox.denied) << describe(suite);
}

TEST_P(DenialLanguages, ChangingDirectoryFirstHidesNoDenial) {
    // A monorepo's sibling package, outside the writable workspace, and the workspace has the
    // same relative name, writable: the name the command prints is relative to where it went.
    fs::create_directories(base_ / "pkg2" / "dist");
    fs::create_directories(workspace_ / "dist");
    test::write_file(workspace_ / "dist" / "index.js", "");
    const auto record =
        run({"bash", "-c", "cd ../pkg2 && touch dist/index.js"}, sandbox_mode::workspace_write);
    EXPECT_NE(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_THAT(record.stderr_output.text, HasSubstr("dist/index.js"));
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
    EXPECT_FALSE(fs::exists(base_ / "pkg2" / "dist" / "index.js"));
}

TEST_P(DenialLanguages, RefusalWordsThatNameNoPathStayADenialByTheDialect) {
    // Rust's Display of an io::Error names no path: nothing refutes the words, a heuristic.
    const auto record =
        run({"bash", "-c", "echo 'Error: Permission denied (os error 13)' >&2; exit 1"},
            sandbox_mode::workspace_write);
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
    ASSERT_TRUE(record.sandbox.evidence) << describe(record);
    EXPECT_EQ(record.sandbox.evidence->by, classify::denial_source::dialect);
}

INSTANTIATE_TEST_SUITE_P(Backends, DenialLanguages, test::all_real_backends(),
                         test::real_backend_name);

}  // namespace
}  // namespace cordon::sandbox::denial_languages_tests
