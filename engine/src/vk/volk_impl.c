/* volk, Debian's libvulkan-volk-dev ships it as a source file: compile it into vkgemm alone. */
#include <volk.c>
