// A plugin without the xal_backend_get entry symbol (loader test).
extern "C" __attribute__((visibility("default"))) int xal_backend_something_else() {
  return 1;
}
