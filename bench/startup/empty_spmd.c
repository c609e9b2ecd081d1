/* An SPMD program that does nothing: Agora's start-up and finalize alone. */
#include <agora/agora.h>

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    agora_finalize();
    return 0;
}
