// The Level Zero and Sysman API types, from Debian's libze-dev. The
// backend never links the loader: every function is reached through
// dlopen/dlsym of libze_loader.so.1.
#pragma once

#include <level_zero/ze_api.h>
#include <level_zero/zes_api.h>
