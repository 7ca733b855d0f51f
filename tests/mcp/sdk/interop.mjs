// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Drives `cordon mcp` with the official MCP TypeScript SDK client, as an agent would: list the
// tools, run a foreground command, let one go to the background past yield_ms, start a background
// job and read it to the end by cursor, write to a job's stdin, kill a job, ping while a slow call
// runs, cancel a pending call, ask for an escalation (a second client, which declares elicitation,
// answers accept, decline and cancel; this one, which does not, is never asked), and close the
// client. Then no process any command started may be
// left. Every command names itself with a marker (exec -a) that is looked for in /proc; the marker
// comes in through the environment ($M), so that it is not in any runner's command line.
//
//   node interop.mjs /path/to/cordon
//
// Exits 0 when every check passed; otherwise prints the failed check and exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const cordon = process.argv[2];
assert.ok(cordon, "usage: node interop.mjs /path/to/cordon");
const marker = `cordon-interop-${process.pid}`;
const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cordon-interop-")));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A command that waits until the test releases it, then prints `word`: nothing in a step waits on
// a clock. release(name) lets it go.
function waitingCommand(name, word) {
  return `until [ -e '${path.join(workspace, name)}' ]; do sleep 0.01; done; echo ${word}`;
}
function release(name) {
  fs.writeFileSync(path.join(workspace, name), "");
}

// The pids whose command line holds `text`.
function processesWith(text) {
  const found = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function eventually(check, what, ms = 15000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return;
    await sleep(50);
  }
  assert.fail(`timed out: ${what}`);
}

const steps = [];
async function step(name, body) {
  const started = Date.now();
  await body();
  steps.push(`${name} (${Date.now() - started} ms)`);
}

const transport = new StdioClientTransport({
  command: cordon,
  // A progress tick every 100 ms (5 s by default), so that the progress step waits on ticks.
  args: ["mcp", "--mode", "workspace-write", "--workspace", workspace, "--progress-interval", "100ms"],
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "cordon-interop", version: "0.0.1" }, { capabilities: {} });

const bash = (args, options = {}) =>
  client.callTool({ name: "bash", arguments: args }, CallToolResultSchema, options);
const tool = (name, args, options = {}) =>
  client.callTool({ name, arguments: args }, CallToolResultSchema, options);
const text = (result) => result.content.map((part) => part.text).join("");

try {
  await step("initialize", async () => {
    await client.connect(transport);
    assert.equal(client.getServerVersion().name, "cordon");
  });

  await step("tools/list", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((each) => each.name).sort();
    assert.deepEqual(names, ["bash", "job_kill", "job_list", "job_output", "job_write"]);
    // Compact: no outputSchema (results vary with what happened), only the hints that differ
    // from MCP's defaults.
    for (const each of tools) {
      assert.equal(each.outputSchema, undefined, `${each.name} declares an outputSchema`);
      assert.equal(each.inputSchema.type, "object", `${each.name} has an input schema`);
    }
    const output = tools.find((each) => each.name === "job_output");
    assert.equal(output.annotations.readOnlyHint, true);
  });

  await step("foreground bash", async () => {
    const result = await bash({ command: "echo hello; echo oops >&2; touch made-here; exit 3" });
    assert.equal(result.isError, false, text(result));
    assert.equal(result.structuredContent.status, "completed");
    assert.equal(result.structuredContent.exitCode, 3);
    assert.equal(result.structuredContent.sandbox.mode, "workspace-write");
    assert.equal(result.structuredContent.sandbox.enforcement, "full");
    assert.match(text(result), /hello\noops\n\[exit code: 3\]/);
    assert.ok(fs.existsSync(path.join(workspace, "made-here")), "the workspace is writable");
  });

  await step("a denied write outside the workspace", async () => {
    const result = await bash({ command: "echo x > /etc/cordon-interop-denied" });
    assert.equal(result.isError, false);
    assert.notEqual(result.structuredContent.exitCode, 0);
    assert.equal(result.structuredContent.sandbox.denied, true, text(result));
    assert.match(text(result), /\[sandbox: file access denied under workspace-write mode\]/);
    assert.ok(!fs.existsSync("/etc/cordon-interop-denied"));
  });

  await step("auto-background past yield_ms", async () => {
    // The command cannot end before the release: the call can only return by yielding.
    const result = await bash({ command: waitingCommand("release-late", "late"), yield_ms: 300 });
    assert.equal(result.structuredContent.status, "running");
    const id = result.structuredContent.job_id;
    release("release-late");
    const done = await tool("job_output", { job_id: id, wait: "exit", timeout_ms: 20000 });
    assert.equal(done.structuredContent.status, "completed");
    assert.equal(done.structuredContent.output, "late\n");
  });

  await step("background job read by cursor", async () => {
    const started = await bash({
      command: 'for i in $(seq 1 300); do echo "line-$i"; done; sleep 0.3; echo end',
      run_in_background: true,
      description: "count to 300",
    });
    assert.equal(started.structuredContent.status, "running");
    const id = started.structuredContent.job_id;
    let offset = 0;
    let all = "";
    for (let reads = 0; reads < 500; ++reads) {
      const got = await tool("job_output", { job_id: id, offset, max_bytes: 700, timeout_ms: 5000 });
      // Compact results leave out what did not happen: offset 0, lossy false, complete true.
      assert.equal(got.structuredContent.offset ?? 0, offset);
      assert.equal(got.structuredContent.lossy ?? false, false);
      all += got.structuredContent.output;
      offset = got.structuredContent.nextOffset;
      if (got.structuredContent.complete !== false) break;
    }
    const expected = Array.from({ length: 300 }, (_, i) => `line-${i + 1}\n`).join("") + "end\n";
    assert.equal(all, expected);
    // A read that was lost is asked for again with the same offset, and gives the same bytes.
    const again = await tool("job_output", { job_id: id, offset: 7, max_bytes: 7, wait: "none" });
    assert.equal(again.structuredContent.output, "line-2\n");
    const filtered = await tool("job_output", { job_id: id, offset: 0, filter: "^line-29[0-9]$" });
    assert.equal(filtered.structuredContent.output.split("\n").length - 1, 10);
  });

  await step("stdin through job_write", async () => {
    const started = await bash({
      command: 'while read -r line; do echo "got $line"; [ "$line" = quit ] && exit 0; done; exit 9',
      run_in_background: true,
      keep_stdin_open: true,
    });
    const id = started.structuredContent.job_id;
    const first = await tool("job_write", { job_id: id, data: "hello\n", wait_ms: 5000 });
    assert.equal(first.isError, false, text(first));
    assert.match(first.structuredContent.output, /got hello/);
    await tool("job_write", { job_id: id, data: "quit\n", eof: true });
    const done = await tool("job_output", { job_id: id, wait: "exit", timeout_ms: 20000 });
    assert.equal(done.structuredContent.status, "completed");
    assert.equal(done.structuredContent.exitCode, 0);
    const late = await tool("job_write", { job_id: id, data: "more\n" });
    assert.equal(late.isError, true, "a write to an ended job is a tool error");
  });

  await step("job_kill ends the tree", async () => {
    const started = await bash({
      command: '(exec -a "$M-kill-child" sleep 60) & exec -a "$M-kill" sleep 60',
      run_in_background: true,
      env: { M: marker },
    });
    const id = started.structuredContent.job_id;
    await eventually(() => processesWith(`${marker}-kill-child`).length === 1, "the job started");
    const killed = await tool("job_kill", { job_id: id });
    assert.equal(killed.structuredContent.killed, true);
    assert.equal(killed.structuredContent.status, "killed");
    assert.equal(processesWith(`${marker}-kill`).length, 0, "the job's tree is gone");
    const twice = await tool("job_kill", { job_id: id });
    assert.equal(twice.structuredContent.killed, false);
    const listed = await tool("job_list", {});
    const entry = listed.structuredContent.jobs.find((each) => each.job_id === id);
    assert.equal(entry.status, "killed");
  });

  await step("ping while a slow call runs", async () => {
    let slowDone = false;
    const slow = bash({
      command: `exec -a "$M-slow" sh -c "${waitingCommand("release-slow", "slow")}"`,
      yield_ms: 20000,
      env: { M: marker },
    }).then((result) => {
      slowDone = true;
      return result;
    });
    await eventually(() => processesWith(`${marker}-slow`).length === 1, "the slow call started");
    await client.ping();
    const listed = await tool("job_list", { status: "running" });
    assert.equal(slowDone, false, "ping and job_list answered while the slow call ran");
    assert.ok(listed.structuredContent.jobs.length >= 1);
    release("release-slow");
    const result = await slow;
    assert.equal(result.structuredContent.output, "slow\n");
  });

  await step("progress while a call waits", async () => {
    // The command ends once the client has heard three ticks.
    const seen = [];
    const result = await bash(
      { command: waitingCommand("release-patient", "patient"), yield_ms: 20000 },
      {
        onprogress: (progress) => {
          seen.push(progress);
          if (seen.length === 3) release("release-patient");
        },
        resetTimeoutOnProgress: true,
      },
    );
    assert.equal(result.structuredContent.output, "patient\n");
    assert.ok(seen.length >= 3, "three progress notifications");
    for (let i = 1; i < seen.length; ++i) assert.ok(seen[i].progress > seen[i - 1].progress);
  });

  await step("cancelling a pending call ends its tree", async () => {
    const abort = new AbortController();
    const pending = bash(
      { command: 'exec -a "$M-cancel" sleep 60', yield_ms: 30000, env: { M: marker } },
      { signal: abort.signal },
    );
    await eventually(() => processesWith(`${marker}-cancel`).length === 1, "the command started");
    abort.abort("changed my mind");
    await assert.rejects(pending);
    await eventually(() => processesWith(`${marker}-cancel`).length === 0, "the tree ended");
  });

  await step("escalation without the elicitation capability", async () => {
    const result = await bash({
      command: "echo x > /etc/cordon-interop-escalated",
      sandbox_permissions: "require_escalated",
      justification: "the test checks that nothing runs",
    });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.status, "not_run");
    assert.equal(result.structuredContent.approval.asked, false);
    assert.equal(result.structuredContent.approval.action, "unavailable");
    assert.match(text(result), /no approval channel is available/);
    assert.ok(!fs.existsSync("/etc/cordon-interop-escalated"));
  });

  await step("elicitation answered accept, decline and cancel", async () => {
    const asking = new Client(
      { name: "cordon-interop-asking", version: "0.0.1" },
      { capabilities: { elicitation: {} } },
    );
    const questions = [];
    let answer = { action: "accept", content: { scope: "once" } };
    asking.setRequestHandler(ElicitRequestSchema, async (request) => {
      questions.push(request.params);
      return answer;
    });
    await asking.connect(
      new StdioClientTransport({
        command: cordon,
        args: ["mcp", "--mode", "read-only", "--workspace", workspace],
        env: { ...process.env },
        stderr: "inherit",
      }),
    );
    try {
      await asking.listTools();
      const run = (args) =>
        asking.callTool({ name: "bash", arguments: args }, CallToolResultSchema);
      const denied = await run({ command: "touch escalated" });
      assert.equal(denied.structuredContent.sandbox.denied, true, text(denied));
      assert.match(text(denied), /escalation available/);
      const escalation = {
        command: "touch escalated",
        sandbox_permissions: "workspace-write",
        justification: "the test writes one file",
      };

      const accepted = await run(escalation);
      assert.equal(accepted.isError, false, text(accepted));
      assert.equal(accepted.structuredContent.sandbox.mode, "workspace-write");
      assert.equal(accepted.structuredContent.approval.action, "accept");
      assert.equal(accepted.structuredContent.approval.outcome, "allowed-once");
      assert.ok(fs.existsSync(path.join(workspace, "escalated")));
      assert.equal(questions.length, 1);
      assert.equal(questions[0].mode, "form");
      assert.match(questions[0].message, /touch escalated/);
      assert.match(questions[0].message, /read-only → workspace-write/);
      assert.match(questions[0].message, /the test writes one file/);
      fs.rmSync(path.join(workspace, "escalated"));

      answer = { action: "decline" };
      const declined = await run(escalation);
      assert.equal(declined.isError, true);
      assert.equal(declined.structuredContent.approval.action, "decline");
      assert.equal(text(declined), 'the user rejected escalating this command to "workspace-write"');

      answer = { action: "cancel" };
      const cancelled = await run(escalation);
      assert.equal(cancelled.isError, true);
      assert.equal(cancelled.structuredContent.approval.action, "cancel");
      assert.equal(text(cancelled), 'approval for escalating to "workspace-write" was cancelled');
      assert.equal(questions.length, 3);
      assert.ok(!fs.existsSync(path.join(workspace, "escalated")), "nothing ran when refused");

      const plain = await run({ command: "touch escalated" });
      assert.equal(plain.structuredContent.sandbox.mode, "read-only", "back to the standing mode");
      assert.equal(plain.structuredContent.sandbox.denied, true);
    } finally {
      await asking.close();
    }
  });

  await step("close leaves no process behind", async () => {
    await bash({
      command: '(exec -a "$M-left-child" sleep 600) & exec -a "$M-left" sleep 600',
      run_in_background: true,
      env: { M: marker },
    });
    await eventually(() => processesWith(`${marker}-left`).length === 2, "the job started");
    const server = transport.pid;
    await client.close();
    await eventually(() => processesWith(marker).length === 0, "every job's tree ended", 4000);
    await eventually(() => !fs.existsSync(`/proc/${server}`) ||
      fs.readFileSync(`/proc/${server}/stat`, "utf8").split(" ")[2] === "Z", "the server exited", 4000);
  });
  console.log(`ok: ${steps.length} steps\n  ${steps.join("\n  ")}`);
} catch (error) {
  console.error(`FAILED after: ${steps.join(", ") || "nothing"}\n`, error);
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
  fs.rmSync(workspace, { recursive: true, force: true });
}
