// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The least a program needs to run a command under cordon, built with pkg-config alone:
//
//   g++ -std=c++20 hello.cpp $(pkg-config --cflags --libs cordon) -o hello
#include <cordon/cordon.hpp>

#include <filesystem>
#include <iostream>

int main() {
    cordon::run_request request;
    request.argv = {"echo", "hello from a sandbox"};
    request.workspace_root = std::filesystem::canonical(std::filesystem::current_path());
    const cordon::run_record record = cordon::run(request);
    std::cout << record.stdout_output.text << "cordon " << cordon::library_version() << ", "
              << cordon::to_string(record.outcome.kind) << " under "
              << cordon::to_string(record.sandbox.mode) << '\n';
    return record.outcome.kind == cordon::outcome_kind::exited ? *record.outcome.exit_code : 1;
}
