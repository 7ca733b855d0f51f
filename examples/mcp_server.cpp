// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon's MCP server, embedded: a sandboxed shell for any MCP client on stdin and stdout, with
// every command read-only in the current directory (docs/mcp.md has the tools).
#include <cordon/local_provider.hpp>
#include <cordon/mcp_server.hpp>

#include <unistd.h>

#include <filesystem>

int main() {
    cordon::mcp::server_options options;
    options.workspace = std::filesystem::canonical(std::filesystem::current_path());
    options.bash = "/bin/bash";
    cordon::mcp::server server(cordon::make_local_provider(), std::move(options));
    server.serve(STDIN_FILENO, STDOUT_FILENO);
}
