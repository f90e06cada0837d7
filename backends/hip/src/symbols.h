// The one list of every HIP runtime function the backend uses.
// XAL_HIP_SYMBOL(requirement, name, return type, parameter list)
// REQUIRED: the backend is UNAVAILABLE without it (the reason names it).
// OPTIONAL: a feature is reported NOT_SUPPORTED when the runtime lacks it.
// No include guard: the includer defines XAL_HIP_SYMBOL first.

// Runtime and devices
XAL_HIP_SYMBOL(REQUIRED, hipInit, hipError_t, (unsigned int))
XAL_HIP_SYMBOL(REQUIRED, hipDriverGetVersion, hipError_t, (int*))
XAL_HIP_SYMBOL(REQUIRED, hipRuntimeGetVersion, hipError_t, (int*))
XAL_HIP_SYMBOL(REQUIRED, hipGetDeviceCount, hipError_t, (int*))
XAL_HIP_SYMBOL(REQUIRED, hipSetDevice, hipError_t, (int))
XAL_HIP_SYMBOL(OPTIONAL, hipGetDevice, hipError_t, (int*))
XAL_HIP_SYMBOL(REQUIRED, hipDeviceGetAttribute, hipError_t,
               (int*, hipDeviceAttribute_t, int))
XAL_HIP_SYMBOL(REQUIRED, hipDeviceGetName, hipError_t, (char*, int, hipDevice_t))
XAL_HIP_SYMBOL(REQUIRED, hipDeviceTotalMem, hipError_t, (size_t*, hipDevice_t))
XAL_HIP_SYMBOL(REQUIRED, hipDeviceSynchronize, hipError_t, (void))
XAL_HIP_SYMBOL(REQUIRED, hipDeviceReset, hipError_t, (void))
XAL_HIP_SYMBOL(OPTIONAL, hipDeviceGetUuid, hipError_t, (hipUUID*, hipDevice_t))
XAL_HIP_SYMBOL(OPTIONAL, hipDeviceGetPCIBusId, hipError_t, (char*, int, int))
XAL_HIP_SYMBOL(OPTIONAL, hipGetErrorName, const char*, (hipError_t))
XAL_HIP_SYMBOL(OPTIONAL, hipGetErrorString, const char*, (hipError_t))

// Memory
XAL_HIP_SYMBOL(REQUIRED, hipMalloc, hipError_t, (void**, size_t))
XAL_HIP_SYMBOL(REQUIRED, hipFree, hipError_t, (void*))
XAL_HIP_SYMBOL(REQUIRED, hipMemGetInfo, hipError_t, (size_t*, size_t*))
XAL_HIP_SYMBOL(OPTIONAL, hipHostMalloc, hipError_t, (void**, size_t, unsigned int))
XAL_HIP_SYMBOL(OPTIONAL, hipHostFree, hipError_t, (void*))
XAL_HIP_SYMBOL(OPTIONAL, hipHostRegister, hipError_t, (void*, size_t, unsigned int))
XAL_HIP_SYMBOL(OPTIONAL, hipHostUnregister, hipError_t, (void*))

// Interop (ABI 1.1): imported memory and streams, IPC handles. Without the
// pointer queries memory cannot be imported, without the stream queries
// streams cannot; hipStreamGetDevice (HIP 5.6) is declared here, not in
// the HIP 5.2 header.
XAL_HIP_SYMBOL(OPTIONAL, hipPointerGetAttributes, hipError_t, (hipPointerAttribute_t*, const void*))
XAL_HIP_SYMBOL(OPTIONAL, hipMemGetAddressRange, hipError_t, (hipDeviceptr_t*, size_t*, hipDeviceptr_t))
XAL_HIP_SYMBOL(OPTIONAL, hipStreamGetFlags, hipError_t, (hipStream_t, unsigned int*))
XAL_HIP_SYMBOL(OPTIONAL, hipStreamGetDevice, hipError_t, (hipStream_t, hipDevice_t*))
XAL_HIP_SYMBOL(OPTIONAL, hipIpcGetMemHandle, hipError_t, (hipIpcMemHandle_t*, void*))
XAL_HIP_SYMBOL(OPTIONAL, hipIpcOpenMemHandle, hipError_t, (void**, hipIpcMemHandle_t, unsigned int))
XAL_HIP_SYMBOL(OPTIONAL, hipIpcCloseMemHandle, hipError_t, (void*))

// Streams and events
XAL_HIP_SYMBOL(REQUIRED, hipStreamCreateWithFlags, hipError_t, (hipStream_t*, unsigned int))
XAL_HIP_SYMBOL(REQUIRED, hipStreamDestroy, hipError_t, (hipStream_t))
XAL_HIP_SYMBOL(REQUIRED, hipStreamSynchronize, hipError_t, (hipStream_t))
XAL_HIP_SYMBOL(REQUIRED, hipStreamQuery, hipError_t, (hipStream_t))
XAL_HIP_SYMBOL(REQUIRED, hipStreamWaitEvent, hipError_t, (hipStream_t, hipEvent_t, unsigned int))
XAL_HIP_SYMBOL(OPTIONAL, hipLaunchHostFunc, hipError_t, (hipStream_t, hipHostFn_t, void*))
XAL_HIP_SYMBOL(REQUIRED, hipEventCreateWithFlags, hipError_t, (hipEvent_t*, unsigned int))
XAL_HIP_SYMBOL(REQUIRED, hipEventDestroy, hipError_t, (hipEvent_t))
XAL_HIP_SYMBOL(REQUIRED, hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))
XAL_HIP_SYMBOL(REQUIRED, hipEventSynchronize, hipError_t, (hipEvent_t))
XAL_HIP_SYMBOL(REQUIRED, hipEventQuery, hipError_t, (hipEvent_t))
XAL_HIP_SYMBOL(REQUIRED, hipEventElapsedTime, hipError_t, (float*, hipEvent_t, hipEvent_t))

// Copies and memset
XAL_HIP_SYMBOL(REQUIRED, hipMemcpyHtoDAsync, hipError_t, (hipDeviceptr_t, void*, size_t, hipStream_t))
XAL_HIP_SYMBOL(REQUIRED, hipMemcpyDtoHAsync, hipError_t, (void*, hipDeviceptr_t, size_t, hipStream_t))
XAL_HIP_SYMBOL(REQUIRED, hipMemcpyDtoDAsync, hipError_t, (hipDeviceptr_t, hipDeviceptr_t, size_t, hipStream_t))
XAL_HIP_SYMBOL(REQUIRED, hipMemsetD8Async, hipError_t, (hipDeviceptr_t, unsigned char, size_t, hipStream_t))
XAL_HIP_SYMBOL(OPTIONAL, hipDeviceCanAccessPeer, hipError_t, (int*, int, int))
XAL_HIP_SYMBOL(OPTIONAL, hipDeviceEnablePeerAccess, hipError_t, (int, unsigned int))
XAL_HIP_SYMBOL(OPTIONAL, hipMemcpyPeerAsync, hipError_t, (void*, int, const void*, int, size_t, hipStream_t))

// Code objects
XAL_HIP_SYMBOL(OPTIONAL, hipModuleLoadData, hipError_t, (hipModule_t*, const void*))
XAL_HIP_SYMBOL(OPTIONAL, hipModuleUnload, hipError_t, (hipModule_t))
XAL_HIP_SYMBOL(OPTIONAL, hipModuleGetFunction, hipError_t, (hipFunction_t*, hipModule_t, const char*))
XAL_HIP_SYMBOL(OPTIONAL, hipModuleLaunchKernel, hipError_t,
               (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int,
                unsigned int, unsigned int, unsigned int, hipStream_t, void**, void**))
