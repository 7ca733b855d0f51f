// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-test-job-host: a process that hosts a job supervisor, for the test that SIGKILLs it.
//
//   cordon-test-job-host none|bwrap|landlock|landlock_via_launcher LAUNCHER CHILD WORKSPACE MARKER
//
// Starts two jobs under the backend, each a shell that runs two `CHILD sleep 60000 MARKER`
// processes (one in the background), prints READY once every job is running, and waits to be
// killed.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <variant>

#include "cordon/jobs.hpp"
#include "runtime/local_provider_factory.hpp"

int main(int argc, char** argv) {
    using namespace cordon;
    if (argc != 6) {
        std::fprintf(stderr,
                     "usage: cordon-test-job-host none|bwrap|landlock|landlock_via_launcher "
                     "LAUNCHER CHILD WORKSPACE MARKER\n");
        return 2;
    }
    const std::string backend = argv[1];
    std::shared_ptr<sandbox::provider> provider;
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::danger_full_access;
    if (backend != "none") {
        sandbox::local_provider_options options;
        options.choice =
            backend == "bwrap" ? sandbox::backend_choice::bwrap : sandbox::backend_choice::landlock;
        options.launcher_path = argv[2];
        provider = runtime::make_local_provider(options);
        mode = sandbox::sandbox_mode::workspace_write;
    }
    runtime::supervisor_options supervisor_options;
    supervisor_options.executor.landlock_in_child = backend != "landlock_via_launcher";
    runtime::supervisor jobs(provider, supervisor_options);
    const std::string child = argv[3];
    const std::string marker = argv[5];
    for (int i = 0; i < 2; ++i) {
        runtime::job_request request;
        request.run.argv = {"/bin/sh", "-c",
                            "\"$0\" sleep 60000 \"$1\" & \"$0\" sleep 60000 \"$1\"; wait", child,
                            marker};
        request.run.mode = mode;
        request.run.workspace_root = argv[4];
        // The Landlock rung refuses protected names unless the gap is accepted (policy.hpp).
        request.run.rules.accept_partial = true;
        if (std::holds_alternative<runtime::job_refused>(jobs.start(std::move(request)))) {
            return 1;
        }
    }
    std::printf("READY\n");
    std::fflush(stdout);
    for (;;)
        ::pause();
}
