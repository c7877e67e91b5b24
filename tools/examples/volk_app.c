/* The example application's own volk (global function pointers), as an application that uses volk has. */
#include <volk.c>
