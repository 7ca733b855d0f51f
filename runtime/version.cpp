// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/version.hpp"

namespace cordon {

const char* library_version() noexcept {
    return CORDON_VERSION_STRING;
}

}  // namespace cordon
