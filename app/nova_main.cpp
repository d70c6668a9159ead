// nova: the headless command line (servers, scripts, CI). See core/cli/.
#include "core/cli/cli_app.h"

int main(int argc, char** argv) { return nova::run_cli(argc, argv); }
