// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The credentials no list names: files in a home whose content is a private key or a token,
// wherever the user put them (~/work/old/deploy_key, ~/Downloads/project-1234-ab12.json), found
// by what they hold, not by their names, so that a confined run may not read them either
// (requested_deny_read, docs/sandbox.md "Hidden credential stores").
//
// Recognised (recognise()): PEM private keys of every kind ("-----BEGIN ... PRIVATE KEY-----",
// OpenSSH's, PGP's "PRIVATE KEY BLOCK") with a key body after the line, PuTTY keys, a Google
// service account's JSON key and gcloud's user credentials, an AWS secret access key given by
// its name, and the tokens whose issuers give them a prefix (base/secret_shapes.hpp, the
// recogniser the environment scrub uses). AWS's documentation keys (…EXAMPLE) are none.
//
// Bounded (scan_limits): breadth first from the home, so that the places keys are left (a few
// levels down) are read before the budget runs out; so many levels, directories, files opened
// and matches, and a deadline; the head of each file only (a PEM bundle a little more: its key
// may follow the certificates); regular files under a size cap, opened O_NONBLOCK|O_NOFOLLOW, a
// FIFO or device never opened; no symlink followed, no other filesystem entered (st_dev, and the
// mount points of the mount table are never even looked at: a dead network mount would block);
// the trees that hold caches, toolchains, packages and virtual environments, and the stores
// already hidden, not entered; in a `.git` directory, only its `config` (a token in a remote's
// URL) is read.
//
// Cached (found_secrets()): what was found is taken as it is for ten seconds after a cordon looked
// (secret_cache_options::trust: one small file read); after that, the result kept per home in
// /dev/shm/cordon-secrets-<euid> (the
// verdict cache's place and rules: this user's private directory, out of every confined run's
// reach, a file read only when it is this user's and nobody else could have written it),
// with the identity of every directory the scan read (device, inode, modification and change
// times). A directory whose times are unchanged is not read again; one that changed is, and a
// new one is scanned; for ten minutes at most, then the whole home is scanned again: a file made,
// removed or renamed changes its directory, a file rewritten in place does not and waits for the
// ten minutes. A directory read within two seconds of its last change is read again the next time
// (its times may not show a change made in the same tick). Anything else (another format, other
// limits, a truncated or foreign file) is a whole scan. The caches of homes that are gone are
// removed when one is stored.
//
// Nothing here fails a run: an error is logged (debug) and what was found is used.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sandbox {

// What a file holds, by its shape.
enum class secret_kind {
    none,
    pem_private_key,       // -----BEGIN [RSA |EC |OPENSSH |ENCRYPTED |PGP ]PRIVATE KEY[ BLOCK]-----
    putty_key,             // PuTTY-User-Key-File-N: with Private-Lines
    gcp_service_account,   // "type": "service_account" with a "private_key"
    gcp_user_credentials,  // "type": "authorized_user" with a "refresh_token"
    aws_secret_key,        // aws_secret_access_key / SecretAccessKey and 40 characters
    issuer_token,          // ghp_..., glpat-..., xoxb-..., sk-ant-..., AKIA...
};
[[nodiscard]] std::string_view to_string(secret_kind kind) noexcept;

// What the head of a file (`head`) holds. A public key, a certificate, a text that speaks of a
// "PRIVATE KEY" without one after it, or AWS's documentation keys are none.
[[nodiscard]] secret_kind recognise(std::string_view head) noexcept;

// What one scan of a home may do. The cached check of a home costs a stat of every directory the
// scan read (cordon-bench --section secrets): 2048 keep it to a few milliseconds a run; a whole
// scan reads at most 8192 heads, once in ten minutes or where directories changed.
struct scan_limits {
    int depth = 6;                             // levels below the home
    std::size_t directories = 2048;            // read in all
    std::size_t entries_per_directory = 4096;  // looked at in each
    std::size_t files = 8192;                  // opened in all
    std::size_t head_bytes = 8192;             // read of each
    std::size_t pem_bytes = 65536;             // of a file that starts as PEM (a bundle)
    std::uint64_t file_size = 1 << 20;         // larger files are not opened
    std::size_t found = 1024;                  // matches kept
    std::chrono::milliseconds deadline{1000};

    // The limits as one line: a cache made under other limits is not reused.
    [[nodiscard]] std::string to_text() const;
};

struct scan_result {
    std::vector<std::filesystem::path> found;        // absolute, sorted
    std::vector<std::filesystem::path> directories;  // read, relative to the home ("" for it)
    std::size_t files_read = 0;
    std::string stopped;  // which bound ended the scan early, empty when it saw everything
};

// The files under `home` (absolute, canonical) that hold a secret. `skip` names paths not to
// enter or read (the stores already hidden).
[[nodiscard]] scan_result scan_home(const std::filesystem::path& home,
                                    const std::vector<std::filesystem::path>& skip,
                                    const scan_limits& limits = {});

// /dev/shm/cordon-secrets-<euid>.
[[nodiscard]] std::filesystem::path default_secret_cache();

struct secret_cache_options {
    std::filesystem::path directory = default_secret_cache();  // empty: no cache
    std::chrono::seconds lifetime{600};
    // A directory that changed this shortly before it was read is read again the next time: a
    // change in the same tick of the filesystem's clock would not show in its times (git's racy
    // entries; some filesystems keep seconds only).
    std::chrono::milliseconds settle{2000};
    // What a cordon found is taken as it is, without a look at the directories, by every cordon
    // that starts this shortly after: an agent's calls come in bursts, and the look costs a stat
    // of every directory the scan read (~20 ms a run in a home of 2048). A key made since the last
    // look stays readable until a run looks again, ten seconds at most.
    std::chrono::milliseconds trust{10'000};
    // The run's own roots (absolute, canonical): not entered (their keys are the run's own to
    // read, and what a run wrote there must not spend the bounds that find the keys elsewhere);
    // a summary is trusted only by a run with the same. Those strictly in the home are noted in
    // the cache (roots-<hash>), and the roots earlier runs noted are read after the rest of the
    // home, each in a lane with an equal share of what the bounds leave.
    std::vector<std::filesystem::path> own;
    scan_limits limits;
};

struct found_secrets_result {
    std::vector<std::filesystem::path> found;  // absolute, sorted
    bool cached = false;                       // reused, not scanned
};

// scan_home()'s files of `home`, reused from the cache while it is current, otherwise scanned and
// stored.
[[nodiscard]] found_secrets_result found_secrets(const std::filesystem::path& home,
                                                 const std::vector<std::filesystem::path>& skip,
                                                 const secret_cache_options& options = {});

// What of `found` a run denies, in at most `budget` paths: none at or beneath a path of
// `readable` (the run's own roots: a workspace's test keys stay readable to its tests) or of
// `covered` (already denied). When more remain than the budget, a directory that holds several
// (strictly beneath a home of `homes`, neither at nor above a path of `readable`) is denied in
// their place: the deepest that makes them fit, else the one that holds most, and again, until
// they fit; what still does not fit is left out, logged, and added to `left` when given (the
// run's record names it).
[[nodiscard]] std::vector<std::filesystem::path> secrets_to_deny(
    std::vector<std::filesystem::path> found, const std::vector<std::filesystem::path>& homes,
    const std::vector<std::filesystem::path>& readable,
    const std::vector<std::filesystem::path>& covered, std::size_t budget,
    std::vector<std::filesystem::path>* left = nullptr);

}  // namespace cordon::sandbox
