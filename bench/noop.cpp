// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-bench-noop: a program that does nothing, a static PIE as cordon is. `cordon run` is one
// exec more than the command alone; cordon-bench times this one to show what any second exec
// costs.
int main() {
    return 0;
}
