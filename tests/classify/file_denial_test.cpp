// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A denial of the file walls in any language (classify/file_denial.hpp): the lines below are what
// the runtimes print, taken from real runs on both rungs (Python 3.11, Node 20, OpenJDK 17, Rust
// 1.x std::io::Error, GNU coreutils, git, SQLite) and from Go's os.PathError format ("op path:
// strerror in lower case"). The host is a fake here, so that what the host itself refuses can be
// said; tests/backends/denial_languages_test.cpp runs the real programs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "classify/classify.hpp"
#include "classify/file_denial.hpp"
#include "classify/signature_scanner.hpp"
#include "sandbox/backends.hpp"
#include "support/files.hpp"

namespace cordon::classify {
namespace {

namespace fs = std::filesystem;
using sandbox::backend_kind;
using sandbox::sandbox_mode;
using ::testing::ElementsAre;

// A host that allows everything but what a test says it refuses.
class fake_host : public host_view {
public:
    std::set<fs::path> unwritable;
    std::set<fs::path> unreadable;
    std::set<fs::path> read_only_filesystems;  // the paths on one
    std::set<fs::path> directories;
    std::set<fs::path> unanswered;  // below these, resolve() stops (a remote filesystem)
    mutable std::size_t resolved = 0;

    std::optional<host_entry> resolve(const fs::path& path) const override {
        ++resolved;
        for (const fs::path& stop : unanswered) {
            if (path.string().starts_with(stop.string())) return std::nullopt;
        }
        return host_view::resolve(path);  // the test's own temporary tree
    }
    bool allows(const fs::path& path, int mode) const override {
        return !(mode == W_OK ? unwritable : unreadable).contains(path);
    }
    bool read_only(const fs::path& path) const override {
        return read_only_filesystems.contains(path);
    }
    bool directory(const fs::path& path) const override { return directories.contains(path); }
};

// A run's walls: the workspace `ws` (which exists, for the bare names), its /tmp, a kept git
// directory with its hooks, a denied read beside it.
struct walls_fixture {
    test::temp_dir base{"/var/tmp", "cordon-denial-"};
    fs::path ws = base / "ws";
    fs::path beside = base / "beside";
    walls_fixture() {
        fs::create_directories(ws / ".git" / "hooks");
        fs::create_directories(beside);
    }
    [[nodiscard]] file_walls walls(sandbox_mode mode, backend_kind backend) const {
        file_walls out;
        out.mode = mode;
        out.backend = backend;
        out.workdir = ws;
        if (mode == sandbox_mode::workspace_write) out.writable = {ws, "/tmp"};
        out.kept = {ws / ".git", ws / ".git" / "hooks", ws / ".git" / "config"};
        out.hidden = {base / "secret.env", base / "keys"};
        return out;
    }
};

std::vector<std::string> dialect_of(backend_kind backend, sandbox_mode mode) {
    std::vector<std::string> out;
    for (const auto& word : sandbox::denial_signatures(backend, mode))
        out.push_back(ascii_lower(word));
    for (const auto& word : runtime_denial_signatures())
        out.push_back(word);
    return out;
}

file_reading read(const std::string& text, const file_walls& walls,
                  const host_view& host = fake_host{}) {
    return read_file_denial(text, walls, dialect_of(walls.backend, walls.mode), host);
}

std::vector<std::string> names_in(std::string_view line, const fs::path& workdir) {
    const fake_host host;
    lookup_budget budget;
    return named_paths(line, workdir, host, budget);
}

class FileDenial : public ::testing::Test {
protected:
    walls_fixture tree_;
};

TEST_F(FileDenial, NamedPathsAreFoundInEveryRuntimesShape) {
    const fs::path& ws = tree_.ws;
    EXPECT_THAT(names_in("bash: line 1: /etc/x: Read-only file system", ws), ElementsAre("/etc/x"));
    // The program that speaks is not what was refused: the shell, the linker.
    EXPECT_THAT(names_in("/usr/bin/bash: line 1: ./s.sh: Permission denied", ws),
                ElementsAre("./s.sh"));
    EXPECT_THAT(names_in("/bin/sh: 1: cannot create /etc/x: Read-only file system", ws),
                ElementsAre("/etc/x"));
    EXPECT_THAT(
        names_in("/usr/bin/ld: cannot open output file /usr/local/bin/m: Permission denied", ws),
        ElementsAre("/usr/local/bin/m"));
    EXPECT_THAT(names_in("PermissionError: [Errno 13] Permission denied: 'secret.txt'", ws),
                ElementsAre("secret.txt"));
    EXPECT_THAT(names_in("mv: cannot move '.git' to 'x': Device or resource busy", ws),
                ElementsAre(".git", "x"));
    // Java prints a bare relative name: taken when it is there.
    EXPECT_THAT(
        names_in("java.nio.file.FileSystemException: .git -> y: Device or resource busy", ws),
        ElementsAre(".git"));
    EXPECT_THAT(names_in("No usable temporary directory found in ['/tmp', '/var/tmp', '/w s']", ws),
                ElementsAre("/tmp", "/var/tmp", "/w s"));
    EXPECT_THAT(names_in("open /x/y.txt: permission denied", ws), ElementsAre("/x/y.txt"));
    EXPECT_THAT(names_in("java.io.FileNotFoundException: /x (Permission denied)", ws),
                ElementsAre("/x"));
    // Words in quotes, URLs and a stray apostrophe are no names.
    EXPECT_THAT(
        names_in(R"(Os { code: 13, kind: PermissionDenied, message: "Permission denied" })", ws),
        ElementsAre());
    EXPECT_THAT(names_in("can't fetch https://example.com/a/b: Permission denied", ws),
                ElementsAre());
    EXPECT_THAT(names_in("called `Result::unwrap()` on an `Err` value", ws), ElementsAre());
}

// ---- rung 1: a path the walls govern, named with their refusal -----------------------------

TEST_F(FileDenial, EveryRuntimesWordsForARefusedWriteBesideTheWorkspaceAreADenial) {
    const std::string x = (tree_.beside / "x").string();
    const std::vector<std::pair<backend_kind, std::string>> lines{
        // bwrap answers EROFS, the Landlock rung EACCES.
        {backend_kind::bwrap, "bash: line 1: " + x + ": Read-only file system"},
        {backend_kind::bwrap, "OSError: [Errno 30] Read-only file system: '" + x + "'"},
        {backend_kind::bwrap, "Error: EROFS: read-only file system, open '" + x + "'"},
        {backend_kind::bwrap, "Exception in thread \"main\" java.nio.file.FileSystemException: " +
                                  x + ": Read-only file system"},
        {backend_kind::bwrap, "Exception in thread \"main\" java.io.FileNotFoundException: " + x +
                                  " (Read-only file system)"},
        {backend_kind::bwrap, "error: " + x + ": Read-only file system (os error 30)"},
        {backend_kind::bwrap, "open " + x + ": read-only file system"},
        {backend_kind::landlock, "PermissionError: [Errno 13] Permission denied: '" + x + "'"},
        {backend_kind::landlock, "Error: EACCES: permission denied, open '" + x + "'"},
        {backend_kind::landlock,
         "Exception in thread \"main\" java.nio.file.AccessDeniedException: " + x},
        {backend_kind::landlock, "error: " + x + ": Permission denied (os error 13)"},
        {backend_kind::landlock, "open " + x + ": permission denied"},
        {backend_kind::landlock, "touch: cannot touch '" + x + "': Permission denied"},
    };
    for (const auto& [backend, line] : lines) {
        SCOPED_TRACE(line);
        const file_reading got = read("Traceback...\n" + line + "\n",
                                      tree_.walls(sandbox_mode::workspace_write, backend));
        ASSERT_TRUE(got.evidence);
        EXPECT_EQ(got.evidence->by, denial_source::path);
        EXPECT_EQ(got.evidence->path, x);
        EXPECT_EQ(got.evidence->line, line);
    }
}

TEST_F(FileDenial, AMountPointBwrapMadeAnswersBusyAndThatIsADenialOnBwrapOnly) {
    const std::vector<std::string> lines{
        "mv: cannot move '.git' to 'x': Device or resource busy",
        "OSError: [Errno 16] Device or resource busy: '.git' -> 'x'",
        "Error: EBUSY: resource busy or locked, rename '.git' -> 'x'",
        "Exception in thread \"main\" java.nio.file.FileSystemException: .git -> y: Device or "
        "resource busy",
        "error: .git: Device or resource busy (os error 16)",
        "rename .git x: device or resource busy",
        "error: could not write config file .git/config: Device or resource busy",
    };
    for (const std::string& line : lines) {
        SCOPED_TRACE(line);
        const auto got =
            read(line, tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap));
        ASSERT_TRUE(got.evidence);
        EXPECT_TRUE(got.evidence->path.starts_with((tree_.ws / ".git").string()));
        // The Landlock rung makes no mount: EBUSY there is the host's own answer.
        EXPECT_FALSE(read(line, tree_.walls(sandbox_mode::workspace_write, backend_kind::landlock))
                         .evidence);
    }
    // The workspace itself is a bind.
    EXPECT_TRUE(read("rmdir: failed to remove '" + tree_.ws.string() + "': Device or resource busy",
                     tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap))
                    .evidence);
    // Busy elsewhere in the workspace is not the walls'.
    EXPECT_FALSE(read("umount: " + (tree_.ws / "mnt").string() +
                          ": target is busy; rmdir: "
                          "failed to remove 'mnt': Device or resource busy",
                      tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap))
                     .evidence);
}

TEST_F(FileDenial, ADeniedReadIsADenialInAnyWordsAndEisdirOnlyWhereTheMaskIsTheDirectory) {
    const std::string secret = (tree_.base / "secret.env").string();
    for (const backend_kind backend : {backend_kind::bwrap, backend_kind::landlock}) {
        for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
            const auto got =
                read("cat: " + secret + ": Permission denied", tree_.walls(mode, backend));
            ASSERT_TRUE(got.evidence);
            EXPECT_EQ(got.evidence->path, secret);
        }
    }
    const file_walls bwrap = tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap);
    // A file on the host that the run saw as a directory: the mask.
    EXPECT_TRUE(
        read("IsADirectoryError: [Errno 21] Is a directory: '" + secret + "'", bwrap).evidence);
    EXPECT_TRUE(
        read("Error: EISDIR: illegal operation on a directory, open '" + secret + "'", bwrap)
            .evidence);
    // A directory on the host too: the same answer without the sandbox.
    fake_host host;
    host.directories.insert(tree_.base / "keys");
    EXPECT_FALSE(read("IsADirectoryError: [Errno 21] Is a directory: '" +
                          (tree_.base / "keys").string() + "'",
                      bwrap, host)
                     .evidence);
    // EISDIR about an ordinary path is the program's own mistake.
    EXPECT_FALSE(read("IsADirectoryError: [Errno 21] Is a directory: '/usr'", bwrap).evidence);
}

TEST_F(FileDenial, UnderReadOnlyEveryWriteAndEveryRuntimesTempDirectoryIsTheWalls) {
    const std::string line =
        "FileNotFoundError: [Errno 2] No usable temporary directory found in ['/tmp', "
        "'/var/tmp', '/usr/tmp', '" +
        tree_.ws.string() + "']";
    for (const backend_kind backend : {backend_kind::bwrap, backend_kind::landlock}) {
        const auto got = read(line, tree_.walls(sandbox_mode::read_only, backend));
        ASSERT_TRUE(got.evidence);
        EXPECT_EQ(got.evidence->path, "/tmp");
    }
    const std::string lock = (tree_.ws / ".git" / "index.lock").string();
    EXPECT_TRUE(read("fatal: Unable to create '" + lock + "': Read-only file system",
                     tree_.walls(sandbox_mode::read_only, backend_kind::bwrap))
                    .evidence);
}

TEST_F(FileDenial, AProtectedPathIsReadOnlyOnBwrapAndWritableWhileTheLandlockRungRuns) {
    const std::string hook = ".git/hooks/pre-commit";
    const std::string line = "sh: 1: cannot create " + hook + ": Read-only file system";
    const auto bwrap = read(line, tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap));
    ASSERT_TRUE(bwrap.evidence);
    EXPECT_EQ(bwrap.evidence->path, (tree_.ws / hook).string());
    // Kept in place, its other contents stay writable: a refusal there is not the walls'.
    EXPECT_FALSE(read("error: unable to write .git/objects/ab/cd: Read-only file system",
                      tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap))
                     .evidence);
    EXPECT_FALSE(read("sh: 1: cannot create " + hook + ": Permission denied",
                      tree_.walls(sandbox_mode::workspace_write, backend_kind::landlock))
                     .evidence);
}

// ---- the host refuses too: not the walls' ----------------------------------------------------

TEST_F(FileDenial, APathTheHostRefusesAsWellIsNoEvidence) {
    const fs::path x = tree_.beside / "x";
    fake_host host;
    host.unwritable.insert(x);
    host.unreadable.insert(tree_.base / "secret.env");
    host.read_only_filesystems.insert(tree_.beside / "y");
    const file_walls landlock = tree_.walls(sandbox_mode::workspace_write, backend_kind::landlock);
    const file_walls bwrap = tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap);
    const auto refused =
        read("PermissionError: [Errno 13] Permission denied: '" + x.string() + "'", landlock, host);
    EXPECT_FALSE(refused.evidence);
    EXPECT_TRUE(refused.refuted);
    EXPECT_FALSE(
        read("cat: " + (tree_.base / "secret.env").string() + ": Permission denied", landlock, host)
            .evidence);
    EXPECT_FALSE(
        read("touch: cannot touch '" + (tree_.beside / "y").string() + "': Read-only file system",
             bwrap, host)
            .evidence);
}

// ---- rung 2: the dialect, and what refutes it --------------------------------------------------

TEST_F(FileDenial, TheRuntimesSentencesWithoutAPathAreTheDialect) {
    const std::vector<std::string> lines{
        "sqlite3.OperationalError: attempt to write a readonly database",
        "Runtime error near line 1: attempt to write a readonly database (8)",
        "Error: EACCES: permission denied",
        "Error: Os { code: 13, kind: PermissionDenied, message: \"Permission denied\" }",
        "thread 'main' panicked at src/main.rs:3:5: Read-only file system (os error 30)",
        "called `Result::unwrap()` on an `Err` value: Os { code: 13, kind: PermissionDenied, "
        "message: \"Permission denied\" }",
        "error: insufficient permission for adding an object to repository database .git/objects",
    };
    for (const std::string& line : lines) {
        SCOPED_TRACE(line);
        for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
            const auto got = read(line + "\n", tree_.walls(mode, backend_kind::bwrap));
            EXPECT_FALSE(got.refuted);
            EXPECT_EQ(got.dialect_line, line);
        }
    }
}

TEST_F(FileDenial, DialectLinesThatNameOnlyPathsOutsideTheWallsRefuteIt) {
    const file_walls walls = tree_.walls(sandbox_mode::workspace_write, backend_kind::landlock);
    const std::string data = (tree_.ws / "data").string();
    // A test suite's report, a script without its execute bit, a file the user may not write:
    // all in the workspace, which the walls let the run write.
    const std::string suite =
        "FAILED tests/test_io.py::test_save - PermissionError: [Errno 13] Permission denied: '" +
        data + "'\n1 failed in 0.12s\n";
    EXPECT_TRUE(read(suite, walls).refuted);
    test::write_file(tree_.ws / "build.sh", "#!/bin/sh\n");
    EXPECT_TRUE(
        read("bash: " + (tree_.ws / "build.sh").string() + ": Permission denied\n", walls).refuted);
    // A name that is not there, without a slash, is tried but not trusted.
    EXPECT_FALSE(read("bash: build.sh.in: Permission denied\n", walls).refuted);
    // One line the walls could explain is enough to keep the dialect.
    EXPECT_FALSE(
        read(suite + "Error: Os { code: 13, kind: PermissionDenied }: Permission denied\n", walls)
            .refuted);
    EXPECT_FALSE(read("nothing refused here\n", walls).refuted);
}

TEST_F(FileDenial, ARelativeNameMayProveADenialButNeverRefuteOne) {
    const file_walls walls = tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap);
    // The command changed directory first (`cd ../pkg2 && npm run build`): the names it prints
    // are relative to a directory the record does not know, and the workspace has the same
    // names, writable.
    fs::create_directories(tree_.ws / "dist");
    test::write_file(tree_.ws / "dist" / "index.js", "");
    fs::create_directories(tree_.ws / "src");
    test::write_file(tree_.ws / "main", "");
    for (const std::string line : {
             "Error: EROFS: read-only file system, open 'dist/index.js'",
             "bash: ./dist/index.js: Permission denied",
             "touch: cannot touch 'src': Read-only file system",
             "thread 'main' panicked: Permission denied (os error 13)",
             "PermissionError: [Errno 13] Permission denied: 'main'",
             "bash: src/../main: Permission denied",
         }) {
        SCOPED_TRACE(line);
        const file_reading got = read(line + "\n", walls);
        EXPECT_FALSE(got.refuted);
        EXPECT_FALSE(got.evidence);
    }
    // A relative name still proves a denial where the walls govern it.
    const file_reading beside =
        read("touch: cannot touch '../beside/x': Read-only file system\n", walls);
    ASSERT_TRUE(beside.evidence);
    EXPECT_EQ(beside.evidence->path, fs::canonical(tree_.beside).string() + "/x");
}

TEST_F(FileDenial, ANameTheHostCannotAnswerForNeitherProvesNorRefutes) {
    fake_host host;
    host.unanswered = {"/net/", tree_.ws / "nfs"};
    // Read-only mode: every write the walls govern, so an answered name would prove it.
    const file_walls ro = tree_.walls(sandbox_mode::read_only, backend_kind::bwrap);
    const file_reading remote =
        read("cp: cannot create '/net/evil.example/x': Read-only file system\n", ro, host);
    EXPECT_FALSE(remote.evidence);
    EXPECT_FALSE(remote.refuted);
    EXPECT_TRUE(read("cp: cannot create '/var/lib/x': Read-only file system\n", ro, host).evidence);
    // Workspace-write: a name in the workspace would refute it, one the host did not answer for
    // does not.
    const file_walls ww = tree_.walls(sandbox_mode::workspace_write, backend_kind::landlock);
    EXPECT_FALSE(
        read("bash: " + (tree_.ws / "nfs" / "x").string() + ": Permission denied\n", ww, host)
            .refuted);
    EXPECT_TRUE(
        read("bash: " + (tree_.ws / "x").string() + ": Permission denied\n", ww, host).refuted);
}

TEST_F(FileDenial, OneClassificationAsksTheHostAboutSixtyFourNamesAtMost) {
    const file_walls ww = tree_.walls(sandbox_mode::workspace_write, backend_kind::landlock);
    // Lines of sixteen names each, every one in the workspace, and bare words that are not there.
    std::string many;
    for (int line = 0; line < 40; ++line) {
        many += "cp: cannot create";
        for (int name = 0; name < 20; ++name)
            many += " " +
                    (tree_.ws / ("f" + std::to_string(line) + "_" + std::to_string(name))).string();
        many += " word" + std::to_string(line) + ": Permission denied\n";
    }
    fake_host host;
    const file_reading got = read(many, ww, host);
    EXPECT_LE(host.resolved, 64U);
    EXPECT_GT(host.resolved, 0U);
    // The names past the budget were not looked at: they may be the walls', so no refutation.
    EXPECT_FALSE(got.refuted);
    // Within the budget they still refute ...
    fake_host few;
    EXPECT_TRUE(read(many.substr(0, many.find('\n') + 1), ww, few).refuted);
    // ... and a proof past it is not made.
    fake_host late;
    EXPECT_FALSE(
        read(many + "cp: cannot create '/var/lib/x': Permission denied\n", ww, late).evidence);
    EXPECT_TRUE(read("cp: cannot create '/var/lib/x': Permission denied\n", ww).evidence);
    EXPECT_LE(late.resolved, 64U);
}

TEST_F(FileDenial, TheHostIsWalkedOneComponentAtATimeItsSymlinksFollowedByHand) {
    const host_view host;
    const fs::path real = fs::canonical(tree_.ws);
    fs::create_directories(real / "a" / "b");
    fs::create_symlink("a/b", real / "rel");
    fs::create_symlink(real / "a", real / "abs");
    fs::create_symlink("../a/b", real / "a" / "up");
    fs::create_symlink("loop2", real / "loop1");
    fs::create_symlink("loop1", real / "loop2");
    const auto resolved = [&host](const fs::path& path) {
        const std::optional<host_entry> got = host.resolve(path);
        return got ? std::optional(std::pair(got->path, got->exists)) : std::nullopt;
    };
    // As weakly_canonical(3) has them, and whether all of it is there.
    for (const fs::path& path :
         {real / "rel", real / "rel" / "c" / "d", real / "abs" / "b", real / "a" / "up",
          real / "a" / "up" / ".." / "missing", real / "abs" / "missing" / "x", fs::path("/")}) {
        SCOPED_TRACE(path);
        EXPECT_EQ(resolved(path),
                  std::optional(std::pair(fs::weakly_canonical(path), fs::exists(path))));
    }
    // A file with a path below it: the file is there, the rest is not.
    test::write_file(real / "a" / "f", "");
    EXPECT_EQ(resolved(real / "a" / "f" / "x"),
              std::optional(std::pair(real / "a" / "f" / "x", false)));
    // A symlink loop, too many hops, too many components, a relative path: no answer.
    EXPECT_EQ(resolved(real / "loop1" / "x"), std::nullopt);
    fs::path deep = real;
    for (int i = 0; i < 70; ++i)
        deep /= "d";
    fs::create_directories(deep);  // a tail that is not there is not walked
    EXPECT_EQ(resolved(deep), std::nullopt);
    EXPECT_EQ(resolved("a/b"), std::nullopt);
    // What the host allows is asked at the nearest entry that is there.
    EXPECT_TRUE(host.allows(real / "rel" / "new", W_OK));
    EXPECT_TRUE(host.directory(real / "rel"));
    EXPECT_FALSE(host.directory(real / "a" / "f"));
    EXPECT_FALSE(host.read_only(real / "rel" / "new"));
    // /proc and /sys are the kernel's: their permission bits do not say what a write does (root
    // may "write" /sys/foo, which the kernel refuses on the host too), so no answer there.
    EXPECT_FALSE(host.resolve("/proc/self").has_value());
    EXPECT_FALSE(host.resolve("/sys/foo").has_value());
    EXPECT_FALSE(host.resolve("/proc/sys/kernel/ostype").has_value());
}

// ---- decide(): the rungs in order ------------------------------------------------------------

sandbox::confined_argv wrapped(backend_kind kind, sandbox_mode mode) {
    sandbox::confined_argv out;
    out.backend = kind;
    out.denial_signatures = sandbox::denial_signatures(kind, mode);
    return out;
}

verdict decided(const file_walls& walls, std::string_view text, bool seen, bool whole,
                int exit_code = 1) {
    static const fake_host host;
    const sandbox::confined_argv confined = wrapped(walls.backend, walls.mode);
    run_evidence evidence;
    evidence.exit_code = exit_code;
    evidence.denial_seen = seen;
    run_context context{&confined, "cmd", text};
    context.confined_in_child = true;
    context.walls = &walls;
    context.host = &host;
    context.stderr_whole = whole;
    return decide(evidence, context);
}

TEST_F(FileDenial, DecideTakesThePathFirstThenTheDialectUnlessAWholeStreamRefutesIt) {
    const file_walls walls = tree_.walls(sandbox_mode::workspace_write, backend_kind::bwrap);
    // EBUSY is in no dialect: the path alone makes it a denial.
    const verdict busy = decided(walls, "mv: cannot move '.git' to 'x': Device or resource busy\n",
                                 /*seen=*/false, /*whole=*/true);
    EXPECT_TRUE(busy.denied);
    ASSERT_TRUE(busy.evidence);
    EXPECT_EQ(busy.evidence->by, denial_source::path);
    // ... but only for a command that failed.
    EXPECT_FALSE(
        decided(walls, "mv: cannot move '.git' to 'x': Device or resource busy\n", false, true, 0)
            .denied);

    const verdict sqlite = decided(
        walls, "sqlite3.OperationalError: attempt to write a readonly database\n", true, true);
    EXPECT_TRUE(sqlite.denied);
    ASSERT_TRUE(sqlite.evidence);
    EXPECT_EQ(sqlite.evidence->by, denial_source::dialect);
    EXPECT_EQ(sqlite.evidence->line,
              "sqlite3.OperationalError: attempt to write a readonly database");

    test::write_file(tree_.ws / "build.sh", "#!/bin/sh\n");
    const std::string own = "bash: " + (tree_.ws / "build.sh").string() + ": Permission denied\n";
    EXPECT_FALSE(decided(walls, own, true, true).denied);
    // The stream lost its head: the dialect seen there may have named anything.
    const verdict cut = decided(walls, own, true, false);
    EXPECT_TRUE(cut.denied);
    ASSERT_TRUE(cut.evidence);
    EXPECT_EQ(cut.evidence->by, denial_source::dialect);
    // Seen in the stream but on no line of the whole stream: the network's words, not these.
    EXPECT_FALSE(decided(walls, "curl: (6) Could not resolve host: x\n", true, true).denied);
}

}  // namespace
}  // namespace cordon::classify
