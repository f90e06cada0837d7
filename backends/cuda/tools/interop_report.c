/* interop_report.c -- xal-cuda-interopcheck's checks and its JSON report:
 * each check a line on stderr as it runs, all of them in one JSON object on
 * stdout at the end. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "interop_check.h"

#define ICHECK_MAX_CHECKS 512 /* about 25 a device and 35 more: 8 GPUs fit */

typedef struct check_t {
  char name[64];
  int ok;
  char detail[320];
} check_t;

static check_t checks[ICHECK_MAX_CHECKS];
static int check_count;
static int dropped;         /* checks past ICHECK_MAX_CHECKS: on stderr only */
static int dropped_failed;  /* those of them that failed */

int icheck_record(const char* name, int ok, const char* detail_format, ...) {
  char detail[320];
  va_list args;
  va_start(args, detail_format);
  vsnprintf(detail, sizeof detail, detail_format, args);
  va_end(args);
  fprintf(stderr, "  %s %-44s %s\n", ok ? "ok  " : "FAIL", name, detail);
  if (check_count == ICHECK_MAX_CHECKS) {
    ++dropped;
    dropped_failed += !ok;
    return ok;
  }
  snprintf(checks[check_count].name, sizeof checks[check_count].name, "%s", name);
  snprintf(checks[check_count].detail, sizeof checks[check_count].detail, "%s", detail);
  checks[check_count].ok = ok;
  ++check_count;
  return ok;
}

int icheck_status(const char* name, xal_status_t status, xal_status_t want) {
  xal_error_info_t e;
  memset(&e, 0, sizeof e);
  e.struct_size = sizeof e;
  if (status != XAL_SUCCESS) xal_last_error(&e);
  return icheck_record(name, status == want, "%s (expected %s)%s%s%s%s", xal_status_name(status),
                       xal_status_name(want), e.message[0] ? ": " : "", e.message,
                       e.vendor_name[0] ? " vendor " : "", e.vendor_name);
}

static void json_string(const char* s) {
  putchar('"');
  for (; *s; ++s) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      printf("\\%c", c);
    } else if (c < 0x20) {
      printf("\\u%04x", c);
    } else {
      putchar(c);
    }
  }
  putchar('"');
}

int icheck_report(const char* driver_path, int simulated, unsigned devices, size_t count) {
  int failed = dropped_failed, i;
  for (i = 0; i < check_count; ++i) failed += !checks[i].ok;
  printf("{\n  \"program\": \"xal-cuda-interopcheck\",\n  \"driver\": ");
  json_string(driver_path);
  printf(",\n  \"simulated\": %s,\n  \"cuda_devices\": %u,\n  \"elements\": %zu,\n",
         simulated ? "true" : "false", devices, count);
  printf("  \"checks\": [\n");
  for (i = 0; i < check_count; ++i) {
    printf("    {\"name\": ");
    json_string(checks[i].name);
    printf(", \"ok\": %s, \"detail\": ", checks[i].ok ? "true" : "false");
    json_string(checks[i].detail);
    printf("}%s\n", i + 1 < check_count ? "," : "");
  }
  printf("  ],\n  \"passed\": %d,\n  \"failed\": %d,\n  \"result\": \"%s\"\n}\n",
         check_count - (failed - dropped_failed), failed,
         failed == 0 && check_count > 0 ? "PASS" : "FAIL");
  fflush(stdout);
  fprintf(stderr, "xal-cuda-interopcheck: %s (%d checks, %d failed)%s\n",
          failed == 0 && check_count > 0 ? "PASS" : "FAIL", check_count + dropped, failed,
          simulated ? " on a SIMULATED driver" : "");
  return failed == 0 && check_count > 0 ? 0 : (failed > 0 ? failed : 1);
}
