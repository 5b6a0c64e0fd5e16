// T0 / T1's command line (t1.h): its flags on wheelbeat_net_bench's CLI11 app, --scenario's
// check (H1 | H2 | D1 | R1, or a comma list of T0 and T1), and the rules between flags.
// Thread: main's, as the app.
#pragma once

#include "command_line_cli11.h"
#include "t1.h"

#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::bench::netbench {

// The command line as given for T0 / T1.
struct T1Args {
  T1Config config;
  std::string configs = "round_robin,failover,full,raw";
  std::vector<CLI::Option*> options;  // the T flags, to tell whether one was given
};

// --config, --providers, --rate, --duration, --deadline-ms, --payload, the fault flags, and the
// providers' own (--registry-port, --marker: set by the driver). --warmup is the bench's.
void addT1Options(CLI::App& app, T1Args& args);

// --scenario: "H1", "H2", "D1", "R1", or T0 / T1 alone or in a comma list (each once).
CLI::Validator scenarioCheck();
// True for a T list ("T0", "T1", "T0,T1", "T1,T0").
bool isTScenario(std::string_view scenario);

// The first T flag given on the command line ("--rate"), or "": for the other scenarios.
std::string givenT1Flag(const T1Args& args);

// The config of a T run: the scenario list, --config's words, --warmup (< 0: 5 s), the child's
// role and index; validateT1()'d. Throws std::invalid_argument naming the flag and the value.
T1Config t1ConfigOf(T1Args args, std::string_view scenario, double warmupS, std::string role,
                    int procIndex);

}  // namespace wheelbeat::bench::netbench
