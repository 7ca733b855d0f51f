// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What confine() returns: the argv to spawn instead of the caller's, the descriptors the runner
// needs, and everything a consumer needs to classify the run afterwards without knowing which
// backend produced it.
//
//     const cordon::confined_argv wrapped = provider->confine(argv, policy, workdir);
//     // spawn wrapped.argv with wrapped.fds, then read wrapped.status to classify the run
//
// Most programs never see one: run() and the executor confine, spawn and classify themselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/mode.hpp"
#include "cordon/policy.hpp"
#include "cordon/unique_fd.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::sandbox {

class run_judgement;
struct identity_plan;

enum class backend_kind { bwrap, landlock, seatbelt };

[[nodiscard]] std::string_view to_string(backend_kind kind) noexcept;
[[nodiscard]] std::optional<backend_kind> parse_backend_kind(std::string_view text) noexcept;

// Heuristic, stderr-only evidence that the runner itself failed, for runners without a status
// channel (Seatbelt) and for consumers that only have stderr (docs/contract.md).
struct runner_failure_rule {
    std::vector<int> allowed_exit_codes;           // empty: any non-zero exit qualifies
    std::vector<std::string> fatal_signatures;     // case-insensitive substrings of one line
    std::vector<std::string> informational_lines;  // whole lines (case-insensitive) never fatal
};

// The out-of-band runner-status channel: the spawner creates a pipe and places its write end at
// `child_fd` in the child. Every Linux backend ends in cordon-landlock, which writes the records
// of launcher_status.hpp there; status_channel.hpp decodes them.
enum class runner_job {
    run_command,   // proven done by a `started` record just before the command's exec
    answer_probe,  // proven done by a `probe` record (the launcher's --probe)
};
struct status_channel {
    int child_fd;
    runner_job job = runner_job::run_command;
};

// An open descriptor the runner needs at a fixed number (the sealed launcher image, the
// workspace directory). Shared, so that it outlives the provider for as long as a pending spawn
// needs it.
struct passed_fd {
    int child_fd;
    std::shared_ptr<const unique_fd> fd;
};

// Who the command runs as on the host (docs/sandbox.md, "Identity"). `reserved`: an id of the
// range cordon reserves when it runs as root, never root itself. Otherwise the command runs as
// cordon's own uid; when that is root, `reason` says why it could not have its own.
struct run_identity {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    bool reserved = false;
    std::string reason;
};

// How completely a run's network policy is enforced: `none` when the command has the host's
// network (policy allow, or danger-full-access), `partial` naming what is missing.
enum class network_enforcement { full, partial, none };
[[nodiscard]] std::string_view to_string(network_enforcement value) noexcept;

// The record's sandbox.network (docs/contract.md).
struct network_facts {
    network_policy policy = network_policy::allow;
    network_enforcement level = network_enforcement::none;
    std::vector<std::string> missing;  // under partial: one line per part not enforced
    // Under proxy: the lists the proxy enforces (canonical patterns; denied_domains under deny
    // too, where no escalation may open what it names). Once the run is over, under deny and
    // proxy, what the proxy and the walls refused (docs/network.md: at most 16 destinations,
    // the rest counted together), and why the proxy stopped serving the run early, if it did.
    std::vector<std::string> allowed_domains;
    std::vector<std::string> denied_domains;
    struct blocked_destination {
        std::string destination;  // "example.com:443"
        std::string reason;
        std::uint64_t count = 0;
        // Whether a person could be asked to open it: a name no pattern covers, or a public
        // address of another host; never a denied, private, loopback or the host's own one.
        bool askable = false;
        std::chrono::milliseconds first_at{0};  // first refused, from the run's start
        // Refused by the walls (a connection the network witness saw, runtime/network_witness.hpp)
        // rather than by the proxy.
        bool by_walls = false;
    };
    std::vector<blocked_destination> blocked;
    std::uint64_t blocked_more = 0;
    std::optional<std::string> proxy_failure;
    // Under proxy: connections the proxy closed as they arrived because one of cordon's bounds
    // was reached (docs/network.md, "What the proxy holds"), and the first one's reason.
    std::uint64_t proxy_refused = 0;
    std::optional<std::string> proxy_refused_reason;
};

// The network walls of the Landlock rung and of the launcher inside bwrap (docs/sandbox.md).
struct network_confinement {
    bool unshare_net = false;        // make a private network namespace, loopback up
    bool deny_unix_sockets = false;  // refuse socket(AF_UNIX): host pathname sockets
    bool deny_sockets = false;       // no namespace: refuse every other family, TCP by Landlock
    bool local_binding = false;      // with deny_sockets: TCP stream sockets may bind
    // with a namespace: refuse the families it does not separate (AF_VSOCK, ...)
    bool namespaced_sockets_only = false;
    // with a namespace: the launcher listens on the namespace's loopback (proxy_port) and hands
    // each connection to cordon's proxy over proxy_forwarder_fd (network policy proxy)
    bool proxy = false;
    // deny and proxy: the network witness's listener is sent to cordon over network_witness_fd,
    // which then records each connect(2) to a destination outside the sandbox's own loopback
    bool witness = false;
    friend bool operator==(const network_confinement&, const network_confinement&) = default;
};

// What cordon did with something a workspace-write run left that would have run outside the
// sandbox later: a git hook, a configuration entry git would run a program for, a protected name
// (docs/sandbox.md, "Protected names").
enum class neutral_action {
    quarantined,  // moved out of the tree, into the quarantine (kept_at)
    rewritten,    // a git configuration kept without the entries that are not known to be inert
    restored,     // a path kept for the run put back as it was before it (the Landlock rung)
    removed,      // taken out of the tree without a copy (no quarantine could take it)
    failed,       // still there: cordon could not take it away (the record says why)
};
[[nodiscard]] std::string_view to_string(neutral_action value) noexcept;

struct neutralized_path {
    std::string path;  // where it was (canonical)
    std::string what;  // what it is and why it cannot stay
    neutral_action action = neutral_action::quarantined;
    std::string kept_at;  // where the original went (the quarantine), or empty
};

// How what a workspace-write run left was judged once it was over (record: sandbox.policy.judged).
struct judgement_report {
    // What saw the run's changes: "fanotify" (the kernel's events, as they happened) or "scan"
    // (the inodes' change times, once the run was over: cordon without CAP_SYS_ADMIN, or a watch
    // that could not tell, events lost or a file of several names changed); empty when nothing
    // could be looked at (`failure` says why).
    std::string by;
    // How the protected paths kept for the run (the record's `protected`) were kept: "prevented"
    // (read-only while it ran: bwrap) or "restored" (put back once it was over: the Landlock
    // rung); empty when none was kept. Everything else the run changed was detected after it.
    std::string kept;
    std::vector<neutralized_path> neutralized;
    // Why the judgement may have missed something (a root that could not be read, say).
    std::optional<std::string> failure;
    // What runs whose cordon died before judging them had left, judged by this run's cordon
    // first (a window owed, run_journal.hpp). Not this run's doing: it does not make it denied.
    std::vector<neutralized_path> abandoned;
};

struct landlock_in_child {
    sandbox_mode mode;
    int abi;                                     // the kernel's Landlock ABI (> 0)
    std::shared_ptr<const unique_fd> workspace;  // workspace-write: the checked workspace
    // workspace-write: the other writable directories (extra roots, the run's private /tmp).
    std::vector<std::shared_ptr<const unique_fd>> writable;
    bool host_tmp = false;                // workspace-write: the host's /tmp is writable
    std::vector<std::string> deny_read;   // left out of the read grants (canonical)
    std::vector<std::string> allow_read;  // read all the same, beneath a denied directory
    network_confinement network = {};
    bool terminal = false;  // the command has a controlling terminal: /dev/tty is granted
};

struct confined_argv {
    std::vector<std::string> argv;  // runner, profile arguments, "--", the caller's argv
    enforcement level = enforcement::full;
    // Why `level` is partial: one line per wall this host cannot put up (empty when full).
    std::vector<std::string> gaps;
    backend_kind backend = backend_kind::bwrap;
    std::vector<std::string> denial_signatures;  // case-insensitive stderr substrings
    std::vector<runner_failure_rule> runner_failure_rules;
    std::optional<status_channel> status;  // absent for runners without one (Seatbelt)
    // When set: the runner is started with an empty environment and reads the command's
    // environment (NUL-separated NAME=value entries) from this child fd, so that no loader
    // variable of the command's reaches a runner.
    std::optional<int> environment_fd;
    std::vector<passed_fd> fds;
    // When set: the runner's image, executed instead of the file at argv[0] (a sealed in-memory
    // copy of the launcher, or the bwrap binary held open since it was checked), so that nothing
    // written to that path afterwards can take the runner's place.
    std::shared_ptr<const unique_fd> runner;
    // The Landlock rung only: what an in-process spawner needs to apply the same confinement in
    // the forked child, instead of exec'ing the launcher (child_confinement.hpp). A consumer
    // that spawns `argv` itself ignores it.
    std::optional<landlock_in_child> in_child;
    // What the run leaves on the host until it is over (the Landlock rung's private /tmp): held by
    // whoever runs `argv` until every process of the run is gone, then released, which removes
    // it.
    std::vector<std::shared_ptr<const void>> residue;
    // Workspace-write: the judgement of what the run leaves (docs/sandbox.md, "What a run
    // leaves"), opened before it starts. Held like `residue`: released once every process of the
    // run is gone, it judges what the run changed and neutralizes what would run outside the
    // sandbox later. The executor asks it for the record first (run_judgement::finish).
    std::shared_ptr<run_judgement> judgement;
    // When set, the command's $TMPDIR (the Landlock rung's private /tmp directory).
    std::string tmpdir;
    // The policy's parts as this run enforces them, for the record (sandbox.policy).
    std::vector<std::string> protected_paths;  // kept read-only, in place or by copy (canonical)
    std::vector<std::string> hidden_paths;     // credential stores and other denied reads
    // Whether the kernel quotas counted per uid (inotify, fanotify, namespaces) have limits of
    // the run's own: bwrap's user namespace carries them (quotas.hpp). False: they count against
    // the uid's own limits, beside every other process of it, with only the rlimits lowered.
    bool quotas_per_run = false;
    // The network policy as this run enforces it (network_plan.hpp).
    network_facts network;
    // Network deny and proxy: the last runner sends the network witness's listener over
    // network_witness_fd (runtime/network_witness.hpp). `own_loopback`: the sandbox has a
    // network namespace, whose loopback is its own.
    bool network_witness = false;
    bool own_loopback = false;
    // sandbox_policy::controlling_terminal: the runner (cordon-landlock --controlling-tty) gives
    // the command its fd 0 as controlling terminal; whoever spawns `argv` must leave it without
    // one (a spawner that applies `in_child` instead gives it the terminal itself).
    bool takes_terminal = false;
    // Who the command runs as (docs/sandbox.md, "Identity"), and what the spawner does for it
    // (sandbox/identity.hpp): a mount namespace of the run's own with its trees idmapped, and for
    // bwrap the switch to the run's uid before exec. A consumer that spawns `argv` itself without
    // it runs the command as its own uid, with the record's identity wrong: it applies it or
    // drops the run.
    run_identity identity;
    std::shared_ptr<const identity_plan> identity_setup;
};

}  // namespace cordon::sandbox

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using sandbox::backend_kind;
using sandbox::confined_argv;
using sandbox::network_enforcement;
using sandbox::network_facts;
using sandbox::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
