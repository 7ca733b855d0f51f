// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What one confined execution may touch. Carried per call, never stored on a provider: two
// callers may confine under different policies at the same instant, and an approved escalation
// is simply a new call with a wider policy.
//
//     request.rules.writable_roots = {"/home/me/.cache/pip"};
//     request.network.policy = cordon::network_policy::proxy;
//     request.network.allowed_domains = {"pypi.org", "*.pythonhosted.org"};
//
// Beyond the mode, a policy says where it may write (the workspace and extra writable roots,
// minus read-only carve-outs and the protected names), what it may not read (deny_read, minus
// allow_read), and what /tmp is. Every part is on by default: a caller that names nothing gets
// the protected names of default_protected_names() and the credential stores of
// default_deny_read(). docs/sandbox.md explains each part and what each backend can enforce.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/mode.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::sandbox {

// What /tmp is for a workspace-write command (a read-only command never writes it).
enum class tmp_policy {
    private_tmp,  // a /tmp of the run's own, gone with it (bwrap: a tmpfs; Landlock: a directory
                  // of its own under /tmp, as $TMPDIR, the host's /tmp closed)
    host,         // the host's /tmp, writable
    none,         // no writable /tmp at all
};
[[nodiscard]] std::string_view to_string(tmp_policy value) noexcept;
[[nodiscard]] std::optional<tmp_policy> parse_tmp_policy(std::string_view text) noexcept;

// One class of protected names: files whose content a tool runs or obeys later, outside any
// sandbox, without asking. `names` are relative paths ("/"-separated, no "." or ".."), looked
// for at every depth of every writable root; a name that starts with `~/` is looked for only in
// the homes that lie in one (protected_homes()), and `$PATH` stands for every absolute directory
// on cordon's PATH in such a home.
struct protected_class {
    std::string_view name;  // "vcs", "shell", ...
    std::string_view why;   // what runs them
    std::vector<std::string_view> names;
};
[[nodiscard]] std::span<const protected_class> protected_classes();
// Every name of every class, in class order.
[[nodiscard]] std::vector<std::string> default_protected_names();
// The class a name belongs to ("" for a name of the caller's own).
[[nodiscard]] std::string_view class_of(std::string_view name);

// The invoking user's credential stores under `home`: ~/.ssh, ~/.aws, ~/.gnupg, ~/.netrc, ...
[[nodiscard]] std::vector<std::filesystem::path> default_deny_read(
    const std::filesystem::path& home);
// The credential stores the environment and the user's own configuration put elsewhere, for the
// `homes` given (credential_homes(); the first expands `~/` in a variable): the files and
// directories the tools' variables name (AWS_SHARED_CREDENTIALS_FILE, KUBECONFIG's list,
// DOCKER_CONFIG's config.json, GNUPGHOME, CARGO_HOME's credentials, CODEX_HOME's auth.json, ...),
// the stores of ~/.config and ~/.local/share under XDG_CONFIG_HOME and XDG_DATA_HOME, the keys
// and certificates ~/.ssh/config names (IdentityFile, CertificateFile), and git's credential
// store where a `credential.helper = store --file` puts it. docs/sandbox.md lists them.
[[nodiscard]] std::vector<std::filesystem::path> relocated_credential_stores(
    const std::vector<std::filesystem::path>& homes);
// The invoking user's home: $HOME when absolute, else the password database's entry.
[[nodiscard]] std::filesystem::path invoking_home();
// The account's home in the password database, resolved; empty when it has none that is absolute.
[[nodiscard]] std::filesystem::path account_home();
// The homes whose credential stores a run may not read (deny_credential_stores): invoking_home(),
// the account's home in the password database when it is another, and a relative $HOME taken from
// cordon's working directory (where the tools started beside cordon look for their stores).
// Whoever starts cordon with HOME pointed elsewhere does not uncover the account's stores by it.
[[nodiscard]] std::vector<std::filesystem::path> credential_homes();

// A relative protected name is well-formed: not empty, not absolute, no "." or ".." component,
// no empty component; `~/` before it anchors it to the homes, and `$PATH` is one. The reason
// when it is not.
[[nodiscard]] std::optional<std::string> bad_protected_name(std::string_view name);
// The protected name that stands for every directory on cordon's PATH.
inline constexpr std::string_view path_directories = "$PATH";
// What a protected name anchored to the homes names in each (`~/.ssh`: `.ssh`); nullopt for a
// name looked for at every depth.
[[nodiscard]] std::optional<std::string_view> home_anchored(std::string_view name);
// The homes a `~/` name is looked for in: credential_homes(), and the home of every account of
// the local password file that can log in (a shell that is not nologin or false): a run whose
// workspace is /home holds them all. Resolved, each once.
[[nodiscard]] std::vector<std::filesystem::path> protected_homes();

// The parts of a policy beyond the mode and the workspace.
struct path_rules {
    // Beyond the workspace, writable under workspace-write: absolute, canonical directories.
    std::vector<std::filesystem::path> writable_roots;
    // Beneath a writable root, read-only all the same: absolute, canonical, existing.
    std::vector<std::filesystem::path> read_only;
    // Relative names kept read-only in every writable root (existing: at every depth; missing:
    // not creatable at a root nor in a repository found there).
    std::vector<std::string> protect = default_protected_names();
    // Unreadable in every confined mode: absolute paths (missing ones are skipped), beside the
    // invoking user's credential stores while deny_credential_stores holds.
    std::vector<std::filesystem::path> deny_read;
    // The invoking user's credential stores (default_deny_read() of each credential_homes())
    // are unreadable too. Looked up when the run is planned (effective_deny_read()), never at
    // construction: a default-constructed policy reads neither the environment nor the password
    // database.
    bool deny_credential_stores = true;
    // Readable all the same (at or beneath a deny_read entry).
    std::vector<std::filesystem::path> allow_read;
    tmp_policy tmp = tmp_policy::private_tmp;
    // Run where the backend cannot enforce a part (the Landlock rung and protected names), with
    // enforcement `partial` naming it; otherwise such a run is refused (SANDBOX_UNAVAILABLE).
    bool accept_partial = false;
};

// What the tmpfs mounts of a run may hold together when nobody says (library callers that spawn
// confine()'s argv themselves): the executor gives each run its memory limit instead.
inline constexpr std::uint64_t default_tmpfs_bytes = std::uint64_t{1} << 30;

// What a confined command may reach over the network (docs/network.md), orthogonal to the mode.
// danger-full-access has the host's network whatever this says.
// In order of what they let through: each lets through at least what the one before does.
enum class network_policy {
    deny,   // a network of its own with loopback only: no route out, no host listener
    proxy,  // deny, plus cordon's filtering proxy to the domains allowed (docs/network.md)
    allow,  // the host's network
};
[[nodiscard]] std::string_view to_string(network_policy value) noexcept;
[[nodiscard]] std::optional<network_policy> parse_network_policy(std::string_view text) noexcept;

// One entry of network_rules::proxy_resolve: a canonical host name (domain_pattern.hpp) and an
// IPv4 or IPv6 address in its canonical text form.
struct host_mapping {
    std::string name;
    std::string address;
    friend bool operator==(const host_mapping&, const host_mapping&) = default;
};

struct network_rules {
    network_policy policy = network_policy::deny;
    // Host pathname unix sockets a command may connect to under deny: absolute, canonical.
    // None by default (a container daemon's or the session bus's socket is a way out).
    std::vector<std::filesystem::path> allow_unix_sockets;
    // Listening on loopback. Where the run has a network namespace of its own its loopback is its
    // own, and listening there reaches nobody else; where it shares the host's (the Landlock
    // rung without a namespace), this lets it bind the host's loopback ports.
    bool allow_local_binding = false;
    // Under proxy: the destinations the proxy lets through, and those it refuses whatever
    // allowed_domains says. Canonical patterns (docs/network.md): `example.com`,
    // `*.example.com` (names below it, not itself), an address, each with an optional `:port`.
    std::vector<std::string> allowed_domains;
    std::vector<std::string> denied_domains;
    // Under proxy: names the proxy resolves to the address given instead of asking DNS, which
    // the operator vouches for (a private or loopback address is then let through).
    std::vector<host_mapping> proxy_resolve;
};

struct sandbox_policy {
    sandbox_policy() = default;
    sandbox_policy(sandbox_mode mode_, std::filesystem::path workspace_root_,
                   path_rules rules_ = {})
        : mode(mode_), workspace_root(std::move(workspace_root_)), rules(std::move(rules_)) {}

    sandbox_mode mode = sandbox_mode::read_only;  // confined modes only when handed to confine()
    std::filesystem::path workspace_root;         // absolute and canonical
    path_rules rules;
    network_rules network;
    // What the tmpfs mounts the backend makes for the run (bwrap's /tmp, /dev/shm, masks) may
    // hold together: the run's memory limit, the cgroup their pages are charged to. The backend
    // divides it among them (backends.cpp), so that filling them ends in ENOSPC within the limit.
    std::uint64_t tmpfs_bytes = default_tmpfs_bytes;
    // Under network deny and proxy, whether the argv sends the network witness's listener to its
    // spawner (runtime/network_witness.hpp), which must serve it: false for an argv printed for
    // someone else (cordon confine), whose connects would otherwise wait for nobody.
    bool network_witness = true;
    // The command runs under a pseudo-terminal (its fd 0): the argv's last runner makes it the
    // command's controlling terminal, in a session of the command's own inside the sandbox
    // (confined_argv::takes_terminal).
    bool controlling_terminal = false;
};

// The directory `chdir(path)` would land in: symlinks are resolved before `..` is applied, so
// `link/..` names the physical parent of the link's target, not the lexical parent. A path that
// does not exist (yet) is taken where the kernel would make it: through every link on its way, a
// dangling one to its target, then as written (`realpath -m`); a path whose links loop is returned
// lexically normalised and absolute.
[[nodiscard]] std::filesystem::path canonical_path(const std::filesystem::path& path);

// The canonical, de-duplicated roots workspace-write may write under for backends that spell a
// root list themselves (Seatbelt): the workspace, the extra roots, /tmp unless tmp is none, and
// cordon's own $TMPDIR when absolute (on macOS the per-user temporary directory, which the command
// inherits). Empty for read-only.
[[nodiscard]] std::vector<std::filesystem::path> writable_roots(const sandbox_policy& policy);

// What a run may not read: the credential stores (deny_credential_stores) and deny_read, without
// the entries allow_read lets through entirely (an allow_read at or above them); allow_read
// entries beneath a remaining entry stay exceptions the backends re-expose. Files found by their
// content that no run can hide (more than the paths a run may deny) are added to `found_left`
// when given.
[[nodiscard]] std::vector<std::filesystem::path> effective_deny_read(
    const path_rules& rules, const std::vector<std::filesystem::path>& own_roots = {},
    std::vector<std::filesystem::path>* found_left = nullptr);
// What was asked to be unreadable, before allow_read: the credential stores
// (deny_credential_stores), then deny_read, each path once. `cordon config show` lists this.
// The credential stores include the files of each home found to hold a private key or a token
// by their content (docs/sandbox.md, "Hidden credential stores"), but none at or beneath
// `own_roots` (the run's workspace and writable roots, canonical) nor rules.writable_roots.
[[nodiscard]] std::vector<std::filesystem::path> requested_deny_read(
    const path_rules& rules, const std::vector<std::filesystem::path>& own_roots = {});

}  // namespace cordon::sandbox

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using sandbox::host_mapping;
using sandbox::network_policy;
using sandbox::network_rules;
using sandbox::parse_network_policy;
using sandbox::parse_tmp_policy;
using sandbox::path_rules;
using sandbox::sandbox_policy;
using sandbox::tmp_policy;
using sandbox::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
