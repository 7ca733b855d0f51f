// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The sandbox cordon brings: the local provider, a ladder of backends probed in order (Linux:
// bubblewrap, then cordon's own Landlock launcher; macOS: Seatbelt), of which the first that
// really confines a probe command is used for every run.
//
//     auto provider = cordon::make_local_provider();          // probes now, once
//     cordon::run_record record = cordon::run(provider, request);
//
// make_local_provider() probes before it returns (a few confined runs of `true`, typically tens
// of milliseconds, each bounded by probe_timeout): call it at start-up, off any event loop that
// must stay responsive. The provider is then safe to share between threads, executors and job
// supervisors, and never probes again. When no rung works, every confined run it is asked for
// fails closed (a runner_failed record saying why each backend was unusable); danger-full-access
// still runs.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "cordon/export.hpp"
#include "cordon/provider.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::sandbox {

enum class platform { linux_, macos, other };
[[nodiscard]] platform current_platform() noexcept;

enum class backend_choice { automatic, bwrap, landlock, seatbelt };
[[nodiscard]] std::string_view to_string(backend_choice choice) noexcept;
[[nodiscard]] std::optional<backend_choice> parse_backend_choice(std::string_view text) noexcept;

// What running one probe argv proved, as the runtime's classifier decided it: a
// probe is an ordinary confined run of `true` (or of the launcher's --probe).
struct probe_run_result {
    // nullopt: the runner did what it was asked and the run exited 0; else one line saying why
    // not (the runner's own line, a spawn error, a timeout, an exit status).
    std::optional<std::string> failure;
    int abi = 0;  // the launcher's answer to --probe: the kernel's Landlock ABI, or -errno
    // The run's exit status was lost (another process reaped it: `failure` says so), so the
    // probe proved nothing either way. The provider then decides no verdict and stores none: the
    // run fails closed with that reason, and the next one probes again.
    bool status_lost = false;
};

// Runs `wrapped` (honouring its status channel, environment fd and passed fds) to completion
// within `timeout`.
using probe_runner = std::function<probe_run_result(const confined_argv& wrapped,
                                                    std::chrono::milliseconds timeout)>;

// The ids cordon gives its confined commands when it runs as root (docs/sandbox.md, "Identity"):
// [first, first + count). The default is the last 65,536 ids of the range systemd documents for
// container user namespaces (524288-1879048191), which no login user has. A count of 0 gives
// none: commands run as root, and the record says so.
struct identity_range {
    std::uint32_t first = 1879048192 - 65536;
    std::uint32_t count = 65536;
};

struct local_provider_options {
    backend_choice choice = backend_choice::automatic;
    platform host = current_platform();
    // Empty: resolved once, from root-owned directories only (find_trusted_executable). A path
    // given here is the caller's decision and is used as is.
    std::filesystem::path bwrap_path;
    // Empty: the first of `launcher_candidates` that exists, run only if the trust check passes
    // (root-owned, or the user's own, and writable by nobody else, all the way up); a launcher it
    // refuses makes both Linux rungs unusable, saying why. A path given here is the caller's
    // decision and is used as is.
    std::filesystem::path launcher_path;
    // Where the launcher is looked for; empty: beside the running program, then libexec/cordon of
    // the prefix cordon was installed to (docs/library.md).
    std::vector<std::filesystem::path> launcher_candidates;
    std::filesystem::path sandbox_exec_path = "/usr/bin/sandbox-exec";
    std::chrono::milliseconds probe_timeout{5000};
    probe_runner run_probe;  // required whenever a rung has to be probed
    // Where verdicts are shared across processes (a directory per user under /dev/shm, a file
    // per ladder and per program with its runners: docs/sandbox.md), Linux only;
    // empty: every provider probes for itself. cordon's commands pass default_verdict_cache().
    std::filesystem::path verdict_directory;
    // Probe even when the cached verdict is current, and store what was found (cordon probe).
    bool refresh_verdict = false;
    // What a workspace-write run leaves is judged once it is over (docs/sandbox.md, "What a run
    // leaves"). The window each run opens is recorded here until it is judged, so that a cordon
    // killed first leaves it to the next (nullopt: /dev/shm/cordon-judgements-<uid>; empty: not
    // recorded).
    std::optional<std::filesystem::path> journal_directory;
    // Where what is taken out of a tree goes (nullopt: $XDG_STATE_HOME/cordon/quarantine, else
    // ~/.local/state/cordon/quarantine; empty: it is removed, not kept).
    std::optional<std::filesystem::path> quarantine_home;
    // See a run's changes as they happen (fanotify, where cordon holds CAP_SYS_ADMIN) rather
    // than scanning for them once it is over. Both find the same; the watch costs nothing that
    // grows with the tree.
    bool watch_changes = true;
    // Judge what workspace-write runs leave (confined_argv::judgement). Off only where the argv
    // is printed, not run (cordon confine): nobody would be there when it ends.
    bool judge_runs = true;
    // Cordon as root: the range its commands' own ids come from (identity_range).
    identity_range identities;
};

}  // namespace cordon::sandbox

namespace cordon::sandbox::detail {
// Notes `directory` (absolute) as the libexec directory of the installed prefix this program was
// built against: where the launcher is looked for just before the directory the library was
// configured with (docs/library.md). Called before main() by the definition below.
void note_installed_libexec(const char* directory) noexcept;
}  // namespace cordon::sandbox::detail

// A program built against an installed cordon through find_package(cordon) is compiled with
// CORDON_INSTALLED_LIBEXEC_DIR: the libexec directory of that prefix as cordonConfig.cmake finds
// it, wherever the prefix was installed or moved to. A static library cannot find its own place
// as libcordon.so can; the program that links it can say it.
#ifdef CORDON_INSTALLED_LIBEXEC_DIR
namespace cordon::sandbox::detail {
inline const bool installed_libexec_noted =
    (note_installed_libexec(CORDON_INSTALLED_LIBEXEC_DIR), true);
}  // namespace cordon::sandbox::detail
#endif

namespace cordon {

// A local provider, probed (see above). `options.run_probe` is filled in: probes run through the
// same spawn path and classifier as every run.
[[nodiscard]] std::shared_ptr<sandbox::provider> make_local_provider(
    sandbox::local_provider_options options = {});

}  // namespace cordon

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using sandbox::backend_choice;
using sandbox::local_provider_options;
using sandbox::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
