// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Running the built `cordon` program to its end as a user would, for the suites that test it from
// outside (CLI, hostile): through the runtime's own spawn path (no shell in between), with the
// environment the executor would give it, a generous bound, and both streams collected. Needs
// cordon_runtime; support/spawned_process.hpp is for a cordon the test acts on while it runs.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/environment.hpp"
#include "runtime/process.hpp"
#include "support.hpp"

extern char** environ;

namespace cordon::test {

struct cli_result {
    int exit_code = -1;  // -1: cordon itself was killed by a signal
    std::string out;
    std::string err;
};

// What cordon's own stdin is: nothing (/dev/null), these bytes, or this descriptor.
struct cli_stdin {
    std::optional<std::string> data;
    std::shared_ptr<const unique_fd> fd;
};

// Runs `argv` (an absolute program path first) to its end in `cwd`, with this process's
// environment (scrubbed as the executor scrubs it) and `env` set over it.
inline cli_result run_program(std::vector<std::string> argv,
                              const std::filesystem::path& cwd = std::filesystem::current_path(),
                              cli_stdin input = {},
                              const std::map<std::string, std::optional<std::string>>& env = {}) {
    runtime::process_spec spec;
    spec.argv = std::move(argv);
    spec.env = runtime::build_environment(environ, env);
    spec.cwd = cwd;
    spec.stdin_data = std::move(input.data);
    spec.stdin_fd = std::move(input.fd);
    spec.timeout = std::chrono::seconds(60);
    const runtime::process_outcome outcome = runtime::run_process(std::move(spec));
    cli_result result;
    if (outcome.exit_code) result.exit_code = *outcome.exit_code;
    result.out = outcome.stdout_output.text;
    result.err = outcome.stderr_output.text;
    return result;
}

// Runs `cordon args...` as run_program() does.
inline cli_result run_cordon(const std::vector<std::string>& args,
                             const std::filesystem::path& cwd = std::filesystem::current_path(),
                             cli_stdin input = {},
                             const std::map<std::string, std::optional<std::string>>& env = {}) {
    std::vector<std::string> argv{cordon_path().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(std::move(argv), cwd, std::move(input), env);
}

// `cordon config show ARGS...` with `text` as the one configuration file (in a directory of its
// own, which is also the working directory; no user configuration).
inline cli_result show_with(const std::string& text, std::vector<std::string> args = {}) {
    temp_dir dir;
    std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);
    write_file(dir / "config.toml", text,
               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    args.insert(args.begin(), {"config", "show"});
    return run_cordon(args, dir.path(), {},
                      {{"CORDON_CONFIG_DIRS", dir.path().string()}, {"XDG_CONFIG_HOME", {}}});
}

}  // namespace cordon::test
