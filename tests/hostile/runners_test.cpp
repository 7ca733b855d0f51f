// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Runner integrity: what runs unconfined after a command (the runners, cordon itself, what they
// load) must not be writable by it, must not come from a directory the command could write, must
// not load what the command's environment names, and the workspace a run is given must be the
// directory that gets confined, not whatever the path names a moment later.
#include <elf.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include <atomic>
#include <cstring>
#include <set>

#include "hostile_support.hpp"
#include "run_or_throw.hpp"

namespace cordon::hostile {
namespace {

using sandbox::sandbox_unavailable_error;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// The directory holding the libc mapped into this process (Debian: /usr/lib/x86_64-linux-gnu).
fs::path libc_directory() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        const fs::path file = line.substr(slash);
        if (file.filename().string().rfind("libc.so", 0) == 0) {
            return fs::canonical(file).parent_path();
        }
    }
    return {};
}

// Workspaces under which a workspace-write command could replace something that runs
// unconfined later: ancestors of the runners and of cordon's own executable, the system library
// directories, the loader's configuration, and (bwrap) the directory holding bwrap.
strings protected_workspaces(const sandbox::rung_report& rung) {
    std::set<std::string> out;
    out.insert(test::runner_dir().string());
    out.insert(test::runner_dir().parent_path().string());
    out.insert(fs::canonical("/proc/self/exe").parent_path().string());
    if (const fs::path libc = libc_directory(); !libc.empty()) out.insert(libc.string());
    for (const char* dir : {"/usr/lib", "/etc", "/"}) {
        std::error_code ec;
        if (fs::is_directory(dir, ec)) out.insert(fs::canonical(dir).string());
    }
    if (rung.kind == backend_kind::bwrap) {
        out.insert(fs::canonical(rung.runner).parent_path().string());
    }
    return {out.begin(), out.end()};
}

// ---- 9. runner integrity ------------------------------------------------------------------------

class RunnerIntegrity : public BackendTest {
protected:
    // Runs `echo token` under workspace-write in the workspace it is given: the token in stdout
    // proves that the run went ahead.
    [[nodiscard]] auto echo_in(std::string token,
                               sandbox::tmp_policy tmp = sandbox::tmp_policy::private_tmp) {
        return [this, token = std::move(token), tmp](const fs::path& workspace) {
            runtime::run_request req = request({"echo", token}, sandbox_mode::workspace_write);
            req.workspace_root = workspace;
            req.rules.tmp = tmp;
            return run(std::move(req));
        };
    }
};

// Refused means the command never ran: runtime::run throws sandbox_unavailable_error (the sandbox
// cannot confine this run) or returns a record of a run that was not started (the request itself
// is refused). The command would print a token if it ran.
TEST_P(RunnerIntegrity, AWorkspaceHoldingARunnerOrWhatItLoadsIsRefused) {
    const std::string token = "ran-" + unique_suffix();
    for (const auto& workspace : protected_workspaces(*selection_->rung)) {
        SCOPED_TRACE("workspace " + workspace);
        runtime::run_request req = request({"echo", token}, sandbox_mode::workspace_write);
        req.workspace_root = workspace;
        try {
            const runtime::run_record record = run(std::move(req));
            EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started)
                << "a workspace-write run in " << workspace
                << " was not refused: " << describe(record);
            EXPECT_THAT(record.stdout_output.text, Not(HasSubstr(token))) << describe(record);
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_EQ(error.mode(), sandbox_mode::workspace_write);
        }
    }
}

// The CLI says so with 125 (sandbox unavailable) or 2 (a request cordon refuses), and the
// command never runs.
TEST_P(RunnerIntegrity, TheCliRefusesTheSameWorkspaces) {
    const std::string token = "ran-" + unique_suffix();
    for (const auto& workspace : protected_workspaces(*selection_->rung)) {
        SCOPED_TRACE("workspace " + workspace);
        const cli_result outcome =
            run_cordon({"run", "--backend", std::string(sandbox::to_string(kind_)), "--mode",
                        "workspace-write", "--workspace", workspace, "--", "echo", token});
        EXPECT_THAT(outcome.exit_code, AnyOf(125, 2)) << outcome.out << outcome.err;
        EXPECT_THAT(outcome.out, Not(HasSubstr(token))) << "the command ran";
    }
}

// A hard link is the same file under another name: one inside a writable root would let the
// command rewrite a runner or a library in place. Landlock refuses a link that would gain rights
// (its REFER rule), and no link crosses bwrap's mounts.
TEST_P(RunnerIntegrity, NothingProtectedCanBeHardLinkedIntoAWritableRoot) {
    strings targets{test::launcher_path().string(), fs::canonical("/proc/self/exe").string(),
                    "/etc/ld.so.cache"};
    if (const fs::path libc = libc_directory(); !libc.empty()) {
        targets.push_back((libc / "libc.so.6").string());
    }
    if (kind_ == backend_kind::bwrap) targets.push_back(fs::canonical(selection_->rung->runner));
    std::map<std::string, std::uintmax_t> links_before;
    for (const auto& target : targets)
        links_before[target] = fs::hard_link_count(target);

    strings roots{tree_.workspace().string()};
    // The Landlock rung also writes the host's /tmp.
    const fs::path tmp = "/tmp/cordon-hostile-" + unique_suffix();
    if (kind_ == backend_kind::landlock) {
        fs::create_directories(tmp);
        roots.push_back(tmp.string());
    }
    for (const auto& root : roots) {
        SCOPED_TRACE("into " + root);
        strings argv{child(), "link-each", root};
        argv.insert(argv.end(), targets.begin(), targets.end());
        const runtime::run_record record =
            run(request(std::move(argv), sandbox_mode::workspace_write));
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
        const attempts seen = parse_attempts(record.stdout_output.text);
        EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record);
        for (const auto& target : targets) {
            EXPECT_TRUE(denial_of(seen, "link " + target).has_value()) << target;
        }
    }
    for (const auto& target : targets) {
        EXPECT_EQ(fs::hard_link_count(target), links_before[target]) << target << " gained a link";
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);
}

// A mount shows a directory somewhere else: a bind of a runner's directory inside a writable
// root (a development container that binds a build tree into the project) exposes the runner
// under another spelling, and so does a workspace that is itself such a bind. Refused like the
// runner's own directory; a read-only bind exposes nothing and is not refused.
class bind_mount {
public:
    bind_mount(const fs::path& source, const fs::path& target, bool read_only) : target_(target) {
        mounted_ = ::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) == 0;
        if (mounted_ && read_only) {
            remounted_ = ::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY,
                                 nullptr) == 0;
        }
    }
    ~bind_mount() {
        if (mounted_) ::umount2(target_.c_str(), MNT_DETACH);
    }
    bind_mount(const bind_mount&) = delete;
    bind_mount& operator=(const bind_mount&) = delete;
    [[nodiscard]] bool ready(bool read_only) const {
        return mounted_ && (!read_only || remounted_);
    }

private:
    fs::path target_;
    bool mounted_ = false;
    bool remounted_ = false;
};

TEST_P(RunnerIntegrity, AMountShowingARunnerInsideAWritableRootIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "bind mounts need root";
    ASSERT_TRUE(in_private_mount_namespace());
    const std::string token = "ran-" + unique_suffix();
    const auto run_in = echo_in(token);
    const fs::path inside = tree_.workspace() / "bound";
    fs::create_directories(inside);
    {
        bind_mount bound(test::runner_dir(), inside, false);
        ASSERT_TRUE(bound.ready(false)) << std::strerror(errno);
        const runtime::run_record record = run_in(tree_.workspace());
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        EXPECT_THAT(record.outcome.message, HasSubstr("is reachable through " + inside.string()));
        EXPECT_THAT(record.stdout_output.text, Not(HasSubstr(token)));
        // The workspace is the bind itself.
        const runtime::run_record itself = run_in(inside);
        EXPECT_EQ(itself.outcome.kind, classify::outcome_kind::not_started) << describe(itself);
        EXPECT_THAT(itself.stdout_output.text, Not(HasSubstr(token)));
    }
    if (kind_ == backend_kind::landlock) {
        // With tmp = host the Landlock rung also writes the host's /tmp: a bind there exposes
        // as much. Its private /tmp is a directory of the run's own, which nothing is bound in.
        const fs::path in_tmp = "/tmp/cordon-hostile-bind-" + unique_suffix();
        fs::create_directories(in_tmp);
        {
            bind_mount bound(test::runner_dir(), in_tmp, false);
            ASSERT_TRUE(bound.ready(false)) << std::strerror(errno);
            const runtime::run_record record =
                echo_in(token, sandbox::tmp_policy::host)(tree_.workspace());
            EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
            const runtime::run_record private_tmp = run_in(tree_.workspace());
            EXPECT_EQ(private_tmp.outcome.exit_code, std::optional<int>(0))
                << describe(private_tmp);
        }
        fs::remove(in_tmp);
    }
    {
        bind_mount bound(test::runner_dir(), inside, true);
        ASSERT_TRUE(bound.ready(true)) << std::strerror(errno);
        const runtime::run_record record = run_in(tree_.workspace());
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
        EXPECT_THAT(record.stdout_output.text, HasSubstr(token));
    }
}

// The same class through mounts that write somewhere other than what they show: an overlay
// writes its upper layer, wherever that lies, and a FUSE filesystem wherever its daemon puts the
// data (bindfs shows any directory). Refused whether the workspace holds one or is one; an
// overlay whose upper layer stays inside the workspace, or that has none, is not.
class mount_point {
public:
    mount_point(const fs::path& target, const char* type, const std::string& options,
                const char* source = nullptr)
        : target_(target) {
        mounted_ = ::mount(source != nullptr ? source : type, target.c_str(), type, 0,
                           options.c_str()) == 0;
        error_ = errno;
    }
    ~mount_point() {
        if (mounted_) ::umount2(target_.c_str(), MNT_DETACH);
    }
    mount_point(const mount_point&) = delete;
    mount_point& operator=(const mount_point&) = delete;
    [[nodiscard]] bool ready() const { return mounted_; }
    [[nodiscard]] std::string error() const { return std::strerror(error_); }

private:
    fs::path target_;
    bool mounted_ = false;
    int error_ = 0;
};

TEST_P(RunnerIntegrity, AMountWritingARunnersDirectoryFromInsideAWritableRootIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "mounts need root";
    ASSERT_TRUE(in_private_mount_namespace());
    const std::string token = "ran-" + unique_suffix();
    const auto run_in = echo_in(token);
    const auto refused = [&](const runtime::run_record& record, const std::string& why) {
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        EXPECT_THAT(record.outcome.message, HasSubstr(why)) << describe(record);
        EXPECT_THAT(record.stdout_output.text, Not(HasSubstr(token)));
    };
    const fs::path lower = tree_.outside() / "lower";
    fs::create_directories(lower);
    // The work directory must share the upper layer's filesystem: beside the runners.
    const fs::path work =
        test::runner_dir().parent_path() / ("cordon-hostile-work-" + unique_suffix());
    fs::create_directories(work);
    const std::string onto_runners = "lowerdir=" + lower.string() +
                                     ",upperdir=" + test::runner_dir().string() +
                                     ",workdir=" + work.string();
    {
        SCOPED_TRACE("an overlay inside the workspace whose upper layer is the runners' directory");
        const fs::path inside = tree_.workspace() / "layered";
        fs::create_directories(inside);
        mount_point overlay(inside, "overlay", onto_runners);
        ASSERT_TRUE(overlay.ready()) << overlay.error();
        refused(run_in(tree_.workspace()), "the upper layer of the overlay at " + inside.string());
    }
    {
        SCOPED_TRACE("a workspace that is such an overlay");
        const fs::path itself = tree_.outside() / "layered-workspace";
        fs::create_directories(itself);
        mount_point overlay(itself, "overlay", onto_runners);
        ASSERT_TRUE(overlay.ready()) << overlay.error();
        refused(run_in(itself), "the upper layer of the overlay at " + itself.string());
    }
    {
        SCOPED_TRACE("such an overlay mounted with an empty source (two spaces in mountinfo)");
        const fs::path inside = tree_.workspace() / "sourceless";
        fs::create_directories(inside);
        mount_point overlay(inside, "overlay", onto_runners, "");
        ASSERT_TRUE(overlay.ready()) << overlay.error();
        refused(run_in(tree_.workspace()), "the upper layer of the overlay at " + inside.string());
    }
    {
        // Upper layer U = the runners' grandparent, the overlay's subdirectory R = their parent's
        // name bound elsewhere, and the workspace B = the runners' own name below that bind:
        // writes land in U/R/B, the runners' directory, which U/B alone does not name.
        SCOPED_TRACE("a bind of a subdirectory of an overlay over the runners' grandparent");
        const fs::path runners = test::runner_dir();
        const fs::path grandparent = runners.parent_path().parent_path();
        const fs::path outer_work =
            grandparent.parent_path() / ("cordon-hostile-work-" + unique_suffix());
        fs::create_directories(outer_work);
        const fs::path layered = tree_.outside() / "layered-grandparent";
        const fs::path bound = tree_.outside() / "bound-subdirectory";
        fs::create_directories(layered);
        fs::create_directories(bound);
        {
            mount_point overlay(layered, "overlay",
                                "lowerdir=" + lower.string() + ",upperdir=" + grandparent.string() +
                                    ",workdir=" + outer_work.string());
            ASSERT_TRUE(overlay.ready()) << overlay.error();
            bind_mount subdirectory(layered / runners.parent_path().filename(), bound, false);
            ASSERT_TRUE(subdirectory.ready(false)) << std::strerror(errno);
            ASSERT_TRUE(fs::is_directory(bound / runners.filename()));
            refused(run_in(bound / runners.filename()),
                    "the upper layer of the overlay at " + bound.string());
        }
        std::error_code ec;
        fs::remove_all(outer_work, ec);
    }
    {
        SCOPED_TRACE("an overlay whose upper layer is named relative to the mounter's directory");
        const fs::path inside = tree_.workspace() / "relative";
        fs::create_directories(inside);
        const fs::path before = fs::current_path();
        fs::current_path(test::runner_dir().parent_path());
        mount_point overlay(inside, "overlay",
                            "lowerdir=" + lower.string() +
                                ",upperdir=" + test::runner_dir().filename().string() +
                                ",workdir=" + work.filename().string());
        fs::current_path(before);
        ASSERT_TRUE(overlay.ready()) << overlay.error();
        refused(run_in(tree_.workspace()), "which cordon cannot place");
    }
    {
        SCOPED_TRACE("a FUSE filesystem inside the workspace");
        const fs::path inside = tree_.workspace() / "fused";
        fs::create_directories(inside);
        // No daemon: the connection is closed at once, so nothing that touches the mount waits.
        const int device = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
        ASSERT_GE(device, 0) << "/dev/fuse: " << std::strerror(errno);
        mount_point fuse(inside, "fuse",
                         "fd=" + std::to_string(device) + ",rootmode=40000,user_id=0,group_id=0");
        ::close(device);
        ASSERT_TRUE(fuse.ready()) << fuse.error();
        refused(run_in(tree_.workspace()), "holds the fuse filesystem at " + inside.string());
    }
    {
        SCOPED_TRACE("overlays that write nothing outside the workspace run");
        const fs::path upper = tree_.workspace() / "upper";
        const fs::path own_work = tree_.workspace() / "work";
        const fs::path layered = tree_.workspace() / "own-layers";
        const fs::path lower2 = tree_.outside() / "lower2";
        const fs::path read_only = tree_.workspace() / "read-only-layers";
        for (const fs::path& dir : {upper, own_work, layered, lower2, read_only})
            fs::create_directories(dir);
        mount_point own(layered, "overlay",
                        "lowerdir=" + lower.string() + ",upperdir=" + upper.string() +
                            ",workdir=" + own_work.string());
        ASSERT_TRUE(own.ready()) << own.error();
        mount_point lowers_only(read_only, "overlay",
                                "lowerdir=" + lower.string() + ":" + lower2.string());
        ASSERT_TRUE(lowers_only.ready()) << lowers_only.error();
        const runtime::run_record record = run_in(tree_.workspace());
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
        EXPECT_THAT(record.stdout_output.text, HasSubstr(token));
    }
    std::error_code ec;
    fs::remove_all(work, ec);
}

// And the other way round: an overlay that shows a runner from a layer the command can write,
// or a FUSE filesystem in the runner's place, exposes the runner as much as a bind does.
TEST_P(RunnerIntegrity, ARunnerShownFromALayerTheCommandCanWriteIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "mounts need root";
    ASSERT_TRUE(in_private_mount_namespace());
    const std::string token = "ran-" + unique_suffix();
    runtime::run_request req = request({"echo", token}, sandbox_mode::workspace_write);
    const fs::path runners = test::runner_dir();
    {
        SCOPED_TRACE(
            "the runners' directory as an overlay whose top lower layer is in the workspace");
        const fs::path planted = tree_.workspace() / "planted";
        fs::create_directories(planted);
        // The runners' own directory stays the bottom layer: everything is still there.
        mount_point overlay(runners, "overlay",
                            "lowerdir=" + planted.string() + ":" + runners.string());
        ASSERT_TRUE(overlay.ready()) << overlay.error();
        ASSERT_TRUE(fs::exists(test::launcher_path()));
        const runtime::run_record record = run(req);
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        EXPECT_THAT(record.outcome.message,
                    HasSubstr("the lower layer of the overlay at " + runners.string()))
            << describe(record);
        EXPECT_THAT(record.stdout_output.text, Not(HasSubstr(token)));
    }
    {
        SCOPED_TRACE("the same overlay with its layers outside every writable root runs");
        const fs::path elsewhere = tree_.outside() / "elsewhere";
        fs::create_directories(elsewhere);
        mount_point overlay(runners, "overlay",
                            "lowerdir=" + elsewhere.string() + ":" + runners.string());
        ASSERT_TRUE(overlay.ready()) << overlay.error();
        const runtime::run_record record = run(req);
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
        EXPECT_THAT(record.stdout_output.text, HasSubstr(token));
    }
    {
        SCOPED_TRACE("a FUSE filesystem in the runners' place");
        const int device = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
        ASSERT_GE(device, 0) << "/dev/fuse: " << std::strerror(errno);
        mount_point fuse(runners, "fuse",
                         "fd=" + std::to_string(device) + ",rootmode=40000,user_id=0,group_id=0");
        ::close(device);
        ASSERT_TRUE(fuse.ready()) << fuse.error();
        const runtime::run_record record = run(req);
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        EXPECT_THAT(record.outcome.message, HasSubstr("lies on the fuse filesystem at"))
            << describe(record);
        EXPECT_THAT(record.stdout_output.text, Not(HasSubstr(token)));
    }
}

// What a protected directory shows is followed through every kind of mount, not only its own:
// a workspace file bound onto one of its files, the image file behind a loop device mounted
// there, and the mount really on top where several share a mount point.
TEST_P(RunnerIntegrity, WhatAProtectedDirectoryShowsIsFollowedThroughEveryMount) {
    if (::geteuid() != 0) GTEST_SKIP() << "mounts need root";
    ASSERT_TRUE(in_private_mount_namespace());
    const std::string token = "ran-" + unique_suffix();
    const auto run_in = echo_in(token);
    const auto refused_in = [&](const fs::path& workspace, const std::string& why) {
        const runtime::run_record record = run_in(workspace);
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        EXPECT_THAT(record.outcome.message, HasSubstr(why)) << describe(record);
        EXPECT_THAT(record.stdout_output.text, Not(HasSubstr(token)));
    };
    {
        SCOPED_TRACE("a workspace file bound onto a file of the loader's directories");
        // A file of libc's directory that this process has not mapped, so that it is protected
        // only as part of its directory.
        const auto maps = read_file_if_present("/proc/self/maps");
        ASSERT_TRUE(maps);
        const auto at = maps->find("/libc.so.6");
        ASSERT_NE(at, std::string::npos);
        const fs::path libraries =
            fs::path(maps->substr(maps->rfind(' ', at) + 1, at - maps->rfind(' ', at) - 1));
        fs::path victim;
        for (const auto& entry : fs::directory_iterator(libraries)) {
            if (entry.is_regular_file() && !entry.is_symlink() &&
                maps->find(entry.path().string()) == std::string::npos) {
                victim = entry.path();
                break;
            }
        }
        ASSERT_FALSE(victim.empty()) << "no unmapped file in " << libraries;
        const fs::path planted = tree_.workspace() / "planted.so";
        std::ofstream(planted) << "not a library";
        bind_mount bound(planted, victim, false);
        ASSERT_TRUE(bound.ready(false)) << std::strerror(errno);
        refused_in(tree_.workspace(), "the mount at " + victim.string());
    }
    {
        SCOPED_TRACE("an older bind of the runners' directory moved over a newer mount");
        const fs::path stage = tree_.outside() / "stage";
        const fs::path point = tree_.outside() / "stacked";
        fs::create_directories(stage);
        fs::create_directories(point);
        bind_mount bound(test::runner_dir(), stage, false);
        ASSERT_TRUE(bound.ready(false)) << std::strerror(errno);
        mount_point decoy(point, "tmpfs", "size=1m");
        ASSERT_TRUE(decoy.ready()) << decoy.error();
        ASSERT_EQ(::mount(stage.c_str(), point.c_str(), nullptr, MS_MOVE, nullptr), 0)
            << std::strerror(errno);
        ASSERT_TRUE(fs::exists(point / test::launcher_path().filename()));
        refused_in(point, "is reachable through " + point.string());
        ::umount2(point.c_str(), MNT_DETACH);
    }
    {
        SCOPED_TRACE("a loop device over the loader's configuration, its image in the workspace");
        const fs::path content = tree_.outside() / "image-content";
        fs::create_directories(content);
        std::ofstream(content / "note.conf") << "# nothing\n";
        const fs::path image = tree_.workspace() / "conf.img";
        const std::string make = "mkfs.ext4 -q -d '" + content.string() + "' '" + image.string() +
                                 "' 4M >/dev/null 2>&1";
        ASSERT_EQ(std::system(make.c_str()), 0) << make;
        const std::string attach =
            "mount -o loop '" + image.string() + "' /etc/ld.so.conf.d >/dev/null 2>&1";
        ASSERT_EQ(std::system(attach.c_str()), 0) << attach;
        ASSERT_TRUE(fs::exists("/etc/ld.so.conf.d/note.conf"));
        refused_in(tree_.workspace(),
                   "the image behind the loop device of the mount at /etc/ld.so.conf.d");
        // The loop device is set to clear itself when this last mount of it goes.
        ::umount2("/etc/ld.so.conf.d", 0);
    }
}

CORDON_HOSTILE_BACKENDS(RunnerIntegrity);

// A `bwrap` first on PATH, in a directory any confined command could write (a virtualenv's bin
// inside the workspace, mode 0777): cordon must never execute it.
TEST(FakeBwrapOnPath, IsNeverExecutedAndRunsStillGoThroughTheRealBwrap) {
    const selection& real = selected(backend_choice::bwrap);
    if (!real.rung) CORDON_SKIP_OR_FAIL(real.reason);
    const fs::path real_bwrap = fs::canonical(real.rung->runner);

    host_tree tree;
    const fs::path bin = tree.workspace() / ".venv" / "bin";
    fs::create_directories(bin);
    fs::permissions(bin, fs::perms::all);
    const fs::path marker = tree.outside() / "fake-bwrap-ran";
    const fs::path fake = bin / "bwrap";
    write_file(fake, "#!/bin/sh\ntouch '" + marker.string() + "'\nexec '" + real_bwrap.string() +
                         "' \"$@\"\n");
    fs::permissions(fake, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    const char* old_path = std::getenv("PATH");
    const std::string path =
        bin.string() + ":" + (old_path != nullptr ? old_path : "/usr/bin:/bin");

    for (const backend_choice choice : {backend_choice::bwrap, backend_choice::automatic}) {
        SCOPED_TRACE("choice " + std::string(sandbox::to_string(choice)));
        std::shared_ptr<sandbox::local_provider> provider;
        {
            test::scoped_env env("PATH", path);
            provider = make_selection(choice).provider;
        }
        const auto rung = provider->selected();
        ASSERT_TRUE(rung.has_value());
        EXPECT_EQ(rung->kind, backend_kind::bwrap);
        EXPECT_EQ(fs::path(rung->runner), real_bwrap);
        runtime::run_request req;
        req.argv = {child(), "print-env"};
        req.mode = sandbox_mode::workspace_write;
        req.workspace_root = tree.workspace();
        req.timeout = generous;
        req.env["PATH"] = path;
        const runtime::run_record record = test::run_or_throw(provider, std::move(req));
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
        EXPECT_EQ(record.sandbox.backend, std::optional<backend_kind>(backend_kind::bwrap));
        EXPECT_FALSE(fs::exists(marker)) << "cordon executed the fake bwrap";
    }

    // The CLI, started with that PATH.
    const cli_result outcome =
        run_cordon({"run", "--mode", "workspace-write", "--workspace", tree.workspace().string(),
                    "--json", "--", child(), "exit", "0"},
                   fs::current_path(), {}, {{"PATH", path}});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.out << outcome.err;
    EXPECT_THAT(outcome.out, HasSubstr("\"bwrap\"")) << outcome.out;
    EXPECT_FALSE(fs::exists(marker)) << "the cordon CLI executed the fake bwrap";
}

// ---- 10. loader variables -----------------------------------------------------------------------

strings lines_in(const fs::path& file) {
    strings out;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        out.push_back(line);
    return out;
}

class LoaderVariables : public BackendAndModeTest {};

// The preload probe appends the name of every program that loads it to the marker, which lies in
// the workspace: the command can write it under workspace-write, any unconfined runner always.
TEST_P(LoaderVariables, LdPreloadReachesTheCommandButNeverARunner) {
    const fs::path marker = tree_.workspace() / "preload-marker";
    runtime::run_request req = request({child(), "exit", "0"});
    req.env["LD_PRELOAD"] = tools().preload().string();
    req.env["CORDON_TEST_PRELOAD_MARKER"] = marker.string();
    const runtime::run_record record = run(std::move(req));
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);

    const strings loaded = lines_in(marker);
    for (const auto& program : loaded) {
        EXPECT_EQ(program, "cordon-test-child") << program << " loaded the command's LD_PRELOAD";
    }
    if (mode_ == sandbox_mode::workspace_write) {
        // The probe works: the command itself loaded it.
        EXPECT_THAT(loaded, ::testing::Contains("cordon-test-child")) << describe(record);
    }
}

// Libraries planted in the command's LD_LIBRARY_PATH under the names bwrap needs (and a libc):
// a runner that used them could not even start.
TEST_P(LoaderVariables, LdLibraryPathWithPlantedLibrariesIsNotUsedByARunner) {
    const fs::path planted = tree_.outside() / "lib";
    fs::create_directories(planted);
    for (const char* name :
         {"libselinux.so.1", "libcap.so.2", "libpcre2-8.so.0", "libseccomp.so.2"}) {
        write_file(planted / name, "not a shared object\n");
    }
    runtime::run_request req = request({child(), "print-env"});
    req.env["LD_LIBRARY_PATH"] = planted.string();
    runtime::run_record record;
    ASSERT_NO_THROW(record = run(std::move(req)));
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_THAT(record.stdout_output.text, HasSubstr("LD_LIBRARY_PATH=" + planted.string() + "\n"));

    // A planted libc breaks every dynamic program, the command included: the command here is the
    // static launcher's probe, so only a runner that loaded the libc could fail the run.
    const fs::path fake_libc = tree_.outside() / "libc";
    fs::create_directories(fake_libc);
    write_file(fake_libc / "libc.so.6", "not a shared object\n");
    runtime::run_request with_libc = request({test::launcher_path().string(), "--probe"});
    with_libc.env["LD_LIBRARY_PATH"] = fake_libc.string();
    runtime::run_record probed;
    ASSERT_NO_THROW(probed = run(std::move(with_libc)));
    EXPECT_EQ(probed.outcome.exit_code, std::optional<int>(0)) << describe(probed);
    EXPECT_THAT(probed.stdout_output.text, ::testing::StartsWith("landlock: ")) << describe(probed);
}

CORDON_HOSTILE_BOTH_MODES(LoaderVariables);

TEST(LoaderVariablesLauncher, TheLauncherIsStaticallyLinked) {
    const auto image = read_file_if_present(test::launcher_path());
    ASSERT_TRUE(image.has_value());
    ASSERT_GE(image->size(), sizeof(Elf64_Ehdr));
    Elf64_Ehdr header{};
    std::memcpy(&header, image->data(), sizeof header);
    ASSERT_EQ(std::memcmp(header.e_ident, ELFMAG, SELFMAG), 0);
    for (std::size_t i = 0; i < header.e_phnum; ++i) {
        const std::size_t offset = header.e_phoff + i * header.e_phentsize;
        ASSERT_LE(offset + sizeof(Elf64_Phdr), image->size());
        Elf64_Phdr program{};
        std::memcpy(&program, image->data() + offset, sizeof program);
        EXPECT_NE(program.p_type, static_cast<std::uint32_t>(PT_INTERP))
            << "cordon-landlock names a program interpreter: the loader would honour LD_PRELOAD";
    }
}

class LoaderVariablesCli : public BackendTest {};

TEST_P(LoaderVariablesCli, CordonRunEnvLdPreloadReachesOnlyTheCommand) {
    const fs::path marker = tree_.workspace() / "preload-marker";
    const cli_result outcome = run_cordon(
        {"run", "--backend", std::string(sandbox::to_string(kind_)), "--mode", "workspace-write",
         "--accept-partial", "--workspace", tree_.workspace().string(), "--env",
         "LD_PRELOAD=" + tools().preload().string(), "--env",
         "CORDON_TEST_PRELOAD_MARKER=" + marker.string(), "--", child(), "exit", "0"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.out << outcome.err;
    EXPECT_EQ(lines_in(marker), strings{"cordon-test-child"});
}

CORDON_HOSTILE_BACKENDS(LoaderVariablesCli);

// ---- 11. the workspace renamed under a run ------------------------------------------------------

class WorkspaceRenameRace : public BackendTest {};

// A thread keeps exchanging the workspace directory with a symlink to a victim directory while
// workspace-write runs write to the victim (by absolute path) and to ./ (which is the victim
// whenever the working directory was entered through the symlink). A run may be refused or its
// writes may fail; a file in the victim is an escape.
TEST_P(WorkspaceRenameRace, TheVictimStaysEmptyWhileTheWorkspaceIsSwappedForASymlink) {
    const fs::path dir = tree_.base() / "a";
    const fs::path workspace = dir / "ws";
    const fs::path swap = dir / "swap";
    const fs::path victim = tree_.base() / "victim";
    fs::create_directories(workspace);
    fs::create_directories(victim);
    fs::create_directory_symlink(victim, swap);

    std::atomic<bool> stop{false};
    std::atomic<long> swaps{0};
    // Added to the swapper's pause when no run has got past the refusals yet (below).
    std::atomic<long> calm_us{0};
    std::thread swapper([&] {
        while (!stop.load()) {
            if (::syscall(SYS_renameat2, AT_FDCWD, workspace.c_str(), AT_FDCWD, swap.c_str(),
                          RENAME_EXCHANGE) == 0) {
                ++swaps;
            }
            std::this_thread::sleep_for(
                std::chrono::microseconds(20 + (swaps.load() % 7) * 90 + calm_us.load()));
        }
    });
    struct joiner {
        std::atomic<bool>& stop;
        std::thread& thread;
        ~joiner() {
            stop = true;
            thread.join();
        }
    } join_at_exit{stop, swapper};

    std::set<std::string> refusals;  // a sample of why runs were refused, for the log
    int refused = 0;
    int not_started = 0;
    int ran = 0;
    const auto deadline = std::chrono::steady_clock::now() + 180s;
    // A hundred runs against the swapper at full speed. On a slow build (ASan) a run's set-up is
    // long enough for every one of them to meet a swap and be refused; then the swapper calms
    // down, a little more every 20 runs, until runs get through while it still swaps.
    for (int i = 0; (i < 100 || ran == 0) && std::chrono::steady_clock::now() < deadline; ++i) {
        if (i >= 100 && (i - 100) % 20 == 0) calm_us = std::max(2'000L, calm_us.load() * 2);
        const std::string name = "pwned-" + std::to_string(i);
        runtime::run_request req =
            request({child(), "create-each", "x", (victim / name).string(), "./" + name},
                    sandbox_mode::workspace_write);
        req.workspace_root = workspace;
        req.timeout = std::chrono::milliseconds(30'000);
        std::string outcome;
        try {
            const runtime::run_record record = run(std::move(req));
            if (record.outcome.kind == classify::outcome_kind::not_started) {
                ++not_started;
            } else {
                ++ran;
            }
            outcome = describe(record);
        } catch (const sandbox_unavailable_error& error) {
            ++refused;
            outcome = std::string("refused: ") + error.what();
            if (refusals.size() < 3) refusals.insert(error.detail().value_or(error.what()));
        }
        std::error_code ec;
        if (!fs::is_empty(victim, ec)) {
            strings found;
            for (const auto& entry : fs::directory_iterator(victim, ec)) {
                found.push_back(entry.path().filename().string());
            }
            ADD_FAILURE() << "run " << i << " wrote into the victim ("
                          << ::testing::PrintToString(found) << ")\n"
                          << outcome;
            break;
        }
    }
    // Refusing every run would pass the check above without testing anything.
    EXPECT_GT(ran, 0) << "no run got past the refusals: the race was never exercised";
    std::cout << "[ info ] " << sandbox::to_string(kind_) << ": " << ran << " ran, " << refused
              << " refused, " << not_started << " not started, " << swaps.load() << " swaps\n";
    for (const auto& why : refusals)
        std::cout << "[ info ]   refused: " << why << "\n";
}

CORDON_HOSTILE_BACKENDS(WorkspaceRenameRace);

}  // namespace
}  // namespace cordon::hostile
