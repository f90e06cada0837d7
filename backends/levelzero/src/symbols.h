// The one list of every Level Zero (and Sysman) function the backend uses.
// XAL_ZE_SYMBOL(requirement, name, return type, parameter list)
// REQUIRED: the backend is UNAVAILABLE without it (the reason names it).
// OPTIONAL: the feature it serves reports NOT_SUPPORTED (or, for Sysman,
// the metric is left out) when the loader lacks it.
// No include guard: the includer defines XAL_ZE_SYMBOL first.

// Drivers and devices
XAL_ZE_SYMBOL(REQUIRED, zeInit, ze_result_t, (ze_init_flags_t))
XAL_ZE_SYMBOL(REQUIRED, zeDriverGet, ze_result_t, (uint32_t*, ze_driver_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeDriverGetApiVersion, ze_result_t, (ze_driver_handle_t, ze_api_version_t*))
XAL_ZE_SYMBOL(REQUIRED, zeDriverGetProperties, ze_result_t, (ze_driver_handle_t, ze_driver_properties_t*))
XAL_ZE_SYMBOL(REQUIRED, zeDeviceGet, ze_result_t, (ze_driver_handle_t, uint32_t*, ze_device_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeDeviceGetSubDevices, ze_result_t, (ze_device_handle_t, uint32_t*, ze_device_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeDeviceGetProperties, ze_result_t, (ze_device_handle_t, ze_device_properties_t*))
XAL_ZE_SYMBOL(REQUIRED, zeDeviceGetMemoryProperties, ze_result_t,
              (ze_device_handle_t, uint32_t*, ze_device_memory_properties_t*))
XAL_ZE_SYMBOL(REQUIRED, zeDeviceGetCommandQueueGroupProperties, ze_result_t,
              (ze_device_handle_t, uint32_t*, ze_command_queue_group_properties_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeDeviceCanAccessPeer, ze_result_t, (ze_device_handle_t, ze_device_handle_t, ze_bool_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeDevicePciGetPropertiesExt, ze_result_t, (ze_device_handle_t, ze_pci_ext_properties_t*))

// Contexts, immediate command lists (streams), events
XAL_ZE_SYMBOL(REQUIRED, zeContextCreate, ze_result_t, (ze_driver_handle_t, const ze_context_desc_t*, ze_context_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeContextDestroy, ze_result_t, (ze_context_handle_t))
XAL_ZE_SYMBOL(REQUIRED, zeCommandListCreateImmediate, ze_result_t,
              (ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t*, ze_command_list_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeCommandListDestroy, ze_result_t, (ze_command_list_handle_t))
XAL_ZE_SYMBOL(REQUIRED, zeCommandListAppendBarrier, ze_result_t,
              (ze_command_list_handle_t, ze_event_handle_t, uint32_t, ze_event_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeCommandListAppendWaitOnEvents, ze_result_t,
              (ze_command_list_handle_t, uint32_t, ze_event_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeEventPoolCreate, ze_result_t,
              (ze_context_handle_t, const ze_event_pool_desc_t*, uint32_t, ze_device_handle_t*, ze_event_pool_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeEventPoolDestroy, ze_result_t, (ze_event_pool_handle_t))
XAL_ZE_SYMBOL(REQUIRED, zeEventCreate, ze_result_t, (ze_event_pool_handle_t, const ze_event_desc_t*, ze_event_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeEventDestroy, ze_result_t, (ze_event_handle_t))
XAL_ZE_SYMBOL(REQUIRED, zeEventHostSynchronize, ze_result_t, (ze_event_handle_t, uint64_t))
XAL_ZE_SYMBOL(REQUIRED, zeEventQueryStatus, ze_result_t, (ze_event_handle_t))
XAL_ZE_SYMBOL(REQUIRED, zeEventHostReset, ze_result_t, (ze_event_handle_t))
XAL_ZE_SYMBOL(REQUIRED, zeEventQueryKernelTimestamp, ze_result_t, (ze_event_handle_t, ze_kernel_timestamp_result_t*))

// Memory, copies, fill
XAL_ZE_SYMBOL(REQUIRED, zeMemAllocDevice, ze_result_t,
              (ze_context_handle_t, const ze_device_mem_alloc_desc_t*, size_t, size_t, ze_device_handle_t, void**))
XAL_ZE_SYMBOL(REQUIRED, zeMemAllocHost, ze_result_t,
              (ze_context_handle_t, const ze_host_mem_alloc_desc_t*, size_t, size_t, void**))
XAL_ZE_SYMBOL(OPTIONAL, zeMemAllocShared, ze_result_t,
              (ze_context_handle_t, const ze_device_mem_alloc_desc_t*, const ze_host_mem_alloc_desc_t*, size_t, size_t,
               ze_device_handle_t, void**))
XAL_ZE_SYMBOL(REQUIRED, zeMemFree, ze_result_t, (ze_context_handle_t, void*))
XAL_ZE_SYMBOL(REQUIRED, zeCommandListAppendMemoryCopy, ze_result_t,
              (ze_command_list_handle_t, void*, const void*, size_t, ze_event_handle_t, uint32_t, ze_event_handle_t*))
XAL_ZE_SYMBOL(REQUIRED, zeCommandListAppendMemoryFill, ze_result_t,
              (ze_command_list_handle_t, void*, const void*, size_t, size_t, ze_event_handle_t, uint32_t,
               ze_event_handle_t*))

// Interop (ABI 1.1): imported USM and immediate command lists, IPC handles.
// The command-list queries are Level Zero 1.9's (not in the 1.4 headers):
// without them a list cannot be checked, so none is imported.
XAL_ZE_SYMBOL(OPTIONAL, zeMemGetAllocProperties, ze_result_t,
              (ze_context_handle_t, const void*, ze_memory_allocation_properties_t*, ze_device_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeMemGetAddressRange, ze_result_t, (ze_context_handle_t, const void*, void**, size_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeMemGetIpcHandle, ze_result_t, (ze_context_handle_t, const void*, ze_ipc_mem_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeMemOpenIpcHandle, ze_result_t,
              (ze_context_handle_t, ze_device_handle_t, ze_ipc_mem_handle_t, ze_ipc_memory_flags_t, void**))
XAL_ZE_SYMBOL(OPTIONAL, zeMemCloseIpcHandle, ze_result_t, (ze_context_handle_t, const void*))
XAL_ZE_SYMBOL(OPTIONAL, zeCommandListGetDeviceHandle, ze_result_t, (ze_command_list_handle_t, ze_device_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeCommandListGetContextHandle, ze_result_t, (ze_command_list_handle_t, ze_context_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeCommandListIsImmediate, ze_result_t, (ze_command_list_handle_t, ze_bool_t*))
// Modules (SPIR-V) and kernels
XAL_ZE_SYMBOL(OPTIONAL, zeModuleCreate, ze_result_t,
              (ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t*, ze_module_handle_t*,
               ze_module_build_log_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeModuleDestroy, ze_result_t, (ze_module_handle_t))
XAL_ZE_SYMBOL(OPTIONAL, zeModuleBuildLogGetString, ze_result_t, (ze_module_build_log_handle_t, size_t*, char*))
XAL_ZE_SYMBOL(OPTIONAL, zeModuleBuildLogDestroy, ze_result_t, (ze_module_build_log_handle_t))
XAL_ZE_SYMBOL(OPTIONAL, zeKernelCreate, ze_result_t, (ze_module_handle_t, const ze_kernel_desc_t*, ze_kernel_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zeKernelDestroy, ze_result_t, (ze_kernel_handle_t))
XAL_ZE_SYMBOL(OPTIONAL, zeKernelSetGroupSize, ze_result_t, (ze_kernel_handle_t, uint32_t, uint32_t, uint32_t))
XAL_ZE_SYMBOL(OPTIONAL, zeKernelSetArgumentValue, ze_result_t, (ze_kernel_handle_t, uint32_t, size_t, const void*))
XAL_ZE_SYMBOL(OPTIONAL, zeCommandListAppendLaunchKernel, ze_result_t,
              (ze_command_list_handle_t, ze_kernel_handle_t, const ze_group_count_t*, ze_event_handle_t, uint32_t,
               ze_event_handle_t*))

// Sysman (device handles double as Sysman handles under ZES_ENABLE_SYSMAN=1)
XAL_ZE_SYMBOL(OPTIONAL, zesDeviceGetState, ze_result_t, (zes_device_handle_t, zes_device_state_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesDeviceEnumMemoryModules, ze_result_t, (zes_device_handle_t, uint32_t*, zes_mem_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesMemoryGetState, ze_result_t, (zes_mem_handle_t, zes_mem_state_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesDeviceEnumPowerDomains, ze_result_t, (zes_device_handle_t, uint32_t*, zes_pwr_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesPowerGetEnergyCounter, ze_result_t, (zes_pwr_handle_t, zes_power_energy_counter_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesDeviceEnumTemperatureSensors, ze_result_t, (zes_device_handle_t, uint32_t*, zes_temp_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesTemperatureGetState, ze_result_t, (zes_temp_handle_t, double*))
XAL_ZE_SYMBOL(OPTIONAL, zesDeviceEnumEngineGroups, ze_result_t, (zes_device_handle_t, uint32_t*, zes_engine_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesEngineGetProperties, ze_result_t, (zes_engine_handle_t, zes_engine_properties_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesEngineGetActivity, ze_result_t, (zes_engine_handle_t, zes_engine_stats_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesDeviceEnumRasErrorSets, ze_result_t, (zes_device_handle_t, uint32_t*, zes_ras_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesRasGetProperties, ze_result_t, (zes_ras_handle_t, zes_ras_properties_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesRasGetState, ze_result_t, (zes_ras_handle_t, ze_bool_t, zes_ras_state_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesDeviceEnumFrequencyDomains, ze_result_t, (zes_device_handle_t, uint32_t*, zes_freq_handle_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesFrequencyGetProperties, ze_result_t, (zes_freq_handle_t, zes_freq_properties_t*))
XAL_ZE_SYMBOL(OPTIONAL, zesFrequencyGetState, ze_result_t, (zes_freq_handle_t, zes_freq_state_t*))
