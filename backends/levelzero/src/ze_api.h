// The Level Zero and Sysman API: types and prototypes, from Debian's
// libze-dev (the 1.4 headers), plus the prototypes of the later functions
// the backend uses. The prototypes only give the function types of the
// symbol list (decltype(&name)): the backend never links the loader and
// never calls them directly; every function is reached through
// dlopen/dlsym of libze_loader.so.1.
#pragma once

#include <level_zero/ze_api.h>
#include <level_zero/zes_api.h>

extern "C" {
// Level Zero 1.9: the queries of an immediate command list made elsewhere.
ze_result_t zeCommandListGetDeviceHandle(ze_command_list_handle_t list,
                                         ze_device_handle_t* device);
ze_result_t zeCommandListGetContextHandle(ze_command_list_handle_t list,
                                          ze_context_handle_t* context);
ze_result_t zeCommandListIsImmediate(ze_command_list_handle_t list,
                                     ze_bool_t* is_immediate);
}
