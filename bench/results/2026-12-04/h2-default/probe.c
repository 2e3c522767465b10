/* A fixed amount of CPU work (integer arithmetic over a 256 KiB table, the
 * size of a server's hot data), timed: prints its wall time in microseconds.
 * Run pinned to one CPU between benchmark runs, it tells whether that CPU is
 * in a slow state (a busy host) independently of any server. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
int main(void) {
    static uint32_t t[65536];
    for (uint32_t i = 0; i < 65536; i++) t[i] = i * 2654435761u;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint32_t x = 1;
    for (int i = 0; i < 4000000; i++) {
        x = x * 1664525u + 1013904223u;
        t[x >> 16] += x;
        x ^= t[(x >> 8) & 65535];
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f %u\n", (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3, x & 1);
    return 0;
}
