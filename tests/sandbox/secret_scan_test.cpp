// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The content scan of the homes (sandbox/secret_scan.hpp): what it recognises and what it must
// not, the bounds it keeps (depth, links, FIFOs, other filesystems, large files, skipped trees),
// its cache (reused, invalidated, refused when it is not this user's own), and how its findings
// fit the paths a run may deny.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cordon/policy.hpp"
#include "sandbox/path_plan.hpp"
#include "sandbox/secret_scan.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

// A key body line: 64 base64 characters, as PEM writes them.
const std::string body_line = std::string(64, 'A') + "\n";

std::string pem(std::string_view label) {
    return "-----BEGIN " + std::string(label) + "-----\n" + body_line + body_line + "-----END " +
           std::string(label) + "-----\n";
}

const std::string github_token = "ghp_" + std::string(36, 'x');

// ---- recognise() -------------------------------------------------------------------------------

TEST(SecretShapes, PemPrivateKeysOfEveryKind) {
    for (std::string_view label :
         {"RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
          "OPENSSH PRIVATE KEY", "DSA PRIVATE KEY"}) {
        EXPECT_EQ(recognise(pem(label)), secret_kind::pem_private_key) << label;
    }
    // An encrypted legacy key has headers before its body; PGP an empty line as well.
    EXPECT_EQ(recognise("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: "
                        "AES-128-CBC,00FF\n\n" +
                        body_line),
              secret_kind::pem_private_key);
    EXPECT_EQ(recognise("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + body_line),
              secret_kind::pem_private_key);
    // CRLF, and a key after the certificates of a bundle.
    EXPECT_EQ(recognise("-----BEGIN PRIVATE KEY-----\r\n" + body_line),
              secret_kind::pem_private_key);
    EXPECT_EQ(recognise(pem("CERTIFICATE") + pem("PRIVATE KEY")), secret_kind::pem_private_key);
}

TEST(SecretShapes, PublicKeysCertificatesAndProseAreNone) {
    EXPECT_EQ(recognise(pem("PUBLIC KEY")), secret_kind::none);
    EXPECT_EQ(recognise(pem("RSA PUBLIC KEY")), secret_kind::none);
    EXPECT_EQ(recognise(pem("CERTIFICATE")), secret_kind::none);
    EXPECT_EQ(recognise(pem("PGP PUBLIC KEY BLOCK")), secret_kind::none);
    EXPECT_EQ(recognise("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB me@host\n"), secret_kind::none);
    EXPECT_EQ(recognise("# Setup\nPut your PRIVATE KEY in ~/.ssh and never commit it.\n"),
              secret_kind::none);
    // The line quoted in documentation, without a key under it.
    EXPECT_EQ(recognise("A key starts with `-----BEGIN RSA PRIVATE KEY-----` and ends with ...\n"),
              secret_kind::none);
    EXPECT_EQ(recognise("-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE "
                        "KEY-----\n"),
              secret_kind::none);
}

TEST(SecretShapes, PuttyKeys) {
    EXPECT_EQ(recognise("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\n"
                        "Public-Lines: 2\nAAAA\nAAAA\nPrivate-Lines: 1\nAAAA\n"),
              secret_kind::putty_key);
    EXPECT_EQ(recognise("PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 14\n"),
              secret_kind::putty_key);
    EXPECT_EQ(recognise("Convert the PuTTY-User-Key-File-2 with puttygen.\nPrivate-Lines: n\n"),
              secret_kind::none);
    EXPECT_EQ(recognise("---- BEGIN SSH2 PUBLIC KEY ----\nPuTTY-User-Key-File-2\n"),
              secret_kind::none);
}

TEST(SecretShapes, GoogleCredentials) {
    EXPECT_EQ(recognise(R"({
  "type": "service_account",
  "project_id": "p",
  "private_key_id": "0123",
  "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n",
  "client_email": "sa@p.iam.gserviceaccount.com"
})"),
              secret_kind::gcp_service_account);
    EXPECT_EQ(recognise(R"({"client_id": "1", "client_secret": "s", "refresh_token": "1//0g",
 "type": "authorized_user"})"),
              secret_kind::gcp_user_credentials);
    // A service account named without its key, or with an empty one, holds no secret.
    EXPECT_EQ(recognise(R"({"type": "service_account", "client_email": "sa@p"})"),
              secret_kind::none);
    EXPECT_EQ(recognise(R"({"type": "service_account", "private_key": ""})"), secret_kind::none);
    EXPECT_EQ(recognise(R"({"type": "user", "private_key": "x"})"), secret_kind::none);
}

TEST(SecretShapes, AwsSecretKeys) {
    const std::string secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY1234567890";  // 40
    ASSERT_EQ(secret.size(), 40u);
    EXPECT_EQ(
        recognise("[default]\naws_access_key_id = x\naws_secret_access_key = " + secret + "\n"),
        secret_kind::aws_secret_key);
    EXPECT_EQ(recognise("AWS_SECRET_ACCESS_KEY=" + secret + "\n"), secret_kind::aws_secret_key);
    EXPECT_EQ(recognise("{\"SecretAccessKey\": \"" + secret + "\"}"), secret_kind::aws_secret_key);
    // AWS's documentation key, a value of another length, a name without a value.
    EXPECT_EQ(recognise("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"),
              secret_kind::none);
    EXPECT_EQ(recognise("aws_secret_access_key = " + secret.substr(1) + "\n"), secret_kind::none);
    EXPECT_EQ(recognise("Set aws_secret_access_key in ~/.aws/credentials.\n"), secret_kind::none);
}

TEST(SecretShapes, IssuerTokens) {
    for (const std::string& token :
         {github_token, "gho_" + std::string(36, 'a'), "github_pat_" + std::string(60, 'b'),
          "glpat-" + std::string(20, 'c'), "xoxb-1234-" + std::string(24, 'd'),
          "xoxp-" + std::string(30, 'e'), "sk-ant-api03-" + std::string(40, 'f'),
          std::string("AKIAABCDEFGHIJKLMNOP")}) {
        EXPECT_EQ(recognise("token: " + token + "\n"), secret_kind::issuer_token) << token;
    }
    EXPECT_EQ(recognise("export GITHUB_TOKEN=ghp_short\n"), secret_kind::none);
    EXPECT_EQ(recognise("cache in /opt/hf_models_cache_directory_of_mine_here\n"),
              secret_kind::none);
    // AWS's documentation key id.
    EXPECT_EQ(recognise("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"), secret_kind::none);
}

// ---- scan_home() -------------------------------------------------------------------------------

class SecretScan : public ::testing::Test {
protected:
    void put(const fs::path& relative, std::string_view text) const {
        fs::create_directories((home_.path() / relative).parent_path());
        test::write_file(home_.path() / relative, text);
    }
    [[nodiscard]] std::vector<fs::path> scan(const scan_limits& limits = {},
                                             const std::vector<fs::path>& skip = {}) const {
        return scan_home(home_.path(), skip, limits).found;
    }
    [[nodiscard]] fs::path at(const fs::path& relative) const { return home_.path() / relative; }

    test::temp_dir home_{"/var/tmp", "cordon-secret-home-"};
};

TEST_F(SecretScan, FindsKeysWhereNoListNamesThem) {
    put("work/old/deploy_key", pem("OPENSSH PRIVATE KEY"));
    put("Downloads/project-1234.json",
        R"({"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMII"})");
    put("notes.txt", "my token " + github_token + "\n");
    put("work/old/deploy_key.pub", "ssh-ed25519 AAAAC3Nza me@host\n");
    put("README.md", "Keep the PRIVATE KEY out of the repository.\n");
    EXPECT_THAT(scan(), ElementsAre(at("Downloads/project-1234.json"), at("notes.txt"),
                                    at("work/old/deploy_key")));
}

TEST_F(SecretScan, StopsAtTheDepthLimit) {
    put("a/b/key.pem", pem("PRIVATE KEY"));
    put("a/b/c/d/key.pem", pem("PRIVATE KEY"));
    scan_limits shallow;
    shallow.depth = 2;
    EXPECT_THAT(scan(shallow), ElementsAre(at("a/b/key.pem")));
    EXPECT_THAT(scan(), ElementsAre(at("a/b/c/d/key.pem"), at("a/b/key.pem")));
}

TEST_F(SecretScan, StopsAtTheDirectoryAndFileLimits) {
    for (int i = 0; i < 20; ++i)
        put("d" + std::to_string(i) + "/key", pem("PRIVATE KEY"));
    scan_limits few;
    few.directories = 5;  // the home and four of its directories
    EXPECT_EQ(scan_home(home_.path(), {}, few).found.size(), 4u);
    EXPECT_EQ(scan_home(home_.path(), {}, few).stopped, "directory limit");
    few = {};
    few.files = 3;
    EXPECT_EQ(scan(few).size(), 3u);
}

TEST_F(SecretScan, FollowsNoSymlinkAndSurvivesALoop) {
    put("real/key", pem("PRIVATE KEY"));
    fs::create_directory_symlink(home_.path(), at("real/loop"));
    fs::create_directory_symlink(at("real"), at("again"));
    fs::create_symlink(at("real/key"), at("link_to_key"));
    fs::create_symlink("/etc/shadow", at("shadow"));
    EXPECT_THAT(scan(), ElementsAre(at("real/key")));
}

TEST_F(SecretScan, NeverOpensAFifoOrADevice) {
    ASSERT_EQ(::mkfifo(at("id_rsa").c_str(), 0600), 0);
    put("key", pem("PRIVATE KEY"));
    // A FIFO opened for reading without O_NONBLOCK would wait for a writer forever.
    EXPECT_THAT(scan(), ElementsAre(at("key")));
}

TEST_F(SecretScan, ReadsTheHeadOfFilesUnderTheSizeCap) {
    put("large.pem", pem("PRIVATE KEY") + std::string(2 << 20, '\n'));
    put("late.txt", std::string(16384, 'x') + "\n" + github_token + "\n");
    // A PEM bundle is read further: its key may follow the certificates.
    std::string bundle;
    while (bundle.size() < 20000)
        bundle += pem("CERTIFICATE");
    put("bundle.pem", bundle + pem("PRIVATE KEY"));
    EXPECT_THAT(scan(), ElementsAre(at("bundle.pem")));
}

TEST_F(SecretScan, SkipsTreesOfToolsAndTheStoresAlreadyHidden) {
    put("project/node_modules/pkg/test/key.pem", pem("PRIVATE KEY"));
    put(".cache/pip/key.pem", pem("PRIVATE KEY"));
    put(".venv/lib/key.pem", pem("PRIVATE KEY"));
    put("project/.git/objects/ab/key", pem("PRIVATE KEY"));
    put(".ssh/id_ed25519", pem("OPENSSH PRIVATE KEY"));
    // A token in a remote's URL is read from a repository's config.
    put("project/.git/config",
        "[remote \"origin\"]\n\turl = https://x:" + github_token + "@github.com/a/b\n");
    EXPECT_THAT(scan({}, {at(".ssh")}), ElementsAre(at("project/.git/config")));
}

// cordon's quarantine, a directory per judgement, grows by thousands in a busy week: entered, it
// would spend the scan's directory budget before the user's own trees, and a stat of each of its
// directories on every run.
TEST_F(SecretScan, CordonsOwnStateIsNotEntered) {
    for (int i = 0; i < 12; ++i)
        put(".local/state/cordon/quarantine/2026-12-07T12-00-0" + std::to_string(i % 10) + "Z-1-" +
                std::to_string(i) + "/ws/.git/hooks/pre-commit",
            "#!/bin/sh\n");
    put(".local/state/other-tool/key.pem", pem("PRIVATE KEY"));
    put("work/key", pem("PRIVATE KEY"));
    const scan_result result = scan_home(home_.path(), {}, {});
    EXPECT_THAT(result.found, ElementsAre(at(".local/state/other-tool/key.pem"), at("work/key")));
    for (const fs::path& read : result.directories)
        EXPECT_FALSE(read.string().starts_with(".local/state/cordon")) << read;
    EXPECT_NE(
        std::find(result.directories.begin(), result.directories.end(), fs::path(".local/state")),
        result.directories.end());
}

TEST_F(SecretScan, EntersNoOtherFilesystem) {
    put("key", pem("PRIVATE KEY"));
    fs::create_directories(at("mnt"));
    // A child of its own, in a mount namespace of its own: a tmpfs mounted there holds a key.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", at("mnt").c_str(), "tmpfs", 0, nullptr) != 0) {
            ::_exit(77);
        }
        test::write_file(at("mnt/key"), pem("PRIVATE KEY"));
        const auto found = scan_home(home_.path(), {}, {}).found;
        ::_exit(found == std::vector<fs::path>{at("key")} ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot mount a tmpfs in a mount namespace";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the key on the other filesystem was reported";
}

// ---- the cache ---------------------------------------------------------------------------------

class SecretCache : public SecretScan {
protected:
    [[nodiscard]] found_secrets_result look() const {
        secret_cache_options options;
        options.directory = cache_.path() / "secrets";
        options.lifetime = lifetime_;
        options.settle = settle_;
        options.trust = trust_;
        options.own = own_;
        options.limits = limits_;
        return found_secrets(home_.path(), {}, options);
    }
    // Past the filesystem clock's tick: a change made now shows in a directory's times.
    static void next_tick() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }
    [[nodiscard]] fs::path cache_file() const {
        for (const auto& entry : fs::directory_iterator(cache_.path() / "secrets")) {
            if (entry.path().filename().string().starts_with("home-")) return entry.path();
        }
        return {};
    }

    test::temp_dir cache_{"/var/tmp", "cordon-secret-cache-"};
    std::chrono::seconds lifetime_{600};
    std::chrono::milliseconds settle_{0};
    std::chrono::milliseconds trust_{0};  // every look looks, but where a test says otherwise
    std::vector<fs::path> own_;
    scan_limits limits_;
};

// A run's own root in the home is not entered: whatever the run wrote there (more keys than the
// scan keeps, more files than it reads) spends none of the bounds that find the keys elsewhere.
// Its records stand for a run that does enter it, and a summary made without one run's root is
// not trusted by another run.
TEST_F(SecretCache, ARunsOwnRootSpendsNoneOfTheBounds) {
    put("work/old/deploy_key", pem("OPENSSH PRIVATE KEY"));
    for (int i = 0; i < 1100; ++i)
        put("proj/k" + std::to_string(i), pem("PRIVATE KEY"));
    // Breadth first, the planted keys a level above the key end the scan before it is read.
    EXPECT_THAT(look().found, Not(Contains(at("work/old/deploy_key"))));
    own_ = {at("proj")};
    EXPECT_THAT(look().found, ElementsAre(at("work/old/deploy_key")));
    EXPECT_THAT(look().found, ElementsAre(at("work/old/deploy_key")));
    // Another run, in a root elsewhere, within the trust window: it does not take the first
    // run's summary, which left out the first run's keys.
    trust_ = std::chrono::milliseconds(60'000);
    (void)look();
    own_ = {at("work")};
    const auto other = look();
    EXPECT_THAT(other.found, Contains(at("proj/k7")));
    EXPECT_THAT(other.found, Not(Contains(at("work/old/deploy_key"))));
}

// What one run planted in its root spends the bounds of another run's scan only after the rest of
// the home is read: a run in ~/proj that made more files, or more directories, than the scan reads
// (a level above the key) cannot blind the scan of a run in ~/other to ~/work/old/deploy_key. The
// roots are remembered by every run, a run that took a summary without looking too.
TEST_F(SecretCache, WhatAnotherRunPlantedIsReadLast) {
    put("work/old/deploy_key", pem("OPENSSH PRIVATE KEY"));
    for (int i = 0; i < 300; ++i)
        put("proj/junk" + std::to_string(i), "nothing\n");
    for (int i = 0; i < 300; ++i)
        fs::create_directories(at("proj/tree/d" + std::to_string(i)));
    limits_.files = 200;
    limits_.directories = 64;
    // Breadth first, ~/proj is read before ~/work/old and spends the files.
    EXPECT_THAT(look().found, Not(Contains(at("work/old/deploy_key"))));
    // The planting run, whose call takes the summary of the call before it (the trust window)
    // without a look: its root is noted all the same.
    trust_ = std::chrono::milliseconds(60'000);
    own_ = {at("proj")};
    (void)look();
    for (const auto& entry : fs::directory_iterator(cache_.path() / "secrets")) {
        if (entry.path().filename().string().starts_with("roots-")) fs::remove(entry.path());
    }
    EXPECT_TRUE(look().cached);
    // The next run scans the whole home (the records expired).
    trust_ = std::chrono::milliseconds(0);
    own_ = {at("other")};
    fs::create_directories(at("other"));
    fs::remove(cache_file());
    EXPECT_THAT(look().found, ElementsAre(at("work/old/deploy_key")));
    // Every earlier root is read last, and still read: a key in one is found when the bounds
    // leave room.
    put("proj/old.pem", pem("RSA PRIVATE KEY"));
    limits_ = {};
    EXPECT_THAT(look().found, ElementsAre(at("proj/old.pem"), at("work/old/deploy_key")));
}

// Each earlier root is read in a lane of its own, with an equal share of what the bounds leave: a
// run that planted more directories and files than the bounds allow in ~/ws1 keeps back no key
// of ~/ws3, another run's workspace. A run whose workspace was the home itself, or one within a
// root already noted, notes nothing (the one would put the whole home last, the other pushes
// nothing out).
TEST_F(SecretCache, WhatOneRunPlantedKeepsBackNoKeyOfAnotherRunsRoot) {
    put("ws3/a/b/deploy_key", pem("OPENSSH PRIVATE KEY"));
    put("notes/x/y/key", pem("RSA PRIVATE KEY"));
    for (int i = 0; i < 300; ++i) {
        put("ws1/junk" + std::to_string(i), "nothing\n");
        fs::create_directories(at("ws1/d" + std::to_string(i) + "/e"));
    }
    limits_.files = 200;
    limits_.directories = 64;
    for (const fs::path& root : {at("ws3"), at("ws1"), home_.path(), at("ws1/d7/e")}) {
        own_ = {root};
        (void)look();
    }
    fs::path roots;
    for (const auto& entry : fs::directory_iterator(cache_.path() / "secrets")) {
        if (entry.path().filename().string().starts_with("roots-")) roots = entry.path();
    }
    const std::string noted = test::read_file(roots);
    EXPECT_EQ(std::count(noted.begin(), noted.end(), '\n'), 4) << noted;  // header, home, 2 roots
    own_ = {at("other")};
    fs::create_directories(at("other"));
    fs::remove(cache_file());
    EXPECT_THAT(look().found, ElementsAre(at("notes/x/y/key"), at("ws3/a/b/deploy_key")));
}

// A lane's share holds its matches and its time too: a run that planted more keys than the scan
// keeps, or heads slow to read (64 KiB PEM-led files), in one directory of its workspace, stops
// its own lane there, and the scan goes on to the key in another run's root.
TEST_F(SecretCache, ALaneStopsAtItsShareOfMatchesAndOfTime) {
    put("ws3/sub/key", pem("OPENSSH PRIVATE KEY"));
    for (const fs::path& root : {at("ws3"), at("ws1")}) {
        fs::create_directories(root);
        own_ = {root};
        (void)look();
    }
    own_ = {at("other")};
    fs::create_directories(at("other"));
    for (int i = 0; i < 1100; ++i)
        put("ws1/k" + std::to_string(i), pem("PRIVATE KEY"));
    EXPECT_THAT(look().found, Contains(at("ws3/sub/key")));
    EXPECT_THAT(look().found, Contains(at("ws3/sub/key"))) << "from the cache";
    fs::remove_all(at("ws1"));
    fs::remove(cache_file());
    std::string slow = "-----BEGIN CERTIFICATE-----\n";
    while (slow.size() < 65536)
        slow += "secret_access_key = " + std::string(39, 'A') + "\n";
    for (int i = 0; i < 400; ++i)
        put("ws1/f" + std::to_string(i), slow);
    limits_.deadline = std::chrono::milliseconds(200);
    EXPECT_THAT(look().found, ElementsAre(at("ws3/sub/key")));
}

// More earlier roots than the bounds leave file heads for: each lane still has a share of one,
// and the roots are read until the bounds themselves end the walk (a share rounded down to none
// read none of them).
TEST_F(SecretCache, MoreLanesThanTheBoundsLeaveStillRead) {
    for (int i = 0; i < 6; ++i) {
        const std::string root = "ws" + std::to_string(i);
        put(root + "/key", pem("OPENSSH PRIVATE KEY"));
        own_ = {at(root)};
        (void)look();
    }
    for (int i = 0; i < 3; ++i)
        put("note" + std::to_string(i), "nothing\n");
    own_ = {at("other")};
    fs::create_directories(at("other"));
    fs::remove(cache_file());
    limits_.files = 5;  // the home's three, and two of the six roots' keys
    EXPECT_EQ(look().found.size(), 2U);
}

// A name with a newline cannot be a line of the cache: the file is found all the same, on every
// look, from the cache, and within the trust window, and so is a key in a directory so named.
TEST_F(SecretCache, ANameWithANewlineIsFoundEveryTime) {
    put("old/id\nrsa", pem("OPENSSH PRIVATE KEY"));
    put("odd\ndir/key", pem("RSA PRIVATE KEY"));
    put("plain/key", pem("RSA PRIVATE KEY"));
    const auto all = ElementsAre(at("odd\ndir/key"), at("old/id\nrsa"), at("plain/key"));
    EXPECT_THAT(look().found, all);
    EXPECT_THAT(look().found, all);
    trust_ = std::chrono::milliseconds(60'000);
    EXPECT_THAT(look().found, all);
    EXPECT_THAT(look().found, all);
}

// Within the trust window, what the last look found is taken without a look at the directories:
// a key made meanwhile is found by the first look after it. A summary that is not this user's
// own, names a file outside the home, or is from later than now is no summary.
TEST_F(SecretCache, WhatWasFoundIsTakenAsItIsForAWhile) {
    put("a/key", pem("PRIVATE KEY"));
    trust_ = std::chrono::milliseconds(60'000);
    ASSERT_FALSE(look().cached);
    next_tick();
    put("b/new_key", pem("PRIVATE KEY"));
    const auto trusted = look();
    EXPECT_TRUE(trusted.cached);
    EXPECT_THAT(trusted.found, ElementsAre(at("a/key")));
    trust_ = std::chrono::milliseconds(0);
    EXPECT_THAT(look().found, ElementsAre(at("a/key"), at("b/new_key")));
    // Planted summaries: open to others, naming a path outside the home, from the future.
    trust_ = std::chrono::milliseconds(60'000);
    fs::path summary;
    for (const auto& entry : fs::directory_iterator(cache_.path() / "secrets")) {
        if (entry.path().filename().string().starts_with("found-")) summary = entry.path();
    }
    ASSERT_FALSE(summary.empty());
    const std::string text = test::read_file(summary);
    const auto planted = [&](const std::string& content, fs::perms perms) {
        test::write_file(summary, content, perms);
        const auto seen = look();
        EXPECT_THAT(seen.found, ElementsAre(at("a/key"), at("b/new_key"))) << content;
    };
    const fs::perms mine = fs::perms::owner_read | fs::perms::owner_write;
    const std::size_t first_key = text.find(at("a/key").string());
    ASSERT_NE(first_key, std::string::npos) << text;
    planted(text.substr(0, first_key), mine | fs::perms::others_read);
    planted(text.substr(0, first_key) + "/etc/passwd\n", mine);
    const std::size_t looked = text.find("looked ");
    planted(text.substr(0, looked) + "looked 9223372036854775807\n", mine);
}

TEST_F(SecretCache, ReusedWhileNothingChanged) {
    put("a/b/key", pem("PRIVATE KEY"));
    put("c/d/e/notes", "nothing\n");
    const auto first = look();
    EXPECT_FALSE(first.cached);
    EXPECT_THAT(first.found, ElementsAre(at("a/b/key")));
    const auto second = look();
    EXPECT_TRUE(second.cached);
    EXPECT_EQ(second.found, first.found);
    EXPECT_EQ(fs::status(cache_.path() / "secrets").permissions(), fs::perms::owner_all);
}

TEST_F(SecretCache, ANewKeyFileIsFound) {
    put("a/b/key", pem("PRIVATE KEY"));
    put("c/d/notes", "nothing\n");
    ASSERT_FALSE(look().cached);
    ASSERT_TRUE(look().cached);
    next_tick();
    put("c/d/new_key", pem("OPENSSH PRIVATE KEY"));
    const auto after = look();
    EXPECT_FALSE(after.cached);
    EXPECT_THAT(after.found, ElementsAre(at("a/b/key"), at("c/d/new_key")));
    // A new directory holding one, and a key removed.
    next_tick();
    put("c/d/f/g/key.json", R"({"type": "service_account", "private_key": "k"})");
    fs::remove(at("a/b/key"));
    EXPECT_THAT(look().found, ElementsAre(at("c/d/f/g/key.json"), at("c/d/new_key")));
    EXPECT_TRUE(look().cached);
}

TEST_F(SecretCache, ADirectoryChangedJustBeforeItWasReadIsReadAgain) {
    settle_ = std::chrono::milliseconds(60'000);
    put("a/key", pem("PRIVATE KEY"));
    ASSERT_FALSE(look().cached);
    EXPECT_FALSE(look().cached);
    settle_ = std::chrono::milliseconds(0);
    EXPECT_FALSE(look().cached);
    EXPECT_TRUE(look().cached);
}

TEST_F(SecretCache, AnExpiredCacheIsScannedAgain) {
    put("key", pem("PRIVATE KEY"));
    ASSERT_FALSE(look().cached);
    lifetime_ = std::chrono::seconds(-1);
    EXPECT_FALSE(look().cached);
}

TEST_F(SecretCache, ACacheThatIsNotThisUsersOwnIsRefused) {
    put("a/key", pem("PRIVATE KEY"));
    ASSERT_FALSE(look().cached);
    const fs::path file = cache_file();
    ASSERT_FALSE(file.empty());
    // Planted: the same scan with its finding taken out, open to others.
    std::string text = test::read_file(file);
    const std::size_t line = text.find("\nf key\n");
    ASSERT_NE(line, std::string::npos) << text;
    text.erase(line, 6);
    test::write_file(file, text,
                     fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                         fs::perms::others_read);
    EXPECT_FALSE(look().cached);
    EXPECT_THAT(look().found, ElementsAre(at("a/key")));
    // Another user's, however private.
    test::write_file(cache_file(), text, fs::perms::owner_read | fs::perms::owner_write);
    if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
    ASSERT_EQ(::chown(cache_file().c_str(), 65534, 65534), 0);
    const auto refused = look();
    EXPECT_FALSE(refused.cached);
    EXPECT_THAT(refused.found, ElementsAre(at("a/key")));
    // A cache directory of another user's is not used at all.
    ASSERT_EQ(::chown((cache_.path() / "secrets").c_str(), 65534, 65534), 0);
    EXPECT_FALSE(look().cached);
    EXPECT_FALSE(look().cached);
}

TEST_F(SecretCache, ACacheNamingAPathOutsideTheHomeIsRefused) {
    put("a/key", pem("PRIVATE KEY"));
    ASSERT_FALSE(look().cached);
    std::string text = test::read_file(cache_file());
    const std::size_t line = text.find("\nf key\n");
    ASSERT_NE(line, std::string::npos) << text;
    text.replace(line, 7, "\nf ../../../etc/passwd\n");
    test::write_file(cache_file(), text, fs::perms::owner_read | fs::perms::owner_write);
    const auto again = look();
    EXPECT_FALSE(again.cached);
    EXPECT_THAT(again.found, ElementsAre(at("a/key")));
}

TEST_F(SecretCache, ATruncatedCacheIsScannedAgain) {
    put("a/key", pem("PRIVATE KEY"));
    ASSERT_FALSE(look().cached);
    std::string text = test::read_file(cache_file());
    text.pop_back();  // the last line without its newline
    test::write_file(cache_file(), text, fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_FALSE(look().cached);
    EXPECT_TRUE(look().cached);
}

// ---- secrets_to_deny() -------------------------------------------------------------------------

TEST(SecretsToDeny, TheRunsOwnRootsStayReadable) {
    const fs::path home = "/home/me";
    EXPECT_THAT(secrets_to_deny({home / "ws/test/key.pem", home / "old/key", home / ".aws/x"},
                                {home}, {home / "ws"}, {home / ".aws"}, 48),
                ElementsAre(home / "old/key"));
}

TEST(SecretsToDeny, ManyFilesFoldIntoTheDirectoryThatHoldsThem) {
    const fs::path home = "/home/me";
    std::vector<fs::path> found{home / "a.pem", home / "b.pem", home / "ws/x/key"};
    for (int i = 0; i < 10; ++i)
        found.push_back(home / "keys" / ("k" + std::to_string(i)));
    // Never the home itself, nor a directory that holds the workspace.
    EXPECT_THAT(secrets_to_deny(found, {home}, {home / "ws/x/own"}, {}, 4),
                ElementsAre(home / "a.pem", home / "b.pem", home / "keys", home / "ws/x/key"));
    // Files spread one a directory fold into the directory that holds them, the deepest that
    // makes them fit.
    std::vector<fs::path> spread{home / "old/deploy_key"};
    for (int i = 0; i < 30; ++i)
        spread.push_back(home / "src/flood" / ("d" + std::to_string(i)) / "key");
    spread.push_back(home / "src/other/key");
    EXPECT_THAT(secrets_to_deny(spread, {home}, {home / "work"}, {}, 4),
                ElementsAre(home / "old/deploy_key", home / "src/flood", home / "src/other/key"));
    EXPECT_THAT(secrets_to_deny(spread, {home}, {home / "work"}, {}, 2),
                ElementsAre(home / "old/deploy_key", home / "src"));
    // What cannot be folded is left out (and logged), never a failure.
    EXPECT_THAT(secrets_to_deny({home / "a", home / "b", home / "c"}, {home}, {}, {}, 2),
                ElementsAre(home / "a", home / "b"));
    EXPECT_THAT(secrets_to_deny({home / "a"}, {home}, {}, {}, 0), IsEmpty());
}

// When they cannot all be hidden, those left readable are first the ones around the run's own
// roots (where a run beside it could have planted keys to push the user's out), and what is left
// readable is handed back.
TEST(SecretsToDeny, WhatStaysReadableIsFirstWhatLiesAroundTheRunsRoots) {
    const fs::path home = "/home/me";
    std::vector<fs::path> found{home / "zz/victim"};
    for (int i = 0; i < 70; ++i)
        found.push_back(home / "ws1" / ("d" + std::to_string(i)) / "t");
    std::vector<fs::path> left;
    const auto denied = secrets_to_deny(found, {home}, {home / "ws1/sub"}, {}, 48, &left);
    EXPECT_EQ(denied.size(), 48U);
    EXPECT_THAT(denied, Contains(home / "zz/victim"));
    EXPECT_EQ(left.size(), 23U);
    EXPECT_THAT(left, Each(::testing::Truly([&home](const fs::path& path) {
                    return path.string().starts_with((home / "ws1/").string());
                })));
}

// ---- in the policy -----------------------------------------------------------------------------

TEST_F(SecretScan, TheCredentialStoresIncludeTheFilesFound) {
    put("work/old/deploy_key", pem("OPENSSH PRIVATE KEY"));
    put("src/project/test/fixture.pem", pem("PRIVATE KEY"));
    const test::scoped_env home("HOME", home_.path().string());
    EXPECT_THAT(requested_deny_read(path_rules{}), Contains(at("work/old/deploy_key")));
    EXPECT_THAT(requested_deny_read(path_rules{}, {at("src/project")}),
                Not(Contains(at("src/project/test/fixture.pem"))));
    EXPECT_THAT(requested_deny_read(path_rules{}, {at("src/project")}),
                Contains(at("work/old/deploy_key")));
    path_rules off;
    off.deny_credential_stores = false;
    EXPECT_THAT(requested_deny_read(off), Not(Contains(at("work/old/deploy_key"))));
}

// However many keys the user has, a run is planned: what the budget leaves out is folded into
// the directories that hold them.
TEST_F(SecretScan, ManyKeysNeverStopARun) {
    for (int i = 0; i < 150; ++i)
        put("many/d" + std::to_string(i) + "/key", pem("PRIVATE KEY"));
    for (int i = 0; i < 30; ++i)
        put("also/d" + std::to_string(i) + "/key", pem("PRIVATE KEY"));
    put("old/deploy_key", pem("OPENSSH PRIVATE KEY"));
    const test::scoped_env home("HOME", home_.path().string());
    const std::vector<fs::path> denied = requested_deny_read(path_rules{});
    std::size_t in_home = 0;
    for (const fs::path& path : denied) {
        const std::string text = path.string();
        if (text.starts_with(home_.path().string() + "/many") ||
            text.starts_with(home_.path().string() + "/also") ||
            text.starts_with(home_.path().string() + "/old"))
            ++in_home;
    }
    EXPECT_GE(in_home, 1u);
    EXPECT_LE(in_home, 48u);
    EXPECT_THAT(denied, Contains(at("old/deploy_key")));
    EXPECT_THAT(denied, Contains(at("many")));
    // And the plan takes them: no "too many denied reads".
    const auto plan = plan_paths(sandbox_policy(sandbox_mode::read_only, home_.path() / "ws"));
    EXPECT_TRUE(std::holds_alternative<path_plan>(plan)) << std::get<std::string>(plan);
}

}  // namespace
}  // namespace cordon::sandbox
