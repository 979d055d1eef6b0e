// The single doctest main for obsidian_tests; test cases live in unit/, golden/ and error/.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
