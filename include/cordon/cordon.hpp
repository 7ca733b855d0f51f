// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon: run the shell commands an AI agent asks for, confined. The front header: one call runs
// a command under a sandbox mode and returns the record of what happened.
//
//     #include <cordon/cordon.hpp>
//
//     cordon::run_request request;
//     request.argv = {cordon::trusted_shell().string(), "-c", "git status"};
//     request.mode = cordon::sandbox_mode::read_only;
//     request.workspace_root = "/home/me/src/app";
//     const cordon::run_record record = cordon::run(request);
//     std::cout << record.stdout_output.text;
//
// It stays light: the standard library's headers and cordon's own, no JSON library and no Asio
// (scripts/check-library checks it). What else the library offers, each in a header of its own
// (docs/library.md):
//   - run.hpp          the request, the options, run();
//   - record.hpp       the record: outcome, output, sandbox facts (mode, enforcement, denied);
//   - record_json.hpp  the record as JSON, as `cordon run --json` prints it;
//   - local_provider.hpp  the sandbox cordon brings (bwrap, the Landlock launcher), probed once;
//   - provider.hpp     the contract a sandbox of your own implements;
//   - executor.hpp     runs on your own Boost.Asio event loop (the only header that needs Asio);
//   - jobs.hpp         background jobs: start, read by cursor, write stdin, kill;
//   - approval.hpp     asking a person before a command runs under a wider mode;
//   - mcp_server.hpp   cordon's MCP server, to serve over any pair of descriptors;
//   - logging.hpp      the library's log lines: none until set_log_level(), on stderr or a sink;
//   - version.hpp      CORDON_VERSION_MAJOR, _MINOR, _PATCH.
//
// Errors: every outcome a caller must expect is a value with a machine-readable kind and a message
// for people (run_outcome's kind and message, job_refused, job_write_failure, approval_decision);
// a broken contract (an empty argv, a relative workspace) throws std::invalid_argument, and
// sandbox_unavailable_error is thrown only where a caller asks for it (sandbox_unavailable()).
#pragma once

#include "cordon/local_provider.hpp"
#include "cordon/record.hpp"
#include "cordon/run.hpp"
#include "cordon/version.hpp"
