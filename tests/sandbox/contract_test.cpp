// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The sandbox contract: the vocabulary's spellings, the SANDBOX_UNAVAILABLE error (code, name and
// the exact message docs/contract.md fixes), canonical_path's chdir semantics and writable_roots.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "cordon/confined_argv.hpp"
#include "cordon/mode.hpp"
#include "cordon/policy.hpp"
#include "cordon/sandbox_error.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using scratch_dir = cordon::test::temp_dir;
using cordon::test::scoped_env;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

// ---- spellings ------------------------------------------------------------------------------

TEST(SandboxModeSpelling, RoundTripsEveryMode) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write,
                      sandbox_mode::danger_full_access}) {
        auto parsed = parse_sandbox_mode(to_string(mode));
        ASSERT_TRUE(parsed.has_value()) << to_string(mode);
        EXPECT_EQ(*parsed, mode);
    }
    EXPECT_EQ(to_string(sandbox_mode::read_only), "read-only");
    EXPECT_EQ(to_string(sandbox_mode::workspace_write), "workspace-write");
    EXPECT_EQ(to_string(sandbox_mode::danger_full_access), "danger-full-access");
}

TEST(SandboxModeSpelling, RejectsOtherSpellings) {
    for (const char* bad :
         {"", "read_only", "Read-Only", "READ-ONLY", "readonly", " read-only", "read-only ",
          "read-only\n", "workspace_write", "workspace", "write", "danger", "full-access",
          "danger_full_access", "none", "full", "partial"}) {
        EXPECT_FALSE(parse_sandbox_mode(bad).has_value()) << '"' << bad << '"';
    }
}

TEST(SandboxModeSpelling, OnlyDangerFullAccessIsUnconfined) {
    EXPECT_TRUE(is_confined(sandbox_mode::read_only));
    EXPECT_TRUE(is_confined(sandbox_mode::workspace_write));
    EXPECT_FALSE(is_confined(sandbox_mode::danger_full_access));
    static_assert(!is_confined(sandbox_mode::danger_full_access));
}

TEST(EnforcementSpelling, SpellsBothLevels) {
    EXPECT_EQ(to_string(enforcement::full), "full");
    EXPECT_EQ(to_string(enforcement::partial), "partial");
}

TEST(BackendKindSpelling, RoundTripsAndRejects) {
    for (auto kind : {backend_kind::bwrap, backend_kind::landlock, backend_kind::seatbelt}) {
        auto parsed = parse_backend_kind(to_string(kind));
        ASSERT_TRUE(parsed.has_value()) << to_string(kind);
        EXPECT_EQ(*parsed, kind);
    }
    EXPECT_EQ(to_string(backend_kind::bwrap), "bwrap");
    EXPECT_EQ(to_string(backend_kind::landlock), "landlock");
    EXPECT_EQ(to_string(backend_kind::seatbelt), "seatbelt");
    for (const char* bad : {"", "auto", "Bwrap", "BWRAP", "bubblewrap", "landlock-run",
                            "cordon-landlock", "sandbox-exec", "seatbelt ", "windows-acl"}) {
        EXPECT_FALSE(parse_backend_kind(bad).has_value()) << '"' << bad << '"';
    }
}

TEST(BackendChoiceSpelling, RoundTripsAndRejects) {
    for (auto choice : {backend_choice::automatic, backend_choice::bwrap, backend_choice::landlock,
                        backend_choice::seatbelt}) {
        auto parsed = parse_backend_choice(to_string(choice));
        ASSERT_TRUE(parsed.has_value()) << to_string(choice);
        EXPECT_EQ(*parsed, choice);
    }
    EXPECT_EQ(to_string(backend_choice::automatic), "auto");
    for (const char* bad : {"", "automatic", "Auto", "AUTO", "none", "bwrap ", "Landlock"}) {
        EXPECT_FALSE(parse_backend_choice(bad).has_value()) << '"' << bad << '"';
    }
}

TEST(RungStateSpelling, SpellsEveryState) {
    EXPECT_EQ(to_string(rung_state::usable), "usable");
    EXPECT_EQ(to_string(rung_state::unusable), "unusable");
    EXPECT_EQ(to_string(rung_state::not_probed), "not probed");
}

// ---- SANDBOX_UNAVAILABLE --------------------------------------------------------------------

std::string expected_message(std::string_view mode) {
    // Seed 001, byte for byte; the two dashes are U+2014 EM DASH.
    return "sandbox mode \"" + std::string(mode) +
           "\" is requested but no sandbox backend is usable on this host; refusing to run the "
           "command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), "
           "ensure sandbox-exec is usable (macOS) \xE2\x80\x94 Windows has no confinement backend "
           "yet \xE2\x80\x94 or switch the consumer to danger-full-access.";
}

TEST(SandboxUnavailable, ExactMessageForReadOnly) {
    const std::string expected =
        "sandbox mode \"read-only\" is requested but no sandbox backend is usable on this host; "
        "refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing "
        "kernel (Linux), ensure sandbox-exec is usable (macOS) \u2014 Windows has no confinement "
        "backend yet \u2014 or switch the consumer to danger-full-access.";
    EXPECT_EQ(expected, expected_message("read-only"));  // the two spellings agree
    EXPECT_EQ(sandbox_unavailable_message(sandbox_mode::read_only, std::nullopt), expected);
    sandbox_unavailable_error error(sandbox_mode::read_only);
    EXPECT_EQ(std::string(error.what()), expected);
    EXPECT_FALSE(error.detail().has_value());
    EXPECT_EQ(error.mode(), sandbox_mode::read_only);
}

TEST(SandboxUnavailable, ExactMessageForWorkspaceWrite) {
    const std::string expected = expected_message("workspace-write");
    EXPECT_EQ(sandbox_unavailable_message(sandbox_mode::workspace_write, std::nullopt), expected);
    sandbox_unavailable_error error(sandbox_mode::workspace_write);
    EXPECT_EQ(std::string(error.what()), expected);
    EXPECT_EQ(error.mode(), sandbox_mode::workspace_write);
}

TEST(SandboxUnavailable, EmDashesAreUtf8U2014) {
    const std::string message = sandbox_unavailable_message(sandbox_mode::read_only, std::nullopt);
    std::size_t dashes = 0;
    for (std::size_t at = message.find("\xE2\x80\x94"); at != std::string::npos;
         at = message.find("\xE2\x80\x94", at + 1)) {
        ++dashes;
    }
    EXPECT_EQ(dashes, 2u);
    EXPECT_EQ(message.find(" - "), std::string::npos);
    EXPECT_EQ(message.find("--"), std::string::npos);
}

TEST(SandboxUnavailable, RunnerFailureDetailIsAppended) {
    const std::string detail = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted";
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        const std::string expected =
            expected_message(to_string(mode)) + " Runner failure: " + detail;
        EXPECT_EQ(sandbox_unavailable_message(mode, detail), expected);
        sandbox_unavailable_error error(mode, detail);
        EXPECT_EQ(std::string(error.what()), expected);
        ASSERT_TRUE(error.detail().has_value());
        EXPECT_EQ(*error.detail(), detail);
        EXPECT_EQ(error.mode(), mode);
    }
}

TEST(SandboxUnavailable, CodeAndName) {
    sandbox_unavailable_error error(sandbox_mode::read_only, "cordon-landlock: x");
    EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
    EXPECT_EQ(error.name(), "SandboxUnavailableError");
    EXPECT_EQ(sandbox_unavailable_code, "SANDBOX_UNAVAILABLE");
    EXPECT_EQ(sandbox_unavailable_name, "SandboxUnavailableError");
}

TEST(SandboxUnavailable, IsARuntimeErrorAndSurvivesCopy) {
    try {
        throw sandbox_unavailable_error(sandbox_mode::workspace_write, "detail line");
    } catch (const std::runtime_error& caught) {
        EXPECT_THAT(std::string(caught.what()),
                    ::testing::EndsWith(" Runner failure: detail line"));
        const auto* typed = dynamic_cast<const sandbox_unavailable_error*>(&caught);
        ASSERT_NE(typed, nullptr);
        sandbox_unavailable_error copy = *typed;
        EXPECT_EQ(std::string(copy.what()), std::string(caught.what()));
        EXPECT_EQ(copy.detail(), std::optional<std::string>("detail line"));
    }
}

// ---- canonical_path -------------------------------------------------------------------------

TEST(CanonicalPath, ExistingPathIsItsRealpath) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "a" / "b");
    fs::create_symlink(dir.path() / "a", dir.path() / "to-a");
    EXPECT_EQ(canonical_path(dir.path() / "a" / "." / "b"), dir.path() / "a" / "b");
    EXPECT_EQ(canonical_path(dir.path() / "to-a" / "b"), dir.path() / "a" / "b");
    EXPECT_EQ(canonical_path(dir.path() / "a" / "b" / ".."), dir.path() / "a");
    // A trailing separator does not survive.
    EXPECT_EQ(canonical_path(fs::path(dir.path().string() + "/a/b/")), dir.path() / "a" / "b");
    EXPECT_EQ(canonical_path("/"), fs::path("/"));
}

TEST(CanonicalPath, LinkDotDotIsThePhysicalParentOfTheTarget) {
    scratch_dir dir;
    const fs::path nested = dir.path() / "deep" / "er" / "target";
    fs::create_directories(nested);
    fs::create_directories(dir.path() / "links");
    fs::create_symlink(nested, dir.path() / "links" / "link");

    // chdir("links/link/..") lands in deep/er, not in links (the lexical answer).
    const fs::path resolved = canonical_path(dir.path() / "links" / "link" / "..");
    EXPECT_EQ(resolved, dir.path() / "deep" / "er");
    EXPECT_NE(resolved, dir.path() / "links");
    EXPECT_NE(resolved, (dir.path() / "links" / "link" / "..").lexically_normal());

    // A relative symlink resolves the same way.
    fs::create_symlink(fs::path("..") / "deep" / "er" / "target", dir.path() / "links" / "rel");
    EXPECT_EQ(canonical_path(dir.path() / "links" / "rel" / ".." / ".."), dir.path() / "deep");
}

TEST(CanonicalPath, MissingPathIsLexicallyNormalisedAbsolute) {
    scratch_dir dir;
    const fs::path missing = dir.path() / "no" / "such" / ".." / "./thing";
    const fs::path result = canonical_path(missing);
    EXPECT_EQ(result, dir.path() / "no" / "thing");
    EXPECT_TRUE(result.is_absolute());
    EXPECT_FALSE(fs::exists(result));

    // A relative path that does not exist becomes absolute against the working directory.
    const fs::path relative = "cordon-contract-missing-8c1f/x/../y";
    EXPECT_EQ(canonical_path(relative), (fs::current_path() / "cordon-contract-missing-8c1f/y"));
}

// What does not exist yet lies below what does, resolved: a store that a run may create under a
// linked directory is named where the kernel will put it, not where the lexical path points.
TEST(CanonicalPath, AMissingTailIsKeptBelowTheResolvedPart) {
    scratch_dir dir;
    const fs::path nested = dir.path() / "deep" / "er";
    fs::create_directories(nested);
    fs::create_symlink(nested, dir.path() / "link");
    EXPECT_EQ(canonical_path(dir.path() / "link" / ".." / "new" / ".ssh"),
              dir.path() / "deep" / "new" / ".ssh");
    EXPECT_EQ(canonical_path(dir.path() / "link" / "new" / ".." / "other"), nested / "other");
}

// A link that leads nowhere yet leads where a file made through it would be: its target, relative
// or absolute, and what follows kept as written; a file spelled with a trailing "/" is the file;
// links that loop are left as written.
TEST(CanonicalPath, ADanglingLinkLeadsToItsTarget) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "real");
    fs::create_directory_symlink(dir.path() / "real" / "not-yet", dir.path() / "absolute");
    fs::create_directory_symlink(fs::path("real") / "later", dir.path() / "relative");
    EXPECT_EQ(canonical_path(dir.path() / "absolute" / "credentials"),
              dir.path() / "real" / "not-yet" / "credentials");
    EXPECT_EQ(canonical_path(dir.path() / "relative"), dir.path() / "real" / "later");
    test::write_file(dir.path() / "real" / "file", "x");
    EXPECT_EQ(canonical_path(fs::path(dir.path().string() + "/real/file/")),
              dir.path() / "real" / "file");
    EXPECT_EQ(canonical_path(dir.path() / "real" / "file" / "."), dir.path() / "real" / "file");
    // A link after a `..` that steps back out of a missing component is still followed.
    EXPECT_EQ(canonical_path(dir.path() / "missing" / ".." / "absolute" / "x"),
              dir.path() / "real" / "not-yet" / "x");
    fs::create_symlink(dir.path() / "loop-b", dir.path() / "loop-a");
    fs::create_symlink(dir.path() / "loop-a", dir.path() / "loop-b");
    EXPECT_EQ(canonical_path(dir.path() / "loop-a" / "x"), dir.path() / "loop-a" / "x");
}

// ---- writable_roots -------------------------------------------------------------------------

TEST(WritableRoots, EmptyForReadOnly) {
    scoped_env tmpdir("TMPDIR", std::string("/var/tmp"));
    EXPECT_THAT(writable_roots(sandbox_policy{sandbox_mode::read_only, "/tmp"}), IsEmpty());
    EXPECT_THAT(writable_roots(sandbox_policy{sandbox_mode::read_only, "/var"}), IsEmpty());
}

TEST(WritableRoots, WorkspaceTmpIsOneEntry) {
    scoped_env tmpdir("TMPDIR", std::nullopt);
    EXPECT_THAT(writable_roots(sandbox_policy{sandbox_mode::workspace_write, "/tmp"}),
                ElementsAre(fs::canonical("/tmp")));
    scoped_env tmpdir_too("TMPDIR", std::string("/tmp/"));
    EXPECT_THAT(writable_roots(sandbox_policy{sandbox_mode::workspace_write, "/tmp"}),
                ElementsAre(fs::canonical("/tmp")));
}

TEST(WritableRoots, CanonicalAndDeduplicated) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "ws");
    fs::create_symlink(dir.path() / "ws", dir.path() / "ws-link");
    {
        // Workspace named through a symlink, TMPDIR naming the same directory: one entry each.
        scoped_env tmpdir("TMPDIR", (dir.path() / "ws-link" / ".").string());
        EXPECT_THAT(
            writable_roots(sandbox_policy{sandbox_mode::workspace_write, dir.path() / "ws-link"}),
            ElementsAre(dir.path() / "ws", fs::canonical("/tmp")));
    }
    {
        // A distinct TMPDIR is its own root, in canonical form.
        fs::create_directories(dir.path() / "t");
        scoped_env tmpdir("TMPDIR", (dir.path() / "t" / ".." / "t").string());
        EXPECT_THAT(
            writable_roots(sandbox_policy{sandbox_mode::workspace_write, dir.path() / "ws"}),
            ElementsAre(dir.path() / "ws", fs::canonical("/tmp"), dir.path() / "t"));
    }
    {
        // A relative TMPDIR is ignored: it would name a root relative to whatever cwd runs.
        scoped_env tmpdir("TMPDIR", std::string("relative-tmp"));
        EXPECT_THAT(
            writable_roots(sandbox_policy{sandbox_mode::workspace_write, dir.path() / "ws"}),
            ElementsAre(dir.path() / "ws", fs::canonical("/tmp")));
    }
}

}  // namespace
}  // namespace cordon::sandbox

namespace cordon::sandbox {
namespace {

// The stores of the account's own home (the password database's) stay hidden when HOME names
// another directory: both homes are credential homes, each store listed once; when HOME is the
// account's home, it is one home.
TEST(PathRules, TheAccountsHomeIsACredentialHomeWhateverHomeSays) {
    passwd entry{};
    passwd* found = nullptr;
    std::array<char, 4096> buffer{};
    if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
        found == nullptr || found->pw_dir == nullptr || found->pw_dir[0] != '/') {
        GTEST_SKIP() << "this account has no home in the password database";
    }
    const fs::path account = canonical_path(found->pw_dir);
    scratch_dir elsewhere;
    {
        scoped_env pointed("HOME", elsewhere.path().string());
        EXPECT_THAT(credential_homes(), ElementsAre(canonical_path(elsewhere.path()), account));
        const std::vector<fs::path> denied = requested_deny_read(path_rules{});
        for (const fs::path& each : {canonical_path(elsewhere.path()), account}) {
            EXPECT_EQ(std::count(denied.begin(), denied.end(), each / ".ssh"), 1) << each;
            EXPECT_EQ(std::count(denied.begin(), denied.end(), each / ".aws"), 1) << each;
        }
    }
    scoped_env home("HOME", account.string());
    EXPECT_THAT(credential_homes(), ElementsAre(account));
    const std::vector<fs::path> denied = requested_deny_read(path_rules{});
    EXPECT_EQ(std::count(denied.begin(), denied.end(), account / ".ssh"), 1);
}

// A relative $HOME is where the tools started beside cordon look for their stores: the working
// directory's. It is a credential home beside the account's (which stays where quarantine and
// configuration are looked up: a relative home could be inside the workspace).
TEST(PathRules, ARelativeHomeIsACredentialHomeFromTheWorkingDirectory) {
    scoped_env home("HOME", std::string("cordon-relative-home-5d2e"));
    const fs::path resolved = fs::current_path() / "cordon-relative-home-5d2e";
    const std::vector<fs::path> homes = credential_homes();
    EXPECT_EQ(std::count(homes.begin(), homes.end(), resolved), 1);
    EXPECT_NE(invoking_home(), resolved);
    const std::vector<fs::path> denied = requested_deny_read(path_rules{});
    EXPECT_EQ(std::count(denied.begin(), denied.end(), resolved / ".ssh"), 1);
    EXPECT_EQ(std::count(denied.begin(), denied.end(), resolved / ".git-credentials"), 1);
}

// The homes a `~/` protected name is looked for in: the credential homes first, then every
// account of the local password file that can log in, each once; an account whose shell refuses
// logins (nologin, false) has no home of that kind, nor has one whose home is `/`.
TEST(PathRules, TheProtectedHomesAreTheCredentialHomesAndEveryLoginAccountsHome) {
    scratch_dir elsewhere;
    scoped_env pointed("HOME", elsewhere.path().string());
    const std::vector<fs::path> homes = protected_homes();
    const std::vector<fs::path> credentials = credential_homes();
    ASSERT_GE(homes.size(), credentials.size());
    EXPECT_TRUE(std::equal(credentials.begin(), credentials.end(), homes.begin()));
    EXPECT_EQ(std::set<fs::path>(homes.begin(), homes.end()).size(), homes.size());
    EXPECT_THAT(homes, Not(Contains(fs::path("/"))));
    std::set<fs::path> login;
    std::set<fs::path> other;
    std::ifstream file("/etc/passwd");
    for (std::string line; std::getline(file, line);) {
        std::vector<std::string> field;
        std::istringstream fields(line);
        for (std::string each; std::getline(fields, each, ':');)
            field.push_back(each);
        if (field.size() < 7 || field[5].size() < 2 || field[5].front() != '/') continue;
        const bool can = !field[6].ends_with("nologin") && !field[6].ends_with("/false");
        (can ? login : other).insert(canonical_path(field[5]));
    }
    for (const fs::path& home : login)
        EXPECT_THAT(homes, Contains(home));
    for (const fs::path& home : other) {
        if (login.contains(home) ||
            std::find(credentials.begin(), credentials.end(), home) != credentials.end()) {
            continue;
        }
        EXPECT_THAT(homes, Not(Contains(home)));
    }
}

// A protected name is relative, or relative to the homes (`~/`), or `$PATH`; nothing else.
TEST(PathRules, AProtectedNameIsRelativeToARootToTheHomesOrPath) {
    for (const std::string_view good : {".envrc", ".git/hooks", "~/.ssh", "~/.local/bin", "$PATH"})
        EXPECT_EQ(bad_protected_name(good), std::nullopt) << good;
    for (const std::string_view bad :
         {"", "/etc", "~/", "~//x", "~/../x", "~/./x", "a/../b", "~/$PATH/.."}) {
        EXPECT_NE(bad_protected_name(bad), std::nullopt) << bad;
    }
    EXPECT_EQ(home_anchored("~/.ssh"), std::optional<std::string_view>(".ssh"));
    EXPECT_EQ(home_anchored(".ssh"), std::nullopt);
    EXPECT_EQ(home_anchored("$PATH"), std::nullopt);
    // Every default name is well-formed, and in one class only.
    std::set<std::string> seen;
    for (const std::string& name : default_protected_names()) {
        EXPECT_EQ(bad_protected_name(name), std::nullopt) << name;
        EXPECT_TRUE(seen.insert(name).second) << name << " is listed twice";
    }
}

// The stores no list can name where they are: the ones the tools' variables move (a file, a
// directory, a file in a directory, KUBECONFIG's list, a relative value from the working
// directory), the ~/.config stores under XDG_CONFIG_HOME, the keys ssh's configuration names and
// git's `store --file`. Each is denied with the rest of the credential stores, and none without
// them; a value ssh would expand (`%d`), another user's `~user`, `/` or a home names nothing.
TEST(PathRules, StoresTheEnvironmentAndTheUsersConfigsPutElsewhereAreDenied) {
    scratch_dir dir;
    const fs::path s = canonical_path(dir.path());
    const fs::path home = s / "home";
    fs::create_directories(home / ".ssh");
    {
        std::ofstream(home / ".ssh" / "config")
            << "Host deploy\n  IdentityFile ~/keys/deploy_key\n  identityfile=\""
            << (s / "a b" / "key").string() << "\"\n# IdentityFile " << (s / "commented").string()
            << "\nCertificateFile %d/.ssh/cert\nIdentityFile ~other/.ssh/id\n";
        std::ofstream(home / ".gitconfig") << "[credential]\n\thelper = store --file ~/git-store\n";
    }
    scoped_env h("HOME", home.string());
    scoped_env kube("KUBECONFIG", (s / "a.yml").string() + ":" + (s / "b.yml").string());
    scoped_env docker("DOCKER_CONFIG", (s / "docker").string());
    scoped_env cargo("CARGO_HOME", (s / "cargo").string());
    scoped_env aws("AWS_SHARED_CREDENTIALS_FILE", (s / "aws-credentials").string());
    scoped_env xdg("XDG_CONFIG_HOME", (s / "xdg").string());
    scoped_env codex("CODEX_HOME", (s / "codex").string());
    scoped_env pg("PGPASSFILE", std::string("cordon-relative-pgpass-5d2e"));
    scoped_env root("DOCKER_CERT_PATH", std::string("/"));
    scoped_env whole_home("GNUPGHOME", home.string() + "/");
    const std::vector<fs::path> expected{s / "a.yml",
                                         s / "b.yml",
                                         s / "docker" / "config.json",
                                         s / "cargo" / "credentials.toml",
                                         s / "cargo" / "credentials",
                                         s / "aws-credentials",
                                         s / "xdg" / "gcloud",
                                         s / "xdg" / "gh" / "hosts.yml",
                                         s / "codex" / "auth.json",
                                         fs::current_path() / "cordon-relative-pgpass-5d2e",
                                         home / "keys" / "deploy_key",
                                         s / "a b" / "key",
                                         home / "git-store",
                                         home / ".claude" / ".credentials.json",
                                         home / ".pgpass"};
    const std::vector<fs::path> denied = requested_deny_read(path_rules{});
    for (const fs::path& each : expected)
        EXPECT_EQ(std::count(denied.begin(), denied.end(), each), 1) << each;
    for (const fs::path& each : denied) {
        EXPECT_EQ(each.string().find('%'), std::string::npos) << each;
        EXPECT_EQ(each.string().find('~'), std::string::npos) << each;
        EXPECT_NE(each, s / "commented");
        EXPECT_NE(each, home) << "a store is never the whole home";
        EXPECT_NE(each, fs::path("/")) << "nor every file";
    }
    path_rules off;
    off.deny_credential_stores = false;
    EXPECT_TRUE(requested_deny_read(off).empty());
}

// The ways ssh and git let a configuration name a store, as they read them: CRLF lines, ssh's
// Include (relative to ~/.ssh, a glob), `${HOME}` and `%d`, git's quoted helper, a section header
// on the helper's line, include.path (relative to the including file), GIT_CONFIG_GLOBAL. A value
// with a variable cordon cannot know is no path (never one relative to the working directory).
TEST(PathRules, EverySpellingSshAndGitTakeNamesItsStore) {
    scratch_dir dir;
    const fs::path s = canonical_path(dir.path());
    const fs::path home = s / "home";
    fs::create_directories(home / ".ssh" / "config.d");
    fs::create_directories(s / "git");
    const auto write = [](const fs::path& path, const std::string& text) {
        std::ofstream(path) << text;
    };
    write(home / ".ssh" / "config", "Host a\r\n  IdentityFile " + (s / "crlf").string() +
                                        "\r\nInclude config.d/*.conf\n"
                                        "IdentityFile ${HOME}/braced\nIdentityFile $HOME/plain\n"
                                        "IdentityFile %d/percent\nIdentityFile $OTHER/unknown\n");
    write(home / ".ssh" / "config.d" / "work.conf", "Host w\n  IdentityFile ~/included\n");
    write(s / "git" / "global", "[credential] helper = \"store --file=" + (s / "quoted").string() +
                                    "\"\r\n[include]\n\tpath = more.inc\n");
    write(s / "git" / "more.inc", "[credential]\n\thelper = store --file $HOME/git-included\n");
    scoped_env h("HOME", home.string());
    scoped_env global("GIT_CONFIG_GLOBAL", (s / "git" / "global").string());
    scoped_env claude("CLAUDE_CONFIG_DIR", (s / "claude").string());
    scoped_env gradle("GRADLE_USER_HOME", (s / "gradle").string());
    const std::vector<fs::path> denied = requested_deny_read(path_rules{});
    for (const fs::path& each :
         {s / "crlf", home / "included", home / "braced", home / "plain", home / "percent",
          s / "quoted", home / "git-included", s / "claude" / ".credentials.json",
          s / "claude" / ".claude.json", s / "gradle" / "gradle.properties"}) {
        EXPECT_EQ(std::count(denied.begin(), denied.end(), each), 1) << each;
    }
    for (const fs::path& each : denied) {
        EXPECT_EQ(each.string().find('$'), std::string::npos) << each;
        EXPECT_EQ(each.string().find('\r'), std::string::npos) << each;
        EXPECT_EQ(each.string().find('"'), std::string::npos) << each;
        EXPECT_NE(each.filename(), "unknown") << each;
    }
}

// What stands at a configuration's name is read only when it is a file: a FIFO there (which
// nobody will ever write) or a device is no configuration, and planning a run never waits on it.
TEST(PathRules, AConfigurationThatIsAFifoOrADeviceIsNoConfiguration) {
    scratch_dir dir;
    const fs::path home = canonical_path(dir.path()) / "home";
    fs::create_directories(home / ".ssh");
    ASSERT_EQ(::mkfifo((home / ".ssh" / "config").c_str(), 0600), 0);
    fs::create_symlink("/dev/zero", home / ".gitconfig");
    scoped_env h("HOME", home.string());
    const auto started = std::chrono::steady_clock::now();
    const std::vector<fs::path> denied = requested_deny_read(path_rules{});
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
    EXPECT_EQ(std::count(denied.begin(), denied.end(), home / ".ssh"), 1);
}

// Configurations that include themselves ten times over are read a bounded number of times (at
// depth 8, 10^8 reads), and what they name is still found.
TEST(PathRules, ConfigurationsThatIncludeThemselvesAreReadBoundedly) {
    scratch_dir dir;
    const fs::path home = canonical_path(dir.path()) / "home";
    fs::create_directories(home / ".ssh");
    std::string ssh = "Include";
    std::string git = "[include]\n";
    for (int i = 0; i < 10; ++i) {
        ssh += " config";
        git += "\tpath = .gitconfig\n";
    }
    std::ofstream(home / ".ssh" / "config") << ssh << "\nIdentityFile ~/key\n";
    std::ofstream(home / ".gitconfig") << git << "[credential]\n\thelper = store --file ~/store\n";
    scoped_env h("HOME", home.string());
    const auto started = std::chrono::steady_clock::now();
    const std::vector<fs::path> denied = requested_deny_read(path_rules{});
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
    EXPECT_EQ(std::count(denied.begin(), denied.end(), home / "key"), 1);
    EXPECT_EQ(std::count(denied.begin(), denied.end(), home / "store"), 1);
}

// A default-constructed policy (and with it a run_request) reads nothing: the credential stores
// are looked up when a run is planned, in the HOME of that moment, not when the rules were made.
TEST(PathRules, DefaultConstructionLooksNothingUpAndPlanningDoes) {
    scratch_dir first;
    scratch_dir second;
    fs::create_directory(first.path() / ".ssh");
    fs::create_directory(second.path() / ".ssh");
    std::optional<path_rules> rules;
    {
        scoped_env home("HOME", first.path().string());
        rules.emplace();
    }
    EXPECT_TRUE(rules->deny_read.empty());
    EXPECT_TRUE(rules->deny_credential_stores);
    scoped_env home("HOME", second.path().string());
    const std::vector<fs::path> denied = effective_deny_read(*rules);
    EXPECT_THAT(denied, ::testing::Contains(canonical_path(second.path()) / ".ssh"));
    EXPECT_THAT(denied, ::testing::Not(::testing::Contains(canonical_path(first.path()) / ".ssh")));

    // What `cordon config show` lists: the stores, then what was asked, each once.
    rules->deny_read = {canonical_path(second.path()) / ".ssh", "/nowhere/in/particular"};
    const std::vector<fs::path> requested = requested_deny_read(*rules);
    EXPECT_EQ(
        std::count(requested.begin(), requested.end(), canonical_path(second.path()) / ".ssh"), 1);
    EXPECT_EQ(requested.back(), fs::path("/nowhere/in/particular"));

    rules->deny_credential_stores = false;
    rules->deny_read = {"/nowhere/in/particular"};
    EXPECT_THAT(effective_deny_read(*rules), ElementsAre(fs::path("/nowhere/in/particular")));
}

}  // namespace
}  // namespace cordon::sandbox
