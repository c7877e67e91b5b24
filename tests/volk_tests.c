/* The tests' own volk, as an application that uses volk has (vkgemm's copy is private to it). */
#include <volk.c>
