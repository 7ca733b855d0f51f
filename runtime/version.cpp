#include "cordon/version.hpp"

namespace cordon {

const char* library_version() noexcept {
    return CORDON_VERSION_STRING;
}

}  // namespace cordon
