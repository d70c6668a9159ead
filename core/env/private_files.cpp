#include "core/env/private_files.h"

#include <sys/stat.h>

namespace nova {

unsigned make_new_files_private() { return static_cast<unsigned>(::umask(077)); }

}  // namespace nova
