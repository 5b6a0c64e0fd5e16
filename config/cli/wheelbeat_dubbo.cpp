// wheelbeat-dubbo: calls Dubbo 2 services and serves an echo service, in the spirit of grpcurl.
// The logic is in dubbo_cli.cpp and dubbo_echo.cpp.
#include "dubbo_cli.h"

int main(int argc, char** argv) { return wheelbeat::config::dubbo_cli::run(argc, argv); }
