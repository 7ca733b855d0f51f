// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Longer than the ~500 lines a file here stays under: the argv and profile builders of the three
// runners (bwrap, the Landlock launcher, Seatbelt) with the gap assessment they share; a file per
// runner is the split to make when one of them grows again.
#include "sandbox/backends.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/enum_text.hpp"
#include "cordon/sandbox_error.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/network_plan.hpp"
#include "sandbox/protected_paths.hpp"

namespace cordon::sandbox {

namespace {

void require_confined(const sandbox_policy& policy) {
    if (!is_confined(policy.mode)) {
        throw std::invalid_argument("danger-full-access never reaches a sandbox backend");
    }
    if (!policy.workspace_root.is_absolute()) {
        throw std::invalid_argument("sandbox policy workspace_root must be absolute");
    }
}

void append_command(std::vector<std::string>& out, std::span<const std::string> argv) {
    if (argv.empty()) throw std::invalid_argument("cannot confine an empty argv");
    out.emplace_back("--");
    out.insert(out.end(), argv.begin(), argv.end());
}

// A network policy the backend cannot put up at all is never run wider.
void refuse_unavailable(backend_kind kind, const sandbox_policy& policy,
                        const network_walls& network) {
    if (!network.unavailable) return;
    throw sandbox_unavailable_error(policy.mode, std::nullopt,
                                    {{std::string(to_string(kind)), *network.unavailable}});
}

// The run's network walls: the provider's plan, else planned here from the same values.
network_walls walls_for(backend_kind kind, const sandbox_policy& policy, const profile& host) {
    if (host.network != nullptr) return *host.network;
    return plan_network(kind, policy.network, host.landlock_abi, host.network_namespace);
}

void set_common(confined_argv& out, backend_kind kind, const sandbox_policy& policy,
                network_walls network, const profile& host) {
    out.backend = kind;
    enforcement_assessment assessment = assess(kind, policy.mode, host.landlock_abi);
    out.level = assessment.level;
    out.gaps = std::move(assessment.gaps);
    out.denial_signatures = denial_signatures(kind, policy.mode);
    out.runner_failure_rules = runner_failure_rules(kind);
    out.status = status_channel{runner_status_fd};
    out.environment_fd = command_environment_fd;
    // The launcher is the last runner on both rungs: it gives the command the terminal.
    out.takes_terminal = policy.controlling_terminal;
    refuse_unavailable(kind, policy, network);
    out.network = std::move(network.facts);
    out.network_witness = network.how.witness && policy.network_witness;
    out.own_loopback = network.how.unshare_net;
    if (!out.network.missing.empty()) {
        out.level = enforcement::partial;
        out.gaps.insert(out.gaps.end(), out.network.missing.begin(), out.network.missing.end());
    }
}

}  // namespace

constexpr auto backend_kind_texts = base::enum_texts<backend_kind>({
    {backend_kind::bwrap, "bwrap"},
    {backend_kind::landlock, "landlock"},
    {backend_kind::seatbelt, "seatbelt"},
});

std::string_view to_string(backend_kind kind) noexcept {
    return backend_kind_texts.text(kind);
}

constexpr auto neutral_action_texts = base::enum_texts<neutral_action>({
    {neutral_action::quarantined, "quarantined"},
    {neutral_action::rewritten, "rewritten"},
    {neutral_action::restored, "restored"},
    {neutral_action::removed, "removed"},
    {neutral_action::failed, "failed"},
});

std::string_view to_string(neutral_action value) noexcept {
    return neutral_action_texts.text(value);
}

std::optional<backend_kind> parse_backend_kind(std::string_view text) noexcept {
    return backend_kind_texts.parse(text);
}

enforcement_assessment assess(backend_kind kind, sandbox_mode mode, int landlock_abi) {
    enforcement_assessment out;
    const std::string abi = "Landlock ABI " + std::to_string(landlock_abi);
    switch (kind) {
        case backend_kind::bwrap:
            if (landlock_abi <= 0) {
                out.gaps.emplace_back(
                    "Landlock is unavailable: only bwrap's mounts stand between the command and "
                    "host FIFOs, mounts that appear during the run, abstract unix sockets, and "
                    "credential stores made during the run");
            } else {
                if (landlock_abi < landlock::full_filesystem_abi) {
                    out.gaps.push_back(abi +
                                       " governs neither truncation nor device ioctls: only "
                                       "bwrap's mounts do");
                }
                if (landlock_abi < landlock::scopes_abi) {
                    out.gaps.push_back(abi +
                                       " has no scopes (ABI 6, Linux 6.12): abstract unix sockets "
                                       "of host daemons are reachable");
                }
            }
            break;
        case backend_kind::landlock:
            if (landlock_abi < landlock::full_filesystem_abi) {
                out.gaps.push_back(abi +
                                   " governs neither truncation (ABI 3) nor device ioctls "
                                   "(ABI 5)");
            }
            if (landlock_abi < landlock::scopes_abi) {
                out.gaps.push_back(abi +
                                   " has no scopes (ABI 6, Linux 6.12): the command can signal "
                                   "processes of its uid and reach abstract unix sockets");
            }
            if (mode == sandbox_mode::workspace_write) {
                out.gaps.emplace_back(
                    "file metadata (chmod, chown, utime, xattrs) outside the workspace is not "
                    "governed: Landlock has no right for it and seccomp cannot tell paths apart");
            }
            // Named in every run's record, not only by `cordon probe`: no mode asks for it, but a
            // record that claims full enforcement while a token in a host process's argv is
            // readable says more than the rung did.
            out.gaps.emplace_back(
                "no pid namespace: the host's processes are seen, and their command lines "
                "(/proc/PID/cmdline) read; their memory, environment and descriptors are not "
                "(Landlock refuses ptrace access outside the run's domain)");
            break;
        case backend_kind::seatbelt:
            out.gaps.emplace_back(
                "no pid namespace: the host's processes are seen, and their arguments read");
            break;
    }
    out.level = out.gaps.empty() ? enforcement::full : enforcement::partial;
    return out;
}

// What each Linux rung answers a forbidden file effect with (strerror's words, as tools print
// them):
//   EROFS   "read-only file system"      bwrap: a write, create, unlink... under a read-only bind
//   EACCES  "permission denied"          Landlock (under both rungs): a right the ruleset lacks;
//                                        bwrap: a denied read (a 0000 file or directory over it)
//   EXDEV   "invalid cross-device link"  link(2)/rename(2) across the sandbox's walls: bwrap's
//                                        binds are separate mounts, Landlock refuses REFER from a
//                                        hierarchy that does not grant it
//   EPERM   "operation not permitted"    the read-only metadata filter (seccomp)
// EXDEV is also an ordinary answer between two real filesystems: `ln` from one to another
// counts as a denial too. That cannot be told apart from the text alone and is accepted (docs/
// contract.md); `mv` falls back to copying on EXDEV and prints nothing of it, so an ordinary
// cross-device mv is never one. Not in the dialect: ENOENT, which a denied directory that
// lets allow_read entries through answers for the rest (too common an error to mean a denial).
std::vector<std::string> denial_signatures(backend_kind kind, sandbox_mode mode) {
    const bool read_only = mode == sandbox_mode::read_only;
    switch (kind) {
        case backend_kind::bwrap:
            if (read_only) {
                return {"read-only file system", "permission denied", "invalid cross-device link",
                        "operation not permitted"};
            }
            return {"read-only file system", "permission denied", "invalid cross-device link"};
        case backend_kind::landlock:
            if (read_only) {
                return {"permission denied", "invalid cross-device link",
                        "operation not permitted"};
            }
            return {"permission denied", "invalid cross-device link"};
        case backend_kind::seatbelt:
            return {"operation not permitted"};
    }
    return {};
}

std::vector<runner_failure_rule> runner_failure_rules(backend_kind kind) {
    const runner_failure_rule launcher{
        {125}, {"cordon-landlock: "}, {std::string(launcher_notice_line)}};
    switch (kind) {
        case backend_kind::bwrap:
            return {{{}, {"bwrap: "}, {}}, launcher};
        case backend_kind::landlock:
            return {launcher};
        case backend_kind::seatbelt:
            return {{{}, {"sandbox-exec: "}, {}}};
    }
    return {};
}

std::vector<landlock_grant> landlock_grants(sandbox_mode mode, bool inside_bwrap, tmp_policy tmp,
                                            bool terminal) {
    std::vector<landlock_grant> out{{"/dev/null", true, false},
                                    {"/dev/zero", true, true},
                                    {"/dev/full", true, true},
                                    {"/dev/random", false, true},
                                    {"/dev/urandom", false, true}};
    if (inside_bwrap) out.insert(out.end(), {{"/dev/shm", true, true}, {"/dev/pts", true, true}});
    // /dev/tty is the opener's own controlling terminal, whatever the node (ENXIO without one):
    // under a terminal, the run's, which it may write as it writes its stdout.
    if (terminal) out.push_back({"/dev/tty", true, true});
    // Inside bwrap, /dev/console is the run's own terminal too: bwrap's --dev binds the terminal
    // its stdout is onto it (what tty(1) and ttyname(3) then name). Never outside: there it is
    // the host's console.
    if (terminal && inside_bwrap) out.push_back({"/dev/console", true, true});
    if (mode == sandbox_mode::workspace_write) {
        if (inside_bwrap ? tmp != tmp_policy::none : tmp == tmp_policy::host) {
            out.push_back({"/tmp", true, false});
        }
        out.push_back({nullptr, true, false});
    }
    return out;
}

std::vector<std::string> launcher_arguments(sandbox_mode mode, bool inside_bwrap, bool landlock,
                                            const launcher_paths& paths) {
    std::vector<std::string> out{"--status-fd", std::to_string(runner_status_fd), "--env-fd",
                                 std::to_string(command_environment_fd)};
    if (!landlock) out.emplace_back("--no-landlock");
    // bwrap exits 128+N both for a command killed by signal N and for one that exited 128+N:
    // inside it, the launcher reports how the command ended.
    // The forwarder of the network proxy runs in the launcher while it waits for the command.
    if (inside_bwrap) out.emplace_back("--private-ipc");
    if (inside_bwrap || paths.network.proxy) out.emplace_back("--report-ending");
    if (paths.controlling_terminal) out.emplace_back("--controlling-tty");
    if (paths.become) {
        out.insert(out.end(), {"--identity", std::to_string(paths.become->uid) + ":" +
                                                 std::to_string(paths.become->gid)});
    }
    // The sandbox's user namespace gets low limits of its own for what the kernel counts per uid
    // (quotas.hpp); the launcher writes them with the CAP_SYS_RESOURCE bwrap leaves it, then drops
    // it from every set (CAP_SETPCAP, also left to it, empties the bounding set).
    if (inside_bwrap) out.insert(out.end(), {"--quota-fd", std::to_string(user_sysctls_fd)});
    if (mode == sandbox_mode::read_only) out.emplace_back("--deny-metadata");
    for (std::string& flag : launcher_network_arguments(paths.network))
        out.push_back(std::move(flag));
    out.emplace_back("--read-root");
    for (const std::string& denied : paths.deny_read)
        out.insert(out.end(), {"--deny-read", denied});
    for (const std::string& allowed : paths.allow_read)
        out.insert(out.end(), {"--ro-try", allowed});
    for (const landlock_grant& grant :
         landlock_grants(mode, inside_bwrap, paths.tmp, paths.controlling_terminal)) {
        if (grant.path == nullptr) {
            out.insert(out.end(),
                       {grant.write ? "--rw-fd" : "--ro-fd", std::to_string(workspace_fd)});
            continue;
        }
        const char* flag = grant.write ? (grant.optional ? "--rw-try" : "--rw")
                                       : (grant.optional ? "--ro-try" : "--ro");
        out.insert(out.end(), {flag, grant.path});
    }
    if (mode == sandbox_mode::workspace_write) {
        for (std::size_t i = 0; i < paths.writable; ++i) {
            out.insert(out.end(), {"--rw-fd", std::to_string(writable_fd + static_cast<int>(i))});
        }
    }
    return out;
}

namespace {

launcher_paths launcher_paths_of(backend_kind kind, const sandbox_policy& policy,
                                 const network_confinement& network, const profile& host) {
    launcher_paths out;
    out.tmp = policy.rules.tmp;
    out.writable = host.writable.size();
    out.network = network;
    out.network.witness = out.network.witness && policy.network_witness;
    out.controlling_terminal = policy.controlling_terminal;
    // bwrap is started as the run's uid; only the launcher alone switches to it.
    if (kind == backend_kind::landlock) out.become = host.become;
    // Inside bwrap the namespace is bwrap's own (--unshare-net).
    if (kind == backend_kind::bwrap) out.network.unshare_net = false;
    if (host.paths != nullptr) {
        for (const hidden_path& hidden : host.paths->hidden)
            out.deny_read.push_back(hidden.path.string());
        // Not there yet: the read grants leave room for nothing new on the way to them.
        for (const auto& missing : host.paths->hidden_missing)
            out.deny_read.push_back(missing.string());
        for (const auto& exposed : host.paths->exposed)
            out.allow_read.push_back(exposed.string());
    }
    // Under a private /tmp the host's /tmp is not the run's: on the Landlock rung it is unreadable,
    // as bwrap's tmpfs hides it, but for the roots in it (the run's own directory, a workspace),
    // which show through. Other runs' private directories and the host's files there stay out of
    // reach. (Not when a writable root holds /tmp: the root's grant covers it.)
    if (kind == backend_kind::landlock && policy.mode == sandbox_mode::workspace_write &&
        policy.rules.tmp == tmp_policy::private_tmp && host.paths != nullptr) {
        const std::filesystem::path tmp = canonical_path("/tmp");
        const auto& roots = host.paths->writable_roots;
        if (std::none_of(roots.begin(), roots.end(),
                         [&tmp](const auto& root) { return is_within(tmp, root); })) {
            out.deny_read.push_back(tmp.string());
        }
    }
    return out;
}

// Every tmpfs of a run has a size (bwrap --size, 0.7.0 and later). Their pages belong to no
// process but are charged to the writer's memory cgroup, so the run's memory limit bounds them
// all together; the sizes keep one mount from growing to the whole limit and add up to less than
// it (sandbox_policy::tmpfs_bytes): /tmp half, /dev/shm a quarter, and the hidden directories,
// which are read-only and hold nothing but mount points, a page each.
constexpr const char* sealed_tmpfs_bytes = "4096";
std::string tmpfs_share(const sandbox_policy& policy, unsigned divisor) {
    return std::to_string(std::max<std::uint64_t>(policy.tmpfs_bytes / divisor, 4096));
}

// Whether `path` is one of `roots` or lies in one.
bool in_a_root(const std::filesystem::path& path, const std::vector<std::filesystem::path>& roots) {
    return std::any_of(roots.begin(), roots.end(), [&path](const std::filesystem::path& root) {
        return is_within(path, root);
    });
}

// Whether one of `roots` lies strictly inside the directory `dir`.
bool holds_a_root(const std::filesystem::path& dir,
                  const std::vector<std::filesystem::path>& roots) {
    return std::any_of(roots.begin(), roots.end(), [&dir](const std::filesystem::path& root) {
        return root != dir && is_within(root, dir);
    });
}

// Whether a denied path has nothing to hide: in a private /tmp, outside every writable root bound
// into it, the host's file is not there to read.
bool nothing_to_hide(const std::filesystem::path& hidden, const sandbox_policy& policy,
                     const path_plan& paths) {
    return policy.mode == sandbox_mode::workspace_write &&
           policy.rules.tmp == tmp_policy::private_tmp && is_within(hidden, "/tmp") &&
           !in_a_root(hidden, paths.writable_roots);
}

// The innermost writable root that holds `path` (or is it), or null.
const std::filesystem::path* innermost_root(const std::filesystem::path& path,
                                            const std::vector<std::filesystem::path>& roots) {
    const std::filesystem::path* innermost = nullptr;
    for (const auto& root : roots) {
        if (is_within(path, root) && (innermost == nullptr || is_within(root, *innermost)))
            innermost = &root;
    }
    return innermost;
}

// Whether the denied directory `dir` hides `path` by its tmpfs alone: `path` lies in it with no
// writable root between them (a root inside `dir` that holds `path` shows it through the tmpfs).
bool hides_directly(const std::filesystem::path& dir, const std::filesystem::path& path,
                    const std::vector<std::filesystem::path>& roots) {
    if (dir == path || !is_within(path, dir)) return false;
    const std::filesystem::path* root = innermost_root(path, roots);
    return root == nullptr || !is_within(*root, dir) || *root == dir;
}

bool is_a_layer(const hidden_path& hidden, const sandbox_policy& policy, const path_plan& paths);

// Whether `path` lies in a denied directory laid as a layer (below) with no root between them:
// that tmpfs hides it already, and a mount of its own would cover the roots the layer holds.
bool under_a_layer(const std::filesystem::path& path, const sandbox_policy& policy,
                   const path_plan& paths) {
    return std::any_of(paths.hidden.begin(), paths.hidden.end(), [&](const hidden_path& outer) {
        return hides_directly(outer.path, path, paths.writable_roots) &&
               is_a_layer(outer, policy, paths);
    });
}

// Whether a denied directory is laid as a layer among the writable roots: it holds one, so its
// tmpfs is laid before that root is bound (and after the root that holds the directory, if any),
// and the roots inside it show through; it is made read-only once every root is bound. A denied
// directory that holds no root is laid over everything at the end instead, and one under another
// layer is hidden by that layer's tmpfs. (bwrap lays mounts in argument order: a tmpfs laid after
// a root inside it would cover the root, and the run could neither reach nor write it.)
bool is_a_layer(const hidden_path& hidden, const sandbox_policy& policy, const path_plan& paths) {
    if (policy.mode != sandbox_mode::workspace_write || !hidden.directory ||
        nothing_to_hide(hidden.path, policy, paths)) {
        return false;
    }
    return holds_a_root(hidden.path, paths.writable_roots) &&
           !under_a_layer(hidden.path, policy, paths);
}

// Whether a layer is `path` or hides it directly.
bool hidden_by_a_layer(const std::filesystem::path& path, const sandbox_policy& policy,
                       const path_plan& paths) {
    return std::any_of(paths.hidden.begin(), paths.hidden.end(), [&](const hidden_path& layer) {
        return (layer.path == path || hides_directly(layer.path, path, paths.writable_roots)) &&
               is_a_layer(layer, policy, paths);
    });
}

// The allowed paths bound back into a layer: those a root inside it holds show through that
// root's bind already (a read-only bind over them would take the root's writes away).
std::vector<std::string> exposed_in(const std::filesystem::path& hidden, const path_plan& paths) {
    std::vector<std::string> out;
    for (const auto& allowed : paths.exposed) {
        if (hides_directly(hidden, allowed, paths.writable_roots)) out.push_back(allowed.string());
    }
    // Parents first: a root or an allowed path inside another is bound after it.
    std::sort(out.begin(), out.end());
    return out;
}

// The tmpfs of a layer, mode 0111 so that the roots inside are reached through it and nothing in
// it can be listed, and the allowed paths bound back into it (beneath which a root may lie too).
void lay_layer(confined_argv& out, const std::filesystem::path& hidden, const path_plan& paths) {
    out.argv.insert(out.argv.end(),
                    {"--perms", "0111", "--size", sealed_tmpfs_bytes, "--tmpfs", hidden.string()});
    for (const std::string& allowed : exposed_in(hidden, paths))
        out.argv.insert(out.argv.end(), {"--ro-bind", allowed, allowed});
}

// Denied reads: a directory becomes an empty tmpfs nobody may list (mode 0111 when an allowed
// path inside it is bound back, so that it can be reached), a file an empty file nobody may read.
// The launcher's Landlock rules leave them out as well. A layer, laid among the roots, is only made
// read-only here.
void add_hidden_mounts(confined_argv& out, const sandbox_policy& policy, const profile& host) {
    if (host.paths == nullptr) return;
    int data = hidden_data_fd;
    for (const hidden_path& hidden : host.paths->hidden) {
        // Under a layer its tmpfs hides the path, unless an allowed path bound back into the layer
        // holds it: that bind brings the host's tree, and any mount in it, along.
        const auto& allowed_paths = host.paths->exposed;
        const bool bound_back =
            std::any_of(allowed_paths.begin(), allowed_paths.end(), [&hidden](const auto& allowed) {
                return allowed != hidden.path && is_within(hidden.path, allowed);
            });
        if (nothing_to_hide(hidden.path, policy, *host.paths) ||
            (under_a_layer(hidden.path, policy, *host.paths) && !bound_back)) {
            continue;
        }
        const std::string path = hidden.path.string();
        if (!hidden.directory) {
            out.argv.insert(out.argv.end(),
                            {"--perms", "0000", "--ro-bind-data", std::to_string(data), path});
            out.fds.push_back({data++, host.empty});
            continue;
        }
        if (is_a_layer(hidden, policy, *host.paths)) {
            out.argv.insert(out.argv.end(), {"--remount-ro", path});
            continue;
        }
        std::vector<std::string> exposed;
        for (const auto& allowed : host.paths->exposed) {
            if (is_within(allowed, hidden.path)) exposed.push_back(allowed.string());
        }
        out.argv.insert(out.argv.end(), {"--perms", exposed.empty() ? "0000" : "0111", "--size",
                                         sealed_tmpfs_bytes, "--tmpfs", path});
        for (const std::string& allowed : exposed)
            out.argv.insert(out.argv.end(), {"--ro-bind", allowed, allowed});
        out.argv.insert(out.argv.end(), {"--remount-ro", path});
    }
}

// What a Linux rung leaves of the plan's denied and read-only paths (path_gaps names each, and the
// record lists none of them as kept).
struct left_by_the_rung {
    // Denied, not there when the run starts, inside a root (any rung): nothing to cover yet (bwrap
    // would make its mount point on the host), and the root's grant covers it once made.
    std::vector<std::filesystem::path> appearing;
    // Landlock: denied device nodes the rung grants (/dev/null, /dev/urandom, ...) as rules of
    // their own, which a denied read of one, or of /dev, does not take away.
    std::vector<std::filesystem::path> granted_reads;
    // Landlock: read-only paths beneath a root, which the root's grant covers.
    std::vector<std::filesystem::path> writable_read_only;
    // Landlock: denied paths in a root, which the root's grant covers.
    std::vector<std::filesystem::path> exposed_reads;

    bool leaves(const std::filesystem::path& path) const {
        for (const auto* list : {&appearing, &granted_reads, &writable_read_only, &exposed_reads}) {
            if (std::find(list->begin(), list->end(), path) != list->end()) return true;
        }
        return false;
    }
};

left_by_the_rung left_by(backend_kind kind, const sandbox_policy& policy, const path_plan& paths) {
    left_by_the_rung out;
    // What the command may write on these rungs: the plan's roots, and under --tmp host the
    // host's /tmp and TMPDIR as well (writable_roots()).
    std::vector<std::filesystem::path> roots = paths.writable_roots;
    if (policy.mode == sandbox_mode::workspace_write && policy.rules.tmp == tmp_policy::host) {
        for (const std::filesystem::path& root : writable_roots(policy))
            roots.push_back(root);
    }
    if (policy.mode == sandbox_mode::workspace_write) {
        for (const std::filesystem::path& missing : paths.hidden_missing) {
            if (in_a_root(missing, roots)) out.appearing.push_back(missing);
        }
    }
    if (kind != backend_kind::landlock) return out;
    for (const hidden_path& hidden : paths.hidden) {
        for (const landlock_grant& grant : landlock_grants(policy.mode, false, policy.rules.tmp)) {
            if (grant.path != nullptr && is_within(grant.path, "/dev") &&
                (is_within(hidden.path, grant.path) || is_within(grant.path, hidden.path))) {
                out.granted_reads.push_back(hidden.path);
                break;
            }
        }
    }
    if (policy.mode != sandbox_mode::workspace_write) return out;
    out.writable_read_only = policy.rules.read_only;
    for (const hidden_path& hidden : paths.hidden) {
        if (in_a_root(hidden.path, roots)) out.exposed_reads.push_back(hidden.path);
    }
    return out;
}

void record_paths(confined_argv& out, backend_kind kind, const sandbox_policy& policy,
                  const profile& host) {
    if (host.paths == nullptr) return;
    // The record lists what the rung keeps: what it leaves is named in the gaps instead.
    const left_by_the_rung left = left_by(kind, policy, *host.paths);
    for (const auto& p : host.paths->entries)
        out.protected_paths.push_back(p.string());
    for (const auto& p : host.paths->read_only) {
        if (!left.leaves(p)) out.protected_paths.push_back(p.string());
    }
    std::sort(out.protected_paths.begin(), out.protected_paths.end());
    for (const hidden_path& h : host.paths->hidden) {
        if (!left.leaves(h.path)) out.hidden_paths.push_back(h.path.string());
    }
    for (const auto& p : host.paths->hidden_missing) {
        if (!left.leaves(p)) out.hidden_paths.push_back(p.string());
    }
}

}  // namespace

std::vector<policy_part> policy_parts(backend_kind kind) {
    switch (kind) {
        case backend_kind::bwrap:
            return {{"protected names", true,
                     "read-only binds over those at the top of each root and in its repository's "
                     "git directory; everything the run creates or changes judged afterwards"},
                    {"read-only paths", true, "read-only binds"},
                    {"denied reads", true, "mode-0000 mounts, and Landlock inside"},
                    {"writable roots", true, "binds of the opened directories"},
                    {"private tmp", true, "a tmpfs"},
                    {"host processes", true,
                     "a pid namespace of the run's own: the host's processes are not seen"},
                    {"kernel quotas", true,
                     "the user namespace's own inotify, fanotify and namespace limits; rlimits "
                     "for signals, message queues and locked memory"},
                    {"network deny", true,
                     "a network namespace with loopback only; socket(AF_UNIX) refused (host "
                     "pathname sockets), socketpair kept"},
                    {"network proxy", true,
                     "network deny's namespace; the launcher hands connections to its loopback "
                     "port to cordon's filtering proxy"},
                    {"network allow", true, "the host's network"},
                    {"allowed unix sockets", false,
                     "listing any lets socket(AF_UNIX) through for every path (needs "
                     "--accept-partial)"},
                    {"local binding", true, "the run's own loopback"}};
        case backend_kind::landlock:
            return {{"protected names", true,
                     "those at the top of each root and in its repository's git directory put "
                     "back afterwards; everything the run creates or changes judged afterwards "
                     "(the change is there while the run lasts)"},
                    {"read-only paths", false,
                     "Landlock grants write to a whole tree (needs --accept-partial)"},
                    {"denied reads", true,
                     "read grants built around them (not inside a writable root)"},
                    {"writable roots", true, "write grants on the opened directories"},
                    {"private tmp", true,
                     "a directory of the run's own as $TMPDIR; the host's /tmp unreadable but "
                     "for the roots in it"},
                    {"host processes", false,
                     "no pid namespace: the host's processes and their command lines "
                     "(/proc/PID/cmdline) are seen; their memory, environment and descriptors are "
                     "not (Landlock refuses ptrace access outside the run's domain)"},
                    {"kernel quotas", false,
                     "inotify and fanotify count against cordon's uid (no user namespace); "
                     "rlimits for signals, message queues and locked memory"},
                    {"network deny", true,
                     "a network namespace with its loopback up where cordon holds "
                     "CAP_SYS_ADMIN; otherwise socket() of every family refused and, from "
                     "Landlock ABI 4, TCP connect and bind (partial below ABI 4)"},
                    {"network proxy", true,
                     "where cordon holds CAP_SYS_ADMIN, as bwrap in a namespace of its own; "
                     "refused without it (Landlock's port rules cannot tell hosts apart)"},
                    {"network allow", true, "the host's network"},
                    {"allowed unix sockets", false,
                     "listing any lets socket(AF_UNIX) through for every path (needs "
                     "--accept-partial)"},
                    {"local binding", true,
                     "the run's own loopback with a namespace; without one the host's "
                     "interfaces (needs --accept-partial)"}};
        case backend_kind::seatbelt:
            // cordon's Seatbelt profile has no rule for these (and no macOS host to prove one
            // on): a policy that asks for them is refused unless the gap is accepted.
            return {{"protected names", false, "no profile rule (needs --accept-partial)"},
                    {"read-only paths", false, "no profile rule (needs --accept-partial)"},
                    {"denied reads", false, "no profile rule (needs --accept-partial)"},
                    {"writable roots", true, "subpath rules"},
                    {"private tmp", false, "the host's /tmp"},
                    {"host processes", false, "the host's processes are seen"},
                    {"kernel quotas", false, "counted against cordon's uid"},
                    {"network deny", false, "no profile rule (needs --accept-partial)"},
                    {"network proxy", false, "no network namespace (refused)"},
                    {"network allow", true, "the host's network"},
                    {"allowed unix sockets", false, "no profile rule"},
                    {"local binding", false, "no profile rule"}};
    }
    return {};
}

namespace {

// Paths for one line of a record: the first ones, about 200 characters' worth.
std::string list(const std::vector<std::filesystem::path>& items) {
    std::string text;
    for (const auto& item : items) {
        if (!text.empty()) text += ", ";
        text += item.string();
        if (text.size() > 200) {
            text += ", ...";
            break;
        }
    }
    return text;
}

}  // namespace

std::string found_left_gap(const std::vector<std::filesystem::path>& left) {
    return std::to_string(left.size()) +
           " files found to hold a private key or a token stay readable (a run denies at most " +
           std::to_string(landlock::max_denied_reads) +
           " paths, and no directory below a home holds them together): " + list(left);
}

std::string several_names_gap(const std::vector<std::filesystem::path>& files) {
    return "denied files with other names are read through a name that lies elsewhere than on "
           "the way to a denied path (a hard link made on the host): " +
           list(files);
}

std::string links_left_gap(const std::vector<std::filesystem::path>& places) {
    return "what links in denied directories lead to beyond the places a run hides for them (8 a "
           "directory, 48 in all) is readable: " +
           list(places);
}

std::vector<std::string> path_gaps(backend_kind kind, const sandbox_policy& policy,
                                   const path_plan& paths) {
    std::vector<std::string> out;
    if (kind == backend_kind::seatbelt) {
        // The Seatbelt profile has no rule for these: each is named, never dropped silently.
        if (policy.mode == sandbox_mode::workspace_write && !policy.rules.protect.empty()) {
            out.emplace_back("protected names are not kept under Seatbelt");
        }
        if (policy.mode == sandbox_mode::workspace_write && !policy.rules.read_only.empty()) {
            out.push_back("read-only paths are writable under Seatbelt: " +
                          list(policy.rules.read_only));
        }
        if (!paths.hidden.empty()) out.emplace_back("denied reads are readable under Seatbelt");
        if (policy.mode == sandbox_mode::workspace_write &&
            policy.rules.tmp == tmp_policy::private_tmp) {
            out.emplace_back("/tmp is the host's under Seatbelt, not private");
        }
        return out;
    }
    const left_by_the_rung left = left_by(kind, policy, paths);
    if (!left.appearing.empty()) {
        out.push_back(
            "denied reads inside a writable root that are not there yet are readable should the "
            "run make them: " +
            list(left.appearing));
    }
    if (!left.granted_reads.empty()) {
        out.push_back("denied device nodes stay readable (the rung grants them): " +
                      list(left.granted_reads));
    }
    if (!left.writable_read_only.empty()) {
        out.push_back("read-only paths beneath a writable root are writable: " +
                      list(left.writable_read_only));
    }
    if (!left.exposed_reads.empty()) {
        out.push_back("denied reads inside a writable root stay readable: " +
                      list(left.exposed_reads));
    }
    return out;
}

namespace {

// What a workspace-write run's mounts lay over the read-only root, parents first (bwrap lays them
// in argument order, each over what was laid before): the writable roots (the workspace and those
// given with --writable-root, in any order of the flags), each bound through the directory cordon
// opened when the rung offers --bind-fd (its identity, not the path, is what gets bound); the
// layers, denied directories that hold a root, laid over the roots that hold them and under the
// roots inside them; and the paths kept for the protected names and the carve-outs: a directory
// kept in place (a writable bind onto itself: it cannot be removed, renamed or replaced) or a path
// kept read-only. Every kept path exists (bwrap makes no mount point on the host; what is missing
// is judged once the run is over, judgement.hpp), and one that a layer hides is left out: bound
// again after the layer, it would show what the layer hides, and nothing in it can be written but
// the roots the layer holds, whose own names are kept. At one depth a root comes first, then a
// layer, then a path kept in place, then one kept read-only.
void add_placements(confined_argv& out, const sandbox_policy& policy, const profile& host) {
    enum class kind { root, layer, in_place, read_only };
    struct placement {
        std::filesystem::path path;
        kind what;
        int bind_fd = -1;
        const std::shared_ptr<const unique_fd>* directory = nullptr;
    };
    std::vector<placement> placements{
        {policy.workspace_root, kind::root, workspace_bind_fd, &host.workspace}};
    out.fds.push_back({workspace_fd, host.workspace});
    if (host.paths != nullptr) {
        const path_plan& paths = *host.paths;
        for (std::size_t i = 0; i < host.writable.size(); ++i) {
            const int slot = static_cast<int>(i);
            placements.push_back({paths.writable_roots.at(i + 1), kind::root,
                                  writable_bind_fd + slot, &host.writable[i]});
            out.fds.push_back({writable_fd + slot, host.writable[i]});
        }
        for (const hidden_path& hidden : paths.hidden) {
            if (is_a_layer(hidden, policy, paths)) placements.push_back({hidden.path, kind::layer});
        }
        // A directory kept in place inside a carve-out the user gave, with no root between them,
        // is kept by the carve-out's read-only bind already: a writable bind of its own, laid
        // after it, would undo it.
        const auto& carve_outs = policy.rules.read_only;
        for (const auto& p : paths.entries) {
            const std::filesystem::path* root = innermost_root(p, paths.writable_roots);
            const bool carved =
                std::any_of(carve_outs.begin(), carve_outs.end(), [&p, root](const auto& carve) {
                    return is_within(p, carve) &&
                           (root == nullptr || !is_within(*root, carve) || *root == carve);
                });
            if (!carved && !hidden_by_a_layer(p, policy, paths)) {
                placements.push_back({p, kind::in_place});
            }
        }
        for (const auto& p : paths.read_only) {
            if (!hidden_by_a_layer(p, policy, paths)) placements.push_back({p, kind::read_only});
        }
    }
    std::stable_sort(placements.begin(), placements.end(),
                     [](const placement& a, const placement& b) {
                         const auto da = std::distance(a.path.begin(), a.path.end());
                         const auto db = std::distance(b.path.begin(), b.path.end());
                         return da != db ? da < db : a.what < b.what;
                     });
    for (const placement& each : placements) {
        const std::string path = each.path.string();
        switch (each.what) {
            case kind::root:
                if (host.bind_fd) {
                    out.argv.insert(out.argv.end(),
                                    {"--bind-fd", std::to_string(each.bind_fd), path});
                    out.fds.push_back({each.bind_fd, *each.directory});
                } else {
                    out.argv.insert(out.argv.end(), {"--bind", path, path});
                }
                break;
            case kind::layer:
                lay_layer(out, each.path, *host.paths);
                break;
            case kind::in_place:
                out.argv.insert(out.argv.end(), {"--bind", path, path});
                break;
            case kind::read_only:
                out.argv.insert(out.argv.end(), {"--ro-bind", path, path});
                break;
        }
    }
}

}  // namespace

confined_argv bwrap_confine(const std::filesystem::path& bwrap, std::span<const std::string> argv,
                            const sandbox_policy& policy, const profile& host) {
    require_confined(policy);
    confined_argv out;
    network_walls network = walls_for(backend_kind::bwrap, policy, host);
    const network_confinement how = network.how;
    set_common(out, backend_kind::bwrap, policy, std::move(network), host);
    out.argv = {bwrap.string(),
                "--unshare-user",
                "--disable-userns",
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--new-session",
                "--cap-drop",
                "ALL",
                "--cap-add",
                "CAP_SYS_RESOURCE",
                "--cap-add",
                "CAP_SETPCAP",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--remount-ro",
                "/proc"};
    if (policy.network.policy != network_policy::allow) {
        out.argv.insert(out.argv.begin() + 6, "--unshare-net");  // after --unshare-uts
    }
    // bwrap's /dev is a tmpfs of unbounded size and its /dev/shm a directory in it: a sized
    // tmpfs of its own goes over it (POSIX shared memory, writable in every mode).
    out.argv.insert(out.argv.end(), {"--size", tmpfs_share(policy, 4), "--tmpfs", "/dev/shm"});
    const std::string root = policy.workspace_root.string();
    if (policy.mode == sandbox_mode::workspace_write) {
        // /tmp comes before the binds so that a workspace under /tmp is exposed again.
        if (policy.rules.tmp == tmp_policy::private_tmp) {
            out.argv.insert(out.argv.end(), {"--size", tmpfs_share(policy, 2), "--tmpfs", "/tmp"});
        } else if (policy.rules.tmp == tmp_policy::host) {
            out.argv.insert(out.argv.end(), {"--bind", "/tmp", "/tmp"});
        }
        add_placements(out, policy, host);
    }
    // A listed host socket stays reachable where a mount of the profile (the private /tmp)
    // would hide it.
    for (const auto& socket : policy.network.allow_unix_sockets) {
        out.argv.insert(out.argv.end(), {"--bind-try", socket.string(), socket.string()});
    }
    add_hidden_mounts(out, policy, host);
    out.argv.insert(out.argv.end(), {"--chdir", host.workdir.empty() ? root : host.workdir.string(),
                                     "--", "/proc/self/fd/" + std::to_string(launcher_image_fd)});
    const std::vector<std::string> launcher =
        launcher_arguments(policy.mode, true, host.landlock_abi > 0,
                           launcher_paths_of(backend_kind::bwrap, policy, how, host));
    out.argv.insert(out.argv.end(), launcher.begin(), launcher.end());
    append_command(out.argv, argv);
    out.fds.push_back({launcher_image_fd, host.launcher_image});
    out.fds.push_back({user_sysctls_fd, host.user_sysctls});
    out.quotas_per_run = true;
    record_paths(out, backend_kind::bwrap, policy, host);
    return out;
}

confined_argv landlock_confine(const std::filesystem::path& launcher,
                               std::span<const std::string> argv, const sandbox_policy& policy,
                               const profile& host) {
    require_confined(policy);
    confined_argv out;
    network_walls network = walls_for(backend_kind::landlock, policy, host);
    const network_confinement how = network.how;
    set_common(out, backend_kind::landlock, policy, std::move(network), host);
    out.argv = {launcher.string()};
    const launcher_paths paths = launcher_paths_of(backend_kind::landlock, policy, how, host);
    const std::vector<std::string> arguments = launcher_arguments(policy.mode, false, true, paths);
    out.argv.insert(out.argv.end(), arguments.begin(), arguments.end());
    append_command(out.argv, argv);
    landlock_in_child in_child{policy.mode, host.landlock_abi, host.workspace, {}, false, {}, {}};
    if (policy.mode == sandbox_mode::workspace_write) {
        out.fds.push_back({workspace_fd, host.workspace});
        for (std::size_t i = 0; i < host.writable.size(); ++i) {
            out.fds.push_back({writable_fd + static_cast<int>(i), host.writable[i]});
        }
        in_child.writable = host.writable;
        in_child.host_tmp = policy.rules.tmp == tmp_policy::host;
    }
    in_child.deny_read = paths.deny_read;
    in_child.allow_read = paths.allow_read;
    in_child.network = paths.network;
    in_child.terminal = policy.controlling_terminal;
    out.runner = host.launcher_image;
    // The proxy's forwarder needs the launcher's process: no in-child confinement then.
    if (!paths.network.proxy) out.in_child = std::move(in_child);
    record_paths(out, backend_kind::landlock, policy, host);
    return out;
}

std::string sbpl_quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    out += '"';
    return out;
}

std::string seatbelt_profile(sandbox_mode mode, std::span<const std::filesystem::path> roots) {
    std::string profile =
        "(version 1) (allow default) (deny file-write*) (allow file-write* (literal "
        "\"/dev/null\"))";
    if (mode == sandbox_mode::workspace_write && !roots.empty()) {
        profile += " (allow file-write*";
        for (const auto& root : roots)
            profile += " (subpath " + sbpl_quote(root.string()) + ")";
        profile += ")";
    }
    return profile;
}

confined_argv seatbelt_confine(const std::filesystem::path& sandbox_exec,
                               std::span<const std::string> argv, const sandbox_policy& policy,
                               std::span<const std::filesystem::path> roots,
                               const network_walls* planned) {
    require_confined(policy);
    confined_argv out;
    out.backend = backend_kind::seatbelt;
    out.level = enforcement::full;
    out.argv = {sandbox_exec.string(), "-p", seatbelt_profile(policy.mode, roots)};
    append_command(out.argv, argv);
    out.denial_signatures = denial_signatures(backend_kind::seatbelt);
    out.runner_failure_rules = runner_failure_rules(backend_kind::seatbelt);
    network_walls network = planned != nullptr
                                ? *planned
                                : plan_network(backend_kind::seatbelt, policy.network, 0, false);
    refuse_unavailable(backend_kind::seatbelt, policy, network);
    out.network = std::move(network.facts);
    if (!out.network.missing.empty()) {
        out.level = enforcement::partial;
        out.gaps.insert(out.gaps.end(), out.network.missing.begin(), out.network.missing.end());
    }
    return out;
}

bool profile_hides(backend_kind kind, const sandbox_policy& policy,
                   const std::filesystem::path& workdir) {
    if (kind != backend_kind::bwrap || policy.mode != sandbox_mode::workspace_write) return false;
    if (policy.rules.tmp != tmp_policy::private_tmp) return false;
    return std::none_of(policy.rules.writable_roots.begin(), policy.rules.writable_roots.end(),
                        [&workdir](const auto& root) { return is_within(workdir, root); }) &&
           is_within(workdir, "/tmp") && !is_within(workdir, policy.workspace_root);
}

}  // namespace cordon::sandbox
