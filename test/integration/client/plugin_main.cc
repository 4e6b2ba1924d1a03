// The host of test/integration/client/plugin.cc: links the plugin's shared library and runs it.
#include <cstdio>

extern "C" int slinky_plugin_run();

int main() {
  if (slinky_plugin_run() != 0) return 1;
  std::printf("plugin: a shared library with slinky linked in runs a pipeline\n");
  return 0;
}
