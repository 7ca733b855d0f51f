// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-bench: what confinement costs, measured in one run (docs/BENCHMARKS.md).
//
// Every section interleaves its variants (A B C A B C ...) so that drift on a shared machine hits
// all of them alike, and reports each as a ratio to a baseline measured in the same run: absolute
// times on these machines move by factors, ratios much less.
//
//   cordon-bench [--quick] [--json FILE]
//                [--section spawn|cli|tree|secrets|probe|throughput|kill|output|terminal]...
//
// Longer than the ~500 lines a file here stays under, on purpose: one program whose sections share
// the interleaving, the statistics and the report, each a few dozen lines read beside the others.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/process/v2/process.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/json_text.hpp"
#include "cordon/executor.hpp"
#include "cordon/logging.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/terminal_emulator.hpp"
#include "sandbox/runner_path.hpp"
#include "sandbox/secret_scan.hpp"

extern char** environ;

namespace {

using nlohmann::json;
using clock_type = std::chrono::steady_clock;
namespace fs = std::filesystem;
namespace runtime = cordon::runtime;
namespace sandbox = cordon::sandbox;

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// ---- statistics and the report -----------------------------------------------------------------

struct summary {
    double median = 0, p90 = 0, p99 = 0;
    std::size_t samples = 0;
};

summary summarise(std::vector<double> values) {
    summary out;
    out.samples = values.size();
    if (values.empty()) return out;
    std::sort(values.begin(), values.end());
    const auto at = [&values](double q) {
        const auto index =
            static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
        return values[std::min(index, values.size() - 1)];
    };
    out.median = at(0.5);
    out.p90 = at(0.9);
    out.p99 = at(0.99);
    return out;
}

struct report {
    json sections = json::object();

    // One table: every row's median against the baseline row's.
    void table(const std::string& section, const std::string& unit, const std::string& baseline,
               const std::vector<std::pair<std::string, summary>>& rows,
               bool higher_is_better = false) {
        double base = 0;
        for (const auto& [name, stats] : rows) {
            if (name == baseline) base = stats.median;
        }
        std::printf("\n== %s (%s, %s is better; ratio to \"%s\")\n", section.c_str(), unit.c_str(),
                    higher_is_better ? "higher" : "lower", baseline.c_str());
        std::printf("%-66s %10s %10s %10s %8s\n", "variant", "median", "p90", "p99", "ratio");
        json out = json::array();
        for (const auto& [name, stats] : rows) {
            const double ratio = base > 0 ? stats.median / base : 0;
            std::printf("%-66s %10.3f %10.3f %10.3f %7.2fx\n", name.c_str(), stats.median,
                        stats.p90, stats.p99, ratio);
            out.push_back({{"variant", name},
                           {"median", stats.median},
                           {"p90", stats.p90},
                           {"p99", stats.p99},
                           {"samples", stats.samples},
                           {"ratio", ratio}});
        }
        sections[section] = {{"unit", unit},
                             {"higherIsBetter", higher_is_better},
                             {"baseline", baseline},
                             {"rows", std::move(out)}};
    }
};

// Runs every variant `rounds` times, interleaved, after one unmeasured warm-up round.
std::vector<std::pair<std::string, summary>> interleaved(
    const std::vector<std::pair<std::string, std::function<void()>>>& variants, int rounds) {
    std::vector<std::vector<double>> samples(variants.size());
    for (const auto& [name, body] : variants)
        body();
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t i = 0; i < variants.size(); ++i) {
            const auto start = clock_type::now();
            variants[i].second();
            samples[i].push_back(ms_since(start));
        }
    }
    std::vector<std::pair<std::string, summary>> out;
    for (std::size_t i = 0; i < variants.size(); ++i)
        out.emplace_back(variants[i].first, summarise(samples[i]));
    return out;
}

// ---- the raw floors ----------------------------------------------------------------------------

std::vector<char*> c_argv(std::vector<std::string>& argv) {
    std::vector<char*> out;
    for (auto& arg : argv)
        out.push_back(arg.data());
    out.push_back(nullptr);
    return out;
}

// posix_spawn + waitpid, stdout and stderr to /dev/null: the least any spawner can do.
int posix_spawn_wait(std::vector<std::string> argv) {
    auto pointers = c_argv(argv);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int failed =
        ::posix_spawn(&pid, pointers[0], &actions, nullptr, pointers.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    if (failed != 0) throw std::runtime_error("posix_spawn " + argv[0] + " failed");
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

int fork_exec_wait(std::vector<std::string> argv) {
    auto pointers = c_argv(argv);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::execve(pointers[0], pointers.data(), environ);
        _exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

// ---- the executor, in process -------------------------------------------------------------------

// One executor on one loop, as a host that links the library has it.
// Where the runs' spill files go: a directory of the bench's own, removed at the end.
fs::path spill_root;

class in_process {
public:
    in_process(std::shared_ptr<sandbox::provider> provider, runtime::executor_options options = {})
        : executor_(io_.get_executor(), std::move(provider), with_spill_root(std::move(options))) {}

    runtime::run_record run(runtime::run_request request) {
        std::optional<runtime::run_record> result;
        executor_.async_run(std::move(request),
                            [&result](runtime::run_record r) { result = std::move(r); });
        io_.restart();
        io_.run();
        return std::move(*result);
    }

    runtime::executor& executor() { return executor_; }
    boost::asio::io_context& io() { return io_; }

private:
    static runtime::executor_options with_spill_root(runtime::executor_options options) {
        options.spill_root = spill_root;
        return options;
    }

    boost::asio::io_context io_;
    runtime::executor executor_;
};

runtime::run_request request(std::vector<std::string> argv, sandbox::sandbox_mode mode,
                             const fs::path& workspace) {
    runtime::run_request out;
    out.argv = std::move(argv);
    out.mode = mode;
    out.workspace_root = workspace;
    return out;
}

void expect_exit_zero(const runtime::run_record& record, const std::string& what) {
    if (record.outcome.exit_code != 0) throw std::runtime_error(what + ": the run failed");
}

std::shared_ptr<sandbox::local_provider> provider_for(sandbox::backend_choice choice,
                                                      const fs::path& verdicts = {}) {
    sandbox::local_provider_options options;
    options.choice = choice;
    options.verdict_directory = verdicts;
    auto provider = runtime::make_local_provider(std::move(options));
    return provider->selected() ? provider : nullptr;
}

// The bwrap part of cordon's bwrap argv (everything before the launcher), running `command`
// itself: bwrap with the same profile, without the launcher inside it.
std::vector<std::string> bwrap_direct(sandbox::local_provider& provider, const fs::path& workspace,
                                      const std::vector<std::string>& command) {
    sandbox::sandbox_policy policy;
    policy.mode = sandbox::sandbox_mode::read_only;
    policy.workspace_root = workspace;
    const auto confined = provider.confine(command, policy, workspace);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < confined.argv.size(); ++i) {
        const std::string& arg = confined.argv[i];
        if (arg == "--") break;
        // A hidden file's empty data comes from a descriptor the executor places; spawned
        // directly, an empty file bound from /dev/null costs the same mount.
        if (arg == "--ro-bind-data" && i + 2 < confined.argv.size()) {
            if (out.size() >= 2 && out[out.size() - 2] == "--perms") out.resize(out.size() - 2);
            out.insert(out.end(), {"--ro-bind", "/dev/null", confined.argv[i + 2]});
            i += 2;
            continue;
        }
        out.push_back(arg);
    }
    out.push_back("--");
    out.insert(out.end(), command.begin(), command.end());
    return out;
}

// ---- sections
// ------------------------------------------------------------------------------------

struct settings {
    bool quick = false;
    fs::path workspace;
    fs::path cordon;
    fs::path noop;  // cordon-bench-noop
    fs::path bash;
    int rounds(int full) const { return quick ? std::max(5, full / 10) : full; }
};

void spawn_section(const settings& given, report& out) {
    const auto workspace = given.workspace;
    const std::vector<std::string> bash_true{given.bash.string(), "-c", "true"};
    in_process danger(nullptr);
    auto landlock = provider_for(sandbox::backend_choice::landlock);
    auto bwrap = provider_for(sandbox::backend_choice::bwrap);
    std::optional<in_process> under_landlock, under_bwrap;
    if (landlock) under_landlock.emplace(landlock);
    if (bwrap) under_bwrap.emplace(bwrap);
    boost::asio::io_context bp_io;

    std::vector<std::pair<std::string, std::function<void()>>> true_variants{
        {"posix_spawn /bin/true (floor)", [] { posix_spawn_wait({"/bin/true"}); }},
        {"fork+exec /bin/true", [] { fork_exec_wait({"/bin/true"}); }},
        {"Boost.Process v2 /bin/true",
         [&bp_io] {
             boost::process::v2::process child(bp_io, "/bin/true", {});
             child.wait();
         }},
        {"executor danger-full-access /bin/true",
         [&] {
             expect_exit_zero(
                 danger.run(
                     request({"/bin/true"}, sandbox::sandbox_mode::danger_full_access, workspace)),
                 "danger");
         }},
    };
    out.table("spawn /bin/true", "ms per spawn+wait", "posix_spawn /bin/true (floor)",
              interleaved(true_variants, given.rounds(200)));

    std::vector<std::pair<std::string, std::function<void()>>> bash_variants{
        {"posix_spawn bash -c true (floor)", [&] { posix_spawn_wait(bash_true); }},
        {"executor danger-full-access bash -c true",
         [&] {
             expect_exit_zero(danger.run(request(
                                  bash_true, sandbox::sandbox_mode::danger_full_access, workspace)),
                              "danger");
         }},
    };
    // The library's front door: an executor, its loop and its record per call.
    runtime::executor_options front_door;
    front_door.spill_root = spill_root;
    bash_variants.emplace_back("cordon::run() danger-full-access bash -c true", [&] {
        expect_exit_zero(
            runtime::run(request(bash_true, sandbox::sandbox_mode::danger_full_access, workspace),
                         front_door),
            "cordon::run()");
    });
    if (under_landlock) {
        bash_variants.emplace_back("executor landlock read-only bash -c true", [&] {
            expect_exit_zero(under_landlock->run(
                                 request(bash_true, sandbox::sandbox_mode::read_only, workspace)),
                             "landlock");
        });
    }
    if (under_bwrap) {
        const auto direct = bwrap_direct(*bwrap, workspace, bash_true);
        bash_variants.emplace_back("bwrap direct, same profile, bash -c true",
                                   [direct] { posix_spawn_wait(direct); });
        bash_variants.emplace_back("executor bwrap read-only bash -c true", [&] {
            expect_exit_zero(
                under_bwrap->run(request(bash_true, sandbox::sandbox_mode::read_only, workspace)),
                "bwrap");
        });
    }
    out.table("spawn bash -c true", "ms per spawn+wait", "posix_spawn bash -c true (floor)",
              interleaved(bash_variants, given.rounds(200)));
}

// `cordon run -c true` is two execs where `bash -c true` is one: cordon's, then bash's. The first
// three rows are the floor that sets: an empty program, a static PIE as cordon is; cordon doing
// nothing but start (--version), and bash with one empty exec before it, the least any
// supervisor that is a program of its own could add.
void cli_section(const settings& given, report& out) {
    const std::string cordon = given.cordon.string();
    const std::string ws = given.workspace.string();
    const std::string noop = given.noop.string();
    // A call that failed fast would pass for a fast call: every one must exit 0.
    const auto call = [](std::vector<std::string> argv) {
        const std::string shown = argv.size() > 1 ? argv[0] + " " + argv[1] : argv[0];
        const int status = posix_spawn_wait(std::move(argv));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw std::runtime_error(shown + ": did not exit 0");
    };
    std::vector<std::pair<std::string, std::function<void()>>> variants{
        {"bash -c true",
         [&] {
             call({given.bash.string(), "-c", "true"});
         }},
        {"an empty static program (cordon-bench-noop)", [&] { call({noop}); }},
        {"cordon --version (start-up alone)",
         [&] {
             call({cordon, "--version"});
         }},
        {"floor: the empty program, then bash -c true",
         [&] {
             call({noop});
             call({given.bash.string(), "-c", "true"});
         }},
        {"cordon run --mode danger-full-access -c true",
         [&] {
             call({cordon, "run", "--mode", "danger-full-access", "--workspace", ws, "-c", "true"});
         }},
        {"cordon run --backend landlock -c true",
         [&] {
             call({cordon, "run", "--backend", "landlock", "--workspace", ws, "-c", "true"});
         }},
        {"cordon run --backend bwrap -c true",
         [&] {
             call({cordon, "run", "--backend", "bwrap", "--workspace", ws, "-c", "true"});
         }},
        // What the policy beyond the mode costs: the protected names' binds and masks (created
        // and removed on the host for every run) and the hidden credential stores.
        {"cordon run --backend bwrap --mode workspace-write -c true",
         [&] {
             call({cordon, "run", "--backend", "bwrap", "--mode", "workspace-write", "--workspace",
                   ws, "-c", "true"});
         }},
        {"... --unprotect all --allow-read / (the mode alone)",
         [&] {
             call({cordon, "run", "--backend", "bwrap", "--mode", "workspace-write", "--unprotect",
                   "all", "--allow-read", "/", "--workspace", ws, "-c", "true"});
         }},
    };
    if (auto bwrap = provider_for(sandbox::backend_choice::bwrap)) {
        const auto direct =
            bwrap_direct(*bwrap, given.workspace, {given.bash.string(), "-c", "true"});
        variants.emplace_back("bwrap direct, same profile, bash -c true",
                              [direct, call] { call(direct); });
    }
    out.table("command line per call", "ms per call", "bash -c true",
              interleaved(variants, given.rounds(100)));
}

// What a workspace-write call costs in a large tree against an empty one: what a run leaves is
// judged from what it changed (fanotify, as root), so the ratio should stay near 1 whatever the
// size; the scan that judges where fanotify is not available (not root) reads every directory's
// change time, and its rows show what that costs. The tree: 20,000 directories of 50 entries
// (one million), a tenth of it with --quick.
void tree_section(const settings& given, report& out) {
    const std::size_t directories = given.quick ? 2'000 : 20'000;
    const std::size_t per_directory = 49;  // and one subdirectory level: 50 entries each
    char pattern[] = "/var/tmp/cordon-bench-tree-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    const fs::path base = fs::canonical(pattern);
    // A million entries must not stay behind when a call fails.
    struct removed_at_end {
        fs::path path;
        ~removed_at_end() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    } const cleanup{base};
    const fs::path empty = base / "empty";
    const fs::path large = base / "large";
    fs::create_directories(empty);
    std::size_t entries = 0;
    for (std::size_t d = 0; d < directories; ++d) {
        const fs::path dir = large / ("d" + std::to_string(d / 200)) / ("e" + std::to_string(d));
        fs::create_directories(dir);
        for (std::size_t f = 0; f < per_directory; ++f) {
            const int fd = ::open((dir / ("f" + std::to_string(f))).c_str(),
                                  O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd >= 0) ::close(fd);
        }
        entries += per_directory + 1;
    }
    const std::string size = std::to_string(entries / 1000) + "k entries";
    const std::string cordon = given.cordon.string();
    const auto call = [&cordon](const std::string& backend, const fs::path& workspace) {
        const int status =
            posix_spawn_wait({cordon, "run", "--backend", backend, "--mode", "workspace-write",
                              "--workspace", workspace.string(), "-c", "true"});
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw std::runtime_error("cordon run in " + workspace.string() + ": did not exit 0");
    };
    std::vector<std::pair<std::string, std::function<void()>>> variants;
    for (const std::string backend : {"bwrap", "landlock"}) {
        if (!provider_for(*sandbox::parse_backend_choice(backend))) continue;
        variants.emplace_back("cordon run --backend " + backend + " workspace-write, empty",
                              [=] { call(backend, empty); });
        variants.emplace_back("cordon run --backend " + backend + " workspace-write, " + size,
                              [=] { call(backend, large); });
    }
    // The library, with the changes scanned for instead of watched (cordon without
    // CAP_SYS_ADMIN): each call reads every directory's change time.
    sandbox::local_provider_options scanning;
    scanning.choice = sandbox::backend_choice::bwrap;
    scanning.watch_changes = false;
    std::shared_ptr<sandbox::provider> scanner = runtime::make_local_provider(scanning);
    std::optional<in_process> scanned;
    if (std::static_pointer_cast<sandbox::local_provider>(scanner)->selected()) {
        scanned.emplace(scanner);
        const std::vector<std::string> bash_true{given.bash.string(), "-c", "true"};
        const std::vector<std::pair<std::string, fs::path>> trees{{"empty", empty}, {size, large}};
        for (const auto& [label, workspace] : trees) {
            variants.emplace_back(
                "executor bwrap workspace-write, changes scanned, " + label,
                [&scanned, bash_true, workspace = workspace] {
                    expect_exit_zero(
                        scanned->run(
                            request(bash_true, sandbox::sandbox_mode::workspace_write, workspace)),
                        "scanned");
                });
        }
    }
    if (!variants.empty()) {
        const std::string baseline = variants.front().first;
        out.table("workspace size", "ms per call", baseline,
                  interleaved(variants, given.rounds(50)));
    }
}

// What finding the keys no list names costs a run (sandbox/secret_scan.hpp): the scan of a home
// without a cache (the first run, or one after ten minutes), with one (nothing changed: every
// directory's times are read, no file is opened), and with one directory changed since (it alone
// is read again). The home: 400 directories of 25 files (10,000, a fifth of them with --quick),
// text of a few KiB each, images skipped by name, a few keys, and 2,000 files in a node_modules
// and a ~/.cache the scan does not enter. The files stay in the page cache: "cold" is cordon's
// cache, not the disk's.
void secrets_section(const settings& given, report& out) {
    const std::size_t directories = given.quick ? 80 : 400;
    const std::size_t per_directory = 25;
    char pattern[] = "/var/tmp/cordon-bench-home-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    const fs::path base = fs::canonical(pattern);
    struct removed_at_end {
        fs::path path;
        ~removed_at_end() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    } const cleanup{base};
    const fs::path home = base / "home";
    const auto write = [](const fs::path& path, const std::string& text) {
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
    };
    std::string text;
    while (text.size() < 3000)
        text += "option_" + std::to_string(text.size()) + " = some value for a tool\n";
    const std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + std::string(70, 'b') +
                            "\n-----END OPENSSH PRIVATE KEY-----\n";
    std::size_t files = 0;
    for (std::size_t d = 0; d < directories; ++d) {
        const fs::path dir = home / ("p" + std::to_string(d % 8)) / ("q" + std::to_string(d / 40)) /
                             ("d" + std::to_string(d));
        for (std::size_t f = 0; f < per_directory; ++f) {
            const bool image = f % 5 == 4;
            const bool secret = f == 0 && d % 40 == 7;
            write(dir / ("f" + std::to_string(f) + (image ? ".png" : ".txt")),
                  secret ? key : text.substr(0, 1000 + 80 * f));
            ++files;
        }
    }
    for (std::size_t f = 0; f < 1000; ++f) {
        write(home / "p0/node_modules" / ("m" + std::to_string(f / 50)) / ("f" + std::to_string(f)),
              text);
        write(home / ".cache/tool" / ("c" + std::to_string(f / 50)) / ("f" + std::to_string(f)),
              text);
    }
    sandbox::secret_cache_options options;
    options.directory = base / "cache";
    // A directory changed in the last two seconds is read again by the next call too
    // (secret_scan.hpp): off here, so that each variant reads what it alone changed.
    options.settle = std::chrono::milliseconds(0);
    // Each variant looks at the directories; what a run takes within the trust window after
    // another looked (the default ten seconds) is a variant of its own.
    options.trust = std::chrono::milliseconds(0);
    const std::string size = std::to_string((files + 2000) / 1000) + "k files";
    std::size_t found = 0;
    const auto scan = [&] {
        const auto result = sandbox::found_secrets(home, {}, options);
        found = result.found.size();
    };
    std::size_t touched = 0;
    std::vector<std::pair<std::string, std::function<void()>>> variants{
        {"scan of a home, cached, nothing changed (" + size + ")", scan},
        {"scan of a home, no cache (" + size + ")",
         [&] {
             std::error_code ec;
             fs::remove_all(options.directory, ec);
             scan();
         }},
        {"what was found, within the trust window (" + size + ")",
         [&] {
             auto trusted = options;
             trusted.trust = std::chrono::seconds(10);
             found = sandbox::found_secrets(home, {}, trusted).found.size();
         }},
        {"scan of a home, cached, one directory changed (" + size + ")",
         [&] {
             const std::size_t d = (touched * 7) % directories;
             write(home / ("p" + std::to_string(d % 8)) / ("q" + std::to_string(d / 40)) /
                       ("d" + std::to_string(d)) / ("new" + std::to_string(touched)),
                   text);
             ++touched;
             scan();
         }},
    };
    // A file the scan reads whole (64 KiB, as it reads a PEM bundle) that holds nothing but AWS's
    // documentation key ids: recognise() looks at each prefix's places once.
    std::string examples = "-----BEGIN CERTIFICATE-----\n";
    while (examples.size() + 21 < 65536)
        examples += "AKIAIOSFODNN7EXAMPLE\n";
    variants.emplace_back("recognise(), a 64 KiB head of 3,000 documentation key ids", [&] {
        found += sandbox::recognise(examples) == sandbox::secret_kind::none ? 0U : 1U;
    });
    // What it adds to a whole `cordon run`: the same call with HOME at an empty home, at an empty
    // one denying the keys' paths by hand (what hiding them costs), and at this one (cordon's own
    // cache, the default; the account's home is scanned in all three).
    const fs::path empty_home = base / "empty";
    fs::create_directories(empty_home);
    const std::string cordon = given.cordon.string();
    // The keys' paths as --deny-read: what hiding them costs, apart from finding them.
    std::vector<std::string> keys_denied;
    for (const fs::path& path : sandbox::found_secrets(home, {}, options).found)
        keys_denied.insert(keys_denied.end(), {"--deny-read", path.string()});
    const auto call = [&cordon, &given](const fs::path& with_home,
                                        const std::vector<std::string>& more) {
        ::setenv("HOME", with_home.c_str(), 1);
        std::vector<std::string> argv{cordon,  "run",         "--backend",
                                      "bwrap", "--workspace", given.workspace.string()};
        argv.insert(argv.end(), more.begin(), more.end());
        argv.insert(argv.end(), {"-c", "true"});
        const int status = posix_spawn_wait(std::move(argv));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw std::runtime_error("cordon run with HOME=" + with_home.string() + " failed");
    };
    const char* own_home = std::getenv("HOME");
    const std::string restore = own_home == nullptr ? std::string() : own_home;
    if (provider_for(sandbox::backend_choice::bwrap)) {
        variants.emplace_back("cordon run --backend bwrap -c true, HOME empty",
                              [&] { call(empty_home, {}); });
        variants.emplace_back("the same, the keys' paths as --deny-read",
                              [&] { call(empty_home, keys_denied); });
        variants.emplace_back("cordon run --backend bwrap -c true, HOME this home (cached)",
                              [&] { call(home, {}); });
    }
    auto rows = interleaved(variants, given.rounds(100));
    if (restore.empty()) {
        ::unsetenv("HOME");
    } else {
        ::setenv("HOME", restore.c_str(), 1);
    }
    out.table("content scan of a home", "ms per call", variants.front().first, rows);
    std::printf("(%zu keys found of %zu planted)\n", found, (directories + 39) / 40);
}

void probe_section(const settings& given, report& out) {
    std::vector<std::pair<std::string, std::function<void()>>> variants{
        {"probe the ladder (make_local_provider)",
         [] { (void)provider_for(sandbox::backend_choice::automatic); }},
        {"probe landlock alone", [] { (void)provider_for(sandbox::backend_choice::landlock); }},
        {"probe bwrap alone", [] { (void)provider_for(sandbox::backend_choice::bwrap); }},
    };
    // What `cordon run` pays instead: the verdict an earlier process stored, its key checked and
    // the runners opened (docs/sandbox.md, "The verdict cache").
    const fs::path verdicts = spill_root / "verdicts";
    (void)provider_for(sandbox::backend_choice::automatic, verdicts);
    variants.emplace_back("adopt the cached ladder verdict", [verdicts] {
        (void)provider_for(sandbox::backend_choice::automatic, verdicts);
    });
    out.table("probe", "ms per cold probe", "probe the ladder (make_local_provider)",
              interleaved(variants, given.rounds(30)));

    auto provider = provider_for(sandbox::backend_choice::automatic);
    if (!provider) return;
    sandbox::sandbox_policy policy;
    policy.mode = sandbox::sandbox_mode::read_only;
    policy.workspace_root = given.workspace;
    const std::vector<std::string> argv{given.bash.string(), "-c", "true"};
    std::vector<double> micros;
    for (int i = 0; i < given.rounds(2000); ++i) {
        const auto start = clock_type::now();
        (void)provider->confine(argv, policy, given.workspace);
        micros.push_back(ms_since(start) * 1000.0);
    }
    out.table("confine() with the verdict cached", "µs per call", "confine()",
              {{"confine()", summarise(std::move(micros))}});
}

void throughput_section(const settings& given, report& out) {
    const std::vector<std::string> bash_true{given.bash.string(), "-c", "true"};
    const int total = given.quick ? 64 : 512;
    std::vector<std::pair<std::string, summary>> rows;
    for (const int parallel : {1, 2, 8, 32}) {
        // The floor: `parallel` threads, each spawning and waiting in turn.
        auto start = clock_type::now();
        {
            std::atomic<int> left{total};
            std::vector<std::thread> threads;
            for (int t = 0; t < parallel; ++t) {
                threads.emplace_back([&] {
                    while (left.fetch_sub(1) > 0)
                        posix_spawn_wait(bash_true);
                });
            }
            for (auto& each : threads)
                each.join();
        }
        const double floor_rate = total / (ms_since(start) / 1000.0);
        // One executor on one loop, `parallel` runs in flight at a time.
        boost::asio::io_context io;
        runtime::executor_options options;
        options.spill_root = spill_root;
        runtime::executor exec(io.get_executor(), nullptr, options);
        int started = 0;
        std::function<void()> next = [&] {
            if (started >= total) return;
            ++started;
            exec.async_run(
                request(bash_true, sandbox::sandbox_mode::danger_full_access, given.workspace),
                [&](runtime::run_record) { next(); });
        };
        start = clock_type::now();
        for (int i = 0; i < parallel; ++i)
            next();
        io.run();
        const double executor_rate = total / (ms_since(start) / 1000.0);
        const std::string n = std::to_string(parallel);
        rows.push_back({"floor, N=" + n, summary{floor_rate, floor_rate, floor_rate, 1}});
        rows.push_back({"executor danger-full-access, N=" + n,
                        summary{executor_rate, executor_rate, executor_rate, 1}});
    }
    out.table("throughput of bash -c true", "runs per second", "floor, N=8", rows, true);
}

void kill_section(const settings& given, report& out) {
    in_process danger(nullptr, [] {
        runtime::executor_options options;
        options.plan = runtime::kill_plan::standard(std::chrono::milliseconds(200));
        return options;
    }());
    const auto overshoot = [&](std::vector<std::string> argv, double planned_ms) {
        auto req =
            request(std::move(argv), sandbox::sandbox_mode::danger_full_access, given.workspace);
        req.timeout = std::chrono::milliseconds(300);
        const auto start = clock_type::now();
        (void)danger.run(std::move(req));
        return ms_since(start) - 300.0 - planned_ms;
    };
    std::vector<double> obeying, trapping, tree;
    const std::string bash = given.bash.string();
    for (int i = 0; i < given.rounds(30); ++i) {
        obeying.push_back(overshoot({bash, "-c", "exec sleep 60"}, 0));
        trapping.push_back(overshoot({bash, "-c", "trap '' TERM; sleep 60 & wait; sleep 60"}, 200));
        tree.push_back(overshoot({bash, "-c", "for i in $(seq 200); do sleep 60 & done; wait"}, 0));
    }
    out.table("kill: deadline to the whole tree reaped", "ms past the deadline (and the grace)",
              "TERM-obeying child",
              {{"TERM-obeying child", summarise(obeying)},
               {"TERM-trapping child (grace 200 ms)", summarise(trapping)},
               {"a tree of 200 processes", summarise(tree)}});
}

long peak_rss_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
    }
    return 0;
}

void output_section(const settings& given, report& out) {
    const std::uint64_t bytes = given.quick ? (64ULL << 20) : (1ULL << 30);
    const std::string count = std::to_string(bytes);
    // A plain pipe into nothing: head writes, we read and drop.
    const auto plain = [&] {
        int ends[2];
        if (::pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
        posix_spawn_file_actions_t actions;
        ::posix_spawn_file_actions_init(&actions);
        ::posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO);
        std::vector<std::string> argv{"/usr/bin/head", "-c", count, "/dev/zero"};
        auto pointers = c_argv(argv);
        pid_t pid = 0;
        ::posix_spawn(&pid, pointers[0], &actions, nullptr, pointers.data(), environ);
        ::posix_spawn_file_actions_destroy(&actions);
        ::close(ends[1]);
        std::vector<char> buffer(1 << 16);
        while (::read(ends[0], buffer.data(), buffer.size()) > 0) {
        }
        ::close(ends[0]);
        ::waitpid(pid, nullptr, 0);
    };
    in_process danger(nullptr);
    // Writing 5 to clear_refs resets the peak (VmHWM) to what is resident now.
    std::ofstream("/proc/self/clear_refs") << "5";
    const long before = peak_rss_kib();
    const auto collected = [&] {
        expect_exit_zero(
            danger.run(request({"/usr/bin/head", "-c", count, "/dev/zero"},
                               sandbox::sandbox_mode::danger_full_access, given.workspace)),
            "output");
    };
    const auto rows =
        interleaved({{"plain pipe, read and dropped", plain}, {"executor collector", collected}},
                    given.quick ? 2 : 3);
    std::vector<std::pair<std::string, summary>> rates;
    for (const auto& [name, stats] : rows) {
        const double mb_per_s = static_cast<double>(bytes) / 1e6 / (stats.median / 1000.0);
        rates.push_back({name, summary{mb_per_s, mb_per_s, mb_per_s, stats.samples}});
    }
    out.table("output through stdout (" + std::to_string(bytes >> 20) + " MiB)", "MB/s",
              "plain pipe, read and dropped", rates, true);
    const long growth = peak_rss_kib() - before;
    std::printf("peak RSS growth while collecting: %ld KiB\n", growth);
    out.sections["output peak RSS"] = {{"unit", "KiB"}, {"growth", growth}};
}

// A run under a pseudo-terminal (docs/terminal.md) against the same run on pipes, each
// unconfined and under bwrap; then what the screen of an interactive job costs: every byte of its
// output goes through the terminal emulator on the job's loop: log lines, coloured lines and
// full-screen redraws (top's), in MB/s, against the log lines.
void terminal_section(const settings& given, report& out) {
    const std::vector<std::string> bash_true{given.bash.string(), "-c", "true"};
    in_process danger(nullptr);
    auto bwrap = provider_for(sandbox::backend_choice::bwrap);
    std::optional<in_process> under_bwrap;
    if (bwrap) under_bwrap.emplace(bwrap);
    const auto tty = [&](sandbox::sandbox_mode mode) {
        auto req = request(bash_true, mode, given.workspace);
        req.tty = runtime::terminal_size{24, 80};
        return req;
    };
    std::vector<std::pair<std::string, std::function<void()>>> variants{
        {"danger-full-access, pipes",
         [&] {
             expect_exit_zero(
                 danger.run(request(bash_true, sandbox::sandbox_mode::danger_full_access,
                                    given.workspace)),
                 "pipes");
         }},
        {"danger-full-access, a terminal",
         [&] {
             expect_exit_zero(danger.run(tty(sandbox::sandbox_mode::danger_full_access)), "tty");
         }},
    };
    if (under_bwrap) {
        variants.emplace_back("bwrap read-only, pipes", [&] {
            expect_exit_zero(under_bwrap->run(request(bash_true, sandbox::sandbox_mode::read_only,
                                                      given.workspace)),
                             "bwrap pipes");
        });
        variants.emplace_back("bwrap read-only, a terminal", [&] {
            expect_exit_zero(under_bwrap->run(tty(sandbox::sandbox_mode::read_only)), "bwrap tty");
        });
    }
    out.table("a run under a terminal: bash -c true", "ms per run", "danger-full-access, pipes",
              interleaved(variants, given.rounds(100)));

    // 4 KiB pieces, as a job's reads bring them.
    const std::size_t bytes = given.quick ? (2u << 20) : (32u << 20);
    const auto output_of = [bytes](const std::function<std::string(int)>& line) {
        std::string text;
        for (int i = 0; text.size() < bytes; ++i)
            text += line(i);
        return text;
    };
    const std::string logs = output_of([](int i) {
        return "2026-12-07 04:10:" + std::to_string(10 + i % 50) + " INFO request " +
               std::to_string(i) + " served in 3 ms\r\n";
    });
    const std::string coloured = output_of([](int i) {
        return "\x1b[32mok\x1b[0m \x1b[1mtest_" + std::to_string(i) +
               "\x1b[0m passed in \x1b[33m0.01s\x1b[0m\r\n";
    });
    const std::string redraws = output_of([](int i) {
        std::string frame =
            "\x1b[H\x1b[7mtop - " + std::to_string(i) + " up 3 days\x1b[0m\x1b[K\r\n";
        for (int row = 1; row < 24; ++row) {
            frame += std::to_string(1000 + row) + " root 20 0 " + std::to_string(i * row % 9999) +
                     " S 0.0 0.1 0:00.01 process-" + std::to_string(row) + "\x1b[K\r\n";
        }
        return frame;
    });
    const auto through = [](const std::string& text,
                            const std::function<void(std::string_view)>& take) {
        for (std::size_t at = 0; at < text.size(); at += 4096)
            take(std::string_view(text).substr(at, 4096));
    };
    std::vector<std::pair<std::string, std::function<void()>>> feeds;
    for (const auto& [name, text] : {std::pair<std::string, const std::string*>{"log lines", &logs},
                                     {"coloured lines", &coloured},
                                     {"full-screen redraws", &redraws}}) {
        feeds.emplace_back("the screen, " + name, [text = text, &through] {
            runtime::terminal_emulator screen({24, 80});
            through(*text, [&screen](std::string_view piece) { (void)screen.feed(piece); });
        });
    }
    std::vector<std::pair<std::string, summary>> rates;
    for (const auto& [name, stats] : interleaved(feeds, given.quick ? 2 : 5)) {
        const double mb_per_s = static_cast<double>(bytes) / 1e6 / (stats.median / 1000.0);
        rates.push_back({name, summary{mb_per_s, mb_per_s, mb_per_s, stats.samples}});
    }
    out.table("the screen of an interactive job (" + std::to_string(bytes >> 20) + " MiB)", "MB/s",
              "the screen, log lines", rates, true);
}

// ---- the targets
// ----------------------------------------------------------------------------------

// A ratio the project holds itself to (docs/BENCHMARKS.md): `variant` over `baseline`, both rows
// of `section`, measured in the same run.
struct target {
    const char* section;
    const char* variant;
    const char* baseline;
    double at_most;
};

constexpr target targets[] = {
    {"command line per call", "cordon run --mode danger-full-access -c true", "bash -c true", 1.5},
    {"command line per call", "cordon run --backend landlock -c true", "bash -c true", 1.6},
    {"command line per call", "cordon run --backend bwrap -c true",
     "bwrap direct, same profile, bash -c true", 1.3},
    {"spawn bash -c true", "cordon::run() danger-full-access bash -c true",
     "posix_spawn bash -c true (floor)", 1.1},
};

// Every target whose rows this run measured, met or missed: printed and kept in the JSON.
void report_targets(report& out) {
    const auto median = [&out](const char* section, const char* variant) -> std::optional<double> {
        if (!out.sections.contains(section)) return std::nullopt;
        for (const json& row : out.sections[section]["rows"]) {
            if (row["variant"] == variant) return row["median"].get<double>();
        }
        return std::nullopt;
    };
    json rows = json::array();
    for (const target& each : targets) {
        const auto measured = median(each.section, each.variant);
        const auto base = median(each.section, each.baseline);
        if (!measured || !base || *base <= 0) continue;
        if (rows.empty()) {
            std::printf("\n== targets (ratios of this run's medians)\n%-66s %8s %8s %s\n",
                        "variant / baseline", "ratio", "target", "");
        }
        const double ratio = *measured / *base;
        const bool met = ratio <= each.at_most;
        std::printf("%-66s %7.2fx %7.2fx %s\n",
                    (std::string(each.variant) + " / " + each.baseline).substr(0, 66).c_str(),
                    ratio, each.at_most, met ? "met" : "missed");
        rows.push_back({{"section", each.section},
                        {"variant", each.variant},
                        {"baseline", each.baseline},
                        {"ratio", ratio},
                        {"target", each.at_most},
                        {"met", met}});
    }
    if (!rows.empty()) out.sections["targets"] = std::move(rows);
}

}  // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    cordon::set_log_level(cordon::log_level::warn);  // the executor's notes are not results
    settings given;
    std::string json_path;
    std::set<std::string> only;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") {
            given.quick = true;
        } else if (arg == "--json" && i + 1 < argc) {
            json_path = argv[++i];
        } else if (arg == "--section" && i + 1 < argc) {
            only.insert(argv[++i]);
        } else {
            std::fprintf(stderr,
                         "usage: cordon-bench [--quick] [--json FILE] [--section NAME]...\n");
            return 2;
        }
    }
    given.cordon = fs::canonical("/proc/self/exe").parent_path() / "cordon";
    given.noop = given.cordon.parent_path() / "cordon-bench-noop";
    given.bash = sandbox::find_trusted_executable("bash");
    char pattern[] = "/var/tmp/cordon-bench-XXXXXX";
    char scratch[] = "/var/tmp/cordon-bench-spill-XXXXXX";
    if (::mkdtemp(pattern) == nullptr || ::mkdtemp(scratch) == nullptr) return 1;
    given.workspace = fs::canonical(pattern);
    spill_root = fs::canonical(scratch);

    report out;
    const std::vector<std::pair<std::string, std::function<void(const settings&, report&)>>>
        sections{{"spawn", spawn_section},      {"cli", cli_section},
                 {"tree", tree_section},        {"secrets", secrets_section},
                 {"probe", probe_section},      {"throughput", throughput_section},
                 {"kill", kill_section},        {"output", output_section},
                 {"terminal", terminal_section}};
    int status = 0;
    for (const auto& [name, body] : sections) {
        if (!only.empty() && only.count(name) == 0) continue;
        try {
            body(given, out);
        } catch (const std::exception& error) {
            std::fprintf(stderr, "cordon-bench: %s: %s\n", name.c_str(), error.what());
            status = 1;
        }
    }
    report_targets(out);
    fs::remove_all(given.workspace);
    fs::remove_all(spill_root);
    if (!json_path.empty())
        std::ofstream(json_path) << cordon::base::dump_json(out.sections, 2) << '\n';
    return status;
}
