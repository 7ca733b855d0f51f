// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What `cordon mcp --workspace DIR` lists in tools/list (its "tools"), for the tool_arguments
// fuzz target, which reads the real tools' arguments against their real inputSchemas without
// linking the server. tests/mcp/mcp_test.cpp (TheFuzzTargetsCopyOfTheToolsIsWhatToolsListGives)
// fails when the server lists anything else, and prints what to put here.
#pragma once

namespace cordon::fuzz {

// clang-format off
inline constexpr const char* tool_schemas = R"schemas(
[
 {
  "description": "Runs bash -c in a fresh shell (use workdir, not cd), read-only sandbox. After yield_ms a running command becomes a job (job_output reads it). tty: a terminal for REPLs, editors, TUIs, prompts; the result is its screen, type with job_write. A sandbox denial is policy: never work around it; if the result offers escalation, retry once with the sandbox_* it names and a justification (the user decides).",
  "inputSchema": {
   "properties": {
    "cols": {
     "type": "integer"
    },
    "command": {
     "type": "string"
    },
    "description": {
     "description": "A few words, for job_list",
     "type": "string"
    },
    "env": {
     "additionalProperties": {
      "type": [
       "string",
       "null"
      ]
     },
     "description": "Variables to set (null unsets)",
     "type": "object"
    },
    "justification": {
     "description": "One sentence for the user",
     "type": "string"
    },
    "keep_stdin_open": {
     "description": "Keep stdin open for job_write",
     "type": "boolean"
    },
    "max_output_bytes": {
     "description": "Default 30000",
     "type": "integer"
    },
    "rows": {
     "description": "tty size, default 24x80",
     "type": "integer"
    },
    "run_in_background": {
     "type": "boolean"
    },
    "sandbox_domains": {
     "description": "For proxy: the blocked domain (a.example, *.example:443)",
     "items": {
      "type": "string"
     },
     "type": "array"
    },
    "sandbox_network": {
     "description": "More network for this call (the server's network: deny)",
     "enum": [
      "use_default",
      "proxy",
      "allow"
     ],
     "type": "string"
    },
    "sandbox_permissions": {
     "description": "Wider mode for this call",
     "enum": [
      "use_default",
      "require_escalated",
      "workspace-write",
      "danger-full-access"
     ],
     "type": "string"
    },
    "stdin": {
     "type": "string"
    },
    "timeout_ms": {
     "description": "Kill after (default 120 s, max 600 s; background 1800 s, max 7200 s)",
     "type": "integer"
    },
    "tty": {
     "description": "Run under a terminal",
     "type": "boolean"
    },
    "verbose": {
     "description": "Whole result, policy included",
     "type": "boolean"
    },
    "workdir": {
     "type": "string"
    },
    "yield_ms": {
     "description": "Default 30000, max 50000",
     "type": "integer"
    }
   },
   "required": [
    "command"
   ],
   "type": "object"
  },
  "name": "bash"
 },
 {
  "annotations": {
   "idempotentHint": true,
   "openWorldHint": false,
   "readOnlyHint": true
  },
  "description": "Reads a job's output from offset (default: where the last read ended; negative: from the end), waiting for new output; continue from nextOffset.",
  "inputSchema": {
   "properties": {
    "attributes": {
     "description": "Per-row styles",
     "type": "boolean"
    },
    "filter": {
     "description": "Only lines matching this regex",
     "type": "string"
    },
    "job_id": {
     "type": "string"
    },
    "max_bytes": {
     "description": "Most bytes (default 30000)",
     "type": "integer"
    },
    "offset": {
     "description": "Byte offset",
     "type": "integer"
    },
    "screen": {
     "type": "boolean"
    },
    "scrollback": {
     "description": "Lines scrolled off",
     "type": "integer"
    },
    "stream": {
     "description": "Default both",
     "enum": [
      "both",
      "stdout",
      "stderr"
     ],
     "type": "string"
    },
    "timeout_ms": {
     "description": "Longest wait (default 10000, max 30000)",
     "type": "integer"
    },
    "verbose": {
     "type": "boolean"
    },
    "wait": {
     "description": "Wait for (default output)",
     "enum": [
      "output",
      "exit",
      "none"
     ],
     "type": "string"
    },
    "wait_for": {
     "type": "string"
    }
   },
   "required": [
    "job_id"
   ],
   "type": "object"
  },
  "name": "job_output"
 },
 {
  "description": "Types data, then keys, into a keep_stdin_open or tty job (eof: closes stdin, types Ctrl-D); returns the output within wait_ms, a tty's screen once it shows wait_for or is quiet for quiet_ms.",
  "inputSchema": {
   "properties": {
    "cols": {
     "type": "integer"
    },
    "data": {
     "description": "Text",
     "type": "string"
    },
    "eof": {
     "type": "boolean"
    },
    "job_id": {
     "type": "string"
    },
    "keys": {
     "description": "Enter, Tab, Esc, Up, PgDn, F1, Ctrl-C, Alt-x...",
     "items": {
      "type": "string"
     },
     "type": "array"
    },
    "quiet_ms": {
     "description": "Default 500",
     "type": "integer"
    },
    "rows": {
     "description": "Resize",
     "type": "integer"
    },
    "verbose": {
     "type": "boolean"
    },
    "wait_for": {
     "type": "string"
    },
    "wait_ms": {
     "description": "Default 250 (tty 10000), max 30000",
     "type": "integer"
    }
   },
   "required": [
    "job_id"
   ],
   "type": "object"
  },
  "name": "job_write"
 },
 {
  "annotations": {
   "idempotentHint": true,
   "openWorldHint": false
  },
  "description": "Sends signal to the job's whole tree, then KILL after grace_ms; returns once it ended.",
  "inputSchema": {
   "properties": {
    "grace_ms": {
     "description": "Default 3000, max 60000",
     "type": "integer"
    },
    "job_id": {
     "type": "string"
    },
    "signal": {
     "description": "Default TERM",
     "enum": [
      "TERM",
      "INT",
      "HUP",
      "KILL"
     ],
     "type": "string"
    },
    "verbose": {
     "type": "boolean"
    }
   },
   "required": [
    "job_id"
   ],
   "type": "object"
  },
  "name": "job_kill"
 },
 {
  "annotations": {
   "idempotentHint": true,
   "openWorldHint": false,
   "readOnlyHint": true
  },
  "description": "Lists this session's jobs, running first (at most 10 run at once).",
  "inputSchema": {
   "properties": {
    "status": {
     "description": "Default all",
     "enum": [
      "running",
      "all"
     ],
     "type": "string"
    }
   },
   "required": [],
   "type": "object"
  },
  "name": "job_list"
 }
]
)schemas";
// clang-format on

}  // namespace cordon::fuzz
