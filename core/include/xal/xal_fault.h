/*
 * xal_fault.h -- control of the fault-injection backend from inside a
 * program, so that a test can script faults (docs/FAULTS.md).
 *
 * These functions are exported by libxal. They act on the fault backend
 * loaded by xal_init (XAL_BACKENDS=fault:mock, or XAL_FAULT_PLAN); without
 * one they return XAL_ERROR_BACKEND_UNAVAILABLE with a message.
 * All are thread-safe.
 */
#ifndef XAL_XAL_FAULT_H_
#define XAL_XAL_FAULT_H_

#include "xal/xal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of xal_fault_load_plan. */
#define XAL_FAULT_PLAN_REPLACE 0u /* the new rules replace the current ones */
#define XAL_FAULT_PLAN_APPEND 0x1u

/* Loads a plan: JSON text, a path to a JSON file, or the compact XAL_FAULTS
 * syntax ("mem_alloc=5%3*OUT_OF_MEMORY;allreduce=nth(10)TIMEOUT").
 * A malformed plan changes nothing and returns XAL_ERROR_INVALID_ARGUMENT
 * with the file, the rule and what is wrong in the message. */
XAL_API xal_status_t xal_fault_load_plan(const char* plan, uint32_t flags);

/* Removes every rule. Counters are kept. */
XAL_API xal_status_t xal_fault_clear(void);

/* Enables (enabled != 0) or disables the rule named `rule`. */
XAL_API xal_status_t xal_fault_set_rule_enabled(const char* rule,
                                               int32_t enabled);

typedef struct xal_fault_rule_info_t {
  size_t struct_size;
  char name[64];
  char operation[64];  /* the operation glob */
  char action[64];     /* "error", "delay", "hang", "bitflip", ... */
  int32_t enabled;
  uint64_t matched;    /* calls that matched operation and device */
  uint64_t fired;      /* injections made */
} xal_fault_rule_info_t;

XAL_API xal_status_t xal_fault_rule_count(uint32_t* out_count);
XAL_API xal_status_t xal_fault_rule_get_info(uint32_t index,
                                            xal_fault_rule_info_t* out_info);

typedef struct xal_fault_counters_t {
  size_t struct_size;
  uint64_t calls;    /* operations seen by the fault backend */
  uint64_t injected; /* faults injected, all rules */
} xal_fault_counters_t;

XAL_API xal_status_t xal_fault_get_counters(xal_fault_counters_t* out_counters);

/* ---- the extension behind these functions (plugin side) ---------------- */
/* The fault backend returns this from get_extension(backend,
 * XAL_FAULT_CONTROL_EXTENSION). `backend` is its xal_backend_t*. */
#define XAL_FAULT_CONTROL_EXTENSION "xal_fault_control_v1"

struct xal_backend_s;
typedef struct xal_fault_control_v1_t {
  size_t struct_size;
  xal_status_t (*load_plan)(struct xal_backend_s* backend, const char* plan,
                            uint32_t flags);
  xal_status_t (*clear)(struct xal_backend_s* backend);
  xal_status_t (*set_rule_enabled)(struct xal_backend_s* backend,
                                   const char* rule, int32_t enabled);
  xal_status_t (*rule_count)(struct xal_backend_s* backend,
                             uint32_t* out_count);
  xal_status_t (*rule_get_info)(struct xal_backend_s* backend, uint32_t index,
                                xal_fault_rule_info_t* out_info);
  xal_status_t (*get_counters)(struct xal_backend_s* backend,
                               xal_fault_counters_t* out_counters);
} xal_fault_control_v1_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XAL_XAL_FAULT_H_ */
