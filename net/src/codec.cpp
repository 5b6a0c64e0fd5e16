// Placeholder: the codec is being written (see codec.h for the contract).
#include <wheelbeat/net/codec.h>
